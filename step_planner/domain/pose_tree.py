"""Model and link poses as Gazebo's pose bridge (or a tracker's TF frames) reports them, composed into poses in
the robot's world.

Pure numpy (no ROS). gz-sim's PosePublisher reports a model in the world (frame_id: the world's name) and a link
in its model (frame_id: the model, child ``model/link``); the world frame is the robot base frame of the scene
(table top at z = 0). A drawer is a link of its cabinet model. The last ``/`` part of a child frame names the
scene entity (``tape``, ``drawer_cabinet/drawer`` -> ``drawer``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ModelPose:
    """One transform as Gazebo's pose publisher, bridged by ros_gz, gives it: a model in the world, or a link
    (a drawer) in its model (gz-sim PosePublisher.cc:436-447, 585-599; ros_gz_bridge geometry_msgs.cpp:243-258)."""

    frame_id: str
    child_frame_id: str
    position: tuple[float, float, float]
    orientation: tuple[float, float, float, float]  # x, y, z, w


@dataclass(frozen=True)
class WorldPose:
    position: np.ndarray  # (3,) in the world frame
    quat: np.ndarray  # (4,) w, x, y, z (MuJoCo's order)
    received: float  # time.monotonic() when the newest transform of its chain arrived


def entity_name(frame: str) -> str:
    return frame.replace("::", "/").rstrip("/").rsplit("/", 1)[-1]


def _quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2])


def _rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    return _quat_mul(_quat_mul(q, np.array([0.0, *v])), q * np.array([1.0, -1.0, -1.0, -1.0]))[1:]


class PoseTree:
    """The latest transform of every child frame; world poses by entity name on request."""

    def __init__(self) -> None:
        self._latest: dict[str, tuple[ModelPose, float]] = {}

    def update(self, poses: Iterable[ModelPose], received: float) -> None:
        for p in poses:
            self._latest[p.child_frame_id.replace("::", "/")] = (p, received)

    def world_poses(self) -> dict[str, WorldPose]:
        """Every child frame composed down to a root (a frame nothing reports), keyed by entity name."""
        out: dict[str, WorldPose] = {}
        for child in self._latest:
            resolved = self._resolve(child, set())
            if resolved is not None:
                out[entity_name(child)] = resolved
        return out

    def _resolve(self, frame: str, seen: set[str]) -> WorldPose | None:
        entry = self._latest.get(frame)
        if entry is None:  # a root: the world
            return WorldPose(np.zeros(3), np.array([1.0, 0.0, 0.0, 0.0]), np.inf)
        if frame in seen:
            return None  # a cycle: no world pose
        pose, received = entry
        parent = self._resolve(pose.frame_id.replace("::", "/"), seen | {frame})
        if parent is None:
            return None
        x, y, z, w = pose.orientation
        local_q = np.array([w, x, y, z]) / max(1e-12, float(np.linalg.norm([w, x, y, z])))
        position = parent.position + _rotate(parent.quat, np.asarray(pose.position, dtype=float))
        return WorldPose(position, _quat_mul(parent.quat, local_q), min(received, parent.received))
