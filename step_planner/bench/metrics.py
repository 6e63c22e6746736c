"""Aggregate run records into the benchmark's figures (per planner, noise level and category).

Definitions:
- success rate: share of runs whose goal atoms hold in the true final world;
- subgoal success rate (SSR): mean over runs of (ordered milestones reached / milestones);
- primitives: calls sent to the executor, vs the task's optimal count (excess = executed - optimal);
- LLM calls / prompt and completion tokens: per run, from the client's usage ledger (retries count);
- largest prompt: the biggest single prompt of a run (mean and max over runs);
- calls / tokens per primitive: all LLM calls (tokens) of the group over all primitives it executed;
- prompt growth: per run, the largest prompt of its last quarter of calls over that of its first quarter
  (runs of at least 4 calls), averaged;
- false_done: the share of runs that claimed success while the goal does not hold;
- verified: the share of runs whose result says the instruction's conditions were checked in the world;
- planner time: wall time minus LLM latency minus executor time, in milliseconds;
- failure types: ``false_done`` (the planner claimed success, the goal does not hold) or the error code;
- mistakes: kinds the scripted expert injected, over all runs and over failed runs;
- goal rejections / corrections / questions: goals the model stated that grounding refused, goals the
  person corrected (``--confirm-goal``), questions the model asked the person (sums over the runs);
- wording (suites with wording styles, :func:`wording`): success per style; goals the model stated that
  grounding refused, and of those the ones equal to the task's formal goal (in/on/at alike); on ambiguous
  tasks the runs that asked the person a question and the runs that claimed success with the goal not
  holding (a wrong SUCCEEDED); questions asked on tasks that are not ambiguous.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from statistics import mean
from typing import Any

from step_planner.bench.runner import RunRecord

ALL = "all"


def summarize(records: list[RunRecord]) -> dict[str, Any]:
    """The figures for one group of runs."""
    if not records:
        raise ValueError("no runs to summarize")
    failed = [r for r in records if not r.success]
    return {
        "runs": len(records),
        "success_rate": mean(1.0 if r.success else 0.0 for r in records),
        "subgoal_success_rate": mean(r.subgoals_reached / r.subgoals_total for r in records),
        "claimed_success_rate": mean(1.0 if r.claimed_success else 0.0 for r in records),
        "primitives_mean": mean(r.primitives for r in records),
        "optimal_mean": mean(r.optimal for r in records),
        "excess_primitives_mean": mean(r.primitives - r.optimal for r in records),
        "excess_primitives_successful": mean([r.primitives - r.optimal for r in records if r.success] or [0]),
        "llm_calls_mean": mean(r.llm_calls for r in records),
        "prompt_tokens_mean": mean(r.prompt_tokens for r in records),
        "completion_tokens_mean": mean(r.completion_tokens for r in records),
        "max_prompt_tokens_mean": mean(r.max_prompt_tokens for r in records),
        "max_prompt_tokens_max": max(r.max_prompt_tokens for r in records),
        "planner_time_ms_mean": 1000 * mean(r.planner_time_s for r in records),
        "llm_calls_per_primitive": sum(r.llm_calls for r in records) / max(1, sum(r.primitives for r in records)),
        "prompt_tokens_per_primitive": sum(r.prompt_tokens for r in records) / max(1, sum(r.primitives
                                                                                          for r in records)),
        "prompt_growth": mean([g for r in records if (g := prompt_growth(r.prompt_tokens_per_call))] or [0]),
        "false_done_rate": mean(1.0 if r.failure_type == "false_done" else 0.0 for r in records),
        "verified_rate": mean(1.0 if r.verified else 0.0 for r in records),
        "failure_types": dict(Counter(r.failure_type for r in failed)),
        "mistakes_injected": dict(Counter(k for r in records for k in r.injections)),
        "mistakes_in_failed_runs": dict(Counter(k for r in failed for k in r.injections)),
        "goal_rejections": sum(r.goal_rejections for r in records),
        "goal_corrections": sum(r.goal_corrections for r in records),
        "questions": sum(r.questions for r in records),
    }


def prompt_growth(sizes: list[int]) -> float | None:
    """Largest prompt of the last quarter of a run's calls / largest of the first quarter (None: < 4 calls)."""
    if len(sizes) < 4:
        return None
    quarter = len(sizes) // 4
    return max(sizes[-quarter:]) / max(1, max(sizes[:quarter]))


def aggregate(records: Iterable[RunRecord]) -> list[dict[str, Any]]:
    """One row per (planner, noise, category), plus category ``all`` per (planner, noise)."""
    groups: dict[tuple[str, float, str], list[RunRecord]] = defaultdict(list)
    for r in records:
        groups[(r.planner, r.noise, r.category)].append(r)
        groups[(r.planner, r.noise, ALL)].append(r)
    rows = []
    for (planner, noise, category), runs in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2])):
        rows.append({"planner": planner, "noise": noise, "category": category, **summarize(runs)})
    return rows


def prompt_tokens_by_call(records: Iterable[RunRecord]) -> dict[str, list[float]]:
    """Per planner: mean prompt tokens of the k-th LLM call of a run (k = 0, 1, ...), over runs
    that made at least k+1 calls."""
    by_planner: dict[str, list[list[int]]] = defaultdict(list)
    for r in records:
        by_planner[r.planner].append(r.prompt_tokens_per_call)
    out = {}
    for planner, runs in by_planner.items():
        longest = max((len(x) for x in runs), default=0)
        out[planner] = [mean(x[k] for x in runs if len(x) > k) for k in range(longest)]
    return out


def wording(records: Iterable[RunRecord]) -> list[dict[str, Any]]:
    """One row per (planner, noise) of a suite whose tasks have wording styles (the paraphrase suite)."""
    groups: dict[tuple[str, float], list[RunRecord]] = defaultdict(list)
    for r in records:
        if r.style:
            groups[(r.planner, r.noise)].append(r)
    rows = []
    for (planner, noise), runs in sorted(groups.items()):
        styles: dict[str, list[RunRecord]] = defaultdict(list)
        for r in runs:
            styles[r.style].append(r)
        ambiguous = styles.get("ambiguous", [])
        clear = [r for r in runs if r.style != "ambiguous"]
        rows.append({
            "planner": planner, "noise": noise, "runs": len(runs),
            "success_rate": mean(1.0 if r.success else 0.0 for r in runs),
            "by_style": {k: {"runs": len(v), "success_rate": mean(1.0 if r.success else 0.0 for r in v)}
                         for k, v in sorted(styles.items())},
            "paraphrase_runs": len(clear),
            "paraphrase_success_rate": mean(1.0 if r.success else 0.0 for r in clear) if clear else 0.0,
            "goal_rejections": sum(r.goal_rejections for r in runs),
            "formal_goal_rejections": sum(r.formal_goal_rejections for r in runs),
            "ambiguous_runs": len(ambiguous),
            "ambiguous_asked": sum(1 for r in ambiguous if r.questions),
            "ambiguous_wrong_succeeded": sum(1 for r in ambiguous if r.claimed_success and not r.success),
            "ambiguous_succeeded": sum(1 for r in ambiguous if r.success),
            "questions_on_clear_tasks": sum(r.questions for r in clear),
            "goal_corrections": sum(r.goal_corrections for r in runs),
        })
    return rows
