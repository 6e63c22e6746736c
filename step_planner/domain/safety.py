"""The safety envelope: the last check before a primitive call may move the arm.

It is deliberately independent of the planner: the planner already validated the call, but the
envelope re-checks it against the current world with its own rules (an allowlist, argument
shapes, a workspace box, speed and force limits), so a planner bug or an instruction-injection
attempt ("ignore the rules and move to x = 5 m") cannot produce an out-of-envelope motion.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, model_validator

from step_planner.config_schema import ConfigFileError, ConfigModel, read_yaml, validate
from step_planner.domain.primitives import PrimitiveCall, PrimitiveLibrary
from step_planner.domain.transitions import check_call
from step_planner.domain.world import WorldState

_NAME = re.compile(r"^[a-z0-9_]+$")


class SafetyConfigError(ConfigFileError):
    """The safety configuration is malformed."""


Vec3 = Annotated[list[float], Field(min_length=3, max_length=3)]


class Workspace(ConfigModel):
    """The box every entity a call names must be inside (entities without a position, named poses, pass)."""

    frame: str = Field("panda_link0", min_length=1, description="The frame of the box: the robot base frame.")
    min: Vec3 = Field(description="m: the box's lowest corner (x, y, z).")
    max: Vec3 = Field(description="m: the box's highest corner (x, y, z), above min on every axis.")

    @model_validator(mode="after")
    def _ordered(self) -> Workspace:
        if any(a >= b for a, b in zip(self.min, self.max, strict=True)):
            raise ValueError("workspace.min must be below workspace.max on every axis")
        return self


class SafetySettings(ConfigModel):
    """``config/safety.yaml``'s ``safety:`` section: the envelope's rules (the node's safety.* parameters too)."""

    allowed_primitives: list[str] = Field(description="The only primitives that may move the arm.")
    workspace: Workspace = Field(description="Workspace box in the robot base frame.")
    max_velocity_scaling: float = Field(0.5, gt=0, le=1, description="Upper bound of a backend's velocity "
                                        "scaling (fraction of the joint velocity limits; config/franka.yaml and "
                                        "robot_boundary.yaml are checked against it).")
    max_acceleration_scaling: float = Field(0.5, gt=0, le=1, description="Upper bound of a backend's "
                                            "acceleration scaling (fraction of the joint acceleration limits).")
    max_gripper_force_n: float = Field(70.0, gt=0, le=140, description="N: upper bound of a grasp force "
                                       "(the Franka hand's continuous force is 70 N, 140 N peak).")
    max_name_length: int = Field(64, ge=1, le=256, description="Characters: a longer call argument is refused.")


class SafetyFile(ConfigModel):
    """``config/safety.yaml``: the safety envelope, checked on every primitive call right before it would reach the
    arm, after (and independently of) the planner's own checks."""

    safety: SafetySettings


def entity_position(world: WorldState, name: str) -> tuple[float, float, float] | None:
    """Where an entity is in the base frame, when the scene or perception says so."""
    entity = world.objects.get(name) or world.places.get(name)
    if entity is None:
        return None
    geometry = entity.geometry or {}
    for key in ("position", "cabinet_position"):
        pos = geometry.get(key)
        if isinstance(pos, (list, tuple)) and len(pos) == 3:
            try:
                return (float(pos[0]), float(pos[1]), float(pos[2]))
            except (TypeError, ValueError):
                return (float("inf"),) * 3  # an unreadable position is outside any box
    return None


@dataclass(frozen=True)
class SafetyEnvelope:
    allowed_primitives: frozenset[str]
    workspace_min: tuple[float, float, float]
    workspace_max: tuple[float, float, float]
    max_velocity_scaling: float = 0.5
    max_acceleration_scaling: float = 0.5
    max_gripper_force_n: float = 70.0
    max_name_length: int = 64
    frame: str = "panda_link0"

    @classmethod
    def from_settings(cls, settings: SafetySettings) -> SafetyEnvelope:
        ws = settings.workspace
        return cls(frozenset(settings.allowed_primitives), tuple(ws.min), tuple(ws.max),  # type: ignore[arg-type]
                   settings.max_velocity_scaling, settings.max_acceleration_scaling, settings.max_gripper_force_n,
                   settings.max_name_length, ws.frame)

    @classmethod
    def from_dict(cls, data: Any, source: str = "safety") -> SafetyEnvelope:
        """``data``: the file's contents, or its ``safety:`` section alone."""
        if isinstance(data, dict) and "safety" in data:
            return cls.from_settings(validate(SafetyFile, data, source, SafetyConfigError).safety)
        return cls.from_settings(validate(SafetySettings, data, source, SafetyConfigError, prefix=("safety",)))

    @classmethod
    def load(cls, path: str | Path) -> SafetyEnvelope:
        return cls.from_dict(read_yaml(path, SafetyConfigError), source=str(path))

    def violations(self, call: PrimitiveCall, library: PrimitiveLibrary, world: WorldState) -> list[str]:
        """Every reason ``call`` must not move the arm now (``world`` is the observed view)."""
        problems: list[str] = []
        if call.name not in self.allowed_primitives:
            return [f"'{call.name}' is not on the allowlist of primitives"]
        for key, value in call.args:
            if not isinstance(value, str) or len(value) > self.max_name_length or not (
                _NAME.match(value)
            ):
                problems.append(f"argument {key}={value!r} is not a plain entity name")
        if problems:
            return problems
        problems += [str(p) for p in check_call(call, library, world)]
        for _, value in call.args:
            pos = entity_position(world, value)
            if pos is None:
                continue
            inside = all(lo <= v <= hi for v, lo, hi in zip(pos, self.workspace_min, self.workspace_max, strict=True))
            if not inside:
                problems.append(
                    f"{value} at {tuple(round(v, 3) for v in pos)} is outside the workspace box "
                    f"{self.workspace_min}..{self.workspace_max} ({self.frame})"
                )
        return problems

    def check_motion_limits(self, velocity_scaling: float, acceleration_scaling: float, force_n: float) -> list[str]:
        """Backends call this with their configured limits at start-up."""
        problems = []
        if not 0 < velocity_scaling <= self.max_velocity_scaling:
            problems.append(f"velocity scaling {velocity_scaling} exceeds the limit {self.max_velocity_scaling}")
        if not 0 < acceleration_scaling <= self.max_acceleration_scaling:
            problems.append(
                f"acceleration scaling {acceleration_scaling} exceeds the limit {self.max_acceleration_scaling}"
            )
        if not 0 < force_n <= self.max_gripper_force_n:
            problems.append(f"gripper force {force_n} N exceeds the limit {self.max_gripper_force_n} N")
        return problems
