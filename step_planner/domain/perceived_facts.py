"""World facts from object poses and the scene's geometry: the one place that decides in/on/at, open/closed.

WHY one module: the MuJoCo backend derives the world from the poses its physics knows, the controllers and
MoveIt backends from the poses a robot perceives (Gazebo's pose bridge, tag trackers, pose estimators). If
each had its own rules, "success checked in the world" would mean different things on the bench and on the
arm. Here a pose is a position (and yaw) in the robot's base frame; the scene's volumes come from its
geometry (the drawers' interiors that slide with them, the trays', bins' and boxes' interiors, the table top);
the margins are stated below. What the gripper holds is not a pose question: the caller says (contacts in
the physics, the gripper's own state on a robot).

A pose older than ``max_age_s`` says nothing: the object is left out of the world (unknown, not true), and
the planner's beliefs keep what its own actions put out of sight (``planner/beliefs.py``). Pure Python and
numpy (no ROS, no MuJoCo).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from step_planner.domain.scene_geometry import SceneGeometry
from step_planner.domain.world import GRIPPER, WorldState

# Margins (m). A drawer's interior box grows by these before an object centre is tested against it.
DRAWER_SIDE_SLACK = 0.01  # beyond the inner walls, both horizontal axes
DRAWER_BELOW = 0.01  # below the drawer frame's origin (the underside of its floor)
DRAWER_ABOVE = 0.02  # above the walls' top
TRAY_BELOW = 0.01  # below a tray's (bin's, box's) base
TRAY_ABOVE = 0.06  # above its walls' top: an object resting on what lies in it is still in it
TABLE_BELOW = 0.01  # below the table top
TABLE_ABOVE = 0.25  # above it: higher is not "on the table" (held up, on top of a cabinet)
DRAWER_OPEN_FRACTION = 0.6  # open_drawer's own check: pulled out more than this fraction of its travel
DRAWER_CLOSED_TOL = 0.02  # closed: within this of fully in (close_drawer's own check); further out it is not
# closed, and counts as open (a drawer left ajar: close_drawer applies, a goal closed(x) does not hold)


@dataclass(frozen=True)
class DrawerVolume:
    """A drawer: its frame when closed (origin under the floor, ``rotation`` columns its axes in the world), the
    unit vector it opens along, its travel, and the inner size of the box it carries."""

    name: str
    closed_origin: tuple[float, float, float]
    axis: tuple[float, float, float]
    travel: float
    inner: tuple[float, float, float]  # length, width, wall height
    rotation: tuple[float, ...] = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)  # row-major 3x3

    def origin(self, opening: float) -> np.ndarray:
        return np.asarray(self.closed_origin) + opening * np.asarray(self.axis)

    def contains(self, position: np.ndarray, opening: float) -> bool:
        local = np.reshape(self.rotation, (3, 3)).T @ (position - self.origin(opening))
        half = np.asarray(self.inner[:2]) / 2 + DRAWER_SIDE_SLACK
        return bool(abs(local[0]) < half[0] and abs(local[1]) < half[1]
                    and -DRAWER_BELOW < local[2] < self.inner[2] + DRAWER_ABOVE)

    def is_open(self, opening: float) -> bool:
        """Not closed: out more than DRAWER_CLOSED_TOL (an ajar drawer is not closed)."""
        return opening > DRAWER_CLOSED_TOL

    def is_pulled_open(self, opening: float) -> bool:
        """Open far enough to reach into (what open_drawer achieves)."""
        return opening > DRAWER_OPEN_FRACTION * self.travel


@dataclass(frozen=True)
class TrayVolume:
    """A tray, bin or box: the centre of its base and its outer size (length, width, wall height)."""

    name: str
    position: tuple[float, float, float]
    size: tuple[float, float, float]

    def contains(self, position: np.ndarray) -> bool:
        rel = position - np.asarray(self.position)
        return bool(abs(rel[0]) < self.size[0] / 2 and abs(rel[1]) < self.size[1] / 2
                    and -TRAY_BELOW < rel[2] < self.size[2] + TRAY_ABOVE)


@dataclass(frozen=True)
class SurfaceVolume:
    """The table: the centre of its top (x, y), its size (x, y) and the height of its top (0 in the scenes)."""

    name: str
    center: tuple[float, float]
    size: tuple[float, float]
    top: float = 0.0

    def supports(self, position: np.ndarray) -> bool:
        rel = position[:2] - np.asarray(self.center)
        return bool(np.all(np.abs(rel) < np.asarray(self.size) / 2)
                    and self.top - TABLE_BELOW < position[2] < self.top + TABLE_ABOVE)


@dataclass(frozen=True)
class SceneVolumes:
    """Where things can be: drawers first (they may sit above a tray's reach), then trays, then the table."""

    drawers: tuple[DrawerVolume, ...] = ()
    trays: tuple[TrayVolume, ...] = ()
    table: SurfaceVolume | None = None


def volumes_of(geometry: SceneGeometry) -> SceneVolumes:
    """The volumes of a scene's one geometry description (domain/scene_geometry.py): what MuJoCo builds, what
    Gazebo loads, and what perceived poses are judged against."""
    drawers = tuple(DrawerVolume(d.name, tuple(map(float, d.closed_position)), tuple(map(float, d.axis)),
                                 float(d.slide), tuple(map(float, d.inner))) for d in geometry.drawers.values())
    trays = tuple(TrayVolume(c.name, tuple(map(float, c.position)), tuple(map(float, c.size)))
                  for c in geometry.containers.values())
    table = geometry.table
    surface = None if table is None else SurfaceVolume(table.name, (float(table.center[0]), float(table.center[1])),
                                                       (float(table.size[0]), float(table.size[1])), table.top_z)
    return SceneVolumes(drawers, trays, surface)


@dataclass(frozen=True)
class ObjectPose:
    position: tuple[float, float, float]  # the object's centre, robot base frame
    yaw_deg: float = 0.0
    age_s: float = 0.0  # how old the observation is


@dataclass
class Perception:
    """One look at the world: object poses, drawer openings (m, 0 = closed; a drawer missing here keeps the
    scene's state), what the gripper holds (None: nothing), and how old a pose may be to count."""

    objects: Mapping[str, ObjectPose] = field(default_factory=dict)
    openings: Mapping[str, float] = field(default_factory=dict)
    held: str | None = None
    max_age_s: float = float("inf")


def location(volumes: SceneVolumes, position: np.ndarray, openings: Mapping[str, float]) -> str | None:
    """The place an object centred at ``position`` is in or on, or None when it is nowhere named (fell off)."""
    position = np.asarray(position, dtype=float)
    for d in volumes.drawers:
        if d.contains(position, openings.get(d.name, 0.0)):
            return d.name
    for t in volumes.trays:
        if t.contains(position):
            return t.name
    table = volumes.table
    return table.name if table is not None and table.supports(position) else None


def perceived_world(template: WorldState, volumes: SceneVolumes, seen: Perception, robot_at: str) -> WorldState:
    """The template's names and kinds with facts from ``seen``: every object with a fresh pose located, the held
    one in the gripper, drawers open or closed by their openings; objects without a fresh pose left out."""
    world = template.copy()
    world.held = None
    world.robot_at = robot_at
    drawers = {d.name: d for d in volumes.drawers}
    for name, opening in seen.openings.items():
        if name in drawers and name in world.places:
            place = world.places[name]
            place.is_open = drawers[name].is_open(opening)
            place.geometry = {**place.geometry, "opening": round(float(opening), 4)}
    for name in list(world.objects):
        obj = world.objects[name]
        pose = seen.objects.get(name)
        if name == seen.held:
            obj.location = GRIPPER
            world.held = name
        elif pose is None or pose.age_s > seen.max_age_s:
            del world.objects[name]  # unknown: neither here nor there
            continue
        else:
            obj.location = location(volumes, np.asarray(pose.position), seen.openings)
        if pose is not None and pose.age_s <= seen.max_age_s:
            obj.geometry = {**obj.geometry, "position": [round(float(v), 4) for v in pose.position],
                            "yaw": round(float(pose.yaw_deg), 1)}
    return world
