"""Decomposition prompts carry the parent, previous siblings and observation — no other branch —
and show calls and facts exactly in the syntax the parser accepts."""

from __future__ import annotations

import json

from conftest import (
    CHILDREN,
    DRAWER_GOAL,
    DRAWER_TASK,
    GROUNDED_PLANS,
    ScriptedLLM,
    grounded_plan,
    parent_of,
    section,
    shipped_config,
)

from step_planner.execution.symbolic import SymbolicExecutor
from step_planner.planner.beliefs import Beliefs
from step_planner.planner.prompts import PromptBook
from step_planner.planner.runner import run_goal
from step_planner.planner.tree import SubgoalTree


def run(library, world, profile="grounded-plan_ahead"):
    llm = ScriptedLLM(grounded_plan(GROUNDED_PLANS, DRAWER_GOAL))
    result = run_goal(DRAWER_TASK, library=library, executor=SymbolicExecutor(library, world), llm=llm,
                      config=shipped_config(profile=profile))
    assert result.success, result.message
    return llm.prompts


def test_other_branches_are_absent(library, drawer_world):
    prompts = run(library, drawer_world)
    screwdriver_prompts = [u for _, u in prompts if parent_of(u) == "put the screwdriver in the drawer"]
    assert screwdriver_prompts
    for user in screwdriver_prompts:
        # the tape branch's leaves are not in the screwdriver branch's context...
        assert "pick(object=tape)" not in user and "place(object=tape" not in user
        # ...but the parent path, the subgoal's facts and the current observation are
        assert DRAWER_TASK in section(user, "Path from the task to this subgoal")
        assert "- in(screwdriver, drawer): not yet" in section(user, "Subgoal to decompose")
        assert "gripper:" in section(user, "Current observation")
    last_root = [u for _, u in prompts if parent_of(u) == DRAWER_TASK][-1]
    children = section(last_root, CHILDREN)
    # the root sees its own children with outcomes (and the call a worded child ran), not its grandchildren
    assert "1. open the drawer [open_drawer(drawer=drawer)] -> succeeded" in children
    assert "2. put the tape in the drawer -> succeeded" in children
    assert "pick(" not in children
    assert "- in(tape, drawer): holds" in section(last_root, "Subgoal to decompose")


def test_observation_is_current_and_hides_closed_drawer_contents(library, drawer_world):
    drawer_world.objects["cup"].location = "drawer"
    prompts = run(library, drawer_world)
    first = prompts[0][1]
    assert "cup" not in section(first, "Current observation")
    later = [u for _, u in prompts if "drawer [drawer] (open)" in u]
    assert later and "cup" in section(later[0], "Current observation")


def test_the_primitive_list_shows_the_call_syntax_the_parser_accepts(library, drawer_world):
    book = PromptBook.load(library)
    from step_planner.llm.schemas import decomposition_schema

    schema = decomposition_schema(grounded=True, goal=True, plan_ahead=False, control=False)
    tree = SubgoalTree(DRAWER_TASK)
    system, user = (m["content"] for m in book.decomposition(tree, tree.root, Beliefs(drawer_world.observed()), [],
                                                             schema=schema, style="grounded"))
    assert "- place(object=<object>, target=<place>):" in system
    assert "object: object" not in system
    assert "Named poses: home" in system
    for line in system.splitlines():  # every call written in the example parses
        if line.startswith("Answer: "):
            example = json.loads(line[len("Answer: "):])
    assert set(example) == {"reasoning", "goal", "done", "next"}  # only the fields this schema has
    assert library.parse_call_text(example["next"]["call"] or "close_drawer(drawer=drawer)") is not None
    assert "in(<object>, <container>)" in system


def test_the_example_follows_the_schema_of_each_style(library, drawer_world):
    from step_planner.llm.schemas import decomposition_schema

    book = PromptBook.load(library)
    tree = SubgoalTree(DRAWER_TASK)
    for style, grounded in (("text", False), ("calls", False)):
        schema = decomposition_schema(grounded=grounded, goal=False, plan_ahead=True, control=False)
        system = book.decomposition(tree, tree.root, Beliefs(drawer_world.observed()), [], schema=schema,
                                    style=style)[0]["content"]
        example = json.loads(next(line for line in system.splitlines() if line.startswith("Answer: "))[8:])
        assert set(example) == {"reasoning", "done", "next", "then"}
        assert set(example["next"]) == {"subgoal"}
        if style == "calls":
            assert library.parse_call_text(example["next"]["subgoal"]) is not None
