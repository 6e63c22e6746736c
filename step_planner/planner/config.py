"""Planner budgets and feature switches, from ``config/planner.yaml``.

Every budget ends a goal cleanly with a reason (BUDGET_EXCEEDED) — never a hang.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

KNOWN_FEATURES = frozenset(
    {"control_flow", "episodic_memory", "working_memory", "self_revision", "plan_ahead", "summaries",
     "verify_done"}
)


class ConfigError(ValueError):
    """A planner configuration value is missing, of the wrong type or out of range."""


@dataclass(frozen=True)
class PlannerConfig:
    max_depth: int = 4  # the root is depth 0
    max_children: int = 8  # live (non-abandoned) children of one node
    max_replans_per_node: int = 3  # rejected proposals in one round (one child position) of a node
    max_llm_calls: int = 80
    max_primitives: int = 40
    wall_clock_s: float = 300.0
    features: frozenset[str] = field(default_factory=frozenset)
    prompts_dir: str = ""  # empty: the package's config/prompts

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> PlannerConfig:
        data = dict(data or {})
        known = {f.name for f in fields(cls)}
        if unknown := sorted(set(data) - known):
            raise ConfigError(f"unknown planner settings {unknown}; known: {sorted(known)}")
        kwargs: dict[str, Any] = {}
        for f in fields(cls):
            if f.name not in data:
                continue
            value = data[f.name]
            if f.name == "features":
                if not isinstance(value, (list, tuple, set, frozenset)):
                    raise ConfigError("features must be a list of names")
                if bad := sorted(set(value) - KNOWN_FEATURES):
                    raise ConfigError(f"unknown features {bad}; known: {sorted(KNOWN_FEATURES)}")
                value = frozenset(value)
            elif f.name == "prompts_dir":
                value = str(value)
            elif f.name == "wall_clock_s":
                if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                    raise ConfigError(f"wall_clock_s must be a positive number, got {value!r}")
                value = float(value)
            else:
                if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                    raise ConfigError(f"{f.name} must be a positive integer, got {value!r}")
            kwargs[f.name] = value
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

    def with_features(self, features: set[str] | frozenset[str]) -> PlannerConfig:
        return PlannerConfig.from_dict({**self.to_dict(), "features": sorted(features)})

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["features"] = sorted(self.features)
        return out
