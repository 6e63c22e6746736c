"""Model and link poses as Gazebo's pose bridge (or a tracker's TF frames) reports them, composed into poses in
the robot's world.

Pure numpy (no ROS). gz-sim's PosePublisher reports a model in the world (frame_id: the world's name) and a link
in its model (frame_id: the model, child ``model/link``); the world frame is the robot base frame of the scene
(table top at z = 0). A drawer is a link of its cabinet model. The last ``/`` part of a child frame names the
scene entity (``tape``, ``drawer_cabinet/drawer`` -> ``drawer``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

RESET_BACK_S = 1e-3  # a stamp this much earlier than the frame's newest: the clock started again


@dataclass(frozen=True)
class ModelPose:
    """One transform as Gazebo's pose publisher, bridged by ros_gz, gives it: a model in the world, or a link
    (a drawer) in its model (gz-sim PosePublisher.cc:436-447, 585-599; ros_gz_bridge geometry_msgs.cpp:243-258)."""

    frame_id: str
    child_frame_id: str
    position: tuple[float, float, float]
    orientation: tuple[float, float, float, float]  # x, y, z, w
    stamp: float = 0.0  # the header's stamp (s; the simulation's time on a simulator)


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
    """The recent transforms of every child frame; world poses by entity name on request.

    ``world_poses(window_s)`` averages each frame's positions over the last ``window_s`` before its newest
    report, as a tracker's filter would: white noise of sigma shrinks by the square root of the reports in the
    window; a moving object lags by up to the window. 0: the newest report as it is.

    A report stamped earlier than the frame's newest one ends that frame's history: the simulation was reset
    (a scene loaded, a Gazebo world reset: its time starts again), so what came before describes another world
    and is not averaged into this one. tf2_ros does the like for its node's clock: Buffer::onTimeJump clears the
    buffer on a jump back in time (ros2/geometry2 tf2_ros/src/buffer.cpp); here the reports' own stamps tell it,
    as the planner's clock is the wall clock while the simulator's restarts.
    """

    def __init__(self, history_s: float = 2.0) -> None:
        self.history_s = history_s
        self._reports: dict[str, deque[tuple[float, ModelPose]]] = {}

    def update(self, poses: Iterable[ModelPose], received: float) -> None:
        for p in poses:
            reports = self._reports.setdefault(p.child_frame_id.replace("::", "/"), deque())
            if reports and p.stamp < reports[-1][1].stamp - RESET_BACK_S:
                reports.clear()
            reports.append((received, p))
            while reports and reports[0][0] < received - self.history_s:
                reports.popleft()

    def world_poses(self, window_s: float = 0.0) -> dict[str, WorldPose]:
        """Every child frame composed down to a root (a frame nothing reports), keyed by entity name."""
        out: dict[str, WorldPose] = {}
        for child in self._reports:
            resolved = self._resolve(child, set(), window_s)
            if resolved is not None:
                out[entity_name(child)] = resolved
        return out

    def _latest(self, frame: str, window_s: float) -> tuple[ModelPose, float] | None:
        reports = self._reports.get(frame)
        if not reports:
            return None
        received, newest = reports[-1]
        if window_s <= 0:
            return newest, received
        recent = [p.position for t, p in reports if t >= received - window_s]
        mean = tuple(float(v) for v in np.mean(np.asarray(recent, dtype=float), axis=0))
        return ModelPose(newest.frame_id, newest.child_frame_id, mean, newest.orientation), received

    def _resolve(self, frame: str, seen: set[str], window_s: float) -> WorldPose | None:
        entry = self._latest(frame, window_s)
        if entry is None:  # a root: the world
            return WorldPose(np.zeros(3), np.array([1.0, 0.0, 0.0, 0.0]), np.inf)
        if frame in seen:
            return None  # a cycle: no world pose
        pose, received = entry
        parent = self._resolve(pose.frame_id.replace("::", "/"), seen | {frame}, window_s)
        if parent is None:
            return None
        x, y, z, w = pose.orientation
        local_q = np.array([w, x, y, z]) / max(1e-12, float(np.linalg.norm([w, x, y, z])))
        position = parent.position + _rotate(parent.quat, np.asarray(pose.position, dtype=float))
        return WorldPose(position, _quat_mul(parent.quat, local_q), min(received, parent.received))
