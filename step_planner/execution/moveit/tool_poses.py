"""Where the gripper goes for each primitive, computed from the scene geometry (pure math, no ROS).

Conventions (the robot base frame, metres, table top at z = 0, as in ``config/scenes/*.yaml``):

- Objects: ``geometry.position`` is the object's centre; ``size`` is ``[x, y, z]`` full extents for
  a box and ``[radius, height]`` for a cylinder; an optional ``yaw`` (rad) turns a box about z.
- Surfaces: ``position`` is the centre of the slab (the table: z = -0.02, thickness 0.04, top 0).
- Trays / bins / boxes and drawers: ``position`` / ``cabinet_position`` is the centre of the
  underside of the floor (z = 0 when standing on the table); ``size`` / ``inner_size`` is the inside.
- Drawers open along ``drawer.pull_direction`` (config, or ``pull_direction`` in the scene
  geometry) by ``slide`` metres; the handle is a vertical bar (or a knob), ``handle_depth`` out from
  the front, at half the drawer's height, unless the scene gives ``handle_position`` (closed drawer).
  It is grasped from the front: hand horizontal, pointing into the drawer, fingers closing
  horizontally across the bar, as the MuJoCo backend does; a top-down handle grasp cannot reach a
  lower drawer once the drawer stacked above it is open.
- Directions of ``push``: forward = +x (away from the robot base), backward = -x, left = +y,
  right = -y.

Every pose here is of the tool centre point (between the fingertips), the gripper pointing down
except at drawer handles; :func:`flange_pose` turns it into the pose of the MoveIt end-effector link.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from step_planner.execution.base import ExecCode
from step_planner.execution.moveit.config import DrawerConfig, GraspConfig, PushConfig

Vec3 = tuple[float, float, float]
Quat = tuple[float, float, float, float]  # x, y, z, w

DIRECTIONS: dict[str, Vec3] = {
    "forward": (1.0, 0.0, 0.0),
    "backward": (-1.0, 0.0, 0.0),
    "left": (0.0, 1.0, 0.0),
    "right": (0.0, -1.0, 0.0),
}
_FINGER_THICKNESS = 0.01  # half the closed fingers' depth along a push: keeps the start off the object


class GeometryError(ValueError):
    """The scene geometry does not say enough (or is impossible) for a motion; nothing moved.

    ``code`` is what the planner is told: BACKEND_ERROR for missing geometry (fix the scene),
    GRASP_FAILED / PLAN_FAILED / PRECONDITION_FAILED when the motion is impossible as asked.
    """

    def __init__(self, message: str, code: ExecCode = ExecCode.BACKEND_ERROR) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Pose:
    position: Vec3
    orientation: Quat

    def moved(self, offset: Vec3) -> Pose:
        x, y, z = self.position
        return Pose((x + offset[0], y + offset[1], z + offset[2]), self.orientation)

    def up(self, dz: float) -> Pose:
        return self.moved((0.0, 0.0, dz))


def top_down(yaw: float) -> Quat:
    """Gripper z pointing down (rotation pi about x), then ``yaw`` about the base z axis.

    The fingers close along the hand's y axis, which this puts at (sin yaw, -cos yaw, 0).
    """
    return (math.cos(yaw / 2), math.sin(yaw / 2), 0.0, 0.0)


def yaw_closing_along(axis: Vec3) -> float:
    """The yaw that makes the fingers close along the horizontal ``axis``."""
    return math.atan2(axis[0], -axis[1])


def z_axis(q: Quat) -> Vec3:
    x, y, z, w = q
    return (2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y))


def flange_pose(tcp: Pose, tcp_offset: float) -> Pose:
    """The end-effector link pose that puts the tool centre point at ``tcp``."""
    zx, zy, zz = z_axis(tcp.orientation)
    return tcp.moved((-tcp_offset * zx, -tcp_offset * zy, -tcp_offset * zz))


# ---- shapes ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Shape:
    """An object as a box or cylinder: centre, full extents (x, y, z) and yaw."""

    kind: str  # box | cylinder
    center: Vec3
    extents: Vec3
    yaw: float = 0.0

    @property
    def top(self) -> float:
        return self.center[2] + self.extents[2] / 2

    @property
    def bottom(self) -> float:
        return self.center[2] - self.extents[2] / 2


def _vec(value: Any, n: int, what: str) -> tuple[float, ...]:
    if not isinstance(value, (list, tuple)) or len(value) != n:
        raise GeometryError(f"{what} must be a list of {n} numbers, got {value!r}")
    try:
        out = tuple(float(v) for v in value)
    except (TypeError, ValueError) as exc:
        raise GeometryError(f"{what} must be numbers, got {value!r}") from exc
    if not all(math.isfinite(v) for v in out):
        raise GeometryError(f"{what} must be finite, got {value!r}")
    return out


def object_shape(name: str, geometry: dict[str, Any]) -> Shape:
    """Read an object's ``geometry`` (see the module docstring); a clear error if it is missing."""
    if "position" not in geometry or "size" not in geometry:
        raise GeometryError(f"object '{name}' has no geometry.position/size in the scene; cannot plan a grasp")
    center = _vec(geometry["position"], 3, f"{name}.geometry.position")
    kind = str(geometry.get("shape", "box"))
    if kind == "cylinder":
        radius, height = _vec(geometry["size"], 2, f"{name}.geometry.size ([radius, height])")
        extents = (2 * radius, 2 * radius, height)
    elif kind == "box":
        extents = _vec(geometry["size"], 3, f"{name}.geometry.size ([x, y, z])")
    else:
        raise GeometryError(f"object '{name}' has shape {kind!r}; the MoveIt backend knows box and cylinder")
    if min(extents) <= 0:
        raise GeometryError(f"object '{name}' has a non-positive size {extents}")
    return Shape(kind, (center[0], center[1], center[2]), (extents[0], extents[1], extents[2]),
                 float(geometry.get("yaw", 0.0)))


# ---- pick / place ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Grasp:
    pre: Pose       # above the object (free-space goal)
    grasp: Pose     # fingertips around the object (straight down from ``pre``)
    lift: Pose      # straight up after closing
    width: float    # the object's size between the fingers
    tcp_above_bottom: float  # how far the object's underside hangs below the tool centre point


def top_grasp(shape: Shape, cfg: GraspConfig) -> Grasp:
    """Top-down grasp across the object's narrower horizontal side."""
    sx, sy, h = shape.extents
    if shape.kind == "box" and sx < sy:
        width, yaw = sx, shape.yaw + math.pi / 2  # close along the object's x
    else:
        width, yaw = sy, shape.yaw  # close along the object's y (any diameter for a cylinder)
    if width >= cfg.max_opening:
        raise GeometryError(f"the object is {width:.3f} m wide between the fingers; the gripper opens "
                            f"{cfg.max_opening:.3f} m", ExecCode.GRASP_FAILED)
    z = max(shape.top - min(cfg.grasp_depth, h / 2), cfg.min_tcp_height)
    grasp = Pose((shape.center[0], shape.center[1], z), top_down(yaw))
    return Grasp(grasp.up(cfg.pre_grasp_height), grasp, grasp.up(cfg.lift_height), width, z - shape.bottom)


@dataclass(frozen=True)
class Support:
    """Where placed objects rest: the centre of the support's top, its usable half-extents."""

    center: Vec3
    half_x: float
    half_y: float


def support_of(kind: str, name: str, geometry: dict[str, Any], drawer: DrawerConfig, is_open: bool) -> Support:
    """The resting area of a surface, container or (open) drawer."""
    if kind == "drawer":
        d = drawer_model(name, geometry, drawer)
        if not is_open:
            raise GeometryError(f"drawer '{name}' is closed; nothing can be placed in it",
                                ExecCode.PRECONDITION_FAILED)
        cx, cy, cz = d.open_floor_center
        return Support((cx, cy, cz), d.inner[0] / 2, d.inner[1] / 2)
    if "position" not in geometry or "size" not in geometry:
        raise GeometryError(f"place '{name}' has no geometry.position/size in the scene; cannot place there")
    pos = _vec(geometry["position"], 3, f"{name}.geometry.position")
    size = _vec(geometry["size"], 3, f"{name}.geometry.size")
    top = pos[2] + size[2] / 2 if kind == "surface" else pos[2] + drawer.wall
    return Support((pos[0], pos[1], top), size[0] / 2, size[1] / 2)


def free_spot(support: Support, footprint: float, occupied: list[tuple[float, float, float]],
              spacing: float) -> Vec3:
    """The first spot on ``support`` (centre, then rings ``spacing`` apart) that keeps an object of
    ``footprint`` inside the support and clear of the ``occupied`` circles (x, y, radius).

    Raises GeometryError (PLAN_FAILED) when no spot is free.
    """
    spots: list[tuple[float, float]] = [(0.0, 0.0)]
    for ring in range(1, 12):
        r = ring * spacing
        spots += [(0.0, r), (0.0, -r), (r, 0.0), (-r, 0.0), (r, r), (-r, r), (r, -r), (-r, -r)]
    radius = footprint / 2
    for dx, dy in spots:
        if abs(dx) + radius > support.half_x + 1e-9 or abs(dy) + radius > support.half_y + 1e-9:
            continue
        x, y = support.center[0] + dx, support.center[1] + dy
        if all(math.hypot(x - ox, y - oy) >= radius + orad + 0.01 for ox, oy, orad in occupied):
            return (x, y, support.center[2])
    raise GeometryError(f"no free spot for an object of {footprint:.3f} m ({len(occupied)} objects already there)",
                        ExecCode.PLAN_FAILED)


def footprint_circle(shape: Shape) -> tuple[float, float, float]:
    """An object's footprint on its support as a circle (x, y, radius)."""
    return (shape.center[0], shape.center[1], math.hypot(shape.extents[0], shape.extents[1]) / 2)


@dataclass(frozen=True)
class Placement:
    pre: Pose
    release: Pose
    retreat: Pose
    object_center: Vec3  # where the object ends up


def place_at(spot: Vec3, grasp: Grasp, held_extents: Vec3, cfg: GraspConfig) -> Placement:
    """Lower the held object onto ``spot`` keeping the grasp orientation it was picked with."""
    release_z = spot[2] + cfg.place_clearance + grasp.tcp_above_bottom
    release = Pose((spot[0], spot[1], release_z), grasp.grasp.orientation)
    center = (spot[0], spot[1], spot[2] + held_extents[2] / 2)
    return Placement(release.up(cfg.pre_grasp_height), release, release.up(cfg.lift_height), center)


# ---- push ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Push:
    pre: Pose
    start: Pose
    end: Pose
    retreat: Pose
    new_center: Vec3


def push_poses(shape: Shape, direction: str, push: PushConfig, grasp: GraspConfig) -> Push:
    """Closed fingers behind the object, then a straight push of ``push.distance`` along ``direction``."""
    if direction not in DIRECTIONS:
        raise GeometryError(f"push direction must be one of {', '.join(DIRECTIONS)}, got {direction!r}",
                            ExecCode.PRECONDITION_FAILED)
    d = DIRECTIONS[direction]
    half = abs(d[0]) * shape.extents[0] / 2 + abs(d[1]) * shape.extents[1] / 2
    back = half + push.standoff + _FINGER_THICKNESS
    z = max(grasp.min_tcp_height, shape.bottom + min(push.height, shape.extents[2] / 2))
    q = top_down(yaw_closing_along((-d[1], d[0], 0.0)))  # fingers side by side across the push
    start = Pose((shape.center[0] - d[0] * back, shape.center[1] - d[1] * back, z), q)
    end = start.moved((d[0] * push.distance, d[1] * push.distance, 0.0))
    new_center = (shape.center[0] + d[0] * push.distance, shape.center[1] + d[1] * push.distance, shape.center[2])
    return Push(start.up(grasp.pre_grasp_height), start, end, end.up(grasp.lift_height), new_center)


# ---- drawers ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DrawerModel:
    closed_floor_center: Vec3  # underside of the floor, drawer closed
    inner: Vec3
    slide: float
    pull: Vec3
    handle_closed: Vec3
    wall: float

    @property
    def open_floor_center(self) -> Vec3:
        c, p, s = self.closed_floor_center, self.pull, self.slide
        return (c[0] + p[0] * s, c[1] + p[1] * s, c[2] + self.wall)

    def handle(self, is_open: bool) -> Vec3:
        s = self.slide if is_open else 0.0
        h, p = self.handle_closed, self.pull
        return (h[0] + p[0] * s, h[1] + p[1] * s, h[2])

    def body_center(self, is_open: bool) -> Vec3:
        """Centre of the drawer's outer box (floor to rim), closed or pulled open."""
        s = self.slide if is_open else 0.0
        c, p = self.closed_floor_center, self.pull
        return (c[0] + p[0] * s, c[1] + p[1] * s, c[2] + (self.inner[2] + self.wall) / 2)


def drawer_model(name: str, geometry: dict[str, Any], cfg: DrawerConfig) -> DrawerModel:
    for key in ("cabinet_position", "inner_size", "slide"):
        if key not in geometry:
            raise GeometryError(f"drawer '{name}' has no geometry.{key} in the scene; cannot plan drawer motions")
    base = _vec(geometry["cabinet_position"], 3, f"{name}.geometry.cabinet_position")
    inner = _vec(geometry["inner_size"], 3, f"{name}.geometry.inner_size")
    slide = float(geometry["slide"])
    if not 0 < slide < 1.0:
        raise GeometryError(f"drawer '{name}' slide must be in (0, 1) m, got {slide}")
    pull = cfg.pull_direction
    if "pull_direction" in geometry:
        px, py, pz = _vec(geometry["pull_direction"], 3, f"{name}.geometry.pull_direction")
        norm = math.sqrt(px * px + py * py + pz * pz)
        if norm < 1e-6:
            raise GeometryError(f"drawer '{name}' pull_direction is zero")
        pull = (px / norm, py / norm, pz / norm)
    if abs(pull[2]) > 1e-6:
        raise GeometryError(f"drawer '{name}' must open horizontally; pull_direction {pull} has a z part")
    if "handle_position" in geometry:
        handle = _vec(geometry["handle_position"], 3, f"{name}.geometry.handle_position")
    else:
        out = abs(pull[0]) * inner[0] / 2 + abs(pull[1]) * inner[1] / 2 + cfg.wall + cfg.handle_depth
        handle = (base[0] + pull[0] * out, base[1] + pull[1] * out, base[2] + cfg.wall + inner[2] / 2)
    return DrawerModel((base[0], base[1], base[2]), (inner[0], inner[1], inner[2]), slide,
                       (pull[0], pull[1], pull[2]), (handle[0], handle[1], handle[2]), cfg.wall)


@dataclass(frozen=True)
class DrawerMotion:
    pre: Pose       # in front of the start, along the pull direction (free-space goal)
    start: Pose     # fingertips around the handle (open) / closed fingers at it (close)
    end: Pose       # after the straight pull / push
    retreat: Pose   # straight back out from ``end``, along the pull direction


def front_facing(pull: Vec3) -> Quat:
    """Gripper z horizontal, pointing into the drawer (against ``pull``), fingers closing
    horizontally across it (hand y = pull turned +90 degrees about the vertical)."""
    zx, zy = -pull[0], -pull[1]
    norm = math.hypot(zx, zy)
    zx, zy = zx / norm, zy / norm
    z = (zx, zy, 0.0)
    y = (-zy, zx, 0.0)
    x = (y[1] * z[2] - y[2] * z[1], y[2] * z[0] - y[0] * z[2], y[0] * z[1] - y[1] * z[0])
    return _quat_from_axes(x, y, z)


def _quat_from_axes(x: Vec3, y: Vec3, z: Vec3) -> Quat:
    """(x, y, z, w) of the rotation whose columns are the given orthonormal axes."""
    m00, m01, m02 = x[0], y[0], z[0]
    m10, m11, m12 = x[1], y[1], z[1]
    m20, m21, m22 = x[2], y[2], z[2]
    trace = m00 + m11 + m22
    if trace > 0:
        s = 2.0 * math.sqrt(trace + 1.0)
        return ((m21 - m12) / s, (m02 - m20) / s, (m10 - m01) / s, 0.25 * s)
    if m00 > m11 and m00 > m22:
        s = 2.0 * math.sqrt(1.0 + m00 - m11 - m22)
        return (0.25 * s, (m01 + m10) / s, (m02 + m20) / s, (m21 - m12) / s)
    if m11 > m22:
        s = 2.0 * math.sqrt(1.0 + m11 - m00 - m22)
        return ((m01 + m10) / s, 0.25 * s, (m12 + m21) / s, (m02 - m20) / s)
    s = 2.0 * math.sqrt(1.0 + m22 - m00 - m11)
    return ((m02 + m20) / s, (m12 + m21) / s, 0.25 * s, (m10 - m01) / s)


def open_drawer_poses(d: DrawerModel, cfg: DrawerConfig, grasp: GraspConfig) -> DrawerMotion:
    """Front grasp of the handle (hand horizontal, fingers closing across the bar), pull by ``slide``,
    back out along the pull direction."""
    q = front_facing(d.pull)
    start = Pose(_clamp_z(d.handle(False), grasp), q)
    end = start.moved(_along(d.pull, d.slide))
    return DrawerMotion(start.moved(_along(d.pull, cfg.approach_distance)), start, end,
                        end.moved(_along(d.pull, cfg.approach_distance)))


def close_drawer_poses(d: DrawerModel, cfg: DrawerConfig, grasp: GraspConfig) -> DrawerMotion:
    """Closed fingers, hand horizontal, just in front of the open drawer's handle; push back by ``slide``."""
    q = front_facing(d.pull)
    h = d.handle(True)
    gap = _FINGER_THICKNESS + 0.01
    start = Pose(_clamp_z((h[0] + d.pull[0] * gap, h[1] + d.pull[1] * gap, h[2]), grasp), q)
    end = start.moved(_along(d.pull, -d.slide))
    return DrawerMotion(start.moved(_along(d.pull, cfg.approach_distance)), start, end,
                        end.moved(_along(d.pull, cfg.approach_distance)))


def _along(direction: Vec3, distance: float) -> Vec3:
    return (direction[0] * distance, direction[1] * distance, direction[2] * distance)


def _clamp_z(p: Vec3, grasp: GraspConfig) -> Vec3:
    return (p[0], p[1], max(p[2], grasp.min_tcp_height))
