"""``config/franka.yaml``: the MoveIt backend's robot variant, groups, frames, controllers, gripper and limits.

Pure Python (no ROS): a malformed file is refused with a :class:`FrankaConfigError` that names
the key and what was expected, before anything talks to MoveIt, so bad config never moves the arm.
ROS names without a leading ``/`` are relative: they resolve in the node's namespace, as MoveIt's own do.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROBOTS = ("panda", "fr3")
GRIPPER_SERVERS = ("gripper_action_controller", "franka_gripper")
GRIPPER_INTERFACES = ("gripper_command", "grasp_move")
OBJECT_SOURCES = ("scene",)


class FrankaConfigError(ValueError):
    """``config/franka.yaml`` is malformed; the message names the offending key."""


@dataclass(frozen=True)
class GripperServer:
    """Which gripper server a robot has and how it is driven.

    ``gripper_action_controller``: ros2_controllers' GripperActionController (moveit_resources' Panda on mock
    hardware or Gazebo): ``interface: gripper_command`` only, goal and result per finger, a grasp ends stalled.
    ``franka_gripper``: franka_ros2's gripper node (the FR3): ``grasp_move`` (its ``grasp``/``move``/``homing``
    actions, franka_msgs) or ``gripper_command`` (its ``gripper_action``: goal per finger, result full width).
    ``action`` is the GripperCommand action, or for ``grasp_move`` the node whose actions are used.
    """

    server: str
    interface: str
    action: str
    homing: bool = False


@dataclass(frozen=True)
class Variant:
    """The names of one Franka model: MoveIt's (SRDF / URDF) and its controllers' and gripper's."""

    arm_group: str
    ee_link: str
    base_frame: str
    tcp_offset: float
    touch_links: tuple[str, ...]
    finger_joints: tuple[str, str]
    arm_controller: str  # the FollowJointTrajectory action MoveIt executes the arm through
    gripper: GripperServer


@dataclass(frozen=True)
class GraspConfig:
    pre_grasp_height: float = 0.12
    grasp_depth: float = 0.02
    lift_height: float = 0.10
    max_opening: float = 0.075
    min_tcp_height: float = 0.01
    place_clearance: float = 0.01
    place_spacing: float = 0.07


@dataclass(frozen=True)
class PushConfig:
    distance: float = 0.05
    standoff: float = 0.02
    height: float = 0.02


@dataclass(frozen=True)
class DrawerConfig:
    approach_distance: float = 0.08
    handle_depth: float = 0.03
    pull_direction: tuple[float, float, float] = (-1.0, 0.0, 0.0)
    wall: float = 0.01
    handle_width: float = 0.014  # the handle bar's thickness between the fingers: the width a grasp expects


@dataclass(frozen=True)
class PlannerSettings:
    """One PlanRequestParameters recipe: the namespace it loads, then these overrides."""

    params_namespace: str
    pipeline: str
    planner_id: str
    planning_time: float
    attempts: int


@dataclass(frozen=True)
class GripperConfig:
    """How every gripper command is made, whatever the server (see docs/moveit_backend.md)."""

    max_effort: float = 20.0  # N: the grasp force (checked against config/safety.yaml)
    open_width: float = 0.078  # m: finger gap to open to
    speed: float = 0.1  # m/s: franka_gripper's move and grasp speed (the gripper_command path uses the node's)
    epsilon_inner: float = 0.005  # m: a grasp holds iff (width - epsilon_inner) < gap < (width + epsilon_outer)
    epsilon_outer: float = 0.005


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
        path = Path(path)
        try:
            data = yaml.safe_load(path.read_text())
        except (OSError, yaml.YAMLError) as exc:
            raise FrankaConfigError(f"cannot read {path}: {exc}") from exc
        if robot and isinstance(data, dict):
            data = {**data, "robot": robot}
        return cls.from_dict(data, source=str(path))

    @classmethod
    def from_dict(cls, data: Any, source: str = "<dict>") -> FrankaConfig:
        r = _Reader(source)
        data = r.mapping(data, "the file")
        robot = r.choice(data.get("robot"), "robot", ROBOTS)
        variants = r.mapping(data.get("variants"), "variants")
        variant = r.variant(variants.get(robot), f"variants.{robot}")
        states = r.mapping(data.get("named_states"), "named_states")
        grasp_raw = r.mapping(data.get("grasp", {}), "grasp")
        grasp = GraspConfig(**{
            k: r.number(grasp_raw.get(k, getattr(GraspConfig, k)), f"grasp.{k}", lo=0.0, hi=0.5)
            for k in GraspConfig.__dataclass_fields__
        })
        if grasp.max_opening <= 0:
            raise FrankaConfigError(f"{source}: grasp.max_opening must be positive")
        push_raw = r.mapping(data.get("push", {}), "push")
        push = PushConfig(**{
            k: r.number(push_raw.get(k, getattr(PushConfig, k)), f"push.{k}", lo=0.0, hi=0.3)
            for k in PushConfig.__dataclass_fields__
        })
        drawer_raw = r.mapping(data.get("drawer", {}), "drawer")
        drawer = DrawerConfig(
            approach_distance=r.number(drawer_raw.get("approach_distance", 0.08), "drawer.approach_distance",
                                       lo=0.0, hi=0.3),
            handle_depth=r.number(drawer_raw.get("handle_depth", 0.03), "drawer.handle_depth", lo=0.0, hi=0.2),
            pull_direction=r.unit_vector(drawer_raw.get("pull_direction", [-1.0, 0.0, 0.0]),
                                         "drawer.pull_direction"),
            wall=r.number(drawer_raw.get("wall", 0.01), "drawer.wall", lo=0.001, hi=0.1),
            handle_width=r.number(drawer_raw.get("handle_width", 0.014), "drawer.handle_width", lo=0.001, hi=0.07),
        )
        motion = r.mapping(data.get("motion"), "motion")
        gripper_raw = r.mapping(data.get("gripper", {}), "gripper")
        unknown = set(gripper_raw) - set(GripperConfig.__dataclass_fields__)
        if unknown:
            raise FrankaConfigError(f"{source}: gripper has unknown keys {sorted(unknown)} (the server and its "
                                    f"actions are per robot: variants.<robot>.gripper)")
        limits = {"max_effort": (0.0, 200.0), "open_width": (0.0, 0.08), "speed": (0.0, 0.2),
                  "epsilon_inner": (0.0, 0.05), "epsilon_outer": (0.0, 0.05)}
        gripper = GripperConfig(**{
            k: r.number(gripper_raw.get(k, getattr(GripperConfig, k)), f"gripper.{k}", lo=lo, hi=hi, open_lo=True)
            for k, (lo, hi) in limits.items()
        })
        if grasp.max_opening > gripper.open_width:
            raise FrankaConfigError(f"{source}: grasp.max_opening ({grasp.max_opening}) must not exceed "
                                    f"gripper.open_width ({gripper.open_width}): the fingers open only that far")
        timeouts = r.mapping(data.get("timeouts", {}), "timeouts")
        locations = {
            r.name(name, "locations key"): r.vec3(pos, f"locations.{name}")
            for name, pos in r.mapping(data.get("locations", {}), "locations").items()
        }
        if "home" in locations:
            raise FrankaConfigError(f"{source}: locations.home is reserved (home is the ready state)")
        return cls(
            robot=robot,
            variant=variant,
            ready_state=r.name(states.get("ready"), "named_states.ready"),
            grasp=grasp,
            push=push,
            drawer=drawer,
            velocity_scaling=r.number(motion.get("velocity_scaling"), "motion.velocity_scaling", lo=0.0, hi=1.0,
                                      open_lo=True),
            acceleration_scaling=r.number(motion.get("acceleration_scaling"), "motion.acceleration_scaling",
                                          lo=0.0, hi=1.0, open_lo=True),
            free_space=r.planner(motion.get("free_space"), "motion.free_space"),
            cartesian=r.planner(motion.get("cartesian"), "motion.cartesian"),
            gripper=gripper,
            execute_timeout_s=r.number(timeouts.get("execute_s", 30.0), "timeouts.execute_s", lo=0.0, hi=600.0,
                                       open_lo=True),
            gripper_timeout_s=r.number(timeouts.get("gripper_s", 10.0), "timeouts.gripper_s", lo=0.0, hi=120.0,
                                       open_lo=True),
            server_wait_s=r.number(timeouts.get("server_wait_s", 10.0), "timeouts.server_wait_s", lo=0.0, hi=120.0,
                                   open_lo=True),
            joint_states=r.ros_name(data.get("joint_states", "joint_states"), "joint_states"),
            objects_source=r.choice(data.get("objects_source", "scene"), "objects_source", OBJECT_SOURCES),
            locations=locations,
            source=source,
        )


class _Reader:
    """Typed getters that raise FrankaConfigError naming ``source`` and the key."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, key: str, expected: str, value: Any) -> FrankaConfigError:
        return FrankaConfigError(f"{self.source}: {key} must be {expected}, got {value!r}")

    def mapping(self, value: Any, key: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(key, "a mapping", value)
        return value

    def seq(self, value: Any, key: str) -> list[Any]:
        if not isinstance(value, list):
            raise self.fail(key, "a list", value)
        return value

    def choice(self, value: Any, key: str, choices: tuple[str, ...]) -> str:
        if value not in choices:
            raise self.fail(key, f"one of {', '.join(choices)}", value)
        return str(value)

    def text(self, value: Any, key: str) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(key, "a non-empty string", value)
        return value

    def name(self, value: Any, key: str) -> str:
        text = self.text(value, key)
        if any(c.isspace() for c in text):
            raise self.fail(key, "a name without spaces", value)
        return text

    def boolean(self, value: Any, key: str) -> bool:
        if not isinstance(value, bool):
            raise self.fail(key, "true or false", value)
        return value

    def number(self, value: Any, key: str, lo: float, hi: float, open_lo: bool = False) -> float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        if not ok or value > hi or value < lo or (open_lo and value == lo):
            bracket = "(" if open_lo else "["
            raise self.fail(key, f"a number in {bracket}{lo}, {hi}]", value)
        return float(value)

    def integer(self, value: Any, key: str, lo: int, hi: int) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
            raise self.fail(key, f"an integer in [{lo}, {hi}]", value)
        return value

    def vec3(self, value: Any, key: str) -> tuple[float, float, float]:
        if not isinstance(value, list) or len(value) != 3:
            raise self.fail(key, "a list of three numbers", value)
        x, y, z = (self.number(v, f"{key}[]", lo=-10.0, hi=10.0) for v in value)
        return (x, y, z)

    def unit_vector(self, value: Any, key: str) -> tuple[float, float, float]:
        x, y, z = self.vec3(value, key)
        norm = math.sqrt(x * x + y * y + z * z)
        if norm < 1e-6:
            raise self.fail(key, "a non-zero vector", value)
        return (x / norm, y / norm, z / norm)

    def ros_name(self, value: Any, key: str) -> str:
        """A ROS topic or action name, absolute (/a/b) or relative to the node's namespace (a/b)."""
        text = self.name(value, key)
        parts = text.lstrip("/").split("/")
        if not all(p and (p[0].isalpha() or p[0] == "_") and all(c.isalnum() or c == "_" for c in p) for p in parts):
            raise self.fail(key, "a ROS name such as a/b or /a/b", value)
        return text

    def variant(self, value: Any, key: str) -> Variant:
        raw = self.mapping(value, key)
        grip = self.mapping(raw.get("gripper"), f"{key}.gripper")
        server = GripperServer(
            server=self.choice(grip.get("server"), f"{key}.gripper.server", GRIPPER_SERVERS),
            interface=self.choice(grip.get("interface"), f"{key}.gripper.interface", GRIPPER_INTERFACES),
            action=self.ros_name(grip.get("action"), f"{key}.gripper.action"),
            homing=self.boolean(grip.get("homing", False), f"{key}.gripper.homing"),
        )
        if server.interface == "grasp_move" and server.server != "franka_gripper":
            raise self.fail(f"{key}.gripper.interface", "gripper_command (grasp_move is franka_gripper's)",
                            server.interface)
        if server.homing and server.interface != "grasp_move":
            raise self.fail(f"{key}.gripper.homing", "false (homing is franka_gripper's grasp_move interface)", True)
        fingers = [self.name(v, f"{key}.finger_joints[]") for v in self.seq(raw.get("finger_joints"),
                                                                            f"{key}.finger_joints")]
        if len(fingers) != 2:
            raise self.fail(f"{key}.finger_joints", "two joint names", fingers)
        return Variant(
            arm_group=self.name(raw.get("arm_group"), f"{key}.arm_group"),
            ee_link=self.name(raw.get("ee_link"), f"{key}.ee_link"),
            base_frame=self.name(raw.get("base_frame"), f"{key}.base_frame"),
            tcp_offset=self.number(raw.get("tcp_offset"), f"{key}.tcp_offset", lo=0.0, hi=0.5),
            touch_links=tuple(self.name(v, f"{key}.touch_links[]")
                              for v in self.seq(raw.get("touch_links", []), f"{key}.touch_links")),
            finger_joints=(fingers[0], fingers[1]),
            arm_controller=self.ros_name(raw.get("arm_controller"), f"{key}.arm_controller"),
            gripper=server,
        )

    def planner(self, value: Any, key: str) -> PlannerSettings:
        raw = self.mapping(value, key)
        return PlannerSettings(
            params_namespace=self.name(raw.get("params_namespace", "plan_request_params"), f"{key}.params_namespace"),
            pipeline=self.name(raw.get("pipeline"), f"{key}.pipeline"),
            planner_id=self.name(raw.get("planner_id"), f"{key}.planner_id"),
            planning_time=self.number(raw.get("planning_time", 1.0), f"{key}.planning_time", lo=0.0, hi=60.0,
                                      open_lo=True),
            attempts=self.integer(raw.get("attempts", 1), f"{key}.attempts", lo=1, hi=20),
        )
