"""Where everything is in a compiled MuJoCo scene: objects, drawers, trays, the table.

A module of its own so the scene builder and the modules it uses (placement targets) can share it
without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from step_planner.domain.perceived_facts import SceneVolumes
from step_planner.execution.sim.cabinet import DrawerInfo


@dataclass
class ObjectInfo:
    name: str
    shape: str
    half: np.ndarray  # half extents (x, y, z) in the object frame
    body_id: int = -1
    qpos_adr: int = -1
    dof_adr: int = -1

    @property
    def radius(self) -> float:
        return float(np.hypot(self.half[0], self.half[1]))


@dataclass
class TrayInfo:
    name: str
    position: np.ndarray
    size: np.ndarray  # full outer size (x, y, wall height)


@dataclass
class SceneInfo:
    """Where everything is in the compiled model (ids resolved after compilation)."""

    objects: dict[str, ObjectInfo] = field(default_factory=dict)
    drawers: dict[str, DrawerInfo] = field(default_factory=dict)
    trays: dict[str, TrayInfo] = field(default_factory=dict)
    table: str = "table"
    table_size: np.ndarray = field(default_factory=lambda: np.array([1.2, 1.0, 0.04]))
    table_center: np.ndarray = field(default_factory=lambda: np.array([0.5, 0.0]))
    table_top: float = 0.0
    auto_spots: list = field(default_factory=list)
    volumes: SceneVolumes = field(default_factory=SceneVolumes)  # for the fact deriver, set once compiled
