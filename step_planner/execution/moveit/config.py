"""``config/franka.yaml``: the MoveIt backend's robot variant, groups, grasp offsets and limits.

Pure Python (no ROS): a malformed file is refused with a :class:`FrankaConfigError` that names
the key and what was expected, before anything talks to MoveIt, so bad config never moves the arm.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROBOTS = ("panda", "fr3")
GRIPPER_MODES = ("hand_group", "gripper_action")
OBJECT_SOURCES = ("scene",)


class FrankaConfigError(ValueError):
    """``config/franka.yaml`` is malformed; the message names the offending key."""


@dataclass(frozen=True)
class Variant:
    """The MoveIt names of one Franka model (from its SRDF / URDF)."""

    arm_group: str
    hand_group: str
    ee_link: str
    base_frame: str
    touch_links: tuple[str, ...]


@dataclass(frozen=True)
class GraspConfig:
    pre_grasp_height: float = 0.12
    grasp_depth: float = 0.02
    lift_height: float = 0.10
    max_opening: float = 0.08
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
    mode: str = "hand_group"
    action_name: str = "/panda_hand_controller/gripper_cmd"
    max_effort: float = 20.0
    open_width: float = 0.08
    closed_width: float = 0.0
    position_per_finger: bool = True


@dataclass(frozen=True)
class FrankaConfig:
    robot: str
    variant: Variant
    ready_state: str
    hand_open_state: str
    hand_closed_state: str
    tcp_offset: float
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
    objects_source: str
    locations: dict[str, tuple[float, float, float]]
    source: str = "<dict>"

    @classmethod
    def load(cls, path: str | Path) -> FrankaConfig:
        path = Path(path)
        try:
            data = yaml.safe_load(path.read_text())
        except (OSError, yaml.YAMLError) as exc:
            raise FrankaConfigError(f"cannot read {path}: {exc}") from exc
        return cls.from_dict(data, source=str(path))

    @classmethod
    def from_dict(cls, data: Any, source: str = "<dict>") -> FrankaConfig:
        r = _Reader(source)
        data = r.mapping(data, "the file")
        robot = r.choice(data.get("robot"), "robot", ROBOTS)
        variants = r.mapping(data.get("variants"), "variants")
        raw_variant = r.mapping(variants.get(robot), f"variants.{robot}")
        variant = Variant(
            arm_group=r.name(raw_variant.get("arm_group"), f"variants.{robot}.arm_group"),
            hand_group=r.name(raw_variant.get("hand_group"), f"variants.{robot}.hand_group"),
            ee_link=r.name(raw_variant.get("ee_link"), f"variants.{robot}.ee_link"),
            base_frame=r.name(raw_variant.get("base_frame"), f"variants.{robot}.base_frame"),
            touch_links=tuple(
                r.name(v, f"variants.{robot}.touch_links[]")
                for v in r.seq(raw_variant.get("touch_links", []), f"variants.{robot}.touch_links")
            ),
        )
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
        )
        motion = r.mapping(data.get("motion"), "motion")
        gripper_raw = r.mapping(data.get("gripper", {}), "gripper")
        gripper = GripperConfig(
            mode=r.choice(gripper_raw.get("mode", "hand_group"), "gripper.mode", GRIPPER_MODES),
            action_name=r.text(gripper_raw.get("action_name", GripperConfig.action_name), "gripper.action_name"),
            max_effort=r.number(gripper_raw.get("max_effort", 20.0), "gripper.max_effort", lo=0.0, hi=200.0,
                                open_lo=True),
            open_width=r.number(gripper_raw.get("open_width", 0.08), "gripper.open_width", lo=0.0, hi=0.2),
            closed_width=r.number(gripper_raw.get("closed_width", 0.0), "gripper.closed_width", lo=0.0, hi=0.2),
            position_per_finger=r.boolean(gripper_raw.get("position_per_finger", True),
                                          "gripper.position_per_finger"),
        )
        if gripper.closed_width >= gripper.open_width:
            raise FrankaConfigError(f"{source}: gripper.closed_width must be below gripper.open_width")
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
            hand_open_state=r.name(states.get("hand_open"), "named_states.hand_open"),
            hand_closed_state=r.name(states.get("hand_closed"), "named_states.hand_closed"),
            tcp_offset=r.number(data.get("tcp_offset"), "tcp_offset", lo=0.0, hi=0.5),
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
