"""Builds a MuJoCo scene (table, objects, cabinets with drawers, trays) around the Panda.

The symbolic scene (:class:`WorldState`, from ``config/scenes/*.yaml``) names things and says
where they are; its ``geometry`` fields say how big and where exactly. A seed perturbs object
poses by a few mm and degrees so repeated runs are not identical. Geometry conventions: a box
``size`` is its full extent (x, y, z); a cylinder ``size`` is (radius, height); positions are
in the robot base frame with the table top at z = 0; ``yaw`` is in degrees. Objects listed
``at:`` a drawer or tray start at the free spots ``place`` would choose there (their
``position`` is not used; drawers are filled as ``open_drawer`` leaves them, so every object can be reached);
a table object without a ``position`` goes to a free default spot; a missing box ``size`` is a
4 cm cube. Drawers and trays must have their geometry (an error names the missing field).
"""

from __future__ import annotations

import mujoco
import numpy as np

from step_planner.domain.world import WorldState
from step_planner.execution.sim import place_targets as targets
from step_planner.execution.sim.cabinet import (
    HANDLE_STANDOFF,
    WALL,
    DrawerInfo,
    SceneGeometryError,
    add_box,
    add_cabinet,
    geometry_vector,
    resolve_ids,
)
from step_planner.execution.sim.model import (
    FINGER_MAX,
    HOME_Q,
    PandaIndex,
    compile_spec,
    exclude_resting_self_contacts,
    panda_spec,
)
from step_planner.execution.sim.perception import scene_volumes
from step_planner.execution.sim.placement import Resting
from step_planner.execution.sim.scene_info import ObjectInfo, SceneInfo, TrayInfo

__all__ = ["DrawerInfo", "ObjectInfo", "SceneGeometryError", "SceneInfo", "TrayInfo", "build_scene", "scene_at_home"]


def _yaw_quat(yaw_deg: float) -> list[float]:
    h = np.radians(yaw_deg) / 2.0
    return [float(np.cos(h)), 0.0, 0.0, float(np.sin(h))]


def _add_table(spec, place, info: SceneInfo) -> None:
    where = f"place '{place.name}'"
    size = geometry_vector(place.geometry, "size", 3, where, [1.2, 1.0, 0.04])
    pos = geometry_vector(place.geometry, "position", 3, where, [0.5, 0.0, -size[2] / 2])
    add_box(spec.worldbody, f"{place.name}_top", pos, size / 2, rgba=(0.75, 0.7, 0.62, 1.0))
    info.table, info.table_size, info.table_center = place.name, size, pos[:2]
    info.table_top = float(pos[2] + size[2] / 2)


def _add_tray(spec, place, info: SceneInfo) -> None:
    where = f"place '{place.name}'"
    pos = geometry_vector(place.geometry, "position", 3, where)
    size = geometry_vector(place.geometry, "size", 3, where)
    body = spec.worldbody.add_body()
    body.name = place.name
    body.pos = list(map(float, pos))
    hx, hy, h = size[0] / 2, size[1] / 2, size[2]
    t, colour = 0.008, tuple(map(float, place.geometry.get("rgba", (0.25, 0.55, 0.3, 1.0))))
    add_box(body, f"{place.name}_floor", [0, 0, 0.0025], [hx, hy, 0.0025], colour)
    for sx in (-1, 1):
        add_box(body, f"{place.name}_wall_x{sx:+d}", [sx * (hx - t / 2), 0, h / 2], [t / 2, hy, h / 2], colour)
    for sy in (-1, 1):
        add_box(body, f"{place.name}_wall_y{sy:+d}", [0, sy * (hy - t / 2), h / 2], [hx - t, t / 2, h / 2], colour)
    info.trays[place.name] = TrayInfo(place.name, pos, size)


DEFAULT_BOX = [0.04, 0.04, 0.04]
JITTER = 0.004  # a seed moves objects up to this far (and turns them up to 2 degrees)
JITTER_SLACK = 0.008  # extra room between objects a scene starts with in a container
MIN_HEIGHT = 0.012  # the fingertips stop 4 mm above the support: a flatter object cannot be gripped
TABLE_SPOTS = tuple((x, y) for x in (0.35, 0.45, 0.55) for y in (0.0, 0.1, -0.1, 0.2))


def _object_shape(obj) -> tuple[str, np.ndarray]:
    where = f"object '{obj.name}'"
    geo = obj.geometry
    shape = geo.get("shape", "box")
    if shape == "box":
        half = geometry_vector(geo, "size", 3, where, DEFAULT_BOX) / 2
    elif shape == "cylinder":
        size = geometry_vector(geo, "size", 2, where)
        half = np.array([size[0], size[0], size[1] / 2])
    else:
        raise SceneGeometryError(f"{where}: geometry.shape must be box or cylinder, got {shape!r}")
    if np.any(half <= 0):
        raise SceneGeometryError(f"{where}: geometry.size must be positive")
    if 2 * half[2] < MIN_HEIGHT - 1e-9:
        raise SceneGeometryError(
            f"{where}: {2 * half[2] * 100:.1f} cm tall; the fingertips stop 4 mm above the support, so objects "
            f"need at least {MIN_HEIGHT * 100:.1f} cm (geometry.size)"
        )
    return shape, half


def _in_container(
    obj, shape: str, half: np.ndarray, info: SceneInfo, world: WorldState, inside: dict[str, list[Resting]]
) -> tuple[np.ndarray, float]:
    """A free spot in the drawer or tray the object is listed ``at:`` (position, yaw in degrees)."""
    place = obj.location
    yaw = np.radians(float(obj.geometry.get("yaw", 0.0)))
    if place in info.drawers:
        d = info.drawers[place]
        if why := targets.too_tall_for(d, half):
            raise SceneGeometryError(f"object '{obj.name}': {why}")
        floor, hand = targets.drawer_areas(d, d.open_position, float(d.closed_center[1]))
        z, shift = d.floor_z, (d.slide if world.places[place].is_open else 0.0) - d.open_position
    else:
        t = info.trays[place]
        floor, hand = targets.tray_area(t.position, t.size), targets.tray_hand_area(t.position, t.size, half)
        z, shift = float(t.position[2] + targets.TRAY_FLOOR), 0.0
    found = targets.container_spot(floor, shape, half, yaw, inside.setdefault(place, []), hand, slack=JITTER_SLACK)
    if found is None:
        raise SceneGeometryError(f"object '{obj.name}': no room left in {place} for the simulation")
    xy, yaw = found
    inside[place].append(targets.resting(shape, half, xy, yaw))
    return np.array([xy[0] - shift, xy[1], z + half[2]]), float(np.degrees(yaw))


def _initial_position(obj, half: np.ndarray, info: SceneInfo, world: WorldState) -> np.ndarray:
    """The scene's position, or a free default spot on the table."""
    where = f"object '{obj.name}'"
    place = obj.location
    if "position" in obj.geometry:
        return geometry_vector(obj.geometry, "position", 3, where)
    taken = [
        np.asarray(o.geometry["position"][:2], dtype=float)
        for o in world.objects.values()
        if "position" in o.geometry and o.location == place
    ]
    taken += [np.asarray(p, dtype=float) for p in info.auto_spots]
    for spot in TABLE_SPOTS:
        if all(np.linalg.norm(np.asarray(spot) - p) > 0.09 for p in taken):
            info.auto_spots.append(spot)
            return np.array([spot[0], spot[1], half[2]])
    raise SceneGeometryError(f"{where}: give geometry.position; no free default spot on {place}")


def _add_object(
    spec, obj, info: SceneInfo, pos: np.ndarray, yaw: float, rng: np.random.Generator, jitter: bool
) -> None:
    shape, half = _object_shape(obj)
    geo = obj.geometry
    if jitter:
        pos = pos + np.array([*rng.uniform(-JITTER, JITTER, 2), 0.0])
        yaw += float(rng.uniform(-2.0, 2.0))
    body = spec.worldbody.add_body()
    body.name = obj.name
    body.pos = list(map(float, pos + [0, 0, 0.0005]))
    body.quat = _yaw_quat(yaw)
    body.add_freejoint().name = f"{obj.name}_free"
    g = body.add_geom()
    g.name = f"{obj.name}_geom"
    g.type = mujoco.mjtGeom.mjGEOM_BOX if shape == "box" else mujoco.mjtGeom.mjGEOM_CYLINDER
    g.size = list(map(float, half)) if shape == "box" else [float(half[0]), float(half[2]), 0.0]
    g.rgba = list(map(float, geo.get("rgba", [0.5, 0.5, 0.5, 1.0])))
    g.friction = [1.0, 0.01, 0.001]
    g.condim = 4
    g.mass = float(geo.get("mass", 0.08))
    info.objects[obj.name] = ObjectInfo(obj.name, shape, half)


def _check_trays_clear_of_drawers(info: SceneInfo) -> None:
    """A tray in a cabinet or in a drawer's way would jam the drawer: refuse the scene."""
    for t in info.trays.values():
        lo, hi = t.position[:2] - t.size[:2] / 2, t.position[:2] + t.size[:2] / 2
        for d in info.drawers.values():
            front = d.interior_front(d.slide) - 2 * WALL  # the fully open drawer's front panel
            back = d.closed_center[0] + d.inner[0] / 2 + 2 * WALL
            cy, half_y = d.closed_center[1], d.inner[1] / 2 + 2 * WALL + 0.005
            handle = front - HANDLE_STANDOFF - 0.01
            for x0, y0, y1 in ((front, cy - half_y, cy + half_y), (handle, cy - 0.04, cy + 0.04)):
                if lo[0] < back and hi[0] > x0 and lo[1] < y1 and hi[1] > y0:
                    raise SceneGeometryError(
                        f"place '{t.name}': it stands where {d.name} and its cabinet are or where the drawer "
                        f"opens (x {x0:.2f}..{back:.2f}, y {y0:.2f}..{y1:.2f}); move it"
                    )


def build_scene(world: WorldState, seed: int = 0) -> tuple[mujoco.MjModel, SceneInfo]:
    """Compile the Panda plus the scene of ``world``; ``seed`` jitters object poses (0 = none)."""
    spec = panda_spec()
    exclude_resting_self_contacts(spec)
    light = spec.worldbody.add_light()
    light.pos = [0.5, 0.0, 2.0]
    light.dir = [0.0, 0.0, -1.0]
    light.castshadow = False
    info = SceneInfo()
    rng = np.random.default_rng(seed)
    cabinets: dict[tuple, list] = {}
    for place in world.places.values():
        if place.kind == "surface":
            _add_table(spec, place, info)
        elif place.kind == "drawer":
            key = tuple(geometry_vector(place.geometry, "cabinet_position", 3, f"place '{place.name}'"))
            cabinets.setdefault(key, []).append(place)
        elif place.kind in ("tray", "bin", "box"):
            _add_tray(spec, place, info)
    for drawers in cabinets.values():
        for drawer in add_cabinet(spec, drawers):
            info.drawers[drawer.name] = drawer
    _check_trays_clear_of_drawers(info)
    inside: dict[str, list[Resting]] = {}
    for obj in world.objects.values():
        shape, half = _object_shape(obj)
        if obj.location not in world.places:
            raise SceneGeometryError(
                f"object '{obj.name}': a simulated episode starts with every object on a place, not {obj.location!r}"
            )
        if obj.location in info.drawers or obj.location in info.trays:
            pos, yaw = _in_container(obj, shape, half, info, world, inside)
        else:
            pos, yaw = _initial_position(obj, half, info, world), float(obj.geometry.get("yaw", 0.0))
        _add_object(spec, obj, info, pos, yaw, rng, jitter=seed != 0)
    model = compile_spec(spec)
    for o in info.objects.values():
        o.body_id = model.body(o.name).id
        jnt = model.joint(f"{o.name}_free")
        o.qpos_adr, o.dof_adr = int(jnt.qposadr[0]), int(jnt.dofadr[0])
    resolve_ids(model, info.drawers)
    rest = mujoco.MjData(model)  # the drawers closed, where their volumes are taken
    mujoco.mj_kinematics(model, rest)
    info.volumes = scene_volumes(model, rest, info)
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
