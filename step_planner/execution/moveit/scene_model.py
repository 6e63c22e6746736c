"""The collision model MoveIt plans around, built from the tracked world state (pure, no ROS).

Each scene entity becomes a :class:`Body` of boxes and cylinders in the base frame: surfaces are
slabs, trays/bins/boxes and drawers are a floor plus four walls (so objects can be placed inside),
objects are their box or cylinder. The held object is not a world body (it is attached to the hand).
Surfaces are lowered by ``SURFACE_GAP`` so the robot's base resting on the table top is not a
collision at the start state.
"""

from __future__ import annotations

from dataclasses import dataclass

from step_planner.domain.world import GRIPPER, WorldState
from step_planner.execution.moveit.config import DrawerConfig
from step_planner.execution.moveit.tool_poses import GeometryError, Shape, Vec3, _vec, drawer_model, object_shape

SURFACE_GAP = 0.002


@dataclass(frozen=True)
class Primitive:
    kind: str                           # box | cylinder
    dimensions: tuple[float, ...]       # box: (x, y, z); cylinder: (height, radius) as SolidPrimitive wants
    center: Vec3
    yaw: float = 0.0


@dataclass(frozen=True)
class Body:
    id: str
    primitives: tuple[Primitive, ...]


def object_body(name: str, shape: Shape) -> Body:
    if shape.kind == "cylinder":
        prim = Primitive("cylinder", (shape.extents[2], shape.extents[0] / 2), shape.center)
    else:
        prim = Primitive("box", shape.extents, shape.center, shape.yaw)
    return Body(name, (prim,))


def open_box(name: str, floor_center: Vec3, inner: Vec3, wall: float) -> Body:
    """A container: floor (underside at ``floor_center``) plus four walls around ``inner``."""
    x, y, z = floor_center
    ix, iy, iz = inner
    h = iz + wall
    zc = z + h / 2
    ox, oy = ix / 2 + wall / 2, iy / 2 + wall / 2
    return Body(name, (
        Primitive("box", (ix + 2 * wall, iy + 2 * wall, wall), (x, y, z + wall / 2)),
        Primitive("box", (wall, iy + 2 * wall, h), (x + ox, y, zc)),
        Primitive("box", (wall, iy + 2 * wall, h), (x - ox, y, zc)),
        Primitive("box", (ix, wall, h), (x, y + oy, zc)),
        Primitive("box", (ix, wall, h), (x, y - oy, zc)),
    ))


def place_body(name: str, kind: str, geometry: dict, drawer: DrawerConfig, is_open: bool) -> Body:
    """The body of a place; GeometryError when the scene does not say where it is."""
    if kind == "drawer":
        d = drawer_model(name, geometry, drawer)
        c = d.body_center(is_open)
        return open_box(name, (c[0], c[1], d.closed_floor_center[2]), d.inner, d.wall)
    if "position" not in geometry or "size" not in geometry:
        raise GeometryError(f"place '{name}' has no geometry.position/size; MoveIt cannot avoid it")
    pos = _vec(geometry["position"], 3, f"{name}.geometry.position")
    size = _vec(geometry["size"], 3, f"{name}.geometry.size")
    if kind == "surface":
        center = (pos[0], pos[1], pos[2] - SURFACE_GAP)
        return Body(name, (Primitive("box", (size[0], size[1], size[2]), center),))
    return open_box(name, (pos[0], pos[1], pos[2]), (size[0], size[1], size[2]), drawer.wall)


def world_bodies(world: WorldState, drawer: DrawerConfig) -> list[Body]:
    """Every body of the world that is not in the gripper.

    Raises GeometryError naming the first entity without usable geometry: planning around a scene
    with an unknown obstacle is refused rather than silently done.
    """
    bodies = [place_body(p.name, p.kind, p.geometry, drawer, p.is_open) for p in world.places.values()]
    for obj in world.objects.values():
        if obj.location != GRIPPER:
            bodies.append(object_body(obj.name, object_shape(obj.name, obj.geometry)))
    return bodies
