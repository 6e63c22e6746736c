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

The shapes are drawn from :func:`~step_planner.viz.scene_snapshot.scene_snapshot`, the same snapshot the page
of ``step-planner hmi`` draws its top-down picture from (:mod:`step_planner.viz.table_svg`).

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

from step_planner.domain.scene import SceneError
from step_planner.domain.scene_geometry import SceneGeometry, scene_geometry
from step_planner.domain.world import WorldState
from step_planner.planner.beliefs import Beliefs
from step_planner.viz.scene_snapshot import (  # noqa: F401  (re-exported: the helpers lived here first)
    HELD_AT,
    TARGET_ARGS,
    anchors_of,
    drawer_opening,
    object_half,
    object_pose,
    place_box,
    scene_snapshot,
)

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
TARGET_ARROW = 0.2  # m: the arrow starts this far above the target
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


def scene_markers(world: WorldState, believed: frozenset[str] | set[str] = frozenset(),
                  geometry: SceneGeometry | None = None, tree: dict[str, Any] | None = None) -> list[Shape]:
    """The shapes of the module doc. ``world``: the world model (believed objects included); ``tree``: a
    ``SubgoalTree.snapshot()`` (None before a goal)."""
    return markers_of(scene_snapshot(world, believed, geometry, tree))


def markers_of(snap: dict[str, Any]) -> list[Shape]:
    """The shapes of a :func:`~step_planner.viz.scene_snapshot.scene_snapshot` (the page's picture draws the same)."""
    b = _Builder()
    anchors = anchors_of(snap)
    for place in snap["places"]:
        lo, hi = np.asarray(place["lo"]), np.asarray(place["hi"])
        name = place["name"]
        if place["kind"] == "drawer":
            rgba, label = (OPEN_RGBA, "open") if place["open"] else (CLOSED_RGBA, "closed")
            label = f"{name} ({label})"
        elif place["kind"] == "container":
            rgba, label = CONTAINER_RGBA, name
        else:
            rgba, label = TABLE_RGBA, ""
        b.add("places", "cube", (lo + hi) / 2, hi - lo, rgba)
        if label:
            b.add("labels", "text", anchors[name] + [0, 0, 0.04], (0, 0, TEXT_HEIGHT), LABEL_RGBA, text=label)
    for obj in snap["objects"]:
        name, hidden = obj["name"], obj["believed"]
        rgba = BELIEVED_RGBA if hidden else tuple(obj["rgba"])
        b.add("objects", "cylinder" if obj["shape"] == "cylinder" else "cube", obj["centre"],
              2 * np.asarray(obj["half"]), rgba, orientation=yaw_quat(obj["yaw"]))
        b.add("labels", "text", anchors[name] + [0, 0, 0.03], (0, 0, TEXT_HEIGHT), LABEL_RGBA,
              text=f"{name} (believed)" if hidden else name)
    _goal_markers(b, snap, anchors)
    return b.shapes


def _goal_markers(b: _Builder, snap: dict[str, Any], anchors: dict[str, np.ndarray]) -> None:
    beside: dict[str, int] = {}
    for fact in snap["facts"]:
        anchor = fact["anchor"]
        if anchor is None:
            continue
        k = beside.get(anchor, 0)
        beside[anchor] = k + 1
        met = fact["holds"]
        b.add("facts", "text", anchors[anchor] + [0.0, -0.06, 0.07 + FACT_STEP * k], (0, 0, TEXT_HEIGHT),
              MET_RGBA if met else UNMET_RGBA, text=f"{MET if met else UNMET} {fact['text']}")
    if snap["active"] is not None:
        b.add("subgoal", "text", SUBGOAL_AT, (0, 0, 1.5 * TEXT_HEIGHT), SUBGOAL_RGBA, text=snap["active"]["text"])
    elif snap["root"] is not None:
        b.add("subgoal", "text", SUBGOAL_AT, (0, 0, 1.5 * TEXT_HEIGHT), SUBGOAL_RGBA,
              text=f"{snap['root']['text']} [{snap['root']['status']}]")
    if snap["target"] is not None:
        tip = anchors[snap["target"]] + [0, 0, 0.01]
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

    def snapshot(self) -> dict[str, Any]:
        """What is where now (:mod:`~step_planner.viz.scene_snapshot`): the markers' and the page's source."""
        return scene_snapshot(self.beliefs.world, frozenset(self.beliefs.believed), self.geometry, self.tree)

    def shapes(self) -> list[Shape]:
        return markers_of(self.snapshot())
