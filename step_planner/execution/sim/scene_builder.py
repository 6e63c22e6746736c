"""The MuJoCo scene around the Panda: a translation of the scene's geometry description into an MjSpec.

What is where, how big, how heavy, which joints the drawers slide on: all of that is
:func:`step_planner.domain.scene_geometry.scene_geometry` (the Gazebo world of ``export-world`` translates the same
description). Only MuJoCo's own settings are added here: a light, geom contact dimensions, the Panda itself.
"""

from __future__ import annotations

import mujoco
import numpy as np

from step_planner.domain.bodies import Body, Box
from step_planner.domain.perceived_facts import volumes_of
from step_planner.domain.scene_geometry import ObjectGeometry, SceneGeometry, SceneGeometryError, scene_geometry
from step_planner.domain.world import WorldState
from step_planner.execution.sim.model import (
    FINGER_MAX,
    HOME_Q,
    PandaIndex,
    compile_spec,
    exclude_resting_self_contacts,
    panda_spec,
)
from step_planner.execution.sim.scene_info import DrawerInfo, ObjectInfo, SceneInfo, TrayInfo

__all__ = ["DrawerInfo", "ObjectInfo", "SceneGeometryError", "SceneInfo", "TrayInfo", "build_scene", "scene_at_home"]

OBJECT_CONDIM = 4  # sliding and torsional friction: a gripped object does not spin about the closing axis


def _add_box(body: mujoco.MjsBody, box: Box) -> None:
    g = body.add_geom()
    g.name = box.name
    g.type = mujoco.mjtGeom.mjGEOM_BOX
    g.pos = list(box.pos)
    g.size = list(box.half)
    g.rgba = list(box.rgba)
    if box.density is not None:
        g.density = box.density


def _add_body(parent: mujoco.MjsBody, body: Body) -> None:
    b = parent.add_body()
    b.name = body.name
    b.pos = list(body.pos)
    if body.slide is not None:
        s = body.slide
        joint = b.add_joint()
        joint.name = s.name
        joint.type = mujoco.mjtJoint.mjJNT_SLIDE
        joint.axis = list(s.axis)
        joint.range = [0.0, s.travel]
        joint.limited = mujoco.mjtLimited.mjLIMITED_TRUE
        joint.damping = [s.damping, 0.0, 0.0]
        joint.frictionloss = s.friction
        joint.armature = s.armature
    for box in body.boxes:
        _add_box(b, box)
    for child in body.children:
        _add_body(b, child)
    for site in body.sites:
        s = b.add_site()
        s.name = site.name
        s.pos = list(site.pos)


def _add_object(spec: mujoco.MjSpec, obj: ObjectGeometry) -> None:
    body = spec.worldbody.add_body()
    body.name = obj.name
    body.pos = list(map(float, obj.spawn_position))
    body.quat = list(obj.quat)
    body.add_freejoint().name = f"{obj.name}_free"
    g = body.add_geom()
    g.name = f"{obj.name}_geom"
    g.type = mujoco.mjtGeom.mjGEOM_BOX if obj.shape == "box" else mujoco.mjtGeom.mjGEOM_CYLINDER
    g.size = list(map(float, obj.half)) if obj.shape == "box" else [float(obj.half[0]), float(obj.half[2]), 0.0]
    g.rgba = list(obj.rgba)
    g.friction = list(obj.friction)
    g.condim = OBJECT_CONDIM
    g.mass = obj.mass


def scene_info(geometry: SceneGeometry) -> SceneInfo:
    """The records the simulator keeps (ids unresolved)."""
    info = SceneInfo()
    for s in geometry.surfaces.values():
        info.table, info.table_size, info.table_center = s.name, s.size, s.center[:2]
    info.trays = {c.name: TrayInfo(c.name, c.position, c.size) for c in geometry.containers.values()}
    info.drawers = {d.name: DrawerInfo.of(d) for d in geometry.drawers.values()}
    info.objects = {o.name: ObjectInfo(o.name, o.shape, o.half) for o in geometry.objects.values()}
    info.volumes = volumes_of(geometry)
    return info


def build_scene(world: WorldState, seed: int = 0) -> tuple[mujoco.MjModel, SceneInfo]:
    """Compile the Panda plus the scene of ``world``; ``seed`` jitters object poses (0 = none)."""
    geometry = scene_geometry(world, seed)
    spec = panda_spec()
    exclude_resting_self_contacts(spec)
    light = spec.worldbody.add_light()
    light.pos = [0.5, 0.0, 2.0]
    light.dir = [0.0, 0.0, -1.0]
    light.castshadow = False
    for box in geometry.world_boxes:
        _add_box(spec.worldbody, box)
    for body in geometry.fixtures:
        _add_body(spec.worldbody, body)
    for obj in geometry.objects.values():
        _add_object(spec, obj)
    model = compile_spec(spec)
    info = scene_info(geometry)
    for o in info.objects.values():
        o.body_id = model.body(o.name).id
        jnt = model.joint(f"{o.name}_free")
        o.qpos_adr, o.dof_adr = int(jnt.qposadr[0]), int(jnt.dofadr[0])
    for dr in info.drawers.values():
        dr.body_id = model.body(dr.name).id
        jnt = model.joint(f"{dr.name}_slide")
        dr.joint_id, dr.qpos_adr = jnt.id, int(jnt.qposadr[0])
        dr.handle_site = model.site(f"{dr.name}_handle_site").id
        dr.geom_ids = frozenset(int(g) for g in np.where(model.geom_bodyid == dr.body_id)[0])
    return model, info


def initial_drawer_openings(world: WorldState, info: SceneInfo) -> dict[str, float]:
    """Slide positions matching the scene's open/closed flags."""
    return {n: (info.drawers[n].slide if world.places[n].is_open else 0.0) for n in info.drawers}


def scene_at_home(world: WorldState, seed: int = 0) -> tuple[mujoco.MjModel, SceneInfo, mujoco.MjData, PandaIndex]:
    """The compiled scene in its initial state: the arm at home, fingers open, drawers as the scene says
    (kinematics computed; the objects have not settled yet)."""
    model, info = build_scene(world, seed)
    data = mujoco.MjData(model)
    index = PandaIndex(model)
    data.qpos[index.arm_qpos] = HOME_Q
    data.qpos[index.finger_qpos] = FINGER_MAX
    for name, opening in initial_drawer_openings(world, info).items():
        data.qpos[info.drawers[name].qpos_adr] = opening
    mujoco.mj_forward(model, data)
    return model, info, data, index
