"""The planners the benchmark compares: planner profiles (``config/profiles.yaml``) on ``run_goal``.

A planner name is a profile name, optionally with feature changes: ``grounded`` (the default),
``paper`` (STEP as published), ``step`` (the previous default), the ablations ``step_no_tree`` and
``step_no_subgoal``, the flat baselines ``react`` and ``oneshot``, and e.g. ``grounded+summaries``
or ``paper+plan_ahead``. Every one runs on the one loop the node and the CLI use, with the same
executor, client, budgets, safety gate and cancel handling.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from step_planner.domain.primitives import PrimitiveCall, PrimitiveLibrary
from step_planner.domain.world import WorldState
from step_planner.execution.base import Executor, Outcome
from step_planner.planner.config import PlannerConfig
from step_planner.planner.memory import EpisodicMemory, minilm_embedder
from step_planner.planner.person import Person
from step_planner.planner.profiles import ProfileError, resolve_profile, shipped_profiles
from step_planner.planner.result import GoalResult
from step_planner.planner.runner import run_goal
from step_planner.planner.termination import CompletionLLM
from step_planner.resources import config_path

StepCallback = Callable[[PrimitiveCall, Outcome, WorldState], None]  # as run_goal's: the world after the call

_EPISODIC: EpisodicMemory | None = None


def sweep_episodic_memory() -> EpisodicMemory:
    """One episodic store per process (a sweep), seeded from config and grown by the sweep's successes."""
    global _EPISODIC
    if _EPISODIC is None:
        store = Path(tempfile.mkdtemp(prefix="step_planner_episodic_")) / "episodic.jsonl"
        _EPISODIC = EpisodicMemory(store, minilm_embedder(), seed=config_path("episodic_seed.yaml"))
    return _EPISODIC


def planner_names() -> list[str]:
    return list(shipped_profiles())


def is_known(name: str) -> bool:
    """A planner name :func:`run_planner` accepts (profiles, with +feature / -feature)."""
    try:
        resolve_profile(name)
    except ProfileError:
        return False
    return True


def run_planner(name: str, instruction: str, *, library: PrimitiveLibrary, executor: Executor,
                llm: CompletionLLM, config: PlannerConfig, on_step: StepCallback | None = None,
                person: Person | None = None, confirm_goal: bool = False) -> GoalResult:
    """Run planner ``name`` (a profile) on one instruction with ``config``'s budgets."""
    profile = resolve_profile(name)
    episodic = sweep_episodic_memory() if "episodic_memory" in profile.features else None
    return run_goal(instruction, library=library, executor=executor, llm=llm,
                    config=config.with_changes(profile=name, extra_features=[]), on_step=on_step, episodic=episodic,
                    person=person, confirm_goal=confirm_goal)
