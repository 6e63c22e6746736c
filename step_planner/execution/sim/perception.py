"""Physics -> symbolic WorldState: where each object is, what is held, which drawers are open.

Locations are read from poses and contacts, never from what the executor intended:
held = touching both fingers, fingers not closed on themselves, and touching nothing else
(lifted off its support); in a drawer = centre inside the drawer box (in the drawer's frame); in a tray =
inside its footprint and low; on the table = resting near the table top. Hidden objects follow
from the drawer state via ``WorldState.observed()``.
"""

from __future__ import annotations

from collections.abc import Callable

import mujoco
import numpy as np

from step_planner.domain.world import GRIPPER, WorldState
from step_planner.execution.sim.model import PandaIndex
from step_planner.execution.sim.scene_info import SceneInfo

DRAWER_OPEN_FRACTION = 0.6
DRAWER_CLOSED_TOL = 0.02
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


def drawer_is_open(data: mujoco.MjData, info: SceneInfo, drawer: str) -> bool:
    d = info.drawers[drawer]
    return drawer_opening(data, info, drawer) > DRAWER_OPEN_FRACTION * d.slide


def _in_drawer(data, info: SceneInfo, drawer: str, pos: np.ndarray) -> bool:
    d = info.drawers[drawer]
    frame_pos = data.xpos[d.body_id]
    local = data.xmat[d.body_id].reshape(3, 3).T @ (pos - frame_pos)
    return bool(
        abs(local[0]) < d.inner[0] / 2 + 0.01
        and abs(local[1]) < d.inner[1] / 2 + 0.01
        and -0.01 < local[2] < d.inner[2] + 0.02
    )


def _in_tray(info: SceneInfo, tray: str, pos: np.ndarray) -> bool:
    t = info.trays[tray]
    rel = pos - t.position
    return bool(abs(rel[0]) < t.size[0] / 2 and abs(rel[1]) < t.size[1] / 2 and -0.01 < rel[2] < t.size[2] + 0.06)


def object_location(model, data, index: PandaIndex, info: SceneInfo, name: str,
                    held: Callable[[str], bool] | None = None) -> str | None:
    """The symbolic location of one object, or None when it is nowhere named (e.g. fell off).

    ``held(name)`` says whether the fingers hold it (default: finger contacts in the physics; a robot
    across ROS answers from its gripper's state)."""
    body = info.objects[name].body_id
    holding = held(name) if held is not None else is_held(model, data, index, info, name)
    if holding and not touches_non_robot(model, data, index, body):
        return GRIPPER  # between the fingers and lifted with them
    pos = object_position(data, info, name)
    for drawer in info.drawers:
        if _in_drawer(data, info, drawer, pos):
            return drawer
    for tray in info.trays:
        if _in_tray(info, tray, pos):
            return tray
    rel = pos[:2] - info.table_center
    on_table = np.all(np.abs(rel) < info.table_size[:2] / 2) and pos[2] < 0.25
    return info.table if on_table and pos[2] > -0.01 else None


def observe_world(model, data, index: PandaIndex, info: SceneInfo, template: WorldState, robot_at: str,
                  held: Callable[[str], bool] | None = None) -> WorldState:
    """A fresh WorldState: the template's names and kinds, with physics-derived state."""
    world = template.copy()
    world.held = None
    world.robot_at = robot_at
    for name, obj in world.objects.items():
        if name not in info.objects:
            continue
        obj.location = object_location(model, data, index, info, name, held)
        pos = object_position(data, info, name)
        obj.geometry = {
            **obj.geometry,
            "position": [round(float(v), 4) for v in pos],
            "yaw": round(float(np.degrees(object_yaw(data, info, name))), 1),
        }
        if obj.location == GRIPPER:
            world.held = name
    for name in info.drawers:
        world.places[name].is_open = drawer_is_open(data, info, name)
        world.places[name].geometry = {
            **world.places[name].geometry,
            "opening": round(drawer_opening(data, info, name), 4),
        }
    return world
