"""What a camera-based object tracker would report of the simulated world: ground truth made imperfect.

Gazebo's pose bridge reports every model exactly, hidden or not; a real perception system does not. For tests
and benchmarks the MuJoCo robot can report its model poses through this instead: each position with white
Gaussian noise (``position_sigma_m``, every axis), the yaw too (``yaw_sigma_deg``), each object dropped from a
report with probability ``dropout``, every report showing the world ``latency_s`` ago, and nothing inside a
closed drawer. Drawer links (their handles are what a tracker would see) get the same position noise.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, replace

import numpy as np

from step_planner.domain.pose_tree import ModelPose


@dataclass(frozen=True)
class PerceptionNoise:
    position_sigma_m: float = 0.0
    yaw_sigma_deg: float = 0.0
    dropout: float = 0.0
    latency_s: float = 0.0
    hide_in_closed_drawers: bool = False

    def __post_init__(self) -> None:
        if min(self.position_sigma_m, self.yaw_sigma_deg, self.latency_s) < 0 or not 0 <= self.dropout < 1:
            raise ValueError(f"perception noise out of range: {self}")

    @property
    def exact(self) -> bool:
        return self == PerceptionNoise()


def _turned(orientation: tuple[float, ...], yaw: float) -> tuple[float, float, float, float]:
    """``orientation`` (x, y, z, w) turned by ``yaw`` about the world z axis."""
    x, y, z, w = orientation
    c, s = math.cos(yaw / 2), math.sin(yaw / 2)
    return (c * x - s * y, c * y + s * x, c * z + s * w, c * w - s * z)


class SimulatedPerception:
    """Reports of ground-truth model poses, as a tracker would make them (see module doc)."""

    def __init__(self, noise: PerceptionNoise, seed: int = 0) -> None:
        self.noise = noise
        self.rng = np.random.default_rng(seed)
        self._pending: deque[tuple[float, list[ModelPose]]] = deque()

    def report(self, time: float, truth: list[ModelPose], hidden: set[str]) -> list[ModelPose] | None:
        """The report to publish at ``time`` (simulated s) for ``truth`` now, or None while the latency delays
        the first one. ``hidden``: the objects inside closed drawers now."""
        n = self.noise
        seen = [p for p in truth if not (n.hide_in_closed_drawers and p.child_frame_id in hidden)]
        out = []
        for p in seen:
            link = "/" in p.child_frame_id
            if not link and n.dropout and self.rng.random() < n.dropout:
                continue
            position = tuple(float(v) for v in np.asarray(p.position) + self.rng.normal(0.0, n.position_sigma_m, 3)) \
                if n.position_sigma_m else p.position
            orientation = _turned(p.orientation, math.radians(self.rng.normal(0.0, n.yaw_sigma_deg))) \
                if n.yaw_sigma_deg and not link else p.orientation
            out.append(replace(p, position=position, orientation=orientation))
        if not n.latency_s:
            return out
        self._pending.append((time, out))
        ready = None
        while self._pending and self._pending[0][0] <= time - n.latency_s:
            ready = self._pending.popleft()[1]
        return ready
