"""The STEP loop on the symbolic executor with a scripted decomposition model."""

from __future__ import annotations

from conftest import DRAWER_PLANS, DRAWER_TASK, ScriptedLLM, table_plan

from step_planner.execution.symbolic import SymbolicExecutor
from step_planner.planner.config import PlannerConfig
from step_planner.planner.result import GoalError
from step_planner.planner.runner import run_goal

TASK, PLANS = DRAWER_TASK, DRAWER_PLANS


def scripted(plans):
    return ScriptedLLM(table_plan(plans))


def test_drawer_task_succeeds_with_two_levels(library, drawer_world):
    executor = SymbolicExecutor(library, drawer_world)
    result = run_goal(TASK, library=library, executor=executor, llm=scripted(PLANS), config=PlannerConfig())
    assert result.success, result.message
    assert [str(c) for c, _ in result.executed] == [
        "open_drawer(drawer=drawer)", "pick(object=tape)", "place(object=tape, target=drawer)",
        "pick(object=screwdriver)", "place(object=screwdriver, target=drawer)", "close_drawer(drawer=drawer)",
    ]
    world = executor.observe()
    assert world.objects["tape"].location == "drawer" and not world.places["drawer"].is_open
    depths = {n["depth"] for n in result.tree["nodes"]}
    assert max(depths) == 2
    assert all(n["status"] == "succeeded" for n in result.tree["nodes"])


def test_picking_while_holding_is_replanned_not_executed(library, drawer_world):
    plans = dict(PLANS)
    plans["put the tape in the drawer"] = ["pick(tape)", "pick(screwdriver)", "place(tape, drawer)"]
    llm = scripted(plans)
    # After the rejection the table plan would propose pick(screwdriver) again; teach it to skip.
    executor = SymbolicExecutor(library, drawer_world)
    result = run_goal(TASK, library=library, executor=executor, llm=llm, config=PlannerConfig())
    rejected = [n for n in result.tree["nodes"] if n["text"] == "pick(screwdriver)" and n["status"] == "abandoned"]
    assert rejected, "the affordance violation must be recorded on a node"
    assert "one arm can hold one object" in rejected[0]["verdicts"][0]["reason"]
    assert all(str(c) != "pick(object=screwdriver)" or o.success for c, o in result.executed)
    # no invalid call ever reached the executor
    assert all(o.code.value != "PRECONDITION_FAILED" for _, o in result.executed)
    assert result.error in (GoalError.NONE, GoalError.PLANNING_FAILED)
