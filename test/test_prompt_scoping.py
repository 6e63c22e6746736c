"""Decomposition prompts carry the parent, previous siblings and observation — no other branch."""

from __future__ import annotations

from conftest import DRAWER_PLANS, DRAWER_TASK, ScriptedLLM, section, table_plan

from step_planner.execution.symbolic import SymbolicExecutor
from step_planner.planner.config import PlannerConfig
from step_planner.planner.runner import run_goal

TASK, PLANS = DRAWER_TASK, DRAWER_PLANS


def run(library, world):
    llm = ScriptedLLM(table_plan(PLANS))
    result = run_goal(TASK, library=library, executor=SymbolicExecutor(library, world), llm=llm,
                      config=PlannerConfig())
    assert result.success, result.message
    return llm.prompts


def test_other_branches_are_absent(library, drawer_world):
    prompts = run(library, drawer_world)
    screwdriver_prompts = [u for _, u in prompts if section(u, "Subgoal to decompose") ==
                           "put the screwdriver in the drawer"]
    assert screwdriver_prompts
    for user in screwdriver_prompts:
        # the tape branch's leaves are not in the screwdriver branch's context...
        assert "pick(tape)" not in user and "place(tape, drawer)" not in user
        # ...but the parent path and the current observation are
        assert "put the tape and the screwdriver in the drawer" in section(user, "Path from the task to this subgoal")
        assert "gripper:" in section(user, "Current observation")
    root_prompts = [u for _, u in prompts if section(u, "Subgoal to decompose") == TASK]
    last_root = root_prompts[-1]
    children = section(last_root, "Children of this subgoal so far (in order, with outcomes)")
    # the root sees its own children with outcomes, not its grandchildren
    assert "1. open_drawer(drawer) -> succeeded" in children
    assert "2. put the tape in the drawer -> succeeded" in children
    assert "pick(" not in children


def test_observation_is_current_and_hides_closed_drawer_contents(library, drawer_world):
    drawer_world.objects["cup"].location = "drawer"
    prompts = run(library, drawer_world)
    first = prompts[0][1]
    assert "cup" not in section(first, "Current observation")
    later = [u for _, u in prompts if "drawer [drawer] (open)" in u]
    assert later and "cup" in section(later[0], "Current observation")
