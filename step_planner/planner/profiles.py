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
from typing import Any

import yaml

from step_planner.planner.features import KNOWN_FEATURES
from step_planner.planner.termination import TERMINATION_MODES
from step_planner.resources import config_path

DEFAULT_PROFILE = "grounded"
_KEYS = {"description", "conditions", "termination", "features", "history", "max_depth", "replan"}


class ProfileError(ValueError):
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


def _profile(name: str, raw: Any, source: str) -> Profile:
    where = f"{source}: profile {name!r}"
    if not isinstance(raw, dict):
        raise ProfileError(f"{where}: expected a mapping")
    if unknown := sorted(set(raw) - _KEYS):
        raise ProfileError(f"{where}: unknown keys {unknown}; known: {sorted(_KEYS)}")
    termination = raw.get("termination", "grounded")
    if termination not in TERMINATION_MODES:
        raise ProfileError(f"{where}: termination must be one of {', '.join(TERMINATION_MODES)}")
    features = raw.get("features") or []
    if not isinstance(features, list) or set(features) - KNOWN_FEATURES:
        raise ProfileError(f"{where}: features must be a list of {', '.join(sorted(KNOWN_FEATURES))}")
    history = raw.get("history", "tree")
    if history not in ("tree", "whole_task"):
        raise ProfileError(f"{where}: history must be tree or whole_task")
    depth = raw.get("max_depth")
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
        raise ProfileError(f"{where}: max_depth must be a positive integer")
    flags = {k: raw.get(k, True) for k in ("conditions", "replan")}
    if any(not isinstance(v, bool) for v in flags.values()):
        raise ProfileError(f"{where}: conditions and replan are true or false")
    if flags["conditions"] and termination != "grounded":
        raise ProfileError(f"{where}: conditions need termination: grounded")
    return Profile(name, flags["conditions"], termination, frozenset(features), history, depth, flags["replan"],
                   str(raw.get("description", "")))


def load_profiles(path: str | Path) -> dict[str, Profile]:
    try:
        data = yaml.safe_load(Path(path).read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ProfileError(f"cannot read planner profiles {path}: {exc}") from exc
    profiles = data.get("profiles") if isinstance(data, dict) else None
    if not isinstance(profiles, dict) or not profiles:
        raise ProfileError(f"{path}: expected a 'profiles' mapping")
    return {name: _profile(name, raw, str(path)) for name, raw in profiles.items()}


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
