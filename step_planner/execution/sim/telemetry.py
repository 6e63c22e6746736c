"""Read-only views of the running simulator for viewers and recordings: joints, object poses, the URDF.

WHY separate from the executor: publishing to ROS (``ros/sim_bridge.py``) and recording episodes
(``episodes/``) both sample the same state at a rate of simulated time, from ``SimExecutor.step_hooks``
(called after every physics step on the stepping thread). Nothing here changes the simulation.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import mujoco
import numpy as np

from step_planner.execution.sim.model import ARM_JOINTS, FINGER_JOINTS, panda_urdf_path

JOINT_NAMES = ARM_JOINTS + FINGER_JOINTS  # MoveIt's Panda names: panda_joint1..7, panda_finger_joint1/2
BASE_FRAME = "panda_link0"  # the simulator's world frame is the robot base frame


@dataclass(frozen=True)
class JointSample:
    sim_time: float
    position: tuple[float, ...]  # in JOINT_NAMES order (rad; m for the fingers)
    velocity: tuple[float, ...]
    effort: tuple[float, ...]  # actuator generalized force (N m; N for the fingers)
    names: tuple[str, ...] = JOINT_NAMES


@dataclass(frozen=True)
class ObjectSample:
    name: str
    position: tuple[float, float, float]  # in BASE_FRAME
    orientation: tuple[float, float, float, float]  # x, y, z, w


def joint_sample(executor: Any) -> JointSample:
    """The arm and finger joints of a SimExecutor now."""
    data, index = executor.data, executor.index
    qpos = [*index.arm_qpos, *index.finger_qpos]
    dofs = [*index.arm_dof, *index.finger_dof]
    with executor.controller.lock:
        return JointSample(float(data.time), tuple(float(data.qpos[i]) for i in qpos),
                           tuple(float(data.qvel[i]) for i in dofs), tuple(float(data.qfrc_actuator[i]) for i in dofs))


def object_samples(executor: Any) -> list[ObjectSample]:
    """Every movable object's pose (ground truth, hidden ones included)."""
    data, info = executor.data, executor.info
    out = []
    with executor.controller.lock:
        for name, obj in info.objects.items():
            p, q = data.xpos[obj.body_id], data.xquat[obj.body_id]  # MuJoCo quaternions are w, x, y, z
            out.append(ObjectSample(name, (float(p[0]), float(p[1]), float(p[2])),
                                    (float(q[1]), float(q[2]), float(q[3]), float(q[0]))))
    return out


@lru_cache(maxsize=1)
def urdf_links() -> tuple[tuple[str, str], ...]:
    """(parent link, child link) of every joint of the URDF (the tf tree robot_state_publisher would build)."""
    root = ET.fromstring(panda_urdf_path().read_text())
    return tuple((j.find("parent").get("link"), j.find("child").get("link")) for j in root.iter("joint"))


def link_transforms(executor: Any) -> list[tuple[str, str, tuple[float, ...], tuple[float, ...]]]:
    """(parent, child, translation, rotation x y z w) of each URDF joint, from the bodies' poses now."""
    data, model = executor.data, executor.model
    out = []
    quat = np.zeros(4)
    with executor.controller.lock:
        for parent, child in urdf_links():
            p, c = model.body(parent).id, model.body(child).id
            rot_p = data.xmat[p].reshape(3, 3)
            t = rot_p.T @ (data.xpos[c] - data.xpos[p])
            mujoco.mju_mat2Quat(quat, (rot_p.T @ data.xmat[c].reshape(3, 3)).reshape(-1))
            out.append((parent, child, (float(t[0]), float(t[1]), float(t[2])),
                        (float(quat[1]), float(quat[2]), float(quat[3]), float(quat[0]))))
    return out


class Sampler:
    """A step hook that calls ``sink()`` at most once per ``period_s`` of simulated time.

    A simulator reset starts its clock at 0 again; the sampler notices the time going back and restarts.
    """

    def __init__(self, period_s: float, sink: Callable[[], None]) -> None:
        if period_s <= 0:
            raise ValueError("period_s must be > 0")
        self.period_s = period_s
        self.sink = sink
        self._next = -math.inf
        self._last = -math.inf

    def __call__(self, data: Any) -> None:
        t = float(data.time)
        if t < self._last:
            self._next = -math.inf
        self._last = t
        if t + 1e-9 >= self._next:
            self._next = t + self.period_s
            self.sink()


def robot_description() -> str:
    """The URDF the simulator loads (pybullet's ``franka_panda/panda.urdf``), meshes as absolute ``file://`` URIs.

    The file names its meshes ``package://meshes/...`` relative to its folder, which no ROS package
    provides; absolute URIs let RViz and Foxglove on this machine load them.
    """
    path = panda_urdf_path()
    return path.read_text().replace("package://meshes/", f"file://{path.parent}/meshes/")
