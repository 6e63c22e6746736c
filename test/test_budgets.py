"""Every budget ends a goal cleanly with a reason; cancel ends it CANCELED."""

from __future__ import annotations

import threading
import time

from conftest import DRAWER_GOAL, DRAWER_TASK, GROUNDED_PLANS, ScriptedLLM, grounded_plan, shipped_config, table_plan

from step_planner.execution.symbolic import SymbolicExecutor
from step_planner.planner.result import GoalError
from step_planner.planner.runner import run_goal

TASK = "stack everything"
FIXED = {"children_per_condition": 0, "llm_calls_per_condition": 0, "primitives_per_condition": 0,
         "wall_clock_per_condition_s": 0.0}


def run(library, world, answer, **budget):
    """STEP's text style: the budgets themselves, no scaling (the instruction names nothing)."""
    config = shipped_config(profile="step-verify_done", require_verified_success=False, **{**FIXED, **budget})
    return run_goal(TASK, library=library, executor=SymbolicExecutor(library, world), llm=ScriptedLLM(answer),
                    config=config)


def always(subgoal):
    return lambda purpose, user: (
        {"done": False, "subgoal": subgoal} if purpose == "decomposition" else {"verdict": "decompose"}
    )


def deeper(purpose, user):
    if purpose == "termination":
        return {"verdict": "decompose", "reason": "compound"}
    parent = user.split("## Subgoal to decompose\n", 1)[1].split("\n", 1)[0]
    return {"done": False, "subgoal": f"first part of ({parent})"}


def test_max_depth(library, drawer_world):
    result = run(library, drawer_world, deeper, max_depth=3, max_replans_per_node=1)
    assert not result.success and result.error is GoalError.PLANNING_FAILED
    assert max(n["depth"] for n in result.tree["nodes"]) == 3
    assert any("depth limit" in v["reason"] for n in result.tree["nodes"] for v in n["verdicts"])


def test_max_children(library, drawer_world):
    # home() always succeeds and never finishes the task
    result = run(library, drawer_world, always("home()"), max_children=5)
    assert result.error is GoalError.BUDGET_EXCEEDED and "more than 5 children" in result.message
    assert len(result.executed) == 5


def test_max_replans_per_node(library, drawer_world):
    result = run(library, drawer_world, always("pick(hammer)"), max_replans_per_node=2)
    assert result.error is GoalError.PLANNING_FAILED and "gave up after 3" in result.message
    assert result.executed == []


def test_max_llm_calls(library, drawer_world):
    result = run(library, drawer_world, always("home()"), max_llm_calls=4)
    assert result.error is GoalError.BUDGET_EXCEEDED and "LLM call budget of 4" in result.message
    assert result.usage["llm_calls"] == 4


def test_max_primitives(library, drawer_world):
    result = run(library, drawer_world, always("home()"), max_primitives=3)
    assert result.error is GoalError.BUDGET_EXCEEDED and "primitive budget of 3" in result.message
    assert len(result.executed) == 3


def test_wall_clock(library, drawer_world):
    def slow(purpose, user):
        time.sleep(0.05)
        return always("home()")(purpose, user)

    t0 = time.monotonic()
    result = run(library, drawer_world, slow, wall_clock_s=0.2)
    assert result.error is GoalError.BUDGET_EXCEEDED and "wall-clock" in result.message
    assert time.monotonic() - t0 < 2.0
    statuses = {n["status"] for n in result.tree["nodes"]}
    assert statuses <= {"succeeded", "abandoned", "failed"}, "no node may stay open after the goal ended"


def test_cancel_between_steps(library, drawer_world):
    cancel = threading.Event()
    plans = {TASK: ["home()", "home()", "home()"]}
    calls = []

    def on_step(call, outcome, world):
        calls.append(call)
        cancel.set()

    result = run_goal(TASK, library=library, executor=SymbolicExecutor(library, drawer_world),
                      llm=ScriptedLLM(table_plan(plans)), config=shipped_config(profile="step-verify_done"),
                      cancel=cancel, on_step=on_step)
    assert result.error is GoalError.CANCELED and len(calls) == 1
    assert {n["status"] for n in result.tree["nodes"]} <= {"succeeded", "abandoned", "failed"}


def test_invalid_goals_are_rejected(library, drawer_world):
    llm = ScriptedLLM(always("home()"))
    for bad in ["", "   ", "x" * 5000, "move\x00now", None, 42]:
        result = run_goal(bad, library=library, executor=SymbolicExecutor(library, drawer_world),
                          llm=llm, config=shipped_config())
        assert result.error is GoalError.INVALID_GOAL and result.message
    assert llm.prompts == []


def test_budgets_scale_with_the_number_of_goal_facts(library, drawer_world):
    """The drawer task has 3 goal facts and needs 6 primitives: base 3 + 1 per fact is enough, base 3 + 0
    per fact ends it with a reason that names the scaled budget."""
    def attempt(per_fact):
        return run_goal(DRAWER_TASK, library=library, executor=SymbolicExecutor(library, drawer_world),
                        llm=ScriptedLLM(grounded_plan(GROUNDED_PLANS, DRAWER_GOAL)),
                        config=shipped_config(max_primitives=3, primitives_per_condition=per_fact))

    assert attempt(1).success
    short = attempt(0)
    assert short.error is GoalError.BUDGET_EXCEEDED and "primitive budget of 3 used up" in short.message
    assert len(short.executed) == 3 and short.verified
