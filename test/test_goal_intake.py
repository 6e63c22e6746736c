"""Goal intake on its own (planner/goal_intake.py): each model answer's goal ends as a typed Intake — set, to be
re-judged, refused with feedback, or waiting for a look inside — and every refusal rule has a bound."""

from __future__ import annotations

import pytest
from conftest import shipped_config

from step_planner.planner.beliefs import Beliefs
from step_planner.planner.budget import Budget
from step_planner.planner.goal_intake import ClientGoalError, GoalIntake, IntakeKind, RefusalLoop
from step_planner.planner.node_conditions import NodeConditions
from step_planner.planner.person import Questions
from step_planner.planner.tree import SubgoalTree


def intake(library, world, instruction: str, **kw) -> GoalIntake:
    tree = SubgoalTree(instruction, "g1")
    beliefs = Beliefs()
    beliefs.update(world.observed())
    budget = Budget(shipped_config())
    questions = Questions(None, tree, budget, enabled=True)
    out = GoalIntake(tree, beliefs, library, budget, questions, NodeConditions(tree, beliefs, budget).judge, **kw)
    out.start()
    return out


def test_a_goal_that_fits_the_words_is_set_and_planning_goes_on(library, drawer_world):
    goal = intake(library, drawer_world, "put the tape in the drawer")
    taken = goal.take_answer(["in(tape, drawer)"], [], moved=False)
    assert taken.kind is IntakeKind.SET and taken.feedback == ""
    assert [c.text for c in goal.tree.node(goal.tree.root).conditions] == ["in(tape, drawer)"]
    assert goal.at_start == {"in(tape, drawer)": False}
    assert goal.budget.size == 1


def test_a_goal_about_something_unmentioned_is_refused_with_feedback_and_recorded(library, drawer_world):
    goal = intake(library, drawer_world, "put the tape in the drawer")
    taken = goal.take_answer(["in(tape, drawer)", "in(cup, tray)"], [], moved=False)
    assert taken.kind is IntakeKind.REFUSED
    assert taken.feedback.startswith("the goal you stated was not accepted: ") and "cup" in taken.feedback
    assert not goal.tree.node(goal.tree.root).conditions
    assert goal.goal_rejections and goal.goal_rejections[0]["goal"] == ["in(tape, drawer)", "in(cup, tray)"]


def test_a_goal_that_already_holds_is_judged_again_before_anything_is_proposed(library, drawer_world):
    goal = intake(library, drawer_world, "make sure the drawer is closed")
    assert goal.take_answer(["closed(drawer)"], [], moved=False).kind is IntakeKind.RECHECK


def test_an_empty_goal_waits_only_while_a_closed_drawer_is_unseen_and_nothing_moved(library, drawer_world):
    goal = intake(library, drawer_world, "take the thing out of the drawer and put it on the tray")
    assert goal.take_answer([], [], moved=False).kind is IntakeKind.WAITING and goal.waiting
    moved = intake(library, drawer_world, "take the thing out of the drawer and put it on the tray")
    assert moved.take_answer([], [], moved=True).kind is IntakeKind.REFUSED and not moved.waiting


def test_one_rule_refusing_again_and_again_ends_the_goal(library, drawer_world):
    goal = intake(library, drawer_world, "put the tape in the drawer")
    with pytest.raises(RefusalLoop, match="refused .* times by one rule"):
        for _ in range(4):
            goal.take_answer(["in(cup, tray)", "in(tape, drawer)"], [], moved=False)


def test_a_client_goal_is_checked_for_names_only_and_a_bad_one_is_an_error(library, drawer_world):
    ok = intake(library, drawer_world, "tidy up", client_goal=["in(cup, drawer)"])
    assert [c.text for c in ok.tree.node(ok.tree.root).conditions] == ["in(cup, drawer)"]
    with pytest.raises(ClientGoalError):
        intake(library, drawer_world, "tidy up", client_goal=["in(unicorn, drawer)"])
