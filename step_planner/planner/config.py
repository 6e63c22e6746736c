"""Planner settings from ``config/planner.yaml``: the profile, and budgets that scale with the task.

A fixed cap that fits a 4-step task ends a 40-step task early; a cap that fits the 40-step task
lets a runaway 4-step goal burn minutes. So each goal-wide budget is ``base + per_condition × n``,
where n is the size of the task: the number of facts in the instruction's goal (or, for profiles
that state none, the things the instruction names). Every budget still ends a goal cleanly with
BUDGET_EXCEEDED and a reason — never a hang.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, model_validator

from step_planner.config_schema import ConfigFileError, ConfigModel, Items, read_yaml, validate
from step_planner.planner.profiles import DEFAULT_PROFILE, Profile, ProfileError, resolve_profile


class ConfigError(ConfigFileError):
    """A planner configuration value is missing, of the wrong type or out of range."""


class PlannerConfig(ConfigModel):
    """``config/planner.yaml``'s ``planner:`` section (``config/bench.yaml`` too): the profile and the budgets."""

    profile: str = Field(DEFAULT_PROFILE, description="A profile of config/profiles.yaml, optionally with "
                         "+feature / -feature.")
    max_depth: int = Field(4, ge=1, description="Deepest subgoal (the instruction is depth 0; a profile may lower "
                           "it).")
    max_children: int = Field(8, ge=1, description="Live children of one subgoal ...")
    children_per_condition: int = Field(2, ge=0, description="... plus this many per fact of that subgoal.")
    max_replans_per_node: int = Field(3, ge=1, description="Rejected proposals for one child position before the "
                                      "subgoal itself fails.")
    max_llm_calls: int = Field(40, ge=1, description="LLM calls per goal ...")
    llm_calls_per_condition: int = Field(12, ge=0, description="... plus this many per fact of the task.")
    max_primitives: int = Field(16, ge=1, description="Primitives per goal ...")
    primitives_per_condition: int = Field(6, ge=0, description="... plus this many per fact of the task.")
    wall_clock_s: float = Field(300.0, gt=0, description="s per goal ...")
    wall_clock_per_condition_s: float = Field(120.0, ge=0, description="... plus this many per fact of the task.")
    require_verified_success: bool = Field(True, description="A done claim no condition checked ends "
                                           "PLANNING_FAILED.")
    overlap_min_motion_s: float = Field(0.25, ge=0, description="s, feature overlap: prepare the next answer "
                                        "during a primitive only when the last one took this long.")
    prompts_dir: str = Field("", description="Prompt templates; empty: the package's config/prompts.")
    extra_features: Items[str] = Field((), description="+name / -name changes to the profile's features "
                                       "(older files: features).")

    @model_validator(mode="after")
    def _profile_exists(self) -> PlannerConfig:
        try:
            resolve_profile(self.resolved_profile_name)
        except ProfileError as exc:
            raise ValueError(str(exc)) from None
        return self

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
    def from_dict(cls, data: dict[str, Any] | None, source: str = "planner") -> PlannerConfig:
        return validate(cls, _renamed(data or {}), source, ConfigError, prefix=("planner",))

    @classmethod
    def from_yaml(cls, path: str | Path) -> PlannerConfig:
        """The file's ``planner:`` section (or the file itself when it has none)."""
        data = read_yaml(path, ConfigError) or {}
        if isinstance(data, dict) and "planner" in data:
            return validate(PlannerFile, {**data, "planner": _renamed(data["planner"])}, str(path), ConfigError).planner
        return cls.from_dict(data, source=str(path))

    def with_changes(self, **changes: Any) -> PlannerConfig:
        return PlannerConfig.from_dict({**self.to_dict(), **changes})

    def to_dict(self) -> dict[str, Any]:
        out = self.model_dump()
        out["extra_features"] = list(self.extra_features)
        return out


class PlannerFile(ConfigModel):
    """``config/planner.yaml`` and ``config/bench.yaml``."""

    planner: PlannerConfig = Field(default_factory=PlannerConfig, description="The profile and the budgets of "
                                   "one goal.")


def _renamed(data: Any) -> Any:
    """Older files' ``features`` is ``extra_features``; empty names (a ROS string array's placeholder) are none."""
    if not isinstance(data, dict):
        return data
    data = dict(data)
    if "features" in data:
        data["extra_features"] = data.pop("features")
    if isinstance(data.get("extra_features"), (list, tuple)):
        data["extra_features"] = [v for v in data["extra_features"] if v != ""]
    return data
