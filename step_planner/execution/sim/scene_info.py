"""Where everything is in a compiled MuJoCo scene: objects, drawers, trays, the table.

The geometry itself is :mod:`step_planner.domain.scene_geometry`'s; these records add the compiled model's ids.
A module of its own so the scene builder and the modules it uses (placement targets) can share it without
importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

import numpy as np

from step_planner.domain.cabinets import DrawerGeometry
from step_planner.domain.perceived_facts import SceneVolumes


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
class DrawerInfo(DrawerGeometry):
    """A drawer's geometry and its ids in the compiled model."""

    body_id: int = -1
    joint_id: int = -1
    qpos_adr: int = -1
    handle_site: int = -1
    geom_ids: frozenset[int] = frozenset()

    @classmethod
    def of(cls, geometry: DrawerGeometry) -> DrawerInfo:
        return cls(**{f.name: getattr(geometry, f.name) for f in fields(DrawerGeometry)})


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
    volumes: SceneVolumes = field(default_factory=SceneVolumes)  # for the fact deriver
