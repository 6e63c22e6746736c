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


class _Answers:
    """A person who answers each question with the next of ``replies`` and records what was asked."""

    def __init__(self, *replies: str) -> None:
        self.replies, self.asked = list(replies), []

    def ask(self, request, cancel):
        from step_planner.planner.person import Reply, ReplyKind
        self.asked.append(request.text)
        return Reply(ReplyKind.ANSWER, self.replies.pop(0)) if self.replies else Reply(ReplyKind.NO_ANSWER)


def _asking(library, world, instruction: str, person) -> GoalIntake:
    tree = SubgoalTree(instruction, "g1")
    beliefs = Beliefs()
    beliefs.update(world.observed())
    budget = Budget(shipped_config())
    out = GoalIntake(tree, beliefs, library, budget, Questions(person, tree, budget, enabled=True),
                     NodeConditions(tree, beliefs, budget).judge)
    out.start()
    return out


# "zundering" is a word no lexicon holds: it may except the cup, or say nothing
SPARE = "Put everything on the table, zundering the cup, in the bin."
REST = ["in(red_block, bin)", "in(blue_block, bin)", "in(green_block, bin)", "in(sponge, bin)"]


@pytest.mark.parametrize("answer, taken", [("leave the cup where it is", False), ("it goes in the bin too", True)])
def test_a_thing_an_unknown_word_may_spare_moved_with_the_rest_is_put_to_the_person(library, answer, taken):
    from step_planner.domain.scene import load_scene
    from step_planner.resources import config_path

    world = load_scene(config_path("scenes", "blocks_tray.yaml"))
    person = _Answers(answer)
    goal = _asking(library, world, SPARE, person)
    first = goal.take_answer([*REST, "in(cup, bin)"], [], moved=False)
    assert first.kind is IntakeKind.RECHECK and len(person.asked) == 1, first
    assert "cup" in person.asked[0] and "zundering" in person.asked[0]
    again = goal.take_answer([*REST, "in(cup, bin)"], [], moved=False)  # the same goal after the answer
    assert (again.kind is IntakeKind.SET) is taken, again
    if not taken:
        assert "leave the cup where it is" in again.feedback
    assert goal.take_answer(REST, [], moved=False).kind is IntakeKind.SET  # the cup left out: never asked
    assert len(person.asked) == 1


def test_leaving_out_what_an_unknown_word_may_spare_asks_nobody(library):
    from step_planner.domain.scene import load_scene
    from step_planner.resources import config_path

    person = _Answers()
    goal = _asking(library, load_scene(config_path("scenes", "blocks_tray.yaml")), SPARE, person)
    assert goal.take_answer(REST, [], moved=False).kind is IntakeKind.SET and not person.asked
