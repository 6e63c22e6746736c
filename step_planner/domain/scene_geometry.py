"""One geometry description of a scene: what every simulator builds and what facts are judged against.

``scene_geometry(world, seed)`` turns the symbolic scene (:class:`WorldState`, from ``config/scenes/*.yaml``) into

- **bodies** (engine-neutral, :mod:`step_planner.domain.bodies`): the table tops as boxes fixed in the world;
  trays, bins, boxes and cabinets as bodies welded to the world; each drawer a body in its cabinet on a prismatic
  joint (axis, travel, damping, friction, armature) with floor, sides, ends, front panel, handle bar and posts and
  the handle's grasp site; every object with its shape, half extents, start pose, mass and friction. The MuJoCo
  model (``execution/sim/scene_builder.py``) and the Gazebo world (``step-planner export-world``) are translations
  of these, so the two simulators cannot drift apart;
- **semantic volumes**, for deriving facts from poses (``in``, ``on``, ``open``): each surface's top
  (:class:`Surface`), each tray/bin/box's interior (:class:`ContainerGeometry`), each drawer's interior in the
  drawer frame, slide axis, travel and closed pose (:class:`~step_planner.domain.cabinets.DrawerGeometry`), the
  drawers' openings at the start, and where each object starts (``ObjectGeometry.location``).

Conventions: the world frame is the robot base frame with the table top at z = 0; a box ``size`` is its full
extent (x, y, z); a cylinder ``size`` is (radius, height), its axis vertical; ``yaw`` is in degrees. A ``seed``
perturbs object poses by up to ``JITTER`` (and 2 degrees) so repeated runs are not identical (0: none).
Objects listed ``at:`` a drawer or tray start at the free spots ``place`` would choose there (their
``position`` is not used; drawers are filled as ``open_drawer`` leaves them, so every object can be reached);
a table object without a ``position`` goes to a free default spot; a missing box ``size`` is a 4 cm cube.
Drawers and trays must have their geometry (a :class:`SceneGeometryError` names the missing field).
Pure numpy: no simulator is imported.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from step_planner.domain import rest_areas as areas
from step_planner.domain.bodies import Body, Box, box_inertia, cylinder_inertia
from step_planner.domain.cabinets import HANDLE_STANDOFF, WALL, DrawerGeometry, cabinet
from step_planner.domain.placement import Resting
from step_planner.domain.scene import SceneGeometryError, geometry_vector
from step_planner.domain.world import WorldState

__all__ = ["ContainerGeometry", "DrawerGeometry", "ObjectGeometry", "SceneGeometry", "SceneGeometryError", "Surface",
           "scene_geometry"]

DEFAULT_TABLE_SIZE = (1.2, 1.0, 0.04)
TABLE_RGBA = (0.75, 0.7, 0.62, 1.0)
TRAY_RGBA = (0.25, 0.55, 0.3, 1.0)
DEFAULT_BOX = [0.04, 0.04, 0.04]
DEFAULT_MASS = 0.08  # kg
OBJECT_FRICTION = (1.0, 0.01, 0.001)  # sliding, torsional, rolling (MuJoCo's order)
JITTER = 0.004  # a seed moves objects up to this far (and turns them up to 2 degrees)
JITTER_SLACK = 0.008  # extra room between objects a scene starts with in a container
MIN_HEIGHT = 0.012  # the fingertips stop 4 mm above the support: a flatter object cannot be gripped
TABLE_SPOTS = tuple((x, y) for x in (0.35, 0.45, 0.55) for y in (0.0, 0.1, -0.1, 0.2))
SPAWN_LIFT = 0.0005  # an object is put this far above its support, so it starts without penetration


@dataclass(frozen=True)
class Surface:
    """A table: its top is a box (``center``, full ``size``); objects stand on ``top_z``."""

    name: str
    center: np.ndarray  # (3,) world
    size: np.ndarray  # (3,) full extent

    @property
    def top_z(self) -> float:
        return float(self.center[2] + self.size[2] / 2)


@dataclass(frozen=True)
class ContainerGeometry:
    """A tray, bin or box: an open box standing on the table (floor and four walls).

    ``position`` is the centre of its floor's underside (world); ``size`` its full outer size (x, y, wall height).
    """

    name: str
    kind: str  # tray | bin | box
    position: np.ndarray
    size: np.ndarray
    wall: float = areas.TRAY_WALL
    floor: float = areas.TRAY_FLOOR

    @property
    def interior(self) -> tuple[np.ndarray, np.ndarray]:
        """The inside (world, axis-aligned): between the walls, from the floor's top to the walls' top."""
        half = self.size[:2] / 2 - self.wall
        lo = np.array([*(self.position[:2] - half), self.position[2] + self.floor])
        hi = np.array([*(self.position[:2] + half), self.position[2] + self.size[2]])
        return lo, hi


@dataclass(frozen=True)
class ObjectGeometry:
    """A movable object at the start of the scene: a solid box or upright cylinder."""

    name: str
    shape: str  # box | cylinder
    half: np.ndarray  # half extents (x, y, z) in the object frame (a cylinder: radius, radius, half height)
    position: np.ndarray  # (3,) world centre, resting on its support (seed jitter included)
    yaw: float  # degrees about z
    location: str  # the place it starts on or in
    mass: float
    rgba: tuple[float, float, float, float]
    friction: tuple[float, float, float] = OBJECT_FRICTION

    @property
    def quat(self) -> tuple[float, float, float, float]:
        """Orientation as w, x, y, z."""
        h = np.radians(self.yaw) / 2.0
        return float(np.cos(h)), 0.0, 0.0, float(np.sin(h))

    @property
    def spawn_position(self) -> np.ndarray:
        """Where a simulator puts it: ``SPAWN_LIFT`` above its resting pose."""
        return self.position + [0, 0, SPAWN_LIFT]

    @property
    def inertia(self) -> np.ndarray:
        """Diagonal inertia about its centre (solid, uniform)."""
        if self.shape == "cylinder":
            return cylinder_inertia(self.mass, float(self.half[0]), 2 * float(self.half[2]))
        return box_inertia(self.mass, self.half)


@dataclass(frozen=True)
class SceneGeometry:
    """The whole description (see the module doc). Dicts keep the scene's order."""

    world_boxes: tuple[Box, ...]  # fixed in the world frame: the table tops
    fixtures: tuple[Body, ...]  # trays, bins and boxes, then cabinets (with their drawers)
    objects: dict[str, ObjectGeometry]
    surfaces: dict[str, Surface]
    containers: dict[str, ContainerGeometry]
    drawers: dict[str, DrawerGeometry]
    initial_openings: dict[str, float] = field(default_factory=dict)  # each drawer's slide position at the start

    @property
    def table(self) -> Surface | None:
        """The surface objects are set down on (the scene's last surface; None without one)."""
        return next(reversed(self.surfaces.values()), None)


def _table(place) -> tuple[Box, Surface]:
    where = f"place '{place.name}'"
    size = geometry_vector(place.geometry, "size", 3, where, list(DEFAULT_TABLE_SIZE))
    pos = geometry_vector(place.geometry, "position", 3, where, [0.5, 0.0, -size[2] / 2])
    box = Box(f"{place.name}_top", tuple(map(float, pos)), tuple(map(float, size / 2)), TABLE_RGBA)
    return box, Surface(place.name, pos, size)


def _tray(place) -> tuple[Body, ContainerGeometry]:
    where = f"place '{place.name}'"
    pos = geometry_vector(place.geometry, "position", 3, where)
    size = geometry_vector(place.geometry, "size", 3, where)
    hx, hy, h = size[0] / 2, size[1] / 2, size[2]
    t, colour = areas.TRAY_WALL, tuple(map(float, place.geometry.get("rgba", TRAY_RGBA)))
    f = areas.TRAY_FLOOR / 2

    def box(name: str, at, half) -> Box:
        return Box(f"{place.name}_{name}", tuple(map(float, at)), tuple(map(float, half)), colour)

    boxes = [box("floor", [0, 0, f], [hx, hy, f])]
    boxes += [box(f"wall_x{sx:+d}", [sx * (hx - t / 2), 0, h / 2], [t / 2, hy, h / 2]) for sx in (-1, 1)]
    boxes += [box(f"wall_y{sy:+d}", [0, sy * (hy - t / 2), h / 2], [hx - t, t / 2, h / 2]) for sy in (-1, 1)]
    return Body(place.name, tuple(map(float, pos)), tuple(boxes)), ContainerGeometry(place.name, place.kind, pos, size)


def _object_shape(obj) -> tuple[str, np.ndarray]:
    where = f"object '{obj.name}'"
    geo = obj.geometry
    shape = geo.get("shape", "box")
    if shape == "box":
        half = geometry_vector(geo, "size", 3, where, DEFAULT_BOX) / 2
    elif shape == "cylinder":
        size = geometry_vector(geo, "size", 2, where)
        half = np.array([size[0], size[0], size[1] / 2])
    else:
        raise SceneGeometryError(f"{where}: geometry.shape must be box or cylinder, got {shape!r}")
    if np.any(half <= 0):
        raise SceneGeometryError(f"{where}: geometry.size must be positive")
    if 2 * half[2] < MIN_HEIGHT - 1e-9:
        raise SceneGeometryError(
            f"{where}: {2 * half[2] * 100:.1f} cm tall; the fingertips stop 4 mm above the support, so objects "
            f"need at least {MIN_HEIGHT * 100:.1f} cm (geometry.size)"
        )
    return shape, half


class _Layout:
    """Where the objects start: free spots in containers and on the table, taken in the scene's order."""

    def __init__(self, world: WorldState, containers: dict[str, ContainerGeometry],
                 drawers: dict[str, DrawerGeometry]) -> None:
        self.world, self.containers, self.drawers = world, containers, drawers
        self.inside: dict[str, list[Resting]] = {}
        self.auto_spots: list[tuple[float, float]] = []

    def in_container(self, obj, shape: str, half: np.ndarray) -> tuple[np.ndarray, float]:
        """A free spot in the drawer or tray the object is listed ``at:`` (position, yaw in degrees)."""
        place = obj.location
        yaw = np.radians(float(obj.geometry.get("yaw", 0.0)))
        if place in self.drawers:
            d = self.drawers[place]
            if why := areas.too_tall_for(d, half):
                raise SceneGeometryError(f"object '{obj.name}': {why}")
            floor, hand = areas.drawer_areas(d, d.open_position, float(d.closed_center[1]))
            z, shift = d.floor_z, (d.slide if self.world.places[place].is_open else 0.0) - d.open_position
        else:
            t = self.containers[place]
            floor, hand = areas.tray_area(t.position, t.size), areas.tray_hand_area(t.position, t.size, half)
            z, shift = float(t.position[2] + areas.TRAY_FLOOR), 0.0
        found = areas.container_spot(floor, shape, half, yaw, self.inside.setdefault(place, []), hand,
                                     slack=JITTER_SLACK)
        if found is None:
            raise SceneGeometryError(f"object '{obj.name}': no room left in {place} for the simulation")
        xy, yaw = found
        self.inside[place].append(areas.resting(shape, half, xy, yaw))
        return np.array([xy[0] - shift, xy[1], z + half[2]]), float(np.degrees(yaw))

    def on_table(self, obj, half: np.ndarray) -> np.ndarray:
        """The scene's position, or a free default spot on the table."""
        where = f"object '{obj.name}'"
        place = obj.location
        if "position" in obj.geometry:
            return geometry_vector(obj.geometry, "position", 3, where)
        taken = [
            np.asarray(o.geometry["position"][:2], dtype=float)
            for o in self.world.objects.values()
            if "position" in o.geometry and o.location == place
        ]
        taken += [np.asarray(p, dtype=float) for p in self.auto_spots]
        for spot in TABLE_SPOTS:
            if all(np.linalg.norm(np.asarray(spot) - p) > 0.09 for p in taken):
                self.auto_spots.append(spot)
                return np.array([spot[0], spot[1], half[2]])
        raise SceneGeometryError(f"{where}: give geometry.position; no free default spot on {place}")


def _check_trays_clear_of_drawers(containers: dict[str, ContainerGeometry], drawers: dict[str, DrawerGeometry]) -> None:
    """A tray in a cabinet or in a drawer's way would jam the drawer: refuse the scene."""
    for t in containers.values():
        lo, hi = t.position[:2] - t.size[:2] / 2, t.position[:2] + t.size[:2] / 2
        for d in drawers.values():
            front = d.interior_front(d.slide) - 2 * WALL  # the fully open drawer's front panel
            back = d.closed_center[0] + d.inner[0] / 2 + 2 * WALL
            cy, half_y = d.closed_center[1], d.inner[1] / 2 + 2 * WALL + 0.005
            handle = front - HANDLE_STANDOFF - 0.01
            for x0, y0, y1 in ((front, cy - half_y, cy + half_y), (handle, cy - 0.04, cy + 0.04)):
                if lo[0] < back and hi[0] > x0 and lo[1] < y1 and hi[1] > y0:
                    raise SceneGeometryError(
                        f"place '{t.name}': it stands where {d.name} and its cabinet are or where the drawer "
                        f"opens (x {x0:.2f}..{back:.2f}, y {y0:.2f}..{y1:.2f}); move it"
                    )


def scene_geometry(world: WorldState, seed: int = 0) -> SceneGeometry:
    """The geometry of ``world`` (see the module doc); ``seed`` jitters object poses (0 = none)."""
    world_boxes: list[Box] = []
    surfaces: dict[str, Surface] = {}
    containers: dict[str, ContainerGeometry] = {}
    trays: list[Body] = []
    stacks: dict[tuple, list] = {}
    for place in world.places.values():
        if place.kind == "surface":
            box, surface = _table(place)
            world_boxes.append(box)
            surfaces[place.name] = surface
        elif place.kind == "drawer":
            key = tuple(geometry_vector(place.geometry, "cabinet_position", 3, f"place '{place.name}'"))
            stacks.setdefault(key, []).append(place)
        elif place.kind in ("tray", "bin", "box"):
            body, container = _tray(place)
            trays.append(body)
            containers[place.name] = container
    cabinets: list[Body] = []
    drawers: dict[str, DrawerGeometry] = {}
    for stack in stacks.values():
        body, infos = cabinet(stack)
        cabinets.append(body)
        drawers.update((d.name, d) for d in infos)
    _check_trays_clear_of_drawers(containers, drawers)
    rng = np.random.default_rng(seed)
    layout = _Layout(world, containers, drawers)
    objects: dict[str, ObjectGeometry] = {}
    for obj in world.objects.values():
        shape, half = _object_shape(obj)
        if obj.location not in world.places:
            raise SceneGeometryError(
                f"object '{obj.name}': a simulated episode starts with every object on a place, not {obj.location!r}"
            )
        if obj.location in drawers or obj.location in containers:
            pos, yaw = layout.in_container(obj, shape, half)
        else:
            pos, yaw = layout.on_table(obj, half), float(obj.geometry.get("yaw", 0.0))
        if seed != 0:
            pos = pos + np.array([*rng.uniform(-JITTER, JITTER, 2), 0.0])
            yaw += float(rng.uniform(-2.0, 2.0))
        geo = obj.geometry
        objects[obj.name] = ObjectGeometry(obj.name, shape, half, pos, yaw, obj.location,
                                           float(geo.get("mass", DEFAULT_MASS)),
                                           tuple(map(float, geo.get("rgba", [0.5, 0.5, 0.5, 1.0]))))
    openings = {n: (d.slide if world.places[n].is_open else 0.0) for n, d in drawers.items()}
    return SceneGeometry(tuple(world_boxes), tuple(trays + cabinets), objects, surfaces, containers, drawers, openings)
