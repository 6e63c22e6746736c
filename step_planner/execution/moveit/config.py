"""``config/franka.yaml``: the MoveIt backend's robot variant, groups, frames, controllers, gripper and limits.

Pure Python (no ROS): the schema is :class:`FrankaFile`; a malformed file is refused with a
:class:`FrankaConfigError` that names the key and what was expected, before anything talks to MoveIt, so bad
config never moves the arm.
ROS names without a leading ``/`` are relative: they resolve in the node's namespace, as MoveIt's own do.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from step_planner.config_schema import ConfigFileError, ConfigModel, Items, pattern, read_yaml, validate

ROBOTS = ("panda", "fr3")
GRIPPER_SERVERS = ("gripper_action_controller", "franka_gripper")
GRIPPER_INTERFACES = ("gripper_command", "grasp_move")
OBJECT_SOURCES = ("scene",)


class FrankaConfigError(ConfigFileError):
    """``config/franka.yaml`` is malformed; the message names the offending key."""


Name = pattern(r"^\S+$", "a name without spaces")
RosName = pattern(r"^/?[A-Za-z_]\w*(/[A-Za-z_]\w*)*$", "a ROS name such as a/b (relative to the node's namespace) "
                  "or /a/b")
Metres = Annotated[float, Field(ge=-10, le=10)]


class GripperServer(ConfigModel):
    """Which gripper server a robot has and how it is driven.

    ``gripper_action_controller``: ros2_controllers' GripperActionController (moveit_resources' Panda on mock
    hardware or Gazebo): ``interface: gripper_command`` only, goal and result per finger, a grasp ends stalled.
    ``franka_gripper``: franka_ros2's gripper node (the FR3): ``grasp_move`` (its ``grasp``/``move``/``homing``
    actions, franka_msgs) or ``gripper_command`` (its ``gripper_action``: goal per finger, result full width).
    ``action`` is the GripperCommand action, or for ``grasp_move`` the node whose actions are used.
    """

    server: Literal[GRIPPER_SERVERS] = Field(description="Which gripper server the robot has.")
    interface: Literal[GRIPPER_INTERFACES] = Field(description="gripper_command (GripperCommand) or grasp_move "
                                                   "(franka_gripper's grasp/move/homing).")
    action: RosName = Field(description="The GripperCommand action, or for grasp_move the franka_gripper node.")
    homing: bool = Field(False, description="Home once at start-up (franka_gripper's grasp_move only).")

    @model_validator(mode="after")
    def _consistent(self) -> GripperServer:
        if self.interface == "grasp_move" and self.server != "franka_gripper":
            raise ValueError("interface must be gripper_command (grasp_move is franka_gripper's)")
        if self.homing and self.interface != "grasp_move":
            raise ValueError("homing must be false (homing is franka_gripper's grasp_move interface)")
        return self


class Variant(ConfigModel):
    """The names of one Franka model: MoveIt's (SRDF / URDF) and its controllers' and gripper's."""

    arm_group: Name = Field(description="The SRDF planning group of the arm.")
    ee_link: Name = Field(description="The hand link.")
    base_frame: Name = Field(description="The robot base frame.")
    tcp_offset: float = Field(ge=0, le=0.5, description="m: hand link -> fingertip centre along the hand's z.")
    touch_links: Items[Name] = Field((), description="Links an attached object may touch.")
    finger_joints: Items[Name] = Field(min_length=2, max_length=2, description="The two finger joints.")
    arm_controller: RosName = Field(description="The FollowJointTrajectory action MoveIt executes the arm through.")
    gripper: GripperServer = Field(description="The gripper server.")


class GraspConfig(ConfigModel):
    pre_grasp_height: float = Field(0.12, ge=0, le=0.5, description="m above the grasp pose, reached with a "
                                    "free-space plan.")
    grasp_depth: float = Field(0.02, ge=0, le=0.5, description="m below the object's top the fingertips close.")
    lift_height: float = Field(0.10, ge=0, le=0.5, description="m straight up after closing.")
    max_opening: float = Field(0.075, gt=0, le=0.5, description="m: objects at least this wide are refused.")
    min_tcp_height: float = Field(0.01, ge=0, le=0.5, description="m: the fingertips never go lower above the "
                                  "table top.")
    place_clearance: float = Field(0.01, ge=0, le=0.5, description="m: release this far above the support.")
    place_spacing: float = Field(0.07, ge=0, le=0.5, description="m: spacing of the place slots.")


class PushConfig(ConfigModel):
    distance: float = Field(0.05, ge=0, le=0.3, description="m: how far an object is pushed.")
    standoff: float = Field(0.02, ge=0, le=0.3, description="m: start this far from the object's side.")
    height: float = Field(0.02, ge=0, le=0.3, description="m: fingertip height above the table while pushing.")


class DrawerConfig(ConfigModel):
    approach_distance: float = Field(0.08, ge=0, le=0.3, description="m: pre-grasp stand-off before the handle.")
    handle_depth: float = Field(0.03, ge=0, le=0.2, description="m: how far the handle sticks out of the front.")
    pull_direction: Items[Metres] = Field((-1.0, 0.0, 0.0), min_length=3, max_length=3, description=(
        "The direction a drawer opens along (normalised)."))
    wall: float = Field(0.01, ge=0.001, le=0.1, description="m: wall thickness of the drawer collision model.")
    handle_width: float = Field(0.014, ge=0.001, le=0.07, description="m: the handle bar's thickness between the "
                                "fingers: the width a grasp expects.")

    @field_validator("pull_direction")
    @classmethod
    def _unit(cls, v: tuple[float, ...]) -> tuple[float, ...]:
        norm = math.sqrt(sum(x * x for x in v))
        if norm < 1e-6:
            raise ValueError("must be a non-zero vector")
        return tuple(x / norm for x in v)


class PlannerSettings(ConfigModel):
    """One PlanRequestParameters recipe: the namespace it loads, then these overrides."""

    params_namespace: Name = Field("plan_request_params", description="The moveit_py parameter namespace.")
    pipeline: Name = Field(description="The planning pipeline.")
    planner_id: Name = Field(description="The planner of that pipeline.")
    planning_time: float = Field(1.0, gt=0, le=60, description="s per attempt.")
    attempts: int = Field(1, ge=1, le=20, description="Planning attempts.")


class GripperConfig(ConfigModel):
    """How every gripper command is made, whatever the server (see docs/moveit_backend.md)."""

    max_effort: float = Field(20.0, gt=0, le=200, description="N: the grasp force (checked against "
                              "config/safety.yaml).")
    open_width: float = Field(0.078, gt=0, le=0.08, description="m: finger gap to open to.")
    speed: float = Field(0.1, gt=0, le=0.2, description="m/s: franka_gripper's move and grasp speed.")
    epsilon_inner: float = Field(0.005, gt=0, le=0.05, description="m: a grasp holds iff (width - epsilon_inner) "
                                 "< gap < (width + epsilon_outer).")
    epsilon_outer: float = Field(0.005, gt=0, le=0.05, description="m: see epsilon_inner.")


class Motion(ConfigModel):
    velocity_scaling: float = Field(gt=0, le=1, description="Fraction of the joint velocity limits "
                                    "(<= config/safety.yaml's max_velocity_scaling).")
    acceleration_scaling: float = Field(gt=0, le=1, description="Fraction of the joint acceleration limits.")
    free_space: PlannerSettings = Field(description="Free-space motions.")
    cartesian: PlannerSettings = Field(description="Straight-line motions.")


class NamedStates(ConfigModel):
    ready: Name = Field(description="The SRDF group state that is home.")


class MoveItTimeouts(ConfigModel):
    execute_s: float = Field(30.0, gt=0, le=600, description="s: one trajectory segment.")
    gripper_s: float = Field(10.0, gt=0, le=120, description="s: one gripper command.")
    server_wait_s: float = Field(10.0, gt=0, le=120, description="s: start-up wait for the action servers.")


class FrankaFile(ConfigModel):
    """``config/franka.yaml``: the MoveIt backend's robot variants, motions, gripper and limits."""

    robot: Literal[ROBOTS] = Field(description="Which variant (franka.launch.py's robot:= overrides it).")
    variants: dict[Literal[ROBOTS], Variant] = Field(description="The names of each Franka model.")
    named_states: NamedStates = Field(description="SRDF group states of the arm group.")
    grasp: GraspConfig = Field(GraspConfig(), description="How objects are grasped and placed.")
    push: PushConfig = Field(PushConfig(), description="How objects are pushed.")
    drawer: DrawerConfig = Field(DrawerConfig(), description="How drawers are opened and closed.")
    motion: Motion = Field(description="Speeds and planners.")
    gripper: GripperConfig = Field(GripperConfig(), description="Every gripper command (the server and its "
                                   "actions are per robot: variants.<robot>.gripper).")
    joint_states: RosName = Field("joint_states", description="Where the finger positions are read.")
    timeouts: MoveItTimeouts = Field(MoveItTimeouts(), description="Waits of the MoveIt backend.")
    objects_source: Literal[OBJECT_SOURCES] = Field("scene", description="Where object poses come from.")
    locations: dict[Name, Items[Metres]] = Field({}, description="m, base frame: move_to targets that are not "
                                                 "entities (home is the ready state).")

    @model_validator(mode="after")
    def _consistent(self) -> FrankaFile:
        if self.robot not in self.variants:
            raise ValueError(f"variants.{self.robot} is missing (robot: {self.robot})")
        if self.grasp.max_opening > self.gripper.open_width:
            raise ValueError(f"grasp.max_opening ({self.grasp.max_opening}) must not exceed gripper.open_width "
                             f"({self.gripper.open_width}): the fingers open only that far")
        if "home" in self.locations:
            raise ValueError("locations.home is reserved (home is the ready state)")
        if bad := [k for k, v in self.locations.items() if len(v) != 3]:
            raise ValueError(f"locations.{bad[0]} must be three numbers (x, y, z)")
        return self


@dataclass(frozen=True)
class FrankaConfig:
    robot: str
    variant: Variant
    ready_state: str
    grasp: GraspConfig
    push: PushConfig
    drawer: DrawerConfig
    velocity_scaling: float
    acceleration_scaling: float
    free_space: PlannerSettings
    cartesian: PlannerSettings
    gripper: GripperConfig
    execute_timeout_s: float
    gripper_timeout_s: float
    server_wait_s: float
    joint_states: str
    objects_source: str
    locations: dict[str, tuple[float, float, float]]
    source: str = "<dict>"

    @classmethod
    def load(cls, path: str | Path, robot: str | None = None) -> FrankaConfig:
        """Read the file; ``robot`` (the launch file's, the node's ``moveit.robot``) overrides its ``robot``."""
        data = read_yaml(path, FrankaConfigError)
        if robot and isinstance(data, dict):
            data = {**data, "robot": robot}
        return cls.from_dict(data, source=str(path))

    @classmethod
    def from_dict(cls, data: Any, source: str = "<dict>") -> FrankaConfig:
        f = validate(FrankaFile, data, source, FrankaConfigError)
        return cls(f.robot, f.variants[f.robot], f.named_states.ready, f.grasp, f.push, f.drawer,
                   f.motion.velocity_scaling, f.motion.acceleration_scaling, f.motion.free_space, f.motion.cartesian,
                   f.gripper, f.timeouts.execute_s, f.timeouts.gripper_s, f.timeouts.server_wait_s, f.joint_states,
                   f.objects_source, {k: (v[0], v[1], v[2]) for k, v in f.locations.items()}, source)
