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
from typing import Any

import yaml

from step_planner.domain.primitives import PrimitiveCall, PrimitiveLibrary
from step_planner.domain.transitions import check_call
from step_planner.domain.world import WorldState

_NAME = re.compile(r"^[a-z0-9_]+$")


class SafetyConfigError(ValueError):
    """The safety configuration is malformed."""


def _vec3(value: Any, what: str) -> tuple[float, float, float]:
    if not isinstance(value, (list, tuple)) or len(value) != 3 or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in value
    ):
        raise SafetyConfigError(f"{what} must be a list of three numbers, got {value!r}")
    return (float(value[0]), float(value[1]), float(value[2]))


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
    def from_dict(cls, data: Any) -> SafetyEnvelope:
        if not isinstance(data, dict):
            raise SafetyConfigError("the safety config must be a mapping")
        data = data.get("safety", data)
        allowed = data.get("allowed_primitives")
        if not isinstance(allowed, list) or not all(isinstance(a, str) for a in allowed):
            raise SafetyConfigError("allowed_primitives must be a list of primitive names")
        ws = data.get("workspace") or {}
        lo, hi = _vec3(ws.get("min"), "workspace.min"), _vec3(ws.get("max"), "workspace.max")
        if any(a >= b for a, b in zip(lo, hi, strict=True)):
            raise SafetyConfigError("workspace.min must be below workspace.max on every axis")
        limits = {}
        for key in ("max_velocity_scaling", "max_acceleration_scaling"):
            value = data.get(key, 0.5)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
                raise SafetyConfigError(f"{key} must be in (0, 1], got {value!r}")
            limits[key] = float(value)
        force = data.get("max_gripper_force_n", 70.0)
        if isinstance(force, bool) or not isinstance(force, (int, float)) or force <= 0:
            raise SafetyConfigError("max_gripper_force_n must be positive")
        return cls(
            allowed_primitives=frozenset(allowed),
            workspace_min=lo,
            workspace_max=hi,
            max_gripper_force_n=float(force),
            max_name_length=int(data.get("max_name_length", 64)),
            frame=str(ws.get("frame", "panda_link0")),
            **limits,
        )

    @classmethod
    def load(cls, path: str | Path) -> SafetyEnvelope:
        try:
            return cls.from_dict(yaml.safe_load(Path(path).read_text()))
        except (OSError, yaml.YAMLError) as exc:
            raise SafetyConfigError(f"cannot read safety config {path}: {exc}") from exc

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
