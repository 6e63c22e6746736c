"""What is where on the table, as one plain-data snapshot (no rclpy): the RViz markers and the page's top-down
picture are both drawn from it, so the engineer's view and the person's view cannot disagree.

:func:`scene_snapshot` takes the world model (believed objects included), which objects are only believed, the
scene geometry and the goal's tree, and returns a JSON-ready dict (schema :data:`SCHEMA_ID`):

- ``places``: each place with a volume (``kind`` table | container | drawer), its axis-aligned box ``lo``/``hi``
  in the robot base frame (a drawer's at its opening) and, for drawers, ``open``;
- ``objects``: each object that can be placed, with ``shape`` (box | cylinder), ``centre``, ``half`` extents,
  ``yaw`` (degrees), ``rgba``, ``location``, ``believed`` (not perceived now) and ``held`` (in the gripper);
- ``facts``: the goal's facts (the tree root's conditions) with ``holds``, their ``words`` when given, the
  ``names`` they mention and the ``anchor`` (first drawn thing named) the markers put them beside;
- ``active``: the active subgoal (``id``, ``text``), else ``root`` (the root's ``text`` and ``status``);
- ``target``: what the current primitive acts on (its ``target``, ``drawer`` or ``object``), when drawn;
  ``handles``: the object it handles (its ``object``, else the target).

Where an object is: its perceived ``geometry.position`` (the sim and controllers backends refresh it at every
observation) when that lies on or in the place the world model says; else its start pose from the scene
geometry when it is still where it started; else a spot in its place (the symbolic backend moves names, not
poses).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from step_planner.domain.conditions import ConditionError, parse_fact
from step_planner.domain.scene_geometry import SceneGeometry
from step_planner.domain.world import GRIPPER, ObjectState, WorldState

SCHEMA_ID = "step_planner/scene/v1"
HELD_AT = (0.4, 0.0, 0.35)  # where a held object is drawn when no pose of it is known
TARGET_ARGS = ("target", "drawer", "object")  # what a primitive acts on, in order of preference
DEFAULT_RGBA = (0.5, 0.5, 0.5, 1.0)


def drawer_opening(world: WorldState, geometry: SceneGeometry, name: str) -> float:
    """The slide position to draw: the perceived ``opening`` when it agrees with open/closed, else where
    ``open_drawer`` leaves it (open) or 0 (closed)."""
    place, d = world.places[name], geometry.drawers[name]
    seen = place.geometry.get("opening")
    if seen is not None and (float(seen) > 0.02) == place.is_open:
        return float(seen)
    return d.open_position if place.is_open else 0.0


def place_box(world: WorldState, geometry: SceneGeometry, name: str) -> tuple[np.ndarray, np.ndarray] | None:
    """The place's volume (world, axis-aligned lo and hi): a table's top slab, a container's or drawer's inside."""
    if name in geometry.drawers:
        return geometry.drawers[name].interior_box(drawer_opening(world, geometry, name))
    if name in geometry.containers:
        c = geometry.containers[name]
        return c.position - [*(c.size[:2] / 2), 0.0], c.position + [*(c.size[:2] / 2), c.size[2]]
    if name in geometry.surfaces:
        s = geometry.surfaces[name]
        return s.center - s.size / 2, s.center + s.size / 2
    return None


def _in_footprint(p: np.ndarray, box: tuple[np.ndarray, np.ndarray], margin: float = 0.02) -> bool:
    lo, hi = box
    return bool(np.all(p[:2] >= lo[:2] - margin) and np.all(p[:2] <= hi[:2] + margin))


def object_half(obj: ObjectState, geometry: SceneGeometry | None) -> tuple[str, np.ndarray]:
    """Shape and half extents: the scene geometry's, else the object's own ``geometry`` (4 cm cube by default)."""
    if geometry is not None and obj.name in geometry.objects:
        g = geometry.objects[obj.name]
        return g.shape, np.asarray(g.half, dtype=float)
    shape = obj.geometry.get("shape", "box")
    size = [float(v) for v in obj.geometry.get("size", [0.04, 0.04, 0.04])]
    if shape == "cylinder" and len(size) >= 2:
        return "cylinder", np.array([size[0], size[0], size[1] / 2])
    return "box", np.array((size + [0.04] * 3)[:3]) / 2


def object_pose(obj: ObjectState, world: WorldState, geometry: SceneGeometry | None,
                half: np.ndarray, slot: int = 0) -> tuple[np.ndarray, float] | None:
    """Centre and yaw (degrees) of ``obj`` as the module doc says; None when nothing places it."""
    seen = obj.geometry.get("position")
    start = geometry.objects.get(obj.name) if geometry is not None else None
    box = place_box(world, geometry, obj.location or "") if geometry is not None else None
    if seen is not None:
        p = np.asarray(seen, dtype=float)
        if obj.location == GRIPPER or box is None or _in_footprint(p, box):
            return p, float(obj.geometry.get("yaw", 0.0))
    if start is not None and start.location == obj.location:
        return np.asarray(start.position, dtype=float), start.yaw
    if obj.location == GRIPPER:
        return np.array(HELD_AT, dtype=float), 0.0
    if box is None:
        return None
    lo, hi = box
    if obj.location in geometry.containers:  # stands on the floor's top, not on its underside
        floor = float(geometry.containers[obj.location].interior[0][2])
    else:
        floor = hi[2] if obj.location in geometry.surfaces else lo[2]
    centre = (lo + hi) / 2
    # the symbolic backend: side by side along y from the place's centre
    offset = (slot + 1) // 2 * (2 * half[1] + 0.01) * (1 if slot % 2 else -1)
    return np.array([centre[0], centre[1] + offset, floor + half[2]]), 0.0


def _active_call(tree: dict[str, Any]) -> dict[str, Any] | None:
    nodes = {n["id"]: n for n in tree.get("nodes", [])}
    active = nodes.get(tree.get("active"))
    if active is not None and active.get("call"):
        return active["call"]
    executing = [n for n in nodes.values() if n.get("status") == "executing" and n.get("call")]
    return executing[-1]["call"] if executing else None


def _floats(v) -> list[float]:
    return [float(x) for x in v]


def scene_snapshot(world: WorldState, believed: frozenset[str] | set[str] = frozenset(),
                   geometry: SceneGeometry | None = None, tree: dict[str, Any] | None = None) -> dict[str, Any]:
    """The snapshot of the module doc. ``tree``: a ``SubgoalTree.snapshot()`` (None before a goal)."""
    places: list[dict[str, Any]] = []
    anchors: dict[str, np.ndarray] = {}  # name -> the top centre of what is drawn for it
    if geometry is not None:
        for name, place in world.places.items():
            box = place_box(world, geometry, name)
            if box is None:
                continue
            lo, hi = box
            kind = "drawer" if name in geometry.drawers else "container" if name in geometry.containers else "table"
            entry: dict[str, Any] = {"name": name, "kind": kind, "lo": _floats(lo), "hi": _floats(hi)}
            if kind == "drawer":
                entry["open"] = bool(place.is_open)
            places.append(entry)
            anchors[name] = np.array([*((lo + hi) / 2)[:2], hi[2]])
    objects: list[dict[str, Any]] = []
    slots: dict[str, int] = {}
    for name, obj in world.objects.items():
        shape, half = object_half(obj, geometry)
        slot = slots.get(obj.location or "", 0)
        pose = object_pose(obj, world, geometry, half, slot)
        if pose is None:
            continue
        slots[obj.location or ""] = slot + 1
        centre, yaw = pose
        objects.append({"name": name, "shape": "cylinder" if shape == "cylinder" else "box",
                        "centre": _floats(centre), "half": _floats(half), "yaw": float(yaw),
                        "rgba": _floats(obj.geometry.get("rgba", DEFAULT_RGBA)), "location": obj.location or "",
                        "believed": name in believed, "held": obj.location == GRIPPER})
        anchors[name] = centre + [0, 0, half[2]]
    snap: dict[str, Any] = {"schema": SCHEMA_ID, "places": places, "objects": objects, "facts": [],
                            "active": None, "root": None, "target": None, "handles": None}
    if tree:
        _goal(snap, tree, anchors)
    return snap


def _goal(snap: dict[str, Any], tree: dict[str, Any], anchors: dict[str, np.ndarray]) -> None:
    nodes = {n["id"]: n for n in tree.get("nodes", [])}
    root = nodes.get(tree.get("root", 0))
    for cond in (root or {}).get("conditions", []):
        text = str(cond.get("text", ""))
        try:
            names = list(parse_fact(text).names)
        except ConditionError:
            names = []
        snap["facts"].append({"text": text, "words": str(cond.get("words") or ""), "holds": bool(cond.get("holds")),
                              "names": names, "anchor": next((n for n in names if n in anchors), None)})
    active = nodes.get(tree.get("active"))
    if active is not None:
        snap["active"] = {"id": active["id"], "text": str(active.get("text", ""))}
    if root is not None:
        snap["root"] = {"text": str(root.get("text", "")), "status": str(root.get("status", ""))}
    call = _active_call(tree)
    if call is not None:
        args = call.get("args", {})
        target = next((args[k] for k in TARGET_ARGS if args.get(k) in anchors), None)
        snap["target"] = target or next((v for v in args.values() if v in anchors), None)
        snap["handles"] = args["object"] if args.get("object") in anchors else snap["target"]


def anchors_of(snap: dict[str, Any]) -> dict[str, np.ndarray]:
    """Name -> the top centre of what is drawn for it (a place's top face, an object's top)."""
    out = {p["name"]: np.array([(p["lo"][0] + p["hi"][0]) / 2, (p["lo"][1] + p["hi"][1]) / 2, p["hi"][2]])
           for p in snap["places"]}
    for o in snap["objects"]:
        out[o["name"]] = np.asarray(o["centre"]) + [0, 0, o["half"][2]]
    return out
