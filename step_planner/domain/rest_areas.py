"""Where an object may rest in a drawer or a tray: floor areas, the hand's limits there, and the free spot a new
object takes (pure: footprints, no physics).

One definition serves the scene geometry (objects listed ``at:`` a drawer or tray start at spots found exactly
as ``place`` would find them) and the simulator's ``place`` itself (``execution/sim/place_targets.py``), so a
scene never starts with an object where the arm could not have put it, or could not pick it from.
"""

from __future__ import annotations

import numpy as np

from step_planner.domain.cabinets import WALL, DrawerGeometry
from step_planner.domain.placement import (
    PALM_ABOVE_GRASP,
    Area,
    Footprint,
    Resting,
    free_spots,
    grasp_height,
    held_footprints,
    palm_zone,
)

CONTAINER_GAP = 0.003  # between objects set down side by side in a container
CONTAINER_REACH = 0.74  # container spots farther from the base than this are not used
HAND_UNDERSIDE = 0.039  # the hand's underside above the grasp point (measured on the model)
TRAY_WALL = 0.008  # a tray's, bin's or box's wall thickness
TRAY_FLOOR = 0.005  # and its floor's
OPEN = np.inf


def resting(shape: str, half: np.ndarray, xy: np.ndarray, yaw: float) -> Resting:
    """An object standing at ``xy``: its footprint, height, its pick's palm zone and fingers (a
    cylinder's at the yaw ``pick`` tries first)."""
    fp = Footprint(np.asarray(xy, dtype=float), half[:2].copy(), yaw, round=shape == "cylinder")
    palm = palm_zone(shape, half, yaw, fp.centre)
    fingers = held_footprints(shape, half, yaw, pick_hand_yaw(shape, half, yaw), fp.centre)[1]
    return Resting(fp, 2 * float(half[2]), grasp_height(half) + PALM_ABOVE_GRASP, palm, fingers)


def pick_hand_yaw(shape: str, half: np.ndarray, obj_yaw: float) -> float:
    """The hand yaw ``pick`` grips a box with (across its narrow side); a cylinder's is free."""
    if shape == "cylinder":
        return np.pi / 2
    return obj_yaw + np.pi / 2 if half[0] >= half[1] else obj_yaw


def drawer_areas(d: DrawerGeometry, opening: float, y_center: float) -> tuple[Area, Area]:
    """The drawer's floor (world, at this opening) and where a hand reaching into it may be: behind
    the drawer's own front and in front of ``reach_x`` (what stands above the drawer)."""
    front = d.interior_front(opening)
    half_y = d.inner[1] / 2
    floor = Area(np.array([front, y_center - half_y]), np.array([front + d.inner[0], y_center + half_y]))
    hand = Area(np.array([front - WALL, -OPEN]), np.array([d.reach_x, OPEN]))
    return Area(floor.lo, floor.hi, max_radius=CONTAINER_REACH), hand


HEADROOM_GAP = 0.003  # an object in a drawer stays this far below what the drawer slides under


def too_tall_for(d: DrawerGeometry, half: np.ndarray) -> str | None:
    """Why an object this tall cannot go into the drawer (it would not close), or None."""
    if 2 * half[2] <= d.headroom - HEADROOM_GAP:
        return None
    return f"{2 * half[2] * 100:.1f} cm tall; {d.name} has {d.headroom * 100:.1f} cm of headroom and would not close"


def tray_area(position: np.ndarray, size: np.ndarray) -> Area:
    inner = size[:2] / 2 - TRAY_WALL
    return Area(position[:2] - inner, position[:2] + inner, max_radius=CONTAINER_REACH)


def tray_hand_area(position: np.ndarray, size: np.ndarray, half: np.ndarray, lift: float = 0.0) -> Area | None:
    """Where the hand must stay while it reaches into a tray or bin for this object: inside the
    walls when its underside would come lower than their top (a flat object in a deep bin),
    anywhere otherwise. The hand is 21 cm along the closing axis, so a small deep bin takes no
    flat objects: an honest "no room", not a collision."""
    underside = grasp_height(half) + HAND_UNDERSIDE + lift  # above the floor (``lift``: a place lets go higher)
    if underside >= size[2] - TRAY_FLOOR:
        return None  # over the walls: the motion planner's own margin decides
    inner = size[:2] / 2 - TRAY_WALL
    return Area(position[:2] - inner, position[:2] + inner)


def place_yaws(shape: str, half: np.ndarray, hand_now: float, obj_yaw: float) -> list[tuple[float, float]]:
    """(hand yaw, resulting object yaw) pairs: the current grasp first, then the wrist turned."""
    if shape == "cylinder":
        return [(a, obj_yaw) for a in (np.pi / 2, 0.0, np.pi / 4, -np.pi / 4)]
    return [(hand_now + t, obj_yaw + t) for t in (0.0, np.pi / 2, np.pi / 4, -np.pi / 4)]


def inflated(r: Resting, by: float) -> Resting:
    grow = lambda fp: fp and Footprint(fp.centre, fp.half + by, fp.yaw, fp.round)  # noqa: E731
    return Resting(grow(r.footprint), r.height, r.palm_bottom, r.palm, grow(r.fingers))


def container_spot(
    floor: Area,
    shape: str,
    half: np.ndarray,
    obj_yaw: float,
    others: list[Resting],
    hand: Area | None = None,
    slack: float = 0.0,
) -> tuple[np.ndarray, float] | None:
    """The best free (centre, object yaw) in a container for an object lying at ``obj_yaw``, or
    None; ``slack`` keeps that much more room around the others (a scene's start is jittered)."""
    yaws = place_yaws(shape, half, pick_hand_yaw(shape, half, obj_yaw), obj_yaw)
    others = [inflated(o, slack) for o in others] if slack else others
    spots = free_spots(floor, shape, half, yaws, others, CONTAINER_GAP, floor.fill_order, pack=True, hand_area=hand)
    if not spots:
        return None
    xy, hand_yaw = spots[0]
    return xy, dict(yaws)[hand_yaw]
