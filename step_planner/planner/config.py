"""Planner settings from ``config/planner.yaml``: the profile, and budgets that scale with the task.

A fixed cap that fits a 4-step task ends a 40-step task early; a cap that fits the 40-step task
lets a runaway 4-step goal burn minutes. So each goal-wide budget is ``base + per_condition × n``,
where n is the size of the task: the number of facts in the instruction's goal (or, for profiles
that state none, the things the instruction names). Every budget still ends a goal cleanly with
BUDGET_EXCEEDED and a reason — never a hang.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

from step_planner.planner.profiles import DEFAULT_PROFILE, Profile, ProfileError, resolve_profile


class ConfigError(ValueError):
    """A planner configuration value is missing, of the wrong type or out of range."""


_INTS = ("max_depth", "max_children", "children_per_condition", "max_replans_per_node", "max_llm_calls",
         "llm_calls_per_condition", "max_primitives", "primitives_per_condition")
_FLOATS = ("wall_clock_s", "wall_clock_per_condition_s", "overlap_min_motion_s")
_ZERO_OK = ("children_per_condition", "llm_calls_per_condition", "primitives_per_condition",
            "wall_clock_per_condition_s", "overlap_min_motion_s")


@dataclass(frozen=True)
class PlannerConfig:
    profile: str = DEFAULT_PROFILE  # a profile name, optionally with +feature / -feature
    max_depth: int = 4  # the root is depth 0 (a profile may lower it)
    max_children: int = 8  # live (non-abandoned) children of one subgoal ...
    children_per_condition: int = 2  # ... plus this many per condition of that subgoal
    max_replans_per_node: int = 3  # rejected proposals in one round (one child position) of a node
    max_llm_calls: int = 40  # per goal: base ...
    llm_calls_per_condition: int = 12  # ... plus this many per fact of the task
    max_primitives: int = 16
    primitives_per_condition: int = 6
    wall_clock_s: float = 300.0
    wall_clock_per_condition_s: float = 120.0
    require_verified_success: bool = True  # a done claim no condition checked ends PLANNING_FAILED
    overlap_min_motion_s: float = 0.25  # overlap: prepare during a primitive only when the last one took this long
    prompts_dir: str = ""  # empty: the package's config/prompts
    extra_features: tuple[str, ...] = field(default=())  # "+name" / "-name" changes to the profile's

    def __post_init__(self) -> None:
        try:
            resolve_profile(self.resolved_profile_name)
        except ProfileError as exc:
            raise ConfigError(str(exc)) from None

    @property
    def resolved_profile_name(self) -> str:
        return self.profile + "".join(c if c[:1] in "+-" else f"+{c}" for c in self.extra_features)

    @property
    def planner_profile(self) -> Profile:
        return resolve_profile(self.resolved_profile_name)

    @property
    def features(self) -> frozenset[str]:
        return self.planner_profile.features

    def depth_limit(self) -> int:
        own = self.planner_profile.max_depth
        return min(self.max_depth, own) if own is not None else self.max_depth

    def children_limit(self, conditions: int) -> int:
        return self.max_children + self.children_per_condition * conditions

    def goal_budgets(self, size: int) -> tuple[int, int, float]:
        """(LLM calls, primitives, wall-clock seconds) for a task of ``size`` facts."""
        return (self.max_llm_calls + self.llm_calls_per_condition * size,
                self.max_primitives + self.primitives_per_condition * size,
                self.wall_clock_s + self.wall_clock_per_condition_s * size)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> PlannerConfig:
        data = dict(data or {})
        known = {f.name for f in fields(cls)}
        if "features" in data:  # older files: a list of feature names added to the profile
            data["extra_features"] = data.pop("features")
        if unknown := sorted(set(data) - known):
            raise ConfigError(f"unknown planner settings {unknown}; known: {sorted(known)}")
        kwargs: dict[str, Any] = {}
        for name, value in data.items():
            if name in _INTS:
                low = 0 if name in _ZERO_OK else 1
                if isinstance(value, bool) or not isinstance(value, int) or value < low:
                    raise ConfigError(f"{name} must be an integer >= {low}, got {value!r}")
            elif name in _FLOATS:
                low = 0.0 if name in _ZERO_OK else 1e-9
                if isinstance(value, bool) or not isinstance(value, (int, float)) or value < low:
                    raise ConfigError(f"{name} must be a number >= {low:g}, got {value!r}")
                value = float(value)
            elif name == "require_verified_success":
                if not isinstance(value, bool):
                    raise ConfigError(f"require_verified_success must be true or false, got {value!r}")
            elif name == "extra_features":
                if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
                    raise ConfigError("features must be a list of names (+name adds, -name removes)")
                value = tuple(v for v in value if v)
            else:
                value = str(value)
            kwargs[name] = value
        return cls(**kwargs)

    @classmethod
    def from_yaml(cls, path: str | Path) -> PlannerConfig:
        try:
            data = yaml.safe_load(Path(path).read_text()) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise ConfigError(f"cannot read planner config {path}: {exc}") from exc
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: expected a mapping")
        return cls.from_dict(data.get("planner", data))

    def with_changes(self, **changes: Any) -> PlannerConfig:
        return PlannerConfig.from_dict({**self.to_dict(), **changes})

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["extra_features"] = list(self.extra_features)
        return out
