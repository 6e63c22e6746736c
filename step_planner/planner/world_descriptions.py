"""What a description word picks out in the perceived world: sides, sizes, colours, shapes, order and state.

Read from the scene's geometry in the robot's base frame (the scenes' convention): +x ahead of its base, +y to
its left. "left" is the largest y, "front" the smallest x, "nearest" the smallest distance from the base; things
within ``side_margin`` of the extreme one all fit (then several remain and the person is asked). Ordinals ("the
first block") are read against the world's order where it gives one (:func:`by_order`: drawers from the top,
things in a row from the robot's left); where it gives none every candidate stays open. Shape words ("round")
read the geometry's ``shape``. A reader that can answer None does so where the world does not say (then the
resolver notes the word as unread).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from step_planner.domain.world import GRIPPER, WorldState
from step_planner.planner.resolution_lexicon import Lexicon


def position(world: WorldState, name: str) -> tuple[float, float] | None:
    """(x, y) of an object or place in the robot's base frame, from the scene's geometry (an object without
    its own position is where its place is)."""
    seen: set[str] = set()
    while name and name not in seen:
        seen.add(name)
        entity = world.objects.get(name) or world.places.get(name)
        if entity is None:
            return None
        geometry = entity.geometry or {}
        pos = geometry.get("position") or geometry.get("cabinet_position")
        if pos is not None and len(pos) >= 2:
            return float(pos[0]), float(pos[1])
        obj = world.objects.get(name)
        name = obj.location if obj is not None and obj.location not in (None, GRIPPER) else ""
    return None


def colour_of(world: WorldState, name: str, lex: Lexicon) -> str:
    """The colour word of the name, else the lexicon colour nearest the RGBA within tolerance ('' if none)."""
    for word in name.split("_"):
        if word in lex.colours:
            return word
    entity = world.objects.get(name) or world.places.get(name)
    rgba = (entity.geometry or {}).get("rgba") if entity is not None else None
    if not rgba:
        return ""
    best, dist = min(((c, sum((a - b) ** 2 for a, b in zip(v, rgba[:3], strict=True)) ** 0.5)
                      for c, v in lex.colours.items()), key=lambda cd: cd[1])
    return best if dist <= lex.colour_tolerance else ""


def volume(world: WorldState, name: str) -> float | None:
    """The bounding box's volume (m³) from the geometry's ``size``; None without one."""
    entity = world.objects.get(name) or world.places.get(name)
    size = (entity.geometry or {}).get("size") if entity is not None else None
    if not size:
        return None
    out = 1.0
    for v in size:
        out *= float(v)
    return out


def extreme(values: dict[str, float | None], most: str, margin: float) -> list[str] | None:
    """The names whose value is within ``margin`` of the largest (``max``) or smallest; None when unknown."""
    if not values or any(v is None for v in values.values()):
        return None
    sign = 1.0 if most == "max" else -1.0
    top = max(sign * v for v in values.values())  # type: ignore[operator]
    return [n for n, v in values.items() if top - sign * v <= margin]  # type: ignore[operator]


def by_side(world: WorldState, names: Iterable[str], word: str, lex: Lexicon) -> list[str] | None:
    """The names at the side ``word`` says ("left": largest y); None when one of them has no position."""
    axis, most = lex.data["sides"][word]
    margin = float(lex.data.get("side_margin", 0.08))
    values: dict[str, float | None] = {}
    for n in names:
        pos = position(world, n)
        values[n] = None if pos is None else (pos[0] if axis == "x" else pos[1] if axis == "y"
                                              else (pos[0] ** 2 + pos[1] ** 2) ** 0.5)
    return extreme(values, most, margin)


def shape_fits(world: WorldState, names: Iterable[str], word: str, lex: Lexicon) -> list[str] | None:
    """The names whose geometry's ``shape`` is one the shape word covers ("round": cylinder); None when
    some thing's shape is not in the scene data (then the word is not read)."""
    shapes = set(lex.data.get("shapes", {}).get(word) or ())
    out = []
    for n in names:
        entity = world.objects.get(n) or world.places.get(n)
        shape = (entity.geometry or {}).get("shape") if entity is not None else None
        if not shape:
            return None
        if shape in shapes:
            out.append(n)
    return out


def by_order(world: WorldState, names: Sequence[str], word: str, lex: Lexicon) -> list[str]:
    """The ``word``-th ("first", "second", "last") of ``names`` in the order a person at the robot sees them.

    Drawers stacked in a cabinet count from the top (the scenes' ``level``: highest first). Things in a row
    across the robot's view (every one placed, all within ``side_margin`` of the same distance ahead, x) count
    from the robot's left to its right (largest y first, as the side words: +y is its left); things within
    ``side_margin`` of the picked one's place fit too. Where no such order is given (things scattered, a thing
    without a position) every name stays a candidate, so the person is asked."""
    ordinals = list(lex.data.get("ordinals") or ())
    index = -1 if word == "last" else ordinals.index(word)
    margin = float(lex.data.get("side_margin", 0.08))
    levels = {n: (world.places[n].geometry or {}).get("level") if n in world.places else None for n in names}
    if len(names) > 1 and all(v is not None for v in levels.values()):
        keys = {n: -float(levels[n]) for n in names}  # type: ignore[arg-type]
        margin = 0.0
    else:
        where = {n: position(world, n) for n in names}
        placed = {n: p for n, p in where.items() if p is not None}
        own = all(((world.objects.get(n) or world.places.get(n)).geometry or {}).get("position") is not None
                  for n in names)
        if len(placed) < len(names) or not own or max(p[0] for p in placed.values()) - min(
                p[0] for p in placed.values()) > margin:
            return list(names)
        keys = {n: -p[1] for n, p in placed.items()}
    ordered = sorted(names, key=lambda n: keys[n])
    if not -len(ordered) <= index < len(ordered):
        return []
    at = keys[ordered[index]]
    return [n for n in ordered if abs(keys[n] - at) <= margin]


def state_fits(world: WorldState, name: str, state: str) -> bool:
    """Is the place in ``state`` (open, closed, empty, full)? Objects have none."""
    place = world.places.get(name)
    if place is None:
        return False
    if state in ("open", "closed"):
        return place.openable and place.is_open == (state == "open")
    if state == "empty":
        return place.is_container and (place.is_open or not place.openable) and not world.contents(name)
    return place.capacity is not None and len(world.contents(name)) >= place.capacity
