"""Cabinets with one drawer or two stacked, sliding toward the robot (-x), with front handles: their bodies and
what each drawer is (:class:`DrawerGeometry`: interior, travel, closed pose, how far a hand may reach in).

Every handle is a vertical bar on two posts, grasped from the front the way a Franka integrator
would: hand horizontal, pointing into the cabinet, fingers closing across the bar. Top-down
handle grasps could not reach a lower drawer once the drawer above was open (the open drawer
sits over the lower handle); a horizontal hand slides under it.

Stacking rules follow from the hand (measured on the MuJoCo Panda: the hand is 21 cm along the closing
axis and 6.4 cm across; the wrist, 4-16 cm behind the grasp point, 8.8 cm across):

- a lower drawer's handle stands 6.5 cm above the cabinet base and its cavity is tall enough that
  hand and wrist (+-5 cm about the grasp height) pass under the open drawer above it;
- a hand reaching down into a drawer must stay in front of whatever sits above that drawer: the
  cabinet top for the top drawer, the fully open upper drawer with its handle for a lower one.
  That limit is :attr:`DrawerGeometry.reach_x`. A lower drawer must therefore slide out further
  than the one above; a stack that would leave it no reachable strip is refused.

Frames: a cabinet body stands at the scene's ``cabinet_position`` (the robot base frame, table top z = 0, no
rotation); a drawer body sits in its cabinet, its frame at the centre of its floor's underside (x, y) when
closed, and slides along -x (toward the robot) by 0..``slide``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from step_planner.domain.bodies import Body, Box, Site, Slide
from step_planner.domain.scene import SceneGeometryError, geometry_vector

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
DRAWER_AXIS = (-1.0, 0.0, 0.0)  # a drawer opens toward the robot
DRAWER_DENSITY = 400.0  # kg/m^3: a light wooden drawer
SLIDE_DAMPING = 8.0  # N s/m
SLIDE_FRICTION = 0.5  # N
SLIDE_ARMATURE = 0.2  # kg
WOOD = (0.55, 0.42, 0.3, 1.0)
DRAWER_BOX = (0.8, 0.7, 0.55, 1.0)
METAL = (0.7, 0.7, 0.75, 1.0)


@dataclass
class DrawerGeometry:
    """What a drawer is, for motion and for facts: its interior, its travel, where it is when closed.

    World quantities are in the robot base frame with the drawer closed unless a method takes an ``opening``
    (the slide's position, 0 = closed .. ``slide`` = fully open).
    """

    name: str
    slide: float  # m: travel along ``axis`` from closed (0) to fully open
    inner: np.ndarray  # inner size (x, y, wall height)
    floor_z: float  # world z of the inside of the drawer floor
    closed_center: np.ndarray = field(default_factory=lambda: np.zeros(2))  # interior centre (x, y), closed
    reach_x: float = np.inf  # world x a hand reaching into this drawer must stay below (see module doc)
    above: str | None = None  # the drawer stacked on this one
    headroom: float = np.inf  # clear height above the floor, under the shelf or cabinet top over it
    cabinet: str = ""  # the cabinet body (and Gazebo model) the drawer slides in
    level: int = 0  # 0: bottom drawer, 1: the one above
    axis: np.ndarray = field(default_factory=lambda: np.array(DRAWER_AXIS))  # world direction it opens along
    closed_position: np.ndarray = field(default_factory=lambda: np.zeros(3))  # world pose of its frame, closed
    interior_lo: np.ndarray = field(default_factory=lambda: np.zeros(3))  # the inside (floor to wall top),
    interior_hi: np.ndarray = field(default_factory=lambda: np.zeros(3))  # drawer frame
    handle: np.ndarray = field(default_factory=lambda: np.zeros(3))  # handle bar centre (grasp point), drawer frame

    @property
    def open_position(self) -> float:
        """Where ``open_drawer`` leaves the slide."""
        return self.slide - OPEN_SHORT

    def interior_front(self, opening: float) -> float:
        """World x of the inside of the front wall at this opening."""
        return float(self.closed_center[0] - self.inner[0] / 2 - opening)

    def frame_position(self, opening: float) -> np.ndarray:
        """World position of the drawer frame at this opening."""
        return self.closed_position + self.axis * opening

    def interior_box(self, opening: float) -> tuple[np.ndarray, np.ndarray]:
        """The inside (world, axis-aligned: floor top to wall top, between the walls) at this opening."""
        origin = self.frame_position(opening)
        return origin + self.interior_lo, origin + self.interior_hi


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


def _box(name: str, pos, half, rgba, density: float | None = None) -> Box:
    return Box(name, tuple(map(float, pos)), tuple(map(float, half)), tuple(rgba), density)


def cabinet(drawers: list) -> tuple[Body, list[DrawerGeometry]]:
    """One cabinet for ``drawers`` (places sharing a ``cabinet_position``) and its drawers, bottom first."""
    drawers = sorted(drawers, key=lambda d: int(d.geometry.get("level", 0)))
    base, inner, slides = _stack(drawers)
    n, t = len(drawers), WALL
    L, W, H = inner[0] + 2 * t, inner[1] + 2 * t, inner[2]
    top_cavity = 0.002 + t + H + CAVITY_CLEARANCE
    cavities = [max(LOWER_CAVITY, top_cavity)] * (n - 1) + [top_cavity]
    bottoms = [BASE_TOP + sum(c + t for c in cavities[:k]) for k in range(n)]
    zc = bottoms[-1] + cavities[-1]  # cavity ceiling
    ztop = zc + 0.015
    name = drawers[0].name
    x0, x1 = -L / 2 + 0.002, L / 2 + 0.005 + t
    ys = W / 2 + 0.004 + t
    boxes = [_box(f"{name}_cab_base", [(x0 + x1) / 2, 0, BASE_TOP / 2], [(x1 - x0) / 2, ys, BASE_TOP / 2], WOOD),
             _box(f"{name}_cab_top", [(x0 + x1) / 2, 0, (zc + ztop) / 2], [(x1 - x0) / 2, ys, 0.0075], WOOD)]
    for k in range(1, n):
        boxes.append(_box(f"{name}_cab_shelf{k}", [(x0 + x1) / 2, 0, bottoms[k] - t / 2],
                          [(x1 - x0) / 2, ys - t, t / 2], WOOD))
    for sy in (-1, 1):
        boxes.append(_box(f"{name}_cab_side{sy:+d}", [(x0 + x1) / 2, sy * (ys - t / 2), (BASE_TOP + zc) / 2],
                          [(x1 - x0) / 2, t / 2, (zc - BASE_TOP) / 2], WOOD))
    boxes.append(_box(f"{name}_cab_back", [x1 - t / 2, 0, (BASE_TOP + zc) / 2], [t / 2, ys - t, (zc - BASE_TOP) / 2],
                      WOOD))
    cabinet_name = f"{name}_cabinet"
    bodies: list[Body] = []
    infos: list[DrawerGeometry] = []
    front_face = -L / 2 - t  # a closed drawer's front face, cabinet frame
    for k, place in enumerate(drawers):
        top = k == n - 1
        body_z = bottoms[k] + 0.002
        panel_top = ztop if top else body_z + t + H + PANEL_ABOVE_WALLS
        handle_z = max((body_z + panel_top) / 2, LOW_HANDLE_HEIGHT)
        body, handle = _drawer_body(place, slides[k], (L, W, H), body_z, panel_top, ys, handle_z)
        bodies.append(body)
        # the cabinet top's front edge, or the drawer above fully open with its handle
        reach_local = x0 if top else front_face - slides[k + 1] - HANDLE_STANDOFF - HANDLE_HALF[0]
        reach_x = float(base[0] + reach_local - WRIST_EXTRA * (not top))
        ceiling = zc if top else bottoms[k + 1] - t
        info = DrawerGeometry(
            name=place.name, slide=slides[k], inner=inner, floor_z=float(base[2] + body_z + t),
            closed_center=base[:2].copy(), reach_x=reach_x, above=drawers[k + 1].name if not top else None,
            headroom=float(ceiling - body_z - t), cabinet=cabinet_name, level=k,
            closed_position=base + np.array([0.0, 0.0, body_z]),
            interior_lo=np.array([-inner[0] / 2, -inner[1] / 2, t]),
            interior_hi=np.array([inner[0] / 2, inner[1] / 2, t + H]), handle=np.array(handle),
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
    return Body(cabinet_name, tuple(map(float, base)), tuple(boxes), children=tuple(bodies)), infos


def _drawer_body(place, slide: float, dims, body_z: float, panel_top: float, ys: float,
                 handle_z: float) -> tuple[Body, tuple[float, float, float]]:
    """One drawer box on a slide joint, its front panel and its vertical handle bar (and the bar's centre)."""
    L, W, H = dims
    t, d = WALL, DRAWER_DENSITY
    boxes = [_box(f"{place.name}_floor", [0, 0, t / 2], [L / 2, W / 2, t / 2], DRAWER_BOX, d)]
    for sy in (-1, 1):
        boxes.append(_box(f"{place.name}_side{sy:+d}", [0, sy * (W / 2 - t / 2), t + H / 2], [L / 2, t / 2, H / 2],
                          DRAWER_BOX, d))
    for sx in (-1, 1):
        boxes.append(_box(f"{place.name}_end{sx:+d}", [sx * (L / 2 - t / 2), 0, t + H / 2], [t / 2, W / 2 - t, H / 2],
                          DRAWER_BOX, d))
    z_rel_top = panel_top - body_z
    boxes.append(_box(f"{place.name}_front", [-L / 2 - t / 2, 0, z_rel_top / 2], [t / 2, ys, z_rel_top / 2], WOOD, d))
    bar_x, bar_z = -L / 2 - t - HANDLE_STANDOFF, handle_z - body_z
    boxes.append(_box(f"{place.name}_handle", [bar_x, 0.0, bar_z], HANDLE_HALF, METAL, d))
    post_len = HANDLE_STANDOFF - HANDLE_HALF[0]
    for sz in (-1, 1):
        post = [-L / 2 - t - post_len / 2, 0.0, bar_z + sz * HANDLE_POST_DZ]
        boxes.append(_box(f"{place.name}_handle_post{sz:+d}", post, [post_len / 2, 0.006, 0.005], METAL, d))
    handle = (float(bar_x), 0.0, float(bar_z))
    slide_joint = Slide(f"{place.name}_slide", DRAWER_AXIS, float(slide), SLIDE_DAMPING, SLIDE_FRICTION,
                        SLIDE_ARMATURE)
    body = Body(place.name, (0.0, 0.0, float(body_z)), tuple(boxes), slide_joint,
                (Site(f"{place.name}_handle_site", handle),))
    return body, handle
