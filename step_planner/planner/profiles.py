"""Planner profiles (``config/profiles.yaml``): which variant of STEP plans a goal.

A profile is data: whether conditions are stated and checked, who judges a new child, which
features are on, how much history a prompt carries. The default (``grounded``), STEP as
published (``paper``), the previous default (``step``) and the flat baselines all run on the
same loop (``runner.run_goal``), so the benchmark compares them on identical answers.

A name may carry feature changes: ``grounded+summaries``, ``grounded-plan_ahead``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from step_planner.config_schema import ConfigFileError, ConfigModel, read_yaml, validate
from step_planner.planner.features import KNOWN_FEATURES
from step_planner.planner.termination import TERMINATION_MODES
from step_planner.resources import config_path

DEFAULT_PROFILE = "grounded"


class ProfileError(ConfigFileError):
    """An unknown profile or feature, or a malformed profiles file."""


@dataclass(frozen=True)
class Profile:
    name: str
    conditions: bool
    termination: str
    features: frozenset[str]
    history: str = "tree"
    max_depth: int | None = None
    replan: bool = True
    description: str = ""

    @property
    def answer_style(self) -> str:
        """How children are written: grounded (call + success_when), text (STEP), calls (flat)."""
        if self.conditions:
            return "grounded"
        return "calls" if self.termination == "calls" else "text"

    def with_feature_changes(self, changes: list[str] | tuple[str, ...]) -> Profile:
        """``["+summaries", "-plan_ahead"]`` (a bare name adds) applied to this profile's features."""
        features = set(self.features)
        for change in changes:
            sign, name = (change[0], change[1:]) if change[:1] in "+-" else ("+", change)
            if name not in KNOWN_FEATURES:
                raise ProfileError(f"unknown feature {name!r}; known: {', '.join(sorted(KNOWN_FEATURES))}")
            (features.add if sign == "+" else features.discard)(name)
        suffix = "".join(c if c[:1] in "+-" else f"+{c}" for c in changes)
        return replace(self, name=self.name + suffix, features=frozenset(features))


class ProfileModel(ConfigModel):
    """One planner profile of ``config/profiles.yaml``."""

    description: str = Field("", description="What this planner is, in a sentence.")
    conditions: bool = Field(True, description="The goal and every subgoal's success_when are asked for and "
                             "checked in the world (needs termination: grounded).")
    termination: Literal[TERMINATION_MODES] = Field("grounded", description="Who decides execute / decompose / "
                                                    "re-plan for a new child (planner/termination.py).")
    features: list[Literal[tuple(sorted(KNOWN_FEATURES))]] = Field(  # type: ignore[misc]
        [], description="Planner features that are on (planner/features.py).")
    history: Literal["tree", "whole_task"] = Field("tree", description="tree: a prompt sees its parent, siblings "
                                                   "and the observation; whole_task: plus every executed action.")
    max_depth: int | None = Field(None, ge=1, description="Overrides the budget (1 = flat).")
    replan: bool = Field(True, description="false: after the first answer, no more decomposition (one-shot).")

    @model_validator(mode="after")
    def _grounded(self) -> ProfileModel:
        if self.conditions and self.termination != "grounded":
            raise ValueError("conditions need termination: grounded")
        return self


class ProfilesFile(ConfigModel):
    """``config/profiles.yaml``: which variant of STEP plans a goal."""

    profiles: dict[str, ProfileModel] = Field(min_length=1, description="Profile name -> its settings.")


def load_profiles(path: str | Path) -> dict[str, Profile]:
    f = validate(ProfilesFile, read_yaml(path, ProfileError), str(path), ProfileError)
    return {name: Profile(name, p.conditions, p.termination, frozenset(p.features), p.history, p.max_depth,
                          p.replan, p.description) for name, p in f.profiles.items()}


@lru_cache(maxsize=4)
def _shipped(path: str) -> dict[str, Profile]:
    return load_profiles(path)


def shipped_profiles() -> dict[str, Profile]:
    return _shipped(str(config_path("profiles.yaml")))


def resolve_profile(spec: str, profiles: dict[str, Profile] | None = None) -> Profile:
    """``grounded``, ``grounded+summaries-plan_ahead`` -> a Profile."""
    profiles = profiles if profiles is not None else shipped_profiles()
    m = re.fullmatch(r"([A-Za-z0-9_]+)((?:[+-][A-Za-z_]+)*)", spec.strip())
    if not m or m.group(1) not in profiles:
        raise ProfileError(f"unknown planner profile {spec!r}; known: {', '.join(profiles)} "
                           "(optionally +feature / -feature)")
    changes = re.findall(r"[+-][A-Za-z_]+", m.group(2))
    base = profiles[m.group(1)]
    return base.with_feature_changes(changes) if changes else base
