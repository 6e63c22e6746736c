"""Physics -> symbolic WorldState: the physics' ground truth given to the one fact deriver.

Locations are read from poses and contacts, never from what the executor intended: what the fingers hold
comes from contacts (touching both fingers, fingers not closed on themselves, touching nothing else); where
everything else is, and whether a drawer is open, ``domain/perceived_facts.py`` decides from the poses, as it
does for a robot's perceived poses. Hidden objects follow from the drawer state via ``WorldState.observed()``.
"""

from __future__ import annotations

from collections.abc import Callable

import mujoco
import numpy as np

from step_planner.domain import perceived_facts as facts
from step_planner.domain.world import GRIPPER, WorldState
from step_planner.execution.sim.model import PandaIndex
from step_planner.execution.sim.scene_info import SceneInfo

DRAWER_CLOSED_TOL = facts.DRAWER_CLOSED_TOL
MIN_GRASP_OPENING = 0.002  # one finger; below this the fingers closed on nothing


def object_position(data: mujoco.MjData, info: SceneInfo, name: str) -> np.ndarray:
    return data.xpos[info.objects[name].body_id].copy()


def object_yaw(data: mujoco.MjData, info: SceneInfo, name: str) -> float:
    xmat = data.xmat[info.objects[name].body_id].reshape(3, 3)
    return float(np.arctan2(xmat[1, 0], xmat[0, 0]))


def finger_contacts(model: mujoco.MjModel, data: mujoco.MjData, index: PandaIndex, body_id: int) -> set[int]:
    """Which finger bodies touch ``body_id``."""
    touching = set()
    for c in data.contact[: data.ncon]:
        b1, b2 = model.geom_bodyid[c.geom1], model.geom_bodyid[c.geom2]
        for finger in index.finger_bodies:
            if {b1, b2} == {finger, body_id} and c.dist < 0.002:
                touching.add(finger)
    return touching


def is_held(model, data, index: PandaIndex, info: SceneInfo, name: str) -> bool:
    """Between both fingers, fingers not fully closed, and near the grasp frame."""
    obj = info.objects[name]
    opening = float(np.mean(data.qpos[index.finger_qpos]))
    near = np.linalg.norm(data.xpos[obj.body_id] - data.xpos[index.grasp_body]) < 0.04 + obj.half[2]
    return opening > MIN_GRASP_OPENING and near and len(finger_contacts(model, data, index, obj.body_id)) == 2


def touches_non_robot(model, data, index: PandaIndex, body_id: int) -> bool:
    """Whether the body rests on or touches anything other than the robot (a support)."""
    for c in data.contact[: data.ncon]:
        b1, b2 = model.geom_bodyid[c.geom1], model.geom_bodyid[c.geom2]
        if body_id in (b1, b2) and c.dist < 0.001:
            other = b2 if b1 == body_id else b1
            if other not in index.arm_bodies:
                return True
    return False


def drawer_opening(data: mujoco.MjData, info: SceneInfo, drawer: str) -> float:
    return float(data.qpos[info.drawers[drawer].qpos_adr])


def drawer_openings(data: mujoco.MjData, info: SceneInfo) -> dict[str, float]:
    return {name: drawer_opening(data, info, name) for name in info.drawers}


def drawer_volume(info: SceneInfo, drawer: str) -> facts.DrawerVolume:
    return info.volumes.drawers[list(info.drawers).index(drawer)]


def drawer_is_open(data: mujoco.MjData, info: SceneInfo, drawer: str) -> bool:
    """Not closed (the world's fact; an ajar drawer is not closed)."""
    return drawer_volume(info, drawer).is_open(drawer_opening(data, info, drawer))


def drawer_is_pulled_open(data: mujoco.MjData, info: SceneInfo, drawer: str) -> bool:
    """Open far enough to reach into: what open_drawer must achieve."""
    return drawer_volume(info, drawer).is_pulled_open(drawer_opening(data, info, drawer))


def held_object(model, data, index: PandaIndex, info: SceneInfo,
                held: Callable[[str], bool] | None = None) -> str | None:
    """The object between the fingers and lifted with them: held (default: finger contacts in the physics) and
    touching nothing but the robot."""
    for name, obj in info.objects.items():
        holding = held(name) if held is not None else is_held(model, data, index, info, name)
        if holding and not touches_non_robot(model, data, index, obj.body_id):
            return name
    return None


def object_location(model, data, index: PandaIndex, info: SceneInfo, name: str,
                    held: Callable[[str], bool] | None = None) -> str | None:
    """The symbolic location of one object, or None when it is nowhere named (e.g. fell off): the gripper when
    held and lifted, else what the fact deriver says of its position (``domain/perceived_facts.py``).

    ``held(name)`` says whether the fingers hold it (default: finger contacts in the physics; a robot across
    ROS answers from its gripper's state)."""
    body = info.objects[name].body_id
    holding = held(name) if held is not None else is_held(model, data, index, info, name)
    if holding and not touches_non_robot(model, data, index, body):
        return GRIPPER
    return facts.location(info.volumes, object_position(data, info, name), drawer_openings(data, info))


def ground_truth(model, data, index: PandaIndex, info: SceneInfo,
                 held: Callable[[str], bool] | None = None) -> facts.Perception:
    """Everything the physics knows, as a perception: every pose exact and fresh."""
    poses = {name: facts.ObjectPose(tuple(map(float, object_position(data, info, name))),
                                    float(np.degrees(object_yaw(data, info, name)))) for name in info.objects}
    return facts.Perception(poses, drawer_openings(data, info), held_object(model, data, index, info, held))


def observe_world(model, data, index: PandaIndex, info: SceneInfo, template: WorldState, robot_at: str,
                  held: Callable[[str], bool] | None = None) -> WorldState:
    """A fresh WorldState from the physics' ground truth, derived by the one fact deriver."""
    return facts.perceived_world(template, info.volumes, ground_truth(model, data, index, info, held), robot_at)
