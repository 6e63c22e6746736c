"""The STEP loop on the symbolic executor with scripted decomposition models."""

from __future__ import annotations

from conftest import (
    DRAWER_GOAL,
    DRAWER_PLANS,
    DRAWER_TASK,
    FEEDBACK,
    GROUNDED_PLANS,
    ScriptedLLM,
    grounded_plan,
    parent_of,
    section,
    shipped_config,
    table_plan,
)

from step_planner.execution.base import ExecCode, Outcome
from step_planner.execution.symbolic import SymbolicExecutor
from step_planner.planner.result import GoalError
from step_planner.planner.runner import run_goal

DRAWER_CALLS = ["open_drawer(drawer=drawer)", "pick(object=tape)", "place(object=tape, target=drawer)",
                "pick(object=screwdriver)", "place(object=screwdriver, target=drawer)", "close_drawer(drawer=drawer)"]


def test_drawer_task_succeeds_verified_with_two_levels(library, drawer_world):
    executor = SymbolicExecutor(library, drawer_world)
    result = run_goal(DRAWER_TASK, library=library, executor=executor,
                      llm=ScriptedLLM(grounded_plan(GROUNDED_PLANS, DRAWER_GOAL)), config=shipped_config())
    assert result.success and result.error is GoalError.NONE, result.message
    assert [str(c) for c, _ in result.executed] == DRAWER_CALLS
    assert result.verified and [c["text"] for c in result.conditions] == DRAWER_GOAL
    assert all(c["holds"] for c in result.conditions)
    assert [c["judged_from"] for c in result.conditions] == ["belief", "belief", "observation"]
    assert max(n["depth"] for n in result.tree["nodes"]) == 2
    assert all(n["status"] == "succeeded" for n in result.tree["nodes"])
    assert result.usage["llm_calls"] == 3  # plan-ahead: the root and the two 'put' subgoals ask once each


def test_the_same_tree_in_steps_text_style_is_the_models_word(library, drawer_world):
    """Without conditions (profile step) nothing is checked: with require_verified_success the claimed
    success becomes PLANNING_FAILED, without it a success that says it is the model's word."""
    llm = ScriptedLLM(table_plan(DRAWER_PLANS))
    strict = run_goal(DRAWER_TASK, library=library, executor=SymbolicExecutor(library, drawer_world), llm=llm,
                      config=shipped_config(profile="step"))
    assert [str(c) for c, _ in strict.executed] == DRAWER_CALLS
    assert not strict.success and strict.error is GoalError.PLANNING_FAILED
    assert "no condition was checked" in strict.message and not strict.verified
    loose = run_goal(DRAWER_TASK, library=library, executor=SymbolicExecutor(library, drawer_world), llm=llm,
                     config=shipped_config(profile="step", require_verified_success=False))
    assert loose.success and not loose.verified and "the model's word" in loose.message


def test_picking_while_holding_is_replanned_not_executed(library, drawer_world):
    plans = dict(GROUNDED_PLANS)
    plans["put the tape in the drawer"] = [("pick up the tape", "pick(object=tape)", []),
                                           ("grab the screwdriver too", "pick(object=screwdriver)", []),
                                           ("place the tape", "place(object=tape, target=drawer)", [])]
    base = grounded_plan(plans, DRAWER_GOAL)

    def answer(purpose, user):  # after the rejection, the model drops the bad step
        if "one arm can hold one object" in section(user, FEEDBACK):
            plans["put the tape in the drawer"] = GROUNDED_PLANS["put the tape in the drawer"]
        return base(purpose, user)

    result = run_goal(DRAWER_TASK, library=library, executor=SymbolicExecutor(library, drawer_world),
                      llm=ScriptedLLM(answer), config=shipped_config())
    rejected = [n for n in result.tree["nodes"] if n["text"] == "grab the screwdriver too"]
    assert rejected and rejected[0]["status"] == "abandoned"
    assert "one arm can hold one object" in rejected[0]["verdicts"][-1]["reason"]
    assert result.success, result.message
    assert [str(c) for c, _ in result.executed] == DRAWER_CALLS  # the invalid call never reached the executor


def test_a_failed_subtree_sends_its_reason_to_the_root_which_replans_and_keeps_finished_siblings(
        library, drawer_world):
    """The tape slips four times: 'put the tape in the drawer' gives up after its re-plans, the root
    hears why, proposes it again, and the open drawer stays done (it is not opened twice)."""
    base = grounded_plan(GROUNDED_PLANS, DRAWER_GOAL)
    root_feedback = []

    def answer(purpose, user):
        if parent_of(user) == DRAWER_TASK:
            root_feedback.append(section(user, FEEDBACK))
        return base(purpose, user)

    executor = _failing(SymbolicExecutor(library, drawer_world), "pick(object=tape)", times=4)
    result = run_goal(DRAWER_TASK, library=library, executor=executor, llm=ScriptedLLM(answer),
                      config=shipped_config())
    tape_nodes = [n for n in result.tree["nodes"] if n["text"] == "put the tape in the drawer"]
    assert [n["status"] for n in tape_nodes] == ["failed", "succeeded"]
    assert any("'put the tape in the drawer' could not be completed" in f and "GRASP_FAILED" in f
               for f in root_feedback)
    calls = [str(c) for c, _ in result.executed]
    assert calls.count("open_drawer(drawer=drawer)") == 1  # finished siblings stay finished
    assert calls.count("pick(object=tape)") == 5
    assert result.success and result.verified, result.message


def _failing(executor, call_text, times):
    """The symbolic executor with one call that fails its first ``times`` attempts."""
    inner = executor.execute
    left = {"n": times}

    def execute(call, cancel=None):
        if str(call) == call_text and left["n"] > 0:
            left["n"] -= 1
            return Outcome(ExecCode.GRASP_FAILED, "the fingers closed on nothing")
        return inner(call, cancel)

    executor.execute = execute
    return executor


def test_a_child_that_repeats_its_parent_is_rejected(library, drawer_world):
    task = "put the red block in the drawer"

    def answer(purpose, user):
        return {"goal": ["in(red_block, drawer)"],
                "next": {"subgoal": task, "call": None, "success_when": ["in(red_block, drawer)"]}}

    result = run_goal(task, library=library, executor=SymbolicExecutor(library, drawer_world),
                      llm=ScriptedLLM(answer), config=shipped_config())
    assert not result.success and result.error is GoalError.PLANNING_FAILED
    rejected = [n for n in result.tree["nodes"] if n["parent"] == 0]
    assert len(rejected) == 4 and all(n["status"] == "abandoned" for n in rejected)
    assert all("repeats the subgoal it should decompose" in n["verdicts"][-1]["reason"] for n in rejected)
    assert "gave up after 4 rejected proposals" in result.message
    assert result.executed == []
