"""Builds a MuJoCo scene (table, objects, cabinet with a drawer, tray) around the Panda.

The symbolic scene (:class:`WorldState`, from ``config/scenes/*.yaml``) names things and says
where they are; its ``geometry`` fields say how big and where exactly. A seed perturbs object
poses by a few mm and degrees so repeated runs are not identical. Geometry conventions: a box
``size`` is its full extent (x, y, z); a cylinder ``size`` is (radius, height); positions are
in the robot base frame with the table top at z = 0; ``yaw`` is in degrees. Objects listed
``at:`` a drawer or tray are put in that container's slots (their ``position`` is not used);
a table object without a ``position`` goes to a free default spot; a missing box ``size`` is a
4 cm cube. Drawers and trays must have their geometry (an error names the missing field).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import mujoco
import numpy as np

from step_planner.domain.scene import SceneError
from step_planner.domain.world import WorldState
from step_planner.execution.sim.model import compile_spec, exclude_resting_self_contacts, panda_spec

WALL = 0.01  # drawer and cabinet wall thickness
HANDLE_STANDOFF = 0.065  # handle bar centre to drawer front face (room for a finger behind it)


class SceneGeometryError(SceneError):
    """A scene's geometry cannot be built (names the entity and the field)."""


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
class DrawerInfo:
    name: str
    slide: float
    inner: np.ndarray  # inner size (x, y, height)
    floor_z: float  # world z of the inside of the drawer floor
    closed_center: np.ndarray = field(default_factory=lambda: np.zeros(2))  # interior centre (x, y), closed
    covered: bool = False  # another drawer above: its handle overhangs the front of this one
    body_id: int = -1
    joint_id: int = -1
    qpos_adr: int = -1
    handle_site: int = -1
    geom_ids: frozenset[int] = frozenset()


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
    auto_spots: list = field(default_factory=list)


def _vec(geometry: dict, key: str, n: int, where: str, default=None) -> np.ndarray:
    value = geometry.get(key, default)
    try:
        arr = np.asarray(value, dtype=float).reshape(-1)
    except (TypeError, ValueError) as exc:
        raise SceneGeometryError(f"{where}: geometry.{key} must be {n} numbers, got {value!r}") from exc
    if value is None or arr.shape != (n,):
        raise SceneGeometryError(f"{where}: geometry.{key} must be {n} numbers, got {value!r}")
    return arr


def _box(body, name: str, pos, half, rgba=(0.6, 0.45, 0.3, 1.0), density: float | None = None):
    g = body.add_geom()
    g.name = name
    g.type = mujoco.mjtGeom.mjGEOM_BOX
    g.pos = list(map(float, pos))
    g.size = list(map(float, half))
    g.rgba = list(rgba)
    if density is not None:
        g.density = density
    return g


def _yaw_quat(yaw_deg: float) -> list[float]:
    h = np.radians(yaw_deg) / 2.0
    return [float(np.cos(h)), 0.0, 0.0, float(np.sin(h))]


def _add_table(spec, place, info: SceneInfo) -> None:
    where = f"place '{place.name}'"
    size = _vec(place.geometry, "size", 3, where, [1.2, 1.0, 0.04])
    pos = _vec(place.geometry, "position", 3, where, [0.5, 0.0, -size[2] / 2])
    _box(spec.worldbody, f"{place.name}_top", pos, size / 2, rgba=(0.75, 0.7, 0.62, 1.0))
    info.table, info.table_size, info.table_center = place.name, size, pos[:2]


def _add_tray(spec, place, info: SceneInfo) -> None:
    where = f"place '{place.name}'"
    pos = _vec(place.geometry, "position", 3, where)
    size = _vec(place.geometry, "size", 3, where)
    body = spec.worldbody.add_body()
    body.name = place.name
    body.pos = list(map(float, pos))
    hx, hy, h = size[0] / 2, size[1] / 2, size[2]
    t, colour = 0.008, (0.25, 0.55, 0.3, 1.0)
    _box(body, f"{place.name}_floor", [0, 0, 0.0025], [hx, hy, 0.0025], colour)
    for sx in (-1, 1):
        _box(body, f"{place.name}_wall_x{sx:+d}", [sx * (hx - t / 2), 0, h / 2], [t / 2, hy, h / 2], colour)
    for sy in (-1, 1):
        _box(body, f"{place.name}_wall_y{sy:+d}", [0, sy * (hy - t / 2), h / 2], [hx - t, t / 2, h / 2], colour)
    info.trays[place.name] = TrayInfo(place.name, pos, size)


LOW_HANDLE_STANDOFF = 0.13  # a lower drawer's bar sticks out past the hand's half-width (10.4 cm)
STACK_HANDLE_OFFSET = 0.11  # stacked drawers' (shorter) handles sit left/right, clear of each other
COVERED_SLOTS_DY = (0.06, -0.01)  # a lower drawer's slots keep away from the upper handle's side


def _drawer_levels(drawers: list, where: str) -> tuple[np.ndarray, np.ndarray, float]:
    """Shared cabinet position and inner size of stacked drawers, validated."""
    base = _vec(drawers[0].geometry, "cabinet_position", 3, where)
    inner = _vec(drawers[0].geometry, "inner_size", 3, where)
    levels = sorted(int(d.geometry.get("level", 0)) for d in drawers)
    if levels != list(range(len(drawers))) or len(drawers) > 2:
        raise SceneGeometryError(
            f"{where}: drawers sharing a cabinet_position need geometry.level 0 (bottom) and 1 (top); "
            f"at most two per cabinet, got levels {levels}"
        )
    for d in drawers[1:]:
        if not np.allclose(_vec(d.geometry, "inner_size", 3, f"place '{d.name}'"), inner):
            raise SceneGeometryError(f"place '{d.name}': stacked drawers need the same geometry.inner_size")
    return base, inner, float(drawers[0].geometry.get("slide", 0.2))


def _add_cabinet(spec, drawers: list, info: SceneInfo) -> None:
    """A cabinet with one drawer, or two stacked, sliding toward the robot (-x).

    Handles are bars on posts, grasped from above with the fingers closing along the pull axis.
    The top drawer's bar is level with the cabinet top (the hand, 20 cm across the fingers, then
    clears the cabinet); a lower drawer's bar stands off further so the hand stays in front.
    """
    drawers = sorted(drawers, key=lambda d: int(d.geometry.get("level", 0)))
    where = f"place '{drawers[0].name}'"
    base, inner, slide = _drawer_levels(drawers, where)
    for d in drawers:
        s = float(d.geometry.get("slide", slide))
        if not 0.05 <= s <= inner[0] + 0.02:
            raise SceneGeometryError(f"place '{d.name}': geometry.slide must be between 0.05 and the drawer depth")
    n = len(drawers)
    t = WALL
    L, W, H = inner[0] + 2 * t, inner[1] + 2 * t, inner[2]
    zb = 0.02  # cabinet base plate top
    hc = 0.002 + t + H + 0.01  # height of one drawer's cavity
    bottoms = [zb + k * (hc + t) for k in range(n)]
    zc = bottoms[-1] + hc  # cavity ceiling
    ztop = zc + 0.015
    cab = spec.worldbody.add_body()
    cab.name = f"{drawers[0].name}_cabinet"
    cab.pos = list(map(float, base))
    wood = (0.55, 0.42, 0.3, 1.0)
    x0, x1 = -L / 2 + 0.002, L / 2 + 0.005 + t
    ys = W / 2 + 0.004 + t
    name = drawers[0].name
    _box(cab, f"{name}_cab_base", [(x0 + x1) / 2, 0, zb / 2], [(x1 - x0) / 2, ys, zb / 2], wood)
    _box(cab, f"{name}_cab_top", [(x0 + x1) / 2, 0, (zc + ztop) / 2], [(x1 - x0) / 2, ys, 0.0075], wood)
    for k in range(1, n):
        _box(cab, f"{name}_cab_shelf{k}", [(x0 + x1) / 2, 0, bottoms[k] - t / 2], [(x1 - x0) / 2, ys - t, t / 2], wood)
    for sy in (-1, 1):
        _box(
            cab,
            f"{name}_cab_side{sy:+d}",
            [(x0 + x1) / 2, sy * (ys - t / 2), (zb + zc) / 2],
            [(x1 - x0) / 2, t / 2, (zc - zb) / 2],
            wood,
        )
    _box(cab, f"{name}_cab_back", [x1 - t / 2, 0, (zb + zc) / 2], [t / 2, ys - t, (zc - zb) / 2], wood)
    for k, place in enumerate(drawers):
        top = k == n - 1
        body_z = bottoms[k] + 0.002
        panel_top = ztop + 0.012 if top else bottoms[k + 1] - 0.003
        if top:
            bar_z, standoff = ztop, HANDLE_STANDOFF
        else:
            bar_z, standoff = (body_z + panel_top) / 2, LOW_HANDLE_STANDOFF
        bar_y = 0.0 if n == 1 else (-STACK_HANDLE_OFFSET if top else STACK_HANDLE_OFFSET)
        half_bar = 0.065 if n == 1 else 0.04
        _add_drawer_body(cab, place, (L, W, H), body_z, panel_top, ys, (bar_y, bar_z, standoff, half_bar))
        info.drawers[place.name] = DrawerInfo(
            place.name,
            float(place.geometry.get("slide", slide)),
            inner,
            float(base[2] + body_z + t),
            closed_center=base[:2].copy(),
            covered=not top,
        )


def _add_drawer_body(cab, place, dims, body_z: float, panel_top: float, ys: float, handle) -> None:
    """One drawer box on a slide joint, its front panel and its handle bar."""
    L, W, H = dims
    t = WALL
    bar_y, bar_z_abs, standoff, half_bar = handle
    drawer = cab.add_body()
    drawer.name = place.name
    drawer.pos = [0.0, 0.0, body_z]
    joint = drawer.add_joint()
    joint.name = f"{place.name}_slide"
    joint.type = mujoco.mjtJoint.mjJNT_SLIDE
    joint.axis = [-1.0, 0.0, 0.0]
    joint.range = [0.0, float(place.geometry.get("slide", 0.2))]
    joint.limited = mujoco.mjtLimited.mjLIMITED_TRUE
    joint.damping = [8.0, 0.0, 0.0]
    joint.frictionloss = 0.5
    joint.armature = 0.2
    box = (0.8, 0.7, 0.55, 1.0)
    wood = (0.55, 0.42, 0.3, 1.0)
    d = 400.0
    _box(drawer, f"{place.name}_floor", [0, 0, t / 2], [L / 2, W / 2, t / 2], box, d)
    for sy in (-1, 1):
        _box(drawer, f"{place.name}_side{sy:+d}", [0, sy * (W / 2 - t / 2), t + H / 2], [L / 2, t / 2, H / 2], box, d)
    for sx in (-1, 1):
        _box(
            drawer, f"{place.name}_end{sx:+d}", [sx * (L / 2 - t / 2), 0, t + H / 2], [t / 2, W / 2 - t, H / 2], box, d
        )
    z_rel_top = panel_top - body_z
    _box(drawer, f"{place.name}_front", [-L / 2 - t / 2, 0, z_rel_top / 2], [t / 2, ys, z_rel_top / 2], wood, d)
    bar_x, bar_z = -L / 2 - t - standoff, bar_z_abs - body_z
    metal = (0.7, 0.7, 0.75, 1.0)
    _box(drawer, f"{place.name}_handle", [bar_x, bar_y, bar_z], [0.008, half_bar, 0.008], metal, d)
    for sy in (-1, 1):
        _box(
            drawer,
            f"{place.name}_handle_post{sy:+d}",
            [(bar_x - L / 2 - t) / 2, bar_y + sy * (half_bar - 0.007), bar_z],
            [(-L / 2 - t - bar_x) / 2, 0.006, 0.006],
            metal,
            d,
        )
    site = drawer.add_site()
    site.name = f"{place.name}_handle_site"
    site.pos = [bar_x, bar_y, bar_z]


DEFAULT_BOX = [0.04, 0.04, 0.04]
# where objects listed `at:` a drawer or tray go, as (dx, dy) from its centre; drawer slots sit in
# the front part that the open drawer exposes
DRAWER_SLOTS = ((-0.02, -0.07), (-0.02, 0.07), (-0.02, 0.0), (0.07, -0.07), (0.07, 0.07))
COVERED_SETBACK = 0.03  # in a lower drawer, keep objects (and the hand) clear of the handle above
TRAY_SLOTS = ((-0.05, 0.0), (0.05, 0.0), (0.0, 0.0), (-0.05, 0.03), (0.05, -0.03))  # first ones leave room; fingers fit
TABLE_SPOTS = tuple((x, y) for x in (0.35, 0.45, 0.55) for y in (0.0, 0.1, -0.1, 0.2))


def _object_shape(obj) -> tuple[str, np.ndarray]:
    where = f"object '{obj.name}'"
    geo = obj.geometry
    shape = geo.get("shape", "box")
    if shape == "box":
        half = _vec(geo, "size", 3, where, DEFAULT_BOX) / 2
    elif shape == "cylinder":
        size = _vec(geo, "size", 2, where)
        half = np.array([size[0], size[0], size[1] / 2])
    else:
        raise SceneGeometryError(f"{where}: geometry.shape must be box or cylinder, got {shape!r}")
    if np.any(half <= 0):
        raise SceneGeometryError(f"{where}: geometry.size must be positive")
    return shape, half


def _initial_position(obj, half: np.ndarray, info: SceneInfo, world: WorldState, used: dict[str, int]):
    """The scene's position; objects inside a drawer or tray go to that container's next free slot."""
    where = f"object '{obj.name}'"
    place = obj.location
    if place not in world.places:
        raise SceneGeometryError(f"{where}: a simulated episode starts with every object on a place, not {place!r}")
    k = used.get(place, 0)
    used[place] = k + 1
    if place in info.drawers:
        d = info.drawers[place]
        if k >= len(DRAWER_SLOTS):
            raise SceneGeometryError(f"{where}: no room left in {place} for the simulation")
        opening = d.slide if world.places[place].is_open else 0.0
        dx, dy = DRAWER_SLOTS[k]
        if d.covered:
            if k >= len(COVERED_SLOTS_DY):
                raise SceneGeometryError(f"{where}: a lower drawer holds at most {len(COVERED_SLOTS_DY)} objects here")
            dx, dy = dx - COVERED_SETBACK, COVERED_SLOTS_DY[k]
        return np.array([d.closed_center[0] - opening + dx, d.closed_center[1] + dy, d.floor_z + half[2]])
    if place in info.trays:
        t = info.trays[place]
        if k >= len(TRAY_SLOTS):
            raise SceneGeometryError(f"{where}: no room left in {place} for the simulation")
        dx, dy = TRAY_SLOTS[k]
        return np.array([t.position[0] + dx, t.position[1] + dy, t.position[2] + 0.005 + half[2]])
    if "position" in obj.geometry:
        return _vec(obj.geometry, "position", 3, where)
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


def _add_object(spec, obj, info: SceneInfo, pos: np.ndarray, rng: np.random.Generator, jitter: bool) -> None:
    shape, half = _object_shape(obj)
    geo = obj.geometry
    yaw = float(geo.get("yaw", 0.0))
    if jitter:
        pos = pos + np.array([*rng.uniform(-0.004, 0.004, 2), 0.0])
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
            key = tuple(_vec(place.geometry, "cabinet_position", 3, f"place '{place.name}'"))
            cabinets.setdefault(key, []).append(place)
        elif place.kind in ("tray", "bin", "box"):
            _add_tray(spec, place, info)
    for drawers in cabinets.values():
        _add_cabinet(spec, drawers, info)
    used: dict[str, int] = {}
    for obj in world.objects.values():
        pos = _initial_position(obj, _object_shape(obj)[1], info, world, used)
        _add_object(spec, obj, info, pos, rng, jitter=seed != 0)
    model = compile_spec(spec)
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
