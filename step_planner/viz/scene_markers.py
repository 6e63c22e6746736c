"""The world model, the goal and the plan as 3-D shapes for RViz, as plain data (no rclpy).

WHY pure: what the engineer sees must be checkable against the world and the goal without a ROS graph;
:mod:`step_planner.ros.markers` only turns these shapes into ``visualization_msgs/MarkerArray``.

:func:`scene_markers` draws, in the robot base frame:

- ``objects``: every object where the world model has it (shape and size from the scene), coloured as in the
  scene, grey and translucent when it is only believed (out of sight, e.g. inside a closed drawer);
  ``labels``: its name above it;
- ``places``: tables (flat), trays/bins/boxes (translucent), drawers at their opening, green when open and red
  when closed, each with a label;
- ``facts``: each of the goal's facts (the tree root's conditions) as ``✓ fact`` / ``✗ fact`` text beside the
  first thing it names that is drawn;
- ``subgoal``: the active subgoal's text above the arm;
- ``target``: an arrow down onto what the current primitive acts on (its ``target``, ``drawer`` or ``object``).

Where an object is: its perceived ``geometry.position`` (the sim and controllers backends refresh it at every
observation) when that lies on or in the place the world model says; else its start pose from the scene
geometry when it is still where it started; else a spot in its place (the symbolic backend moves names, not
poses). :class:`MarkerModel` keeps the planner's own :class:`~step_planner.planner.beliefs.Beliefs` of the
observations it is given, so "believed" means what it means to the planner.
"""

from __future__ import annotations

import json
import math
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from step_planner.domain.conditions import ConditionError, parse_fact
from step_planner.domain.scene import SceneError
from step_planner.domain.scene_geometry import SceneGeometry, scene_geometry
from step_planner.domain.world import GRIPPER, ObjectState, WorldState
from step_planner.planner.beliefs import Beliefs

BASE_FRAME = "panda_link0"  # the scenes' frame (config/scenes/*.yaml) and the simulator's world frame

Vec3 = tuple[float, float, float]
Rgba = tuple[float, float, float, float]

BELIEVED_RGBA: Rgba = (0.55, 0.55, 0.55, 0.35)
OPEN_RGBA: Rgba = (0.2, 0.75, 0.3, 0.45)
CLOSED_RGBA: Rgba = (0.85, 0.2, 0.15, 0.6)
CONTAINER_RGBA: Rgba = (0.25, 0.45, 0.85, 0.3)
TABLE_RGBA: Rgba = (0.75, 0.7, 0.62, 0.25)
LABEL_RGBA: Rgba = (1.0, 1.0, 1.0, 1.0)
MET_RGBA: Rgba = (0.2, 0.9, 0.3, 1.0)
UNMET_RGBA: Rgba = (0.95, 0.25, 0.2, 1.0)
SUBGOAL_RGBA: Rgba = (1.0, 0.85, 0.3, 1.0)
TARGET_RGBA: Rgba = (1.0, 0.55, 0.0, 0.9)
MET, UNMET = "\u2713", "\u2717"  # ✓ ✗

TEXT_HEIGHT = 0.03  # m, capital letter height in RViz
FACT_STEP = 0.035  # m between stacked facts beside one thing
SUBGOAL_AT: Vec3 = (0.0, 0.0, 1.15)  # above the arm (its base is the frame origin; the Panda is ~1 m tall)
HELD_AT: Vec3 = (0.4, 0.0, 0.35)  # where a held object is drawn when no pose of it is known
TARGET_ARROW = 0.2  # m: the arrow starts this far above the target
TARGET_ARGS = ("target", "drawer", "object")  # what a primitive acts on, in order of preference
IDENTITY = (0.0, 0.0, 0.0, 1.0)


@dataclass(frozen=True)
class Shape:
    """One marker: ``kind`` cube | cylinder | text | arrow; ``scale`` the full size (text: height in z;
    arrow: shaft and head diameters, head length); ``points`` an arrow's start and end."""

    ns: str
    id: int
    kind: str
    position: Vec3
    scale: Vec3
    rgba: Rgba
    orientation: tuple[float, float, float, float] = IDENTITY  # x, y, z, w
    text: str = ""
    points: tuple[Vec3, ...] = ()


@dataclass
class _Builder:
    shapes: list[Shape] = field(default_factory=list)
    _ids: dict[str, int] = field(default_factory=dict)

    def add(self, ns: str, kind: str, position, scale, rgba: Rgba, **extra: Any) -> None:
        n = self._ids.get(ns, 0)
        self._ids[ns] = n + 1
        self.shapes.append(Shape(ns, n, kind, _vec(position), _vec(scale), rgba, **extra))


def _vec(v) -> Vec3:
    return (float(v[0]), float(v[1]), float(v[2]))


def yaw_quat(yaw_deg: float) -> tuple[float, float, float, float]:
    h = math.radians(yaw_deg) / 2
    return 0.0, 0.0, math.sin(h), math.cos(h)


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
        return np.array(HELD_AT), 0.0
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


def scene_markers(world: WorldState, believed: frozenset[str] | set[str] = frozenset(),
                  geometry: SceneGeometry | None = None, tree: dict[str, Any] | None = None) -> list[Shape]:
    """The shapes of the module doc. ``world``: the world model (believed objects included); ``tree``: a
    ``SubgoalTree.snapshot()`` (None before a goal)."""
    b = _Builder()
    anchors: dict[str, np.ndarray] = {}  # name -> the top centre of what was drawn for it
    if geometry is not None:
        for name, place in world.places.items():
            box = place_box(world, geometry, name)
            if box is None:
                continue
            lo, hi = box
            if name in geometry.drawers:
                rgba, label = (OPEN_RGBA, "open") if place.is_open else (CLOSED_RGBA, "closed")
                label = f"{name} ({label})"
            elif name in geometry.containers:
                rgba, label = CONTAINER_RGBA, name
            else:
                rgba, label = TABLE_RGBA, ""
            b.add("places", "cube", (lo + hi) / 2, hi - lo, rgba)
            anchors[name] = np.array([*((lo + hi) / 2)[:2], hi[2]])
            if label:
                b.add("labels", "text", anchors[name] + [0, 0, 0.04], (0, 0, TEXT_HEIGHT), LABEL_RGBA, text=label)
    slots: dict[str, int] = {}
    for name, obj in world.objects.items():
        shape, half = object_half(obj, geometry)
        slot = slots.get(obj.location or "", 0)
        pose = object_pose(obj, world, geometry, half, slot)
        if pose is None:
            continue
        slots[obj.location or ""] = slot + 1
        centre, yaw = pose
        hidden = name in believed
        rgba = BELIEVED_RGBA if hidden else tuple(map(float, obj.geometry.get("rgba", (0.5, 0.5, 0.5, 1.0))))
        b.add("objects", "cylinder" if shape == "cylinder" else "cube", centre, 2 * half, rgba,
              orientation=yaw_quat(yaw))
        anchors[name] = centre + [0, 0, half[2]]
        b.add("labels", "text", anchors[name] + [0, 0, 0.03], (0, 0, TEXT_HEIGHT), LABEL_RGBA,
              text=f"{name} (believed)" if hidden else name)
    if tree:
        _goal_markers(b, tree, anchors)
    return b.shapes


def _goal_markers(b: _Builder, tree: dict[str, Any], anchors: dict[str, np.ndarray]) -> None:
    nodes = {n["id"]: n for n in tree.get("nodes", [])}
    root = nodes.get(tree.get("root", 0))
    beside: dict[str, int] = {}
    for cond in (root or {}).get("conditions", []):
        text = str(cond.get("text", ""))
        try:
            names = parse_fact(text).names
        except ConditionError:
            names = ()
        anchor = next((n for n in names if n in anchors), None)
        if anchor is None:
            continue
        k = beside.get(anchor, 0)
        beside[anchor] = k + 1
        met = bool(cond.get("holds"))
        b.add("facts", "text", anchors[anchor] + [0.0, -0.06, 0.07 + FACT_STEP * k], (0, 0, TEXT_HEIGHT),
              MET_RGBA if met else UNMET_RGBA, text=f"{MET if met else UNMET} {text}")
    active = nodes.get(tree.get("active"))
    if active is not None:
        b.add("subgoal", "text", SUBGOAL_AT, (0, 0, 1.5 * TEXT_HEIGHT), SUBGOAL_RGBA, text=active["text"])
    elif root is not None:
        b.add("subgoal", "text", SUBGOAL_AT, (0, 0, 1.5 * TEXT_HEIGHT), SUBGOAL_RGBA,
              text=f"{root['text']} [{root.get('status', '')}]")
    call = _active_call(tree)
    if call is not None:
        args = call.get("args", {})
        target = next((args[k] for k in TARGET_ARGS if args.get(k) in anchors), None)
        target = target or next((v for v in args.values() if v in anchors), None)
        if target is not None:
            tip = anchors[target] + [0, 0, 0.01]
            b.add("target", "arrow", (0, 0, 0), (0.012, 0.03, 0.04), TARGET_RGBA,
                  points=(_vec(tip + [0, 0, TARGET_ARROW]), _vec(tip)))


class GeometryCache:
    """Scene geometries by the world they were built from (its places and objects as the scene gives them).

    WHY: laying out a scene with objects in drawers can take seconds (``scene_geometry``'s free-spot search), and
    a goal must not wait for a picture: the ROS edge builds it off the goal's thread, once per scene."""

    def __init__(self, size: int = 8) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._built: OrderedDict[str, SceneGeometry | None] = OrderedDict()

    @staticmethod
    def key(world: WorldState) -> str:
        """What the drawn places and sizes depend on: not where objects are now nor which drawers are open (a robot
        backend's observations move them every goal; the drawn poses come from the world, not the geometry)."""
        moving = {"position", "yaw", "pushed", "opening"}
        objects = {n: [o.category, {k: v for k, v in o.geometry.items() if k not in moving}]
                   for n, o in world.objects.items()}
        places = {n: [p.kind, {k: v for k, v in p.geometry.items() if k not in moving}]
                  for n, p in world.places.items()}
        return json.dumps([objects, places], sort_keys=True, default=str)

    def get(self, world: WorldState, key: str | None = None) -> tuple[bool, SceneGeometry | None]:
        """(known, geometry): whether it was built already, and what was built (None: the scene has none)."""
        key = key or self.key(world)
        with self._lock:
            if key in self._built:
                self._built.move_to_end(key)
                return True, self._built[key]
        return False, None

    def build(self, world: WorldState, key: str | None = None) -> SceneGeometry | None:
        key = key or self.key(world)
        laid_out = world.copy()  # a held object has no start on a place: drawn from its pose, not laid out
        laid_out.objects = {n: o for n, o in laid_out.objects.items() if o.location in world.places}
        try:
            geometry = scene_geometry(laid_out)
        except (SceneError, KeyError, ValueError):  # a scene without geometry: objects placed from their own
            geometry = None
        with self._lock:
            self._built[key] = geometry
            while len(self._built) > self.size:
                self._built.popitem(last=False)
        return geometry


class MarkerModel:
    """What ``~/markers`` shows, kept between updates: the scene geometry, the planner's beliefs of the
    observations given, the last tree. Plain Python: the node calls it from its threads under its own lock."""

    def __init__(self) -> None:
        self.geometry: SceneGeometry | None = None
        self.beliefs = Beliefs()
        self.tree: dict[str, Any] | None = None

    def reset(self, world: WorldState, geometry: SceneGeometry | None = None, build: bool = True) -> None:
        """A new world (a goal starts, or the scene at start-up): fresh beliefs, and its geometry (given, built
        here with ``build``, or left None until :meth:`set_geometry`)."""
        if geometry is None and build:
            geometry = GeometryCache(1).build(world)
        self.geometry = geometry
        self.beliefs = Beliefs(world.observed())
        self.tree = None

    def set_geometry(self, geometry: SceneGeometry | None) -> None:
        self.geometry = geometry

    def observe(self, world: WorldState) -> None:
        """An observation after a primitive (the executor's world: hidden objects are dropped, as the planner does)."""
        self.beliefs.update(world.observed())

    def set_tree(self, snapshot: dict[str, Any]) -> None:
        self.tree = snapshot

    def shapes(self) -> list[Shape]:
        return scene_markers(self.beliefs.world, frozenset(self.beliefs.believed), self.geometry, self.tree)
