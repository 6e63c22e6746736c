"""``config/robot_boundary.yaml``: the controller actions, joint names and conventions of one robot.

Pure Python (no ROS): a malformed file is refused with a :class:`BoundaryConfigError` naming the key,
before anything talks to a controller, so bad config never moves the arm. Robot-specific names are data
here, never branches in code.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from step_planner.execution.sim.model import ARM_JOINTS, FINGER_JOINTS, VEL_LIMITS

GRIPPER_SERVERS = ("gripper_action_controller", "franka_gripper")
POSITION_CONVENTIONS = ("per_finger", "full_width")


class BoundaryConfigError(ValueError):
    """``config/robot_boundary.yaml`` is malformed; the message names the offending key."""


@dataclass(frozen=True)
class ArmBoundary:
    action: str
    joints: tuple[str, ...]  # the controller's names, in the planning model's order (ARM_JOINTS)
    # rad/s^2, same order: how fast the arm controller brings each joint to rest on a cancel or an abort
    # (joint_trajectory_controller's max_deceleration_on_cancel); empty: not stated, no speed is derived from it
    stop_deceleration: tuple[float, ...] = ()
    # rad, same order: the robot's joint position limits (empty: not stated; then only the model's ranges bound plans)
    lower: tuple[float, ...] = ()
    upper: tuple[float, ...] = ()
    velocity_limits: tuple[float, ...] = ()  # rad/s, same order (empty: not stated)
    limit_reflex: bool = False  # a joint past its limits stops the robot and aborts the goal (the FR3's reflex)

    def outside_limits(self, q: np.ndarray, slack: float = 0.0) -> list[tuple[int, int, float]]:
        """(waypoint, joint, position) of every position of ``q`` (n x 7, planning-model order) more than ``slack``
        outside the limits."""
        if not self.lower:
            return []
        q = np.atleast_2d(np.asarray(q, dtype=float))
        rows, cols = np.nonzero((q < np.asarray(self.lower) - slack) | (q > np.asarray(self.upper) + slack))
        return [(int(r), int(c), float(q[r, c])) for r, c in zip(rows, cols, strict=True)]


@dataclass(frozen=True)
class GripperBoundary:
    server: str
    action: str
    joints: tuple[str, ...]  # the finger joints' names, in FINGER_JOINTS order
    goal_position: str  # per_finger | full_width: what GripperCommand.position means in a goal
    result_position: str  # per_finger | full_width: what the result's position means
    max_effort: float
    grasp_epsilon: float = 0.005  # franka_gripper: a grasp holds iff the gap is within this of the expected width
    speed: float = 0.1  # franka_gripper: move and grasp speed (m/s), its default (franka_gripper_node.yaml:5)
    # franka_gripper: the widest ~/move opening (m between the fingers), never more than the width the hand reports
    # after homing; and whether to home once at start-up (libfranka measures the maximum width, gripper.h:65-78)
    open_width: float = 0.078
    homing: bool = False

    @property
    def node(self) -> str:
        """franka_gripper: the node whose ~/grasp and ~/move are used, the parent of its ~/gripper_action."""
        return self.action.rsplit("/", 1)[0]

    def goal_value(self, opening: float) -> float:
        """The goal's ``position`` for one finger's ``opening`` (m)."""
        return opening if self.goal_position == "per_finger" else 2.0 * opening

    def opening_from_result(self, position: float) -> float:
        """One finger's opening from a result's (or feedback's) ``position``."""
        return position if self.result_position == "per_finger" else position / 2.0


@dataclass(frozen=True)
class FrankaHardwareBoundary:
    """franka_ros2's ros2_control on the FR3: where a client learns that a reflex stopped the robot and how it
    recovers (franka_ros2@29cb85a franka_hardware/doc/index.rst:73-160)."""

    controller_manager: str  # the controller manager's node: its ~/list_controllers, ~/switch_controller, ...
    hardware_component: str  # franka_hardware's component name (FrankaHardwareInterface, or <prefix>_...)
    error_recovery: str  # franka_msgs/action/ErrorRecovery (libfranka's automaticErrorRecovery)
    robot_state: str  # franka_robot_state_broadcaster's franka_msgs/msg/FrankaRobotState topic
    controllers: tuple[str, ...]  # activated again by the third recovery step (those loaded)


@dataclass(frozen=True)
class TrajectorySettings:
    point_period_s: float = 0.02
    path_tolerance: float = 0.1
    goal_tolerance: float = 0.005
    goal_time_tolerance_s: float = 1.0


@dataclass(frozen=True)
class Timeouts:
    server_wait_s: float = 10.0
    goal_accept_s: float = 10.0
    trajectory_margin_s: float = 5.0
    gripper_s: float = 5.0
    state_stale_s: float = 1.0


@dataclass(frozen=True)
class BoundaryConfig:
    robot: str
    arm: ArmBoundary
    gripper: GripperBoundary
    joint_states: str
    object_poses: str
    pose_max_age_s: float
    pose_filter_s: float
    velocity_scaling: float
    trajectory: TrajectorySettings
    timeouts: Timeouts
    stop_within_s: float = 0.0  # plan no joint faster than it stops in this long at stop_deceleration (0: no cap)
    joint_limit_margin: float = 0.0  # rad: plans stay this far inside the position limits
    franka_hardware: FrankaHardwareBoundary | None = None  # the FR3's ros2_control (reflex, recovery); None: none

    def planning_limits(self, model_lower: np.ndarray, model_upper: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The joint ranges every plan stays within: the robot's limits less the margin, inside the model's own."""
        lower, upper = np.asarray(model_lower, dtype=float), np.asarray(model_upper, dtype=float)
        if self.arm.lower:
            lower = np.maximum(lower, np.asarray(self.arm.lower) + self.joint_limit_margin)
            upper = np.minimum(upper, np.asarray(self.arm.upper) - self.joint_limit_margin)
        return lower, upper

    @property
    def velocity_cap(self) -> tuple[float, ...] | None:
        """Each joint's fastest planned speed (rad/s, planning-model order): what it can shed in ``stop_within_s``
        at its ``stop_deceleration``, so a cancel stops every joint in about that long; None when not configured."""
        if not self.stop_within_s or not self.arm.stop_deceleration:
            return None
        return tuple(d * self.stop_within_s for d in self.arm.stop_deceleration)

    @property
    def model_names(self) -> dict[str, str]:
        """Controller joint name -> the planning model's joint name."""
        return dict(zip(self.arm.joints + self.gripper.joints, ARM_JOINTS + FINGER_JOINTS, strict=True))

    @classmethod
    def load(cls, path: str | Path, robot: str | None = None) -> BoundaryConfig:
        try:
            data = yaml.safe_load(Path(path).read_text())
        except (OSError, yaml.YAMLError) as exc:
            raise BoundaryConfigError(f"{path}: {exc}") from exc
        return cls.from_dict(data, robot, source=str(path))

    @classmethod
    def from_dict(cls, data: Any, robot: str | None = None, source: str = "robot_boundary") -> BoundaryConfig:
        if not isinstance(data, dict):
            raise BoundaryConfigError(f"{source}: expected a mapping with 'robot' and 'robots'")
        robots = data.get("robots")
        if not isinstance(robots, dict) or not robots:
            raise BoundaryConfigError(f"{source}: 'robots' must map robot names to their boundary")
        name = robot or data.get("robot")
        if name not in robots:
            raise BoundaryConfigError(f"{source}: robot {name!r} is not one of {', '.join(map(str, robots))}")
        entry = _mapping(robots[name], f"robots.{name}", source)
        arm = _mapping(entry.get("arm"), f"robots.{name}.arm", source)
        grip = _mapping(entry.get("gripper"), f"robots.{name}.gripper", source)
        where = f"{source}: robots.{name}"
        timeouts = _mapping(data.get("timeouts", {}), "timeouts", source)
        unknown = set(timeouts) - set(Timeouts.__dataclass_fields__)
        if unknown:
            raise BoundaryConfigError(f"{source}: unknown timeouts {sorted(unknown)}")
        trajectory = _mapping(data.get("trajectory", {}), "trajectory", source)
        unknown = set(trajectory) - set(TrajectorySettings.__dataclass_fields__)
        if unknown:
            raise BoundaryConfigError(f"{source}: unknown trajectory settings {sorted(unknown)}")
        lower, upper = _position_limits(arm, len(ARM_JOINTS), f"{where}.arm")
        velocity_scaling = _positive(data, "velocity_scaling", source, default=0.5, high=1.0)
        velocities = _velocity_limits(arm, len(ARM_JOINTS), f"{where}.arm", velocity_scaling)
        margin = _positive(data, "joint_limit_margin", source, default=0.0, high=0.2, zero=True)
        if lower and np.any(np.asarray(upper) - np.asarray(lower) <= 2 * margin):
            raise BoundaryConfigError(f"{where}.arm.position_limits leave no room inside joint_limit_margin {margin}")
        reflex = arm.get("limit_reflex", False)
        if not isinstance(reflex, bool) or (reflex and not lower):
            raise BoundaryConfigError(f"{where}.arm.limit_reflex must be true or false (true needs position_limits), "
                                      f"got {reflex!r}")
        return cls(
            robot=name,
            arm=ArmBoundary(_topic(arm.get("action"), "action", f"{where}.arm"),
                            _names(arm, len(ARM_JOINTS), f"{where}.arm"),
                            _decelerations(arm, len(ARM_JOINTS), f"{where}.arm"),
                            lower, upper, velocities, reflex),
            gripper=GripperBoundary(
                server=_choice(grip, "server", GRIPPER_SERVERS, f"{where}.gripper"),
                action=_topic(grip.get("action"), "action", f"{where}.gripper"),
                joints=_names(grip, len(FINGER_JOINTS), f"{where}.gripper"),
                goal_position=_choice(grip, "goal_position", POSITION_CONVENTIONS, f"{where}.gripper"),
                result_position=_choice(grip, "result_position", POSITION_CONVENTIONS, f"{where}.gripper"),
                max_effort=_positive(grip, "max_effort", f"{where}.gripper"),
                grasp_epsilon=_positive(grip, "grasp_epsilon", f"{where}.gripper", default=0.005, high=0.05),
                speed=_positive(grip, "speed", f"{where}.gripper", default=0.1, high=0.2),
                open_width=_positive(grip, "open_width", f"{where}.gripper", default=0.078, high=0.2),
                homing=_boolean(grip, "homing", f"{where}.gripper"),
            ),
            joint_states=_topic(data.get("joint_states", "/joint_states"), "joint_states", source),
            object_poses=_topic(data.get("object_poses", ""), "object_poses", source, allow_empty=True),
            pose_max_age_s=_positive(data, "pose_max_age_s", source, default=0.5, high=60.0),
            pose_filter_s=_positive(data, "pose_filter_s", source, default=0.25, high=5.0, zero=True),
            velocity_scaling=velocity_scaling,
            joint_limit_margin=margin,
            stop_within_s=_positive(data, "stop_within_s", source, default=0.0, high=1.0, zero=True),
            trajectory=TrajectorySettings(**{k: _positive(trajectory, k, f"{source}: trajectory", high=10.0)
                                             for k in trajectory}),
            timeouts=Timeouts(**{k: _positive(timeouts, k, f"{source}: timeouts") for k in timeouts}),
            franka_hardware=_franka_hardware(entry.get("franka_hardware"), f"{where}.franka_hardware"),
        )


def _franka_hardware(value: Any, where: str) -> FrankaHardwareBoundary | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise BoundaryConfigError(f"{where} must be a mapping, got {value!r}")
    unknown = set(value) - set(FrankaHardwareBoundary.__dataclass_fields__)
    if unknown:
        raise BoundaryConfigError(f"{where}: unknown keys {sorted(unknown)}")
    component, controllers = value.get("hardware_component"), value.get("controllers")
    if not isinstance(component, str) or not component or "/" in component:
        raise BoundaryConfigError(f"{where}.hardware_component must be a component name such as "
                                  f"FrankaHardwareInterface, got {component!r}")
    if not isinstance(controllers, list) or not controllers or not all(isinstance(c, str) and c for c in controllers):
        raise BoundaryConfigError(f"{where}.controllers must list the controllers to activate again, got "
                                  f"{controllers!r}")
    return FrankaHardwareBoundary(
        controller_manager=_topic(value.get("controller_manager"), "controller_manager", where),
        hardware_component=component,
        error_recovery=_topic(value.get("error_recovery"), "error_recovery", where),
        robot_state=_topic(value.get("robot_state"), "robot_state", where),
        controllers=tuple(controllers))


def _mapping(value: Any, key: str, source: str) -> dict:
    if not isinstance(value, dict):
        raise BoundaryConfigError(f"{source}: '{key}' must be a mapping, got {value!r}")
    return value


def _topic(value: Any, key: str, source: str, allow_empty: bool = False) -> str:
    if allow_empty and value in ("", None):
        return ""
    if not isinstance(value, str) or not value.startswith("/") or " " in value:
        raise BoundaryConfigError(f"{source}.{key} must be an absolute ROS name such as /a/b, got {value!r}")
    return value


def _names(entry: dict, n: int, where: str) -> tuple[str, ...]:
    names = entry.get("joints")
    if not isinstance(names, list) or len(names) != n or not all(isinstance(x, str) and x for x in names) \
            or len(set(names)) != n:
        raise BoundaryConfigError(f"{where}.joints must list {n} distinct joint names, got {names!r}")
    return tuple(names)


def _decelerations(entry: dict, n: int, where: str) -> tuple[float, ...]:
    values = entry.get("stop_deceleration", [])
    if not isinstance(values, list) or len(values) not in (0, n) or not all(
            not isinstance(v, bool) and isinstance(v, (int, float)) and 0 < v <= 100 for v in values):
        raise BoundaryConfigError(f"{where}.stop_deceleration must list {n} decelerations in (0, 100] rad/s^2, "
                                  f"got {values!r}")
    return tuple(float(v) for v in values)


def _position_limits(entry: dict, n: int, where: str) -> tuple[tuple[float, ...], tuple[float, ...]]:
    limits = entry.get("position_limits")
    if limits is None:
        return (), ()
    lower, upper = (limits.get(k) if isinstance(limits, dict) else None for k in ("lower", "upper"))
    ok = all(isinstance(v, list) and len(v) == n and all(
        not isinstance(x, bool) and isinstance(x, (int, float)) and abs(x) <= 2 * np.pi for x in v)
        for v in (lower, upper))
    if not ok or any(lo >= hi for lo, hi in zip(lower, upper, strict=True)):
        raise BoundaryConfigError(f"{where}.position_limits must give lower and upper, {n} angles each in "
                                  f"[-2 pi, 2 pi] rad with lower < upper, got {limits!r}")
    return tuple(map(float, lower)), tuple(map(float, upper))


def _velocity_limits(entry: dict, n: int, where: str, scaling: float) -> tuple[float, ...]:
    """The robot's joint velocity limits, refused when the motion stack would plan faster: it times every path at
    the Panda's limits (execution/sim/model.py VEL_LIMITS, half of them at the MuJoCo backend's speed 0.5) times
    ``velocity_scaling``."""
    values = entry.get("velocity_limits", [])
    if not isinstance(values, list) or len(values) not in (0, n) or not all(
            not isinstance(v, bool) and isinstance(v, (int, float)) and v > 0 for v in values):
        raise BoundaryConfigError(f"{where}.velocity_limits must list {n} velocities > 0 rad/s, got {values!r}")
    planned = VEL_LIMITS / 0.5 * scaling
    if values and np.any(planned > np.asarray(values)):
        raise BoundaryConfigError(f"{where}.velocity_limits {values} are below the motion stack's planned joint "
                                  f"speeds at velocity_scaling {scaling}: {np.round(planned, 3).tolist()} rad/s")
    return tuple(float(v) for v in values)


def _boolean(entry: dict, key: str, where: str) -> bool:
    value = entry.get(key, False)
    if not isinstance(value, bool):
        raise BoundaryConfigError(f"{where}.{key} must be true or false, got {value!r}")
    return value


def _choice(entry: dict, key: str, choices: tuple[str, ...], where: str) -> str:
    value = entry.get(key)
    if value not in choices:
        raise BoundaryConfigError(f"{where}.{key} must be one of {', '.join(choices)}, got {value!r}")
    return value


def _positive(entry: dict, key: str, where: str, default: float | None = None, high: float = 3600.0,
              zero: bool = False) -> float:
    value = entry.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (value >= 0 if zero else value > 0) \
            or value > high:
        raise BoundaryConfigError(f"{where}.{key} must be a number in {'[' if zero else '('}0, {high}], got {value!r}")
    return float(value)
