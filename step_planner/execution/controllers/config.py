"""``config/robot_boundary.yaml``: the controller actions, joint names and conventions of one robot.

Pure Python (no ROS): the file's schema is :class:`BoundaryFile`; a malformed file is refused with a
:class:`BoundaryConfigError` naming every offending key, before anything talks to a controller, so bad config never
moves the arm. Robot-specific names are data here, never branches in code.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field, field_validator, model_validator

from step_planner.config_schema import ConfigFileError, ConfigModel, Items, pattern, read_yaml, validate
from step_planner.execution.sim.model import ARM_JOINTS, FINGER_JOINTS, VEL_LIMITS

GRIPPER_SERVERS = ("gripper_action_controller", "franka_gripper")
POSITION_CONVENTIONS = ("per_finger", "full_width")
AbsoluteName = pattern(r"^/[^\s]+$", "an absolute ROS name such as /a/b")
OptionalName = pattern(r"^(/[^\s]+)?$", "empty or an absolute ROS name such as /a/b")
Position = Literal["per_finger", "full_width"]


class BoundaryConfigError(ConfigFileError):
    """``config/robot_boundary.yaml`` is malformed; the message names the offending key."""


def _distinct(names: tuple[str, ...], n: int) -> tuple[str, ...]:
    if len(names) != n or len(set(names)) != n or not all(names):
        raise ValueError(f"must list {n} distinct joint names")
    return names


class PositionLimits(ConfigModel):
    lower: Items[Annotated[float, Field(ge=-2 * np.pi, le=2 * np.pi)]] = Field(
        description="rad: each arm joint's lowest position, in joint order (7 angles in [-2 pi, 2 pi]).")
    upper: Items[Annotated[float, Field(ge=-2 * np.pi, le=2 * np.pi)]] = Field(
        description="rad: each arm joint's highest position (7 angles, lower < upper).")

    @model_validator(mode="after")
    def _ordered(self) -> PositionLimits:
        n = len(ARM_JOINTS)
        if len(self.lower) != n or len(self.upper) != n or any(
                lo >= hi for lo, hi in zip(self.lower, self.upper, strict=True)):
            raise ValueError(f"position_limits must give lower and upper, {n} angles each with lower < upper")
        return self


class ArmBoundary(ConfigModel):
    """The arm controller (joint_trajectory_controller) of one robot."""

    action: AbsoluteName = Field(description="The FollowJointTrajectory action.")
    joints: Items[str] = Field(description="The controller's joint names, in the planning model's order "
                               "(panda_joint1..7).")
    stop_deceleration: Items[Annotated[float, Field(gt=0, le=100)]] = Field(
        (), description="rad/s^2, same order: how fast the controller brings each joint to rest on a cancel "
        "(max_deceleration_on_cancel); empty: not stated, no stop-speed cap is derived from it.")
    position_limits: PositionLimits | None = Field(
        None, description="The robot's joint position limits (none: only the model's ranges bound plans).")
    velocity_limits: Items[Annotated[float, Field(gt=0)]] = Field(
        (), description="rad/s, same order: the robot's joint velocity limits (empty: not stated).")
    limit_reflex: bool = Field(False, description="A joint past its limits stops the robot and aborts the goal "
                               "(the FR3's reflex); needs position_limits.")

    @field_validator("joints")
    @classmethod
    def _joints(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        return _distinct(names, len(ARM_JOINTS))

    @field_validator("stop_deceleration", "velocity_limits")
    @classmethod
    def _per_joint(cls, values: tuple[float, ...]) -> tuple[float, ...]:
        if len(values) not in (0, len(ARM_JOINTS)):
            raise ValueError(f"must list {len(ARM_JOINTS)} values, one per joint (or none)")
        return values

    @model_validator(mode="after")
    def _reflex(self) -> ArmBoundary:
        if self.limit_reflex and self.position_limits is None:
            raise ValueError("limit_reflex: true needs position_limits")
        return self

    @property
    def lower(self) -> tuple[float, ...]:
        return self.position_limits.lower if self.position_limits else ()

    @property
    def upper(self) -> tuple[float, ...]:
        return self.position_limits.upper if self.position_limits else ()

    def outside_limits(self, q: np.ndarray, slack: float = 0.0) -> list[tuple[int, int, float]]:
        """(waypoint, joint, position) of every position of ``q`` (n x 7, planning-model order) more than ``slack``
        outside the limits."""
        if not self.lower:
            return []
        q = np.atleast_2d(np.asarray(q, dtype=float))
        rows, cols = np.nonzero((q < np.asarray(self.lower) - slack) | (q > np.asarray(self.upper) + slack))
        return [(int(r), int(c), float(q[r, c])) for r, c in zip(rows, cols, strict=True)]


class GripperBoundary(ConfigModel):
    """The gripper of one robot: ros2_controllers' GripperActionController or franka_gripper's node."""

    server: Literal["gripper_action_controller", "franka_gripper"] = Field(description="Which gripper server.")
    action: AbsoluteName = Field(description="The GripperCommand action (franka_gripper: its gripper_action, "
                                 "whose siblings grasp and move are used).")
    joints: Items[str] = Field(description="The finger joints' names, in the planning model's order.")
    goal_position: Position = Field(description="What GripperCommand.position means in a goal.")
    result_position: Position = Field(description="What the result's position means.")
    max_effort: float = Field(gt=0, le=3600, description="N: the grasp force (checked against config/safety.yaml "
                              "max_gripper_force_n).")
    grasp_epsilon: float = Field(0.005, gt=0, le=0.05, description="m, franka_gripper: a grasp holds iff the gap "
                                 "is within this of the expected width.")
    speed: float = Field(0.1, gt=0, le=0.2, description="m/s, franka_gripper: move and grasp speed.")
    open_width: float = Field(0.078, gt=0, le=0.2, description="m between the fingers, franka_gripper: the widest "
                              "~/move opening (never more than the width the hand reports after homing).")
    homing: bool = Field(False, description="franka_gripper: home once at start-up (libfranka measures the "
                         "maximum width).")

    @field_validator("joints")
    @classmethod
    def _joints(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        return _distinct(names, len(FINGER_JOINTS))

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


class FrankaHardwareBoundary(ConfigModel):
    """franka_ros2's ros2_control on the FR3: where a client learns that a reflex stopped the robot and how it
    recovers (franka_ros2@29cb85a franka_hardware/doc/index.rst:73-160)."""

    controller_manager: AbsoluteName = Field(description="The controller manager's node: its ~/list_controllers, "
                                             "~/switch_controller, ...")
    hardware_component: str = Field(min_length=1, pattern=r"^[^/]+$", description="franka_hardware's component name "
                                    "(FrankaHardwareInterface, or <prefix>_...).")
    error_recovery: AbsoluteName = Field(description="franka_msgs/action/ErrorRecovery (libfranka's "
                                         "automaticErrorRecovery).")
    robot_state: AbsoluteName = Field(description="franka_robot_state_broadcaster's franka_msgs/msg/FrankaRobotState "
                                      "topic.")
    controllers: Items[Annotated[str, Field(min_length=1)]] = Field(
        min_length=1, description="Activated again by the third recovery step (those loaded).")


class TrajectorySettings(ConfigModel):
    """FollowJointTrajectory goals."""

    point_period_s: float = Field(0.02, gt=0, le=10, description="s: a waypoint every this long of the timed "
                                  "trajectory (the controller splines between them).")
    path_tolerance: float = Field(0.1, gt=0, le=10, description="rad, every joint: lagging the plan by more means "
                                  "the arm is blocked (PATH_TOLERANCE_VIOLATED).")
    goal_tolerance: float = Field(0.005, gt=0, le=10, description="rad, every joint: where the arm must come to "
                                  "rest at the end.")
    goal_time_tolerance_s: float = Field(1.0, gt=0, le=10, description="s: how long after the trajectory's end "
                                         "it may take to get there.")


class Timeouts(ConfigModel):
    server_wait_s: float = Field(10.0, gt=0, le=3600, description="s: waiting for an action server to appear.")
    goal_accept_s: float = Field(10.0, gt=0, le=3600, description="s: a goal neither accepted nor rejected by "
                                 "then is an error.")
    trajectory_margin_s: float = Field(5.0, gt=0, le=3600, description="s: a trajectory's result may come this "
                                       "much later than its duration.")
    gripper_s: float = Field(5.0, gt=0, le=3600, description="s: one gripper command.")
    state_stale_s: float = Field(1.0, gt=0, le=3600, description="s: no joint state for this long while a goal "
                                 "runs: the robot is lost.")


class RobotBoundary(ConfigModel):
    arm: ArmBoundary
    gripper: GripperBoundary
    franka_hardware: FrankaHardwareBoundary | None = Field(
        None, description="The FR3's ros2_control (reflex, recovery); none: not a franka_ros2 robot.")


class BoundaryFile(ConfigModel):
    """``config/robot_boundary.yaml``: every robot's controllers, and how the backend drives them."""

    robot: str = Field(description="Which entry of robots is used by default.")
    robots: dict[str, RobotBoundary] = Field(min_length=1, description="Per robot: its arm and gripper.")
    joint_states: AbsoluteName = Field("/joint_states", description="Where the joint states are read.")
    object_poses: OptionalName = Field("", description="tf2_msgs/TFMessage of the object and drawer "
                                                     "poses (gz-sim's PosePublisher); empty: none.")
    pose_max_age_s: float = Field(0.5, gt=0, le=60, description="s: an object whose last pose is older is unknown.")
    pose_filter_s: float = Field(0.25, ge=0, le=5, description="s: at rest a pose is the mean of its reports over "
                                 "this long; 0: no filter.")
    joint_limit_margin: float = Field(0.0, ge=0, le=0.2, description="rad: plans stay this far inside the "
                                      "position limits.")
    velocity_scaling: float = Field(0.5, gt=0, le=1, description="The motion stack's speed, a fraction of the "
                                    "Panda's joint limits; checked against config/safety.yaml.")
    stop_within_s: float = Field(0.0, ge=0, le=1, description="s: plan no joint faster than it can stop in this "
                                 "long at its arm.stop_deceleration; 0: no cap.")
    trajectory: TrajectorySettings = Field(TrajectorySettings(), description="FollowJointTrajectory goals.")
    timeouts: Timeouts = Field(Timeouts(), description="Waits of the controllers backend.")

    @model_validator(mode="after")
    def _consistent(self) -> BoundaryFile:
        if self.robot not in self.robots:
            raise ValueError(f"robot {self.robot!r} is not one of {', '.join(self.robots)}")
        planned = VEL_LIMITS / 0.5 * self.velocity_scaling  # the motion stack times paths at these speeds
        for name, entry in self.robots.items():
            arm = entry.arm
            if arm.lower and np.any(np.asarray(arm.upper) - np.asarray(arm.lower) <= 2 * self.joint_limit_margin):
                raise ValueError(f"robots.{name}.arm.position_limits leave no room inside joint_limit_margin "
                                 f"{self.joint_limit_margin}")
            if arm.velocity_limits and np.any(planned > np.asarray(arm.velocity_limits)):
                raise ValueError(f"robots.{name}.arm.velocity_limits {list(arm.velocity_limits)} are below the "
                                 f"motion stack's planned joint speeds at velocity_scaling {self.velocity_scaling}: "
                                 f"{np.round(planned, 3).tolist()} rad/s")
        return self


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

    def under(self, namespace: str) -> BoundaryConfig:
        """The same robot started under ``namespace`` (the node's): every robot-side name of the file, which names
        the robot as it runs without a namespace, put under it, as franka_bringup's ``namespace`` puts every node of
        the arm under it (franka_bringup/launch/franka.launch.py:127-188): its controllers' actions and the
        controller manager's services, the gripper, joint_states, the model poses, the error recovery action and
        the robot state topic. ``/`` or empty: unchanged."""
        ns = "/" + namespace.strip("/") if namespace.strip("/") else ""
        if not ns:
            return self
        put = lambda name: f"{ns}{name}" if name else name  # noqa: E731 - names are absolute (the schema says so)
        hardware = self.franka_hardware
        if hardware is not None:
            hardware = hardware.model_copy(update={"controller_manager": put(hardware.controller_manager),
                                                   "error_recovery": put(hardware.error_recovery),
                                                   "robot_state": put(hardware.robot_state)})
        return replace(self, arm=self.arm.model_copy(update={"action": put(self.arm.action)}),
                       gripper=self.gripper.model_copy(update={"action": put(self.gripper.action)}),
                       joint_states=put(self.joint_states), object_poses=put(self.object_poses),
                       franka_hardware=hardware)

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
        return cls.from_dict(read_yaml(path, BoundaryConfigError), robot, source=str(path))

    @classmethod
    def from_dict(cls, data: Any, robot: str | None = None, source: str = "robot_boundary") -> BoundaryConfig:
        return cls.from_file(validate(BoundaryFile, data, source, BoundaryConfigError), robot, source)

    @classmethod
    def from_file(cls, f: BoundaryFile, robot: str | None = None, source: str = "robot_boundary") -> BoundaryConfig:
        name = robot or f.robot
        if name not in f.robots:
            raise BoundaryConfigError(f"{source}: robot {name!r} is not one of {', '.join(f.robots)}")
        return cls(name, f.robots[name].arm, f.robots[name].gripper, f.joint_states, f.object_poses,
                   f.pose_max_age_s, f.pose_filter_s, f.velocity_scaling, f.trajectory, f.timeouts, f.stop_within_s,
                   f.joint_limit_margin, f.robots[name].franka_hardware)
