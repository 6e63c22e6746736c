"""Aggregate run records into the benchmark's figures (per planner, noise level and category).

Definitions:
- success rate: share of runs whose goal atoms hold in the true final world and that moved nothing nobody asked for;
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
  holding (a wrong SUCCEEDED); questions asked on tasks that are not ambiguous;
- refusals by rule (:func:`refusals_by_rule`): per rule the planner's goal refusals name (``"rules"`` of a
  ``GoalResult.goal_rejections`` entry; ``untagged`` when it names none), how many goals it refused and how many
  of those a careful model states for the task (the formal goal, what is statable at the start, a provisional
  goal): with the expert at p = 0 every one of those is a correct goal refused;
- questions (wordings suite): questions per ambiguous instruction (mean, and runs that asked exactly one), runs in
  which the person was asked the same thing twice, and wrong SUCCEEDED over all runs;
- solved: SUCCEEDED and the goal holds in the world (a run whose world is right but whose planner reported a
  failure is a success, not solved);
- phenomena (:func:`phenomena`): success, solved, correct goals refused and questions per phenomenon, clear and
  ambiguous apart;
- wrong SUCCEEDED (:func:`wrong_succeeded`): the planner reported success while the task's goal does not hold, or
  while an object the goal does not move ended somewhere else (``moved_unasked``: an object nobody asked for);
  such a run is never a success (``RunRecord.success``; ``goal_holds`` keeps whether the formal goal held), and
  :func:`unasked_runs` lists every run that moved one;
- meaning mistakes (:func:`meaning_mistakes`): per (planner, p, confirmation) the wrong SUCCEEDED runs per
  phenomenon and per meaning mistake the expert held (``reading``; ``none`` when no wrong reading applied), and the
  phrases the planner's resolver could not read (``unresolved_phrases``): how many, in how many runs, and how many
  wrong SUCCEEDED runs have one (a wrong SUCCEEDED with none is one the checks should have decided).
"""

from __future__ import annotations

import re
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
            "ambiguous_wrong_succeeded": sum(1 for r in ambiguous if wrong_succeeded(r)),
            "ambiguous_succeeded": sum(1 for r in ambiguous if r.success),
            "questions_on_clear_tasks": sum(r.questions for r in clear),
            "goal_corrections": sum(r.goal_corrections for r in runs),
            "questions_per_ambiguous": mean(r.questions for r in ambiguous) if ambiguous else 0.0,
            "ambiguous_asked_once": sum(1 for r in ambiguous if r.questions == 1),
            "asked_twice_runs": sum(1 for r in runs if r.repeated_asks),
            "wrong_succeeded": sum(1 for r in runs if wrong_succeeded(r)),
            "solved_rate": mean(1.0 if r.success and r.claimed_success else 0.0 for r in runs),
            "correct_refusal_patterns": refusal_patterns(runs),
            "refusals_by_rule": refusals_by_rule(runs),
            "phenomena": phenomena(runs),
        })
    return rows


def refusals_by_rule(records: Iterable[RunRecord]) -> dict[str, dict[str, int]]:
    """rule -> {"refused": goals it refused, "correct": of which goals a careful model states, "runs": runs
    in which it refused a correct goal}."""
    out: dict[str, dict[str, int]] = defaultdict(lambda: {"refused": 0, "correct": 0, "runs": 0})
    for r in records:
        for rule in r.rejection_rules:
            out[rule]["refused"] += 1
        for rule in r.correct_rejection_rules:
            out[rule]["correct"] += 1
        for rule in set(r.correct_rejection_rules):
            out[rule]["runs"] += 1
    return {k: dict(v) for k, v in sorted(out.items(), key=lambda kv: (-kv[1]["correct"], kv[0]))}


def refusal_patterns(records: Iterable[RunRecord], top: int = 8) -> list[tuple[str, int]]:
    """The most frequent problem texts that refused correct goals, names and quotes blanked (what an untagged
    planner's refusals say, so the rule behind them can be told)."""
    def pattern(text: str) -> str:
        text = re.sub(r"'[^']*'", "'…'", text)
        text = re.sub(r"\b[a-z]+\([^)]*\)", "f(…)", text)
        text = re.sub(r"\b[a-z]+(?:_[a-z0-9]+)+\b", "…", text)
        return re.sub(r"…(?:(?:, | and )…)+", "…", text)[:160]

    counts = Counter(pattern(p) for r in records for p in r.correct_rejection_problems)
    return counts.most_common(top)


def phenomena(records: Iterable[RunRecord]) -> dict[str, dict[str, Any]]:
    """phenomenon -> runs, success rate, correct goals refused, questions, runs asked twice (wordings suite)."""
    groups: dict[str, list[RunRecord]] = defaultdict(list)
    for r in records:
        if r.phenomenon:
            groups[r.phenomenon].append(r)
    return {k: {"runs": len(v), "ambiguous": any(r.style == "ambiguous" for r in v),
                "success_rate": mean(1.0 if r.success else 0.0 for r in v),
                "solved_rate": mean(1.0 if r.success and r.claimed_success else 0.0 for r in v),
                "correct_refused": sum(r.formal_goal_rejections for r in v),
                "questions": sum(r.questions for r in v), "asked_twice_runs": sum(1 for r in v if r.repeated_asks),
                "wrong_succeeded": sum(1 for r in v if wrong_succeeded(r))}
            for k, v in sorted(groups.items())}


def wrong_succeeded(record: Any) -> bool:
    """Reported SUCCEEDED while the goal does not hold, or while something nobody asked to move was moved."""
    return bool(record.claimed_success and (not record.success or getattr(record, "moved_unasked", None)))


def meaning_mistakes(records: Iterable[RunRecord]) -> list[dict[str, Any]]:
    """One row per (planner, noise, confirm_goal): wrong SUCCEEDED over all runs, per phenomenon and per meaning
    mistake held, and the phrases the resolver could not read."""
    groups: dict[tuple[str, float, bool], list[Any]] = defaultdict(list)
    for r in records:
        groups[(r.planner, r.noise, bool(getattr(r, "confirm_goal", False)))].append(r)
    rows = []
    for (planner, noise, confirmed), runs in sorted(groups.items()):
        wrong = [r for r in runs if wrong_succeeded(r)]
        phrases = Counter(p for r in runs for p in getattr(r, "unresolved_phrases", None) or [])
        rows.append({
            "planner": planner, "noise": noise, "confirm_goal": confirmed, "runs": len(runs),
            "wrong_succeeded": len(wrong), "wrong_succeeded_rate": len(wrong) / len(runs),
            "wrong_goal_holding": sum(1 for r in wrong if getattr(r, "goal_holds", r.success)),  # only the moved
            # object shows it
            "by_phenomenon": _wrong_by(runs, lambda r: getattr(r, "phenomenon", "") or ""),
            "by_kind": _wrong_by(runs, lambda r: getattr(r, "reading", "") or "none"),
            "unresolved_phrases": sum(phrases.values()),
            "runs_with_unresolved": sum(1 for r in runs if getattr(r, "unresolved_phrases", None)),
            "wrong_with_unresolved": sum(1 for r in wrong if getattr(r, "unresolved_phrases", None)),
            "wrong_without_unresolved": sum(1 for r in wrong if not getattr(r, "unresolved_phrases", None)),
            "top_unresolved": phrases.most_common(10),
        })
    return rows


def unasked_runs(records: Iterable[Any]) -> list[dict[str, Any]]:
    """The runs that moved an object nobody asked for (each a failure, whatever the planner reported): what the
    report lists, so each one can be looked at."""
    return [{"task": r.task_id, "planner": r.planner, "noise": r.noise, "seed": r.seed,
             "confirm_goal": bool(getattr(r, "confirm_goal", False)), "moved": list(r.moved_unasked),
             "reported_succeeded": bool(r.claimed_success), "goal_holds": bool(getattr(r, "goal_holds", False)),
             "reading": getattr(r, "reading", "") or "", "unresolved": list(getattr(r, "unresolved_phrases", []))}
            for r in records if getattr(r, "moved_unasked", None)]


def _wrong_by(runs: list[Any], key: Any) -> dict[str, dict[str, int]]:
    """key -> {"runs", "wrong_succeeded", "moved_unasked"} (runs without a key left out)."""
    out: dict[str, dict[str, int]] = defaultdict(lambda: {"runs": 0, "wrong_succeeded": 0, "moved_unasked": 0})
    for r in runs:
        if not (k := key(r)):
            continue
        out[k]["runs"] += 1
        out[k]["wrong_succeeded"] += wrong_succeeded(r)
        out[k]["moved_unasked"] += bool(getattr(r, "moved_unasked", None))
    return {k: dict(v) for k, v in sorted(out.items())}
