"""Where a held object can be put down: free spots found from footprints, not fixed slots.

A place needs room for the object AND for the two fingers beside it along the closing axis
(they open a little to let go). Candidates are (centre, hand yaw) pairs on a 1 cm grid over the
target's floor area, kept when that footprint stays inside the area and clear of the objects
already resting there; the motion planner then decides among the first few (IK, descent
collision check). Fixed slots refused a second or third object that physically fits.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FINGER_REACH = 0.032  # release gap (1 cm) + finger thickness beyond the held object, along the closing axis
FINGER_HALF_WIDTH = 0.011  # finger pad half-width across the closing axis
FINGER_GAP = 0.003  # between a finger and an object it must not touch
GRID = 0.01
PALM_ABOVE_GRASP = 0.05  # the hand's palm is this far above the grasp point, 21 cm long along the closing axis
PALM_HALF = (0.105, 0.035)  # palm half extents: along the closing axis, across it
HAND_HALF = (0.11, 0.038)  # the hand seen from above, with the planner's safety margin


@dataclass(frozen=True)
class Footprint:
    """An oriented rectangle (or a disc when ``round``) on the support plane."""

    centre: np.ndarray
    half: np.ndarray  # half extents along the rectangle's own axes
    yaw: float
    round: bool = False

    def axes(self) -> np.ndarray:
        """The rectangle's unit axes as rows (computed once: the separating-axis test asks for them often)."""
        axes = self.__dict__.get("_axes")
        if axes is None:
            c, s = np.cos(self.yaw), np.sin(self.yaw)
            axes = np.array([[c, s], [-s, c]])
            axes.flags.writeable = False  # shared by every caller
            object.__setattr__(self, "_axes", axes)
        return axes

    def extent(self) -> np.ndarray:
        """Half size of the axis-aligned bounding box."""
        if self.round:
            return np.array([self.half[0], self.half[0]])
        c, s = abs(np.cos(self.yaw)), abs(np.sin(self.yaw))
        return np.array([c * self.half[0] + s * self.half[1], s * self.half[0] + c * self.half[1]])


def _box_point_distance(box: Footprint, point: np.ndarray) -> float:
    local = box.axes() @ (point - box.centre)
    return float(np.linalg.norm(np.maximum(np.abs(local) - box.half, 0.0)))


def overlap(a: Footprint, b: Footprint, gap: float) -> bool:
    """Whether two footprints come closer than ``gap`` (discs exact, boxes by separating axes)."""
    if a.round and b.round:
        return float(np.linalg.norm(a.centre - b.centre)) < a.half[0] + b.half[0] + gap
    if a.round or b.round:
        disc, box = (a, b) if a.round else (b, a)
        return _box_point_distance(box, disc.centre) < disc.half[0] + gap
    d = b.centre - a.centre
    a_axes, b_axes = a.axes(), b.axes()
    for axis in (*a_axes, *b_axes):
        ra = sum(h * abs(axis @ u) for h, u in zip(a.half, a_axes, strict=True))
        rb = sum(h * abs(axis @ u) for h, u in zip(b.half, b_axes, strict=True))
        if abs(axis @ d) > ra + rb + gap:
            return False
    return True


def held_footprints(shape: str, half: np.ndarray, obj_yaw: float, hand_yaw: float, xy: np.ndarray):
    """The object and its fingers (a rectangle along the closing axis) at ``xy``."""
    if shape == "cylinder":
        body = Footprint(xy, np.array([half[0], half[0]]), 0.0, round=True)
        along = half[0]
    else:
        body = Footprint(xy, half[:2].copy(), obj_yaw)
        closing = np.array([np.cos(hand_yaw), np.sin(hand_yaw)])
        along = float(sum(h * abs(closing @ u) for h, u in zip(half[:2], body.axes(), strict=True)))
    fingers = Footprint(xy, np.array([along + FINGER_REACH, FINGER_HALF_WIDTH]), hand_yaw)
    return body, fingers


def grasp_height(half: np.ndarray) -> float:
    """Grasp point above an object's bottom, as ``SimPrimitives.pick`` chooses it."""
    return float(max(half[2], 2 * half[2] - 0.03, 0.012))


def palm_zone(
    shape: str, half: np.ndarray, yaw: float, xy: np.ndarray, dims: tuple[float, float] = PALM_HALF
) -> Footprint | None:
    """Where the palm (or, with ``dims``, the whole hand) will be when this object is picked (a box
    is gripped across its narrow side; a cylinder at any yaw, so it has no single zone)."""
    if shape == "cylinder":
        return None
    along_x = half[1] > half[0]  # closing axis along the object's own x when x is the narrow side
    return Footprint(xy, np.array(dims if along_x else dims[::-1]), yaw)


@dataclass(frozen=True)
class Resting:
    """An object already in/on the target: its footprint, height, its pick's palm zone and where
    its pick's fingers go down (kept free: fingers landing on a neighbour upset the physics)."""

    footprint: Footprint
    height: float
    palm_bottom: float  # above its support, when it is picked
    palm: Footprint | None
    fingers: Footprint | None = None


def blocks_pick(tall: Footprint, tall_height: float, palm: Footprint | None, palm_bottom: float) -> bool:
    """Whether an object this tall, standing there, would be hit by the palm of another's pick."""
    return palm is not None and tall_height > palm_bottom - 0.006 and overlap(tall, palm, 0.0)


@dataclass(frozen=True)
class Area:
    """An axis-aligned floor region (container inside, drawer floor, reachable table), optionally
    also within ``max_radius`` of the robot base (the arm's reach)."""

    lo: np.ndarray
    hi: np.ndarray
    max_radius: float = np.inf

    def holds(self, fp: Footprint, margin: float) -> bool:
        # element by element in floats: the same IEEE sums as the arrays', without numpy's per-call cost (the
        # placement search asks this tens of thousands of times per scene)
        ex, ey = (float(v) for v in fp.extent())
        cx, cy = float(fp.centre[0]), float(fp.centre[1])
        lo_x, lo_y = float(self.lo[0]), float(self.lo[1])
        hi_x, hi_y = float(self.hi[0]), float(self.hi[1])
        if not (cx - ex >= lo_x + margin and cy - ey >= lo_y + margin
                and cx + ex <= hi_x - margin and cy + ey <= hi_y - margin):
            return False
        return bool(np.hypot(abs(cx) + ex, abs(cy) + ey) <= self.max_radius - margin)

    def fill_order(self, centre: np.ndarray) -> float:
        """Bottom-left fill: spots nearest one corner first, so later objects still find room
        (filling from the middle left no room for a third block where three fit)."""
        return float(np.sum(centre - self.lo))


@dataclass(frozen=True)
class _Held:
    """An object held at a spot, its footprints inside the area: what its neighbours are checked against."""

    body: Footprint
    fingers: Footprint
    palms: tuple[Footprint, Footprint | None]  # the palm now (this hand yaw) and when it is picked again
    height: float
    palm_bottom: float


def _held(area: Area, shape: str, half: np.ndarray, yaw_pair, xy: np.ndarray, hand_area=None) -> _Held | None:
    """The object (held at this hand yaw) and its fingers at ``xy`` if they fit ``area`` (and the hand
    ``hand_area``), else None."""
    hand_yaw, obj_yaw = yaw_pair
    body, fingers = held_footprints(shape, half, obj_yaw, hand_yaw, xy)
    if not (area.holds(body, 0.004) and area.holds(fingers, 0.0)):
        return None
    if hand_area is not None:
        hands = [Footprint(xy, np.array(HAND_HALF), hand_yaw), palm_zone(shape, half, obj_yaw, xy, HAND_HALF)]
        if not all(hand_area.holds(h, 0.0) for h in hands if h is not None):
            return None
    palms = (Footprint(xy, np.array(PALM_HALF), hand_yaw), palm_zone(shape, half, obj_yaw, xy))
    return _Held(body, fingers, palms, 2 * float(half[2]), grasp_height(half) + PALM_ABOVE_GRASP)


def _clear_of(held: _Held, other: Resting, gap: float) -> bool:
    """Neither touches the other, nor stands where the other's pick (or its own) would put a palm."""
    if overlap(held.body, other.footprint, gap) or overlap(held.fingers, other.footprint, FINGER_GAP):
        return False
    if other.fingers is not None and overlap(held.body, other.fingers, FINGER_GAP):
        return False
    return not (blocks_pick(held.body, held.height, other.palm, other.palm_bottom)
                or any(blocks_pick(other.footprint, other.height, p, held.palm_bottom) for p in held.palms))


def fits(
    area: Area, shape: str, half: np.ndarray, yaw_pair, xy: np.ndarray, others, gap: float, hand_area=None
) -> bool:
    """The object (held at this hand yaw) and its fingers fit at ``xy``, and every pick stays possible.

    With ``hand_area`` the hand must stay inside it, now and when this object is picked again
    (a drawer under a cabinet top or under another drawer is only reachable in front of it).
    """
    held = _held(area, shape, half, yaw_pair, xy, hand_area)
    return held is not None and all(_clear_of(held, o, gap) for o in others)


PROBE_HALF = np.array([0.02, 0.02, 0.02])  # a typical small object (4 cm block) for judging room left
PROBE_YAWS = ((np.pi / 2, 0.0), (0.0, np.pi / 2))


def _probes(area: Area, others, gap: float, hand_area=None) -> list[list[_Held]]:
    """For each 2 cm-grid spot, a 4 cm block held at each probe yaw that fits there among ``others``."""
    xs = np.arange(area.lo[0], area.hi[0] + 1e-9, 2 * GRID)
    ys = np.arange(area.lo[1], area.hi[1] + 1e-9, 2 * GRID)
    grid = [np.array([x, y]) for x in xs for y in ys]
    probes = []
    for c in grid:
        held = (_held(area, "box", PROBE_HALF, p, c, hand_area) for p in PROBE_YAWS)
        probes.append([h for h in held if h is not None and all(_clear_of(h, o, gap) for o in others)])
    return probes


def _room_left(shape: str, half: np.ndarray, yaws, spot, probes: list[list[_Held]], gap: float) -> int:
    """How many 2 cm-grid spots a 4 cm block would still find after this object goes to ``spot``: of those
    where it fits among the others (``probes``), the ones this object leaves it."""
    xy, hand_yaw = spot
    obj_yaw = dict(yaws)[hand_yaw]
    fp = Footprint(xy, half[:2].copy(), obj_yaw, round=shape == "cylinder")
    palm = palm_zone(shape, half, obj_yaw, xy)
    placed = Resting(fp, 2 * float(half[2]), grasp_height(half) + PALM_ABOVE_GRASP, palm)
    return sum(any(_clear_of(h, placed, gap) for h in held) for held in probes)


def free_spots(
    area: Area,
    shape: str,
    half: np.ndarray,
    yaws: list[tuple[float, float]],
    others: list[Resting],
    gap: float,
    order_key,
    limit: int = 8,
    spread: float = 0.02,
    pack: bool = False,
    hand_area: Area | None = None,
) -> list[tuple[np.ndarray, float]]:
    """Up to ``limit`` (centre, hand yaw) spots, best first by ``order_key(centre)``, each
    ``spread`` apart so a rejected spot is not retried a centimetre away.

    ``yaws`` lists (hand yaw, object yaw that hand yaw gives) pairs in order of preference. A spot
    that would leave this object or a neighbour unpickable (a tall object under a pick's palm) is
    not free either. With ``pack`` (containers) the spots that leave the most room for one more
    small object come first: greedy corner-first filling alone strands the third object.
    ``hand_area`` bounds the hand (see :func:`fits`).
    """
    xs = np.arange(area.lo[0], area.hi[0] + 1e-9, GRID)
    ys = np.arange(area.lo[1], area.hi[1] + 1e-9, GRID)
    found: list[tuple[np.ndarray, float]] = []
    for xy in sorted((np.array([x, y]) for x in xs for y in ys), key=order_key):
        if any(np.linalg.norm(xy - c) < spread for c, _ in found):
            continue
        pair = next((p for p in yaws if fits(area, shape, half, p, xy, others, gap, hand_area)), None)
        if pair is not None:
            found.append((xy, pair[0]))
        if len(found) >= limit:
            break
    if pack and len(found) > 1:
        probes = _probes(area, others, gap, hand_area)  # the same for every candidate: found once
        room = [_room_left(shape, half, yaws, s, probes, gap) for s in found]
        found = [s for _, s in sorted(zip(room, found, strict=True), key=lambda rs: -rs[0])]
    return found
