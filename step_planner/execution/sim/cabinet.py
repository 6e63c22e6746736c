"""Cabinets with one drawer or two stacked, sliding toward the robot (-x), with front handles.

Every handle is a vertical bar on two posts, grasped from the front the way a Franka integrator
would: hand horizontal, pointing into the cabinet, fingers closing across the bar. Top-down
handle grasps could not reach a lower drawer once the drawer above was open (the open drawer
sits over the lower handle); a horizontal hand slides under it.

Stacking rules follow from the hand (measured on the model: the hand is 21 cm along the closing
axis and 6.4 cm across; the wrist, 4-16 cm behind the grasp point, 8.8 cm across):

- a lower drawer's handle stands 6.5 cm above the cabinet base and its cavity is tall enough that
  hand and wrist (+-5 cm about the grasp height) pass under the open drawer above it;
- a hand reaching down into a drawer must stay in front of whatever sits above that drawer: the
  cabinet top for the top drawer, the fully open upper drawer with its handle for a lower one.
  That limit is :attr:`DrawerInfo.reach_x`. A lower drawer must therefore slide out further
  than the one above; the builder refuses a stack that would leave it no reachable strip.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import mujoco
import numpy as np

from step_planner.domain.scene import SceneError

WALL = 0.01  # drawer and cabinet wall thickness
BASE_TOP = 0.02  # cabinet base plate top, above the cabinet position
HANDLE_STANDOFF = 0.035  # bar centre to the drawer's front face: room for the fingertips behind it
HANDLE_HALF = (0.007, 0.007, 0.03)  # the bar's half extents (x, y, z): vertical, 6 cm long
HANDLE_POST_DZ = 0.024  # posts sit above and below the fingers (2 cm wide) on the bar
LOW_HANDLE_HEIGHT = 0.065  # above the cabinet position: hand and wrist (+-5 cm) clear the table
LOWER_CAVITY = 0.105  # a lower drawer's cavity: hand and wrist fit under the open drawer above
CAVITY_CLEARANCE = 0.01  # above a drawer's walls
PANEL_ABOVE_WALLS = 0.025  # a drawer front reaches this far above the drawer's walls
HAND_ACROSS = 0.032  # half the hand's thickness across the closing axis
WRIST_EXTRA = 0.012  # the wrist is this much wider than the hand, and may be at the height above
MIN_STRIP = 0.07  # reachable length a lower drawer needs in front of the open drawer above
OPEN_SHORT = 0.01  # open_drawer stops this short of the slide's end


class SceneGeometryError(SceneError):
    """A scene's geometry cannot be built (names the entity and the field)."""


@dataclass
class DrawerInfo:
    name: str
    slide: float
    inner: np.ndarray  # inner size (x, y, wall height)
    floor_z: float  # world z of the inside of the drawer floor
    closed_center: np.ndarray = field(default_factory=lambda: np.zeros(2))  # interior centre (x, y), closed
    reach_x: float = np.inf  # world x a hand reaching into this drawer must stay below (see module doc)
    above: str | None = None  # the drawer stacked on this one
    headroom: float = np.inf  # clear height above the floor, under the shelf or cabinet top over it
    body_id: int = -1
    joint_id: int = -1
    qpos_adr: int = -1
    handle_site: int = -1
    geom_ids: frozenset[int] = frozenset()

    @property
    def open_position(self) -> float:
        """Where ``open_drawer`` leaves the slide."""
        return self.slide - OPEN_SHORT

    def interior_front(self, opening: float) -> float:
        """World x of the inside of the front wall at this opening."""
        return float(self.closed_center[0] - self.inner[0] / 2 - opening)


def geometry_vector(geometry: dict, key: str, n: int, where: str, default=None) -> np.ndarray:
    """``geometry[key]`` as n floats, or a SceneGeometryError naming the field."""
    value = geometry.get(key, default)
    try:
        arr = np.asarray(value, dtype=float).reshape(-1)
    except (TypeError, ValueError) as exc:
        raise SceneGeometryError(f"{where}: geometry.{key} must be {n} numbers, got {value!r}") from exc
    if value is None or arr.shape != (n,):
        raise SceneGeometryError(f"{where}: geometry.{key} must be {n} numbers, got {value!r}")
    return arr


def add_box(body, name: str, pos, half, rgba=(0.6, 0.45, 0.3, 1.0), density: float | None = None):
    """A box geom on ``body`` (half extents ``half``), wooden brown unless told otherwise."""
    g = body.add_geom()
    g.name = name
    g.type = mujoco.mjtGeom.mjGEOM_BOX
    g.pos = list(map(float, pos))
    g.size = list(map(float, half))
    g.rgba = list(rgba)
    if density is not None:
        g.density = density
    return g


def _stack(drawers: list) -> tuple[np.ndarray, np.ndarray, list[float]]:
    """Shared cabinet position and inner size, and each drawer's slide, validated."""
    where = f"place '{drawers[0].name}'"
    base = geometry_vector(drawers[0].geometry, "cabinet_position", 3, where)
    inner = geometry_vector(drawers[0].geometry, "inner_size", 3, where)
    levels = [int(d.geometry.get("level", 0)) for d in drawers]
    if sorted(levels) != list(range(len(drawers))) or len(drawers) > 2:
        raise SceneGeometryError(
            f"{where}: drawers sharing a cabinet_position need geometry.level 0 (bottom) and 1 (top); "
            f"at most two per cabinet, got levels {sorted(levels)}"
        )
    if np.any(inner <= 0):
        raise SceneGeometryError(f"{where}: geometry.inner_size must be positive")
    slides = []
    for d in drawers:
        if not np.allclose(geometry_vector(d.geometry, "inner_size", 3, f"place '{d.name}'"), inner):
            raise SceneGeometryError(f"place '{d.name}': stacked drawers need the same geometry.inner_size")
        s = float(d.geometry.get("slide", 0.2))
        if not 0.05 <= s <= inner[0] + 0.02:
            raise SceneGeometryError(f"place '{d.name}': geometry.slide must be between 0.05 and the drawer depth")
        slides.append(s)
    return base, inner, slides


def add_cabinet(spec: mujoco.MjSpec, drawers: list) -> list[DrawerInfo]:
    """Build one cabinet for ``drawers`` (places sharing a ``cabinet_position``), bottom first."""
    drawers = sorted(drawers, key=lambda d: int(d.geometry.get("level", 0)))
    base, inner, slides = _stack(drawers)
    n, t = len(drawers), WALL
    L, W, H = inner[0] + 2 * t, inner[1] + 2 * t, inner[2]
    top_cavity = 0.002 + t + H + CAVITY_CLEARANCE
    cavities = [max(LOWER_CAVITY, top_cavity)] * (n - 1) + [top_cavity]
    bottoms = [BASE_TOP + sum(c + t for c in cavities[:k]) for k in range(n)]
    zc = bottoms[-1] + cavities[-1]  # cavity ceiling
    ztop = zc + 0.015
    cab = spec.worldbody.add_body()
    name = drawers[0].name
    cab.name = f"{name}_cabinet"
    cab.pos = list(map(float, base))
    wood = (0.55, 0.42, 0.3, 1.0)
    x0, x1 = -L / 2 + 0.002, L / 2 + 0.005 + t
    ys = W / 2 + 0.004 + t
    add_box(cab, f"{name}_cab_base", [(x0 + x1) / 2, 0, BASE_TOP / 2], [(x1 - x0) / 2, ys, BASE_TOP / 2], wood)
    add_box(cab, f"{name}_cab_top", [(x0 + x1) / 2, 0, (zc + ztop) / 2], [(x1 - x0) / 2, ys, 0.0075], wood)
    for k in range(1, n):
        add_box(cab, f"{name}_cab_shelf{k}", [(x0 + x1) / 2, 0, bottoms[k] - t / 2], [(x1 - x0) / 2, ys - t, t / 2],
                wood)
    for sy in (-1, 1):
        add_box(
            cab,
            f"{name}_cab_side{sy:+d}",
            [(x0 + x1) / 2, sy * (ys - t / 2), (BASE_TOP + zc) / 2],
            [(x1 - x0) / 2, t / 2, (zc - BASE_TOP) / 2],
            wood,
        )
    add_box(cab, f"{name}_cab_back", [x1 - t / 2, 0, (BASE_TOP + zc) / 2], [t / 2, ys - t, (zc - BASE_TOP) / 2], wood)
    infos: list[DrawerInfo] = []
    front_face = -L / 2 - t  # a closed drawer's front face, cabinet frame
    for k, place in enumerate(drawers):
        top = k == n - 1
        body_z = bottoms[k] + 0.002
        panel_top = ztop if top else body_z + t + H + PANEL_ABOVE_WALLS
        handle_z = max((body_z + panel_top) / 2, LOW_HANDLE_HEIGHT)
        _add_drawer_body(cab, place, (L, W, H), body_z, panel_top, ys, handle_z)
        # the cabinet top's front edge, or the drawer above fully open with its handle
        reach_local = x0 if top else front_face - slides[k + 1] - HANDLE_STANDOFF - HANDLE_HALF[0]
        reach_x = float(base[0] + reach_local - WRIST_EXTRA * (not top))
        ceiling = zc if top else bottoms[k + 1] - t
        info = DrawerInfo(
            place.name,
            slides[k],
            inner,
            float(base[2] + body_z + t),
            base[:2].copy(),
            reach_x,
            drawers[k + 1].name if not top else None,
            float(ceiling - body_z - t),
        )
        if not top:
            strip = reach_x - HAND_ACROSS - info.interior_front(info.open_position)
            if strip < MIN_STRIP:
                raise SceneGeometryError(
                    f"place '{place.name}': with '{drawers[k + 1].name}' open above it only {strip * 100:.1f} cm of "
                    f"it can be reached; let it slide at least {(MIN_STRIP - strip) * 100:.1f} cm further than "
                    "the drawer above (geometry.slide)"
                )
        infos.append(info)
    return infos


def _add_drawer_body(cab, place, dims, body_z: float, panel_top: float, ys: float, handle_z: float) -> None:
    """One drawer box on a slide joint, its front panel and its vertical handle bar."""
    L, W, H = dims
    t = WALL
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
    add_box(drawer, f"{place.name}_floor", [0, 0, t / 2], [L / 2, W / 2, t / 2], box, d)
    for sy in (-1, 1):
        add_box(drawer, f"{place.name}_side{sy:+d}", [0, sy * (W / 2 - t / 2), t + H / 2], [L / 2, t / 2, H / 2],
                box, d)
    for sx in (-1, 1):
        add_box(
            drawer, f"{place.name}_end{sx:+d}", [sx * (L / 2 - t / 2), 0, t + H / 2], [t / 2, W / 2 - t, H / 2], box, d
        )
    z_rel_top = panel_top - body_z
    add_box(drawer, f"{place.name}_front", [-L / 2 - t / 2, 0, z_rel_top / 2], [t / 2, ys, z_rel_top / 2], wood, d)
    metal = (0.7, 0.7, 0.75, 1.0)
    bar_x, bar_z = -L / 2 - t - HANDLE_STANDOFF, handle_z - body_z
    add_box(drawer, f"{place.name}_handle", [bar_x, 0.0, bar_z], HANDLE_HALF, metal, d)
    post_len = HANDLE_STANDOFF - HANDLE_HALF[0]
    for sz in (-1, 1):
        add_box(
            drawer,
            f"{place.name}_handle_post{sz:+d}",
            [-L / 2 - t - post_len / 2, 0.0, bar_z + sz * HANDLE_POST_DZ],
            [post_len / 2, 0.006, 0.005],
            metal,
            d,
        )
    site = drawer.add_site()
    site.name = f"{place.name}_handle_site"
    site.pos = [bar_x, 0.0, bar_z]


def resolve_ids(model: mujoco.MjModel, drawers: dict[str, DrawerInfo]) -> None:
    """Fill in body, joint, site and geom ids after compilation."""
    for dr in drawers.values():
        dr.body_id = model.body(dr.name).id
        jnt = model.joint(f"{dr.name}_slide")
        dr.joint_id, dr.qpos_adr = jnt.id, int(jnt.qposadr[0])
        dr.handle_site = model.site(f"{dr.name}_handle_site").id
        dr.geom_ids = frozenset(int(g) for g in np.where(model.geom_bodyid == dr.body_id)[0])
