"""Where on each kind of target an object may rest in the live simulation: free spots on the table, in a drawer or
a tray as the physics has them now, and the table's fixtures (trays, cabinets, handle corridors).

The container rules themselves (floor areas, the hand's limits, the spot a new object takes) are
:mod:`step_planner.domain.rest_areas`, shared with the scene geometry, so a scene never starts with an object
where the arm could not have put it, or could not pick it from.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from step_planner.domain.cabinets import HANDLE_STANDOFF, WALL, DrawerGeometry
from step_planner.domain.placement import (
    HAND_HALF,
    Area,
    Footprint,
    Resting,
    fits,
    free_spots,
    held_footprints,
    overlap,
)
from step_planner.domain.rest_areas import (
    CONTAINER_GAP,
    TRAY_FLOOR,
    drawer_areas,
    pick_hand_yaw,
    place_yaws,
    resting,
    tray_area,
    tray_hand_area,
)

if TYPE_CHECKING:
    import mujoco

    from step_planner.execution.sim.scene_info import SceneInfo

TABLE_GAP = 0.015  # between objects on the table
PLACE_LIFT = 0.006  # a placed object is let go this far above its support
# within top-down reach (IK reaches 0.78 m from the base; approach and lift need a margin)
TABLE_REACH = Area(np.array([0.18, -0.55]), np.array([0.72, 0.55]), max_radius=0.7)
CABINET_HEIGHT = 0.25  # above any palm: nothing is set down where the hand would meet a cabinet
FRONT_APPROACH = 0.08  # a handle grasp starts this far in front of the handle
HANDLE_CORRIDOR = FRONT_APPROACH + 0.16  # plus hand and wrist behind the grasp point: kept clear


def closed_handle_xy(d: DrawerGeometry) -> np.ndarray:
    return np.array([d.closed_center[0] - d.inner[0] / 2 - 2 * WALL - HANDLE_STANDOFF, d.closed_center[1]])


def cabinet_fixtures(drawers: list[DrawerGeometry]) -> list[Resting]:
    """Table zones kept free of objects: each cabinet, its drawers fully open, and the corridor in
    front of the handles where the horizontal hand and wrist come in."""
    out = []
    for d in drawers:
        handle = closed_handle_xy(d)
        x0 = handle[0] - d.slide - HANDLE_CORRIDOR
        x1 = d.closed_center[0] + d.inner[0] / 2 + 2 * WALL + 0.01
        half_y = max(d.inner[1] / 2 + 2 * WALL + 0.01, HAND_HALF[0] + 0.01)
        box = Footprint(np.array([(x0 + x1) / 2, d.closed_center[1]]), np.array([(x1 - x0) / 2, half_y]), 0.0)
        out.append(Resting(box, CABINET_HEIGHT, 0.0, None))
    return out


def tray_fixtures(trays: list[tuple[np.ndarray, np.ndarray]]) -> list[Resting]:
    """Trays, bins and boxes (position, size) as table obstacles, with room for the fingers; as
    tall as their walls, so no palm is brought down onto them."""
    return [Resting(Footprint(p[:2], s[:2] / 2 + 0.02, 0.0), float(s[2]), 0.0, None) for p, s in trays]


def pick_yaw_pairs(shape: str, half: np.ndarray, obj_yaw: float) -> list[tuple[float, float]]:
    """The (hand yaw, object yaw) pairs ``pick`` may grip an object lying at ``obj_yaw`` with."""
    if shape == "cylinder":
        return [(a, obj_yaw) for a in (np.pi / 2, 0.0, np.pi / 4, -np.pi / 4)]
    return [(pick_hand_yaw(shape, half, obj_yaw), obj_yaw)]


def table_layout_problems(
    objects: list[tuple[str, str, np.ndarray, np.ndarray, float]], fixtures: list[Resting]
) -> list[str]:
    """Why objects standing on the table (name, shape, half extents, xy, yaw) could not be picked
    as they stand: out of reach, the fingers meet a neighbour or a fixture, or a tall neighbour
    stands under the palm. The same rule ``place`` follows, applied to a scene's start."""
    problems = []
    for name, shape, half, xy, yaw in objects:
        others = [resting(s, h, p, y) for n, s, h, p, y in objects if n != name] + fixtures
        if not any(
            fits(TABLE_REACH, shape, half, pair, xy, others, TABLE_GAP) for pair in pick_yaw_pairs(shape, half, yaw)
        ):
            problems.append(f"{name} at {np.round(xy, 3).tolist()}")
    return problems


# ---- the live scene ------------------------------------------------------------------------------
def _pose(data: mujoco.MjData, body_id: int) -> tuple[np.ndarray, float]:
    xmat = data.xmat[body_id].reshape(3, 3)
    return data.xpos[body_id].copy(), float(np.arctan2(xmat[1, 0], xmat[0, 0]))


def resting_objects(data: mujoco.MjData, info: SceneInfo, support_z: float, exclude: set) -> list[Resting]:
    """The objects resting at that height in the physics, except ``exclude``."""
    out = []
    for name, obj in info.objects.items():
        pos, yaw = _pose(data, obj.body_id)
        if name not in exclude and abs(pos[2] - obj.half[2] - support_z) < 0.03:
            out.append(resting(obj.shape, obj.half, pos[:2], yaw))
    return out


def fixtures(info: SceneInfo) -> list[Resting]:
    """Trays and cabinets (drawers fully open, the handle corridors) as table obstacles."""
    trays = [(t.position, t.size) for t in info.trays.values()]
    return tray_fixtures(trays) + cabinet_fixtures(list(info.drawers.values()))


def place_spots(
    data: mujoco.MjData, info: SceneInfo, name: str, target: str, hand_yaw: float
) -> tuple[list[tuple[np.ndarray, float]], float] | None:
    """Candidate (centre, hand yaw) spots for the held ``name`` on ``target``, best first, and the
    support height; None for a target the simulator has no floor for. In a container the spots
    leaving the most room come first, on the table the ones nearest where the object was."""
    obj = info.objects[name]
    pos, obj_yaw = _pose(data, obj.body_id)
    yaws = place_yaws(obj.shape, obj.half, hand_yaw, obj_yaw)
    if target in info.drawers:
        d = info.drawers[target]
        floor, hand = drawer_areas(d, float(data.qpos[d.qpos_adr]), float(data.xpos[d.body_id][1]))
        z = d.floor_z
    elif target in info.trays:
        t = info.trays[target]
        floor, hand = tray_area(t.position, t.size), tray_hand_area(t.position, t.size, obj.half, PLACE_LIFT)
        z = float(t.position[2] + TRAY_FLOOR)
    elif target == info.table:
        others = resting_objects(data, info, 0.0, {name}) + fixtures(info)
        nearest = lambda c: float(np.linalg.norm(c - pos[:2]))  # noqa: E731
        return free_spots(TABLE_REACH, obj.shape, obj.half, yaws, others, TABLE_GAP, nearest, spread=0.05), 0.0
    else:
        return None
    others = resting_objects(data, info, z, {name})
    spots = free_spots(
        floor, obj.shape, obj.half, yaws, others, CONTAINER_GAP, floor.fill_order, pack=True, hand_area=hand
    )
    return spots, z


PICK_TOLERANCE = 0.003  # an object may have settled a few mm from where it was put


def pick_yaws(data: mujoco.MjData, info: SceneInfo, name: str, where: str | None, yaws: list[float]) -> list[float]:
    """The hand yaws (of ``yaws``, in order) whose open fingers come down clear of the neighbours
    and inside the container ``name`` rests in, and whose hand stays where a hand may go there
    (in front of what stands above a drawer, inside a deep bin's walls): the rule ``place``
    follows, applied when the object is picked up again."""
    obj = info.objects[name]
    pos, obj_yaw = _pose(data, obj.body_id)
    floor = hand = None
    if where in info.drawers:
        d = info.drawers[where]
        floor, hand = drawer_areas(d, float(data.qpos[d.qpos_adr]), float(data.xpos[d.body_id][1]))
    elif where in info.trays:
        t = info.trays[where]
        floor, hand = tray_area(t.position, t.size), tray_hand_area(t.position, t.size, obj.half)
    neighbours = resting_objects(data, info, float(pos[2] - obj.half[2]), {name})
    keep = []
    for a in yaws:
        fingers = held_footprints(obj.shape, obj.half, obj_yaw, a, pos[:2])[1]
        if any(overlap(fingers, n.footprint, 0.0) for n in neighbours):
            continue
        if floor is not None and not Area(floor.lo, floor.hi).holds(fingers, -PICK_TOLERANCE):
            continue
        if hand is not None and not hand.holds(Footprint(pos[:2], np.array(HAND_HALF), a), -PICK_TOLERANCE):
            continue
        keep.append(a)
    return keep
