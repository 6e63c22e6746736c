"""What people plainly mean (issue 29): the goal checks refuse only what they can decide, the person's word
is final, refusals only the person can settle are asked, not looped, questions come when the world shows the
ambiguity, provisional names are re-bound, and the prompt does not contradict its schema.

Every planner case runs the real planner on the symbolic executor with a small scripted model that sees the
prompt and the schema it is sent; the person is scripted too and records when it was asked.
"""

from __future__ import annotations

import json
import re
import threading
from typing import Any

import pytest
from conftest import CONFIG, children_so_far, parent_of, section, shipped_config
from test_person import CountingExecutor as Counting

from step_planner.domain.scene import load_scene
from step_planner.llm.schemas import answer_schema
from step_planner.planner.beliefs import Beliefs
from step_planner.planner.grounding import check_goal
from step_planner.planner.person import Ask, AskKind, Reply, ReplyKind
from step_planner.planner.result import GoalError
from step_planner.planner.runner import run_goal
from step_planner.planner.tree import render_snapshot


def scene(name: str):
    return load_scene(CONFIG / "scenes" / f"{name}.yaml")


def rules_refusing(library, scene_name: str, instruction: str, goal: list[str], **kw) -> list[str]:
    checked = check_goal(goal, instruction, Beliefs(scene(scene_name).observed()), library, **kw)
    assert checked.facts or checked.problems
    return checked.rules


# ---- item 6: rules that refuse only what they can decide ----------------------------------------------------
def ON_TABLE(place: str) -> list[str]:  # noqa: N802 - reads as data in the table below
    return [f"in({b}, {place})" for b in ("red_block", "blue_block", "green_block")]


@pytest.mark.parametrize("scene_name, instruction, goal", [
    # plurals and quantifiers are never singular references (a plural was once "corrected" to the singular)
    ("blocks_tray", "Put all the blocks that are on the table into the box", ON_TABLE("box")),
    ("blocks_tray", "The blocks on the table can go in the bin", ON_TABLE("bin")),
    ("blocks_tray", "All the blocks on the table belong in the box", ON_TABLE("box")),
    ("blocks_tray", "Every block on the table goes in the box", ON_TABLE("box")),
    ("blocks_tray", "Put each of the blocks that sit on the table in the bin", ON_TABLE("bin")),
    ("colour_sort", "Put both of the green blocks in the top row in the green tray",
     ["in(green_block_2, green_tray)", "in(green_block_3, green_tray)"]),
    # a relative clause, a place phrase that fits a candidate, a state word, a position, an ordinal
    ("colour_sort", "The blue block that is sitting in the red tray belongs in the blue tray",
     ["in(blue_block_4, blue_tray)"]),
    ("colour_sort", "Take the blue block from the red tray and put it in the blue tray",
     ["in(blue_block_4, blue_tray)"]),
    ("office_drawers", "Put the pen and the cup in the open drawer", ["in(pen, left_drawer)", "in(cup, left_drawer)"]),
    # sides are the robot's (+y is its left, as the scenes and the wordings suite say): the far left one is at y 0.25
    ("colour_sort", "Move the blue block on the far left to the blue tray", ["in(blue_block_3, blue_tray)"]),
    ("colour_sort", "Put the small red block in the red tray", ["in(red_block_1, red_tray)"]),
    # "the one(s) ..." refers to the noun before it
    ("colour_sort", "Move the blue block to the blue tray - the one on the red tray", ["in(blue_block_4, blue_tray)"]),
    ("colour_sort", "Move the blue block to the blue tray. I mean the one that is on the red tray.",
     ["in(blue_block_4, blue_tray)"]),
    # exceptions and group words
    ("blocks_tray", "Put everything on the table except the cup in the box",
     [*ON_TABLE("box"), "in(sponge, box)"]),
    ("supply_cabinet", "Throw the trash in the bin", ["in(crumpled_paper, bin)", "in(wrapper, bin)"]),
    ("cluttered_desk", "Put the tools in the tool bin", ["in(screwdriver, tool_bin)", "in(chisel, tool_bin)"]),
    ("supply_cabinet", "Put the office supplies in the supply box", ["in(pen, supply_box)", "in(marker, supply_box)"]),
])
def test_what_the_words_decide_or_leave_to_the_model_is_not_refused(library, scene_name, instruction, goal):
    assert rules_refusing(library, scene_name, instruction, goal) == []


@pytest.mark.parametrize("scene_name, instruction, goal", [
    ("blocks_tray", "Put the block in the box.", ["in(green_block, box)"]),
    ("colour_sort", "Move the blue block to the blue tray", ["in(blue_block_4, blue_tray)"]),
    # an ordinal where the world gives no order: this test once took "the first blue block" to be blue_block_1, the
    # name's number; the person at the robot sees no names, and the three blue blocks on the table are scattered
    # (x 0.26 and 0.34, one more in the red tray), not in a row, so "first" has no order to count in: asked
    ("colour_sort", "Move the first blue block to the blue tray", ["in(blue_block_1, blue_tray)"]),
    ("office_drawers", "Put the pen in the drawer and close it.", ["in(pen, right_drawer)", "closed(right_drawer)"]),
    ("blocks_tray", "Put the block in the box, then the cup in the bin", ["in(red_block, box)", "in(cup, bin)"]),
])
def test_a_bare_reference_several_fit_is_still_refused_unless_the_person_answered(library, scene_name, instruction,
                                                                                  goal):
    assert rules_refusing(library, scene_name, instruction, goal) == ["guessed_reference"]
    checked = check_goal(goal, instruction, Beliefs(scene(scene_name).observed()), library, answered=True)
    assert checked.ok and [r.picked for r in checked.references if r.resolved]


def test_generic_words_are_never_names_and_every_refusal_names_its_rule(library):
    assert rules_refusing(library, "two_drawers", "Take the thing out of the bottom drawer and put it on the tray",
                          ["in(thing, tray)"]) == ["generic_name"]
    assert rules_refusing(library, "drawer_desk", "put the tape in the drawer", ["in(cup, tray)"]) == [
        "unmentioned_thing", "named_object_missing"]
    assert rules_refusing(library, "drawer_desk", "put the tape in the drawer", ["in(tape, bin)"]) == [
        "grammar"]
    # a provisional name made of the instruction's words (up to three) is accepted while the thing is hidden
    assert rules_refusing(library, "workshop", "There should be an old sponge in the drawer. Bin it.",
                          ["in(old_sponge, bin)"]) == []
    assert rules_refusing(library, "workshop", "A dusty old blue sponge is in the drawer: bin it.",
                          ["in(old_blue_sponge, bin)"]) == []


def test_a_group_or_mass_word_is_never_a_singular_reference(library):
    # "the rubbish" is all of it (issue 36: a group read narrowly is refused, naming what it left out)
    world = scene("supply_cabinet").observed()
    checked = check_goal(["in(wrapper, bin)"], "Put the rubbish in the bin", Beliefs(world), library)
    assert checked.rules == ["narrow_reading"] and "leaves out crumpled_paper" in checked.problems[0]
    assert rules_refusing(library, "supply_cabinet", "Put the rubbish in the bin",
                          ["in(wrapper, bin)", "in(crumpled_paper, bin)"]) == []


# ---- the planner with a scripted model and person -----------------------------------------------------------
class Model:
    """A scripted model: ``answer(user, fields)`` -> the answer dict; records prompts, schemas and systems."""

    def __init__(self, answer) -> None:
        self.answer = answer
        self.calls: list[tuple[str, str, set[str]]] = []
        self.systems: list[str] = []
        self.schemas: list[dict] = []

    def complete(self, messages, schema, purpose):
        user = messages[-1]["content"]
        fields = set(schema.model_fields)
        self.calls.append((purpose, user, fields))
        self.systems.append(messages[0]["content"])
        self.schemas.append(answer_schema(schema))
        data = {"reasoning": "scripted", "done": False, "next": None, **self.answer(user, fields)}
        return schema.model_validate({k: v for k, v in data.items() if k in fields})


class Person:
    def __init__(self, *replies: Reply, executor) -> None:
        self.replies = list(replies)
        self.executor = executor
        self.asked: list[tuple[Ask, int]] = []

    def ask(self, request: Ask, cancel: threading.Event) -> Reply:
        self.asked.append((request, len(self.executor.calls)))
        return self.replies.pop(0) if self.replies else Reply(ReplyKind.NO_ANSWER, "no more replies")


def child(call: str) -> dict[str, Any]:
    return {"subgoal": call, "call": call, "success_when": []}


def run(library, scene_name, instruction, answer, *replies, person=True, confirm=False, **config):
    executor = Counting(library, scene(scene_name))
    model = Model(answer)
    who = Person(*replies, executor=executor) if person else None
    result = run_goal(instruction, library=library, executor=executor, llm=model, config=shipped_config(**config),
                      person=who, confirm_goal=confirm)
    return result, executor, model, who


def steps(calls: list[str]):
    """A flat plan: the next call not yet done (from the root's children so far)."""

    def next_call(user: str) -> dict[str, Any]:
        done = [re.sub(r" \[.*\]$", "", c.rsplit(" -> ", 1)[0]) for c in children_so_far(user)
                if c.endswith("-> succeeded")]
        rest = [c for c in calls if c not in done]
        return {"next": child(rest[0])} if rest else {"done": True}

    return next_call


BLUE = "Move the blue block to the blue tray"
BLUE_PLAN = steps(["pick(object=blue_block_4)", "place(object=blue_block_4, target=blue_tray)"])


def test_the_persons_answer_is_final_and_shown_with_where_it_came_from(library):
    def answer(user, fields):
        if "question" in fields and "Answers from the person" not in user:
            return {"question": "Which blue block do you mean?", "goal": []}
        return {"goal": ["in(blue_block_4, blue_tray)"], **BLUE_PLAN(user)}

    result, executor, model, person = run(library, "colour_sort", BLUE, answer,
                                          Reply(ReplyKind.ANSWER, "The one that is on the red tray"))
    assert result.success, result.message
    assert [a.kind for a, _ in person.asked] == [AskKind.QUESTION]  # asked once, never again
    assert not result.goal_rejections
    (reading,) = result.tree["readings"]
    assert reading["said"] == "the blue block" and reading["resolved"] == ["blue_block_4"]
    assert "from your answer 'The one that is on the red tray'" in render_snapshot(result.tree)


def test_with_confirmation_on_the_reading_is_shown_to_the_person(library):
    def answer(user, fields):
        if "question" in fields and "Answers from the person" not in user:
            return {"question": "Which blue block do you mean?", "goal": []}
        return {"goal": ["in(blue_block_4, blue_tray)"], **BLUE_PLAN(user)}

    result, _, _, person = run(library, "colour_sort", BLUE, answer,
                               Reply(ReplyKind.ANSWER, "the one on the red tray"), Reply(ReplyKind.ACCEPT),
                               confirm=True)
    assert result.success, result.message
    confirmation = person.asked[1][0]
    assert confirmation.kind is AskKind.GOAL
    assert "'the blue block' -> blue_block_4, from your answer" in confirmation.text


def test_a_guess_is_asked_by_the_planner_not_sent_back_to_the_model(library):
    def answer(user, fields):  # a model that never asks: it picks one
        return {"goal": ["in(blue_block_4, blue_tray)"], **BLUE_PLAN(user)}

    result, executor, model, person = run(library, "colour_sort", BLUE, answer,
                                          Reply(ReplyKind.ANSWER, "the one in the red tray"))
    assert result.success, result.message
    ((question, moved),) = person.asked
    assert question.kind is AskKind.QUESTION and moved == 0
    for name, where in [("blue_block_1", "on the table"), ("blue_block_4", "in the red tray")]:
        assert f"{name} (blue block, {where})" in question.text
    assert not any("ask the person which is meant" in user for _, user, _ in model.calls)  # no refusal loop
    assert result.goal_rejections[0]["rules"] == ["guessed_reference"]


def test_with_nobody_to_ask_a_guess_ends_clarification_needed_naming_the_candidates(library):
    result, executor, model, _ = run(library, "colour_sort", BLUE,
                                     lambda user, fields: {"goal": ["in(blue_block_4, blue_tray)"], **BLUE_PLAN(user)},
                                     person=False)
    assert result.error is GoalError.CLARIFICATION_NEEDED
    assert "blue_block_2 (blue block, on the table)" in result.message and "nothing was executed" in result.message
    assert executor.calls == [] and len(model.calls) == 1


def test_every_refusal_rule_has_a_bound_and_a_repeated_refusal_counts_twice(library):
    result, executor, model, _ = run(library, "drawer_desk", "put the tape and the screwdriver in the drawer",
                                     lambda user, fields: {"goal": ["in(cup, tray)"],
                                                           "next": child("pick(object=cup)")})
    assert result.error is GoalError.PLANNING_FAILED
    assert "refused 5 times by one rule (unmentioned_thing)" in result.message and executor.calls == []
    assert len(model.calls) == 3  # refused once, then the same text twice: 1 + 2 + 2 > 3


def test_the_same_question_is_never_asked_twice(library):
    def answer(user, fields):
        if "question" in fields and "asked already" not in section(user, "Feedback on your last proposals"):
            return {"question": "Which blue block do you mean?", "goal": []}
        return {"goal": ["in(blue_block_4, blue_tray)"], **BLUE_PLAN(user)}

    result, _, model, person = run(library, "colour_sort", BLUE, answer,
                                   Reply(ReplyKind.ANSWER, "the one in the red tray"))
    assert result.success, result.message
    assert len(person.asked) == 1
    assert any("asked already" in user for _, user, _ in model.calls)


THING = "Take the thing out of the bottom drawer and put it on the tray"


def test_a_question_is_asked_when_the_world_shows_the_ambiguity(library):
    def answer(user, fields):
        if "pen" not in section(user, "Current observation"):  # the drawer is still closed: look first
            return {"goal": [], "next": child("open_drawer(drawer=bottom_drawer)")}
        if "Answers from the person" not in user:
            assert "question" in fields and "goal" in fields  # both still possible after the first request
            return {"question": "The bottom drawer holds a screwdriver and a pen: which one?", "goal": []}
        return {"goal": ["in(pen, tray)"], **steps(["open_drawer(drawer=bottom_drawer)", "pick(object=pen)",
                                                    "place(object=pen, target=tray)"])(user)}

    result, executor, model, person = run(library, "two_drawers", THING, answer, Reply(ReplyKind.ANSWER, "the pen"))
    assert result.success and result.verified, result.message
    ((question, moved),) = person.asked
    assert moved == 1 and executor.calls[0].startswith("open_drawer")
    later = [user for _, user, _ in model.calls[2:]]
    assert later and all("A: the pen" in user for user in later)


def test_nothing_but_opening_comes_before_the_goal(library):
    def answer(user, fields):
        return {"goal": [], "next": child("pick(object=cup)")}

    result, executor, model, _ = run(library, "two_drawers", THING, answer)
    assert not result.success and executor.calls == []
    assert "before doing anything else" in model.calls[1][1]


SPONGE = "There should be an old sponge in the drawer. Bin it."


def test_a_provisional_name_is_rebound_once_the_drawer_shows_what_is_there(library):
    def answer(user, fields):
        if "pen" not in section(user, "Current observation"):
            return {"goal": ["in(old_sponge, bin)"], "next": child("open_drawer(drawer=drawer)")}
        if "goal" in fields:
            assert "old_sponge, which nothing in view is called" in user
            return {"goal": ["in(sponge, bin)"],
                    **steps(["pick(object=sponge)", "place(object=sponge, target=bin)"])(user)}
        return steps(["open_drawer(drawer=drawer)", "pick(object=sponge)", "place(object=sponge, target=bin)"])(user)

    result, executor, model, _ = run(library, "workshop", SPONGE, answer)
    assert result.success and result.verified, result.message
    assert [c["text"] for c in result.conditions] == ["in(sponge, bin)"]
    assert any({"said": "old_sponge", "resolved": ["sponge"]}.items() <= r.items() for r in result.tree["readings"])
    assert any(r["said"] == "bin it" and r["resolved"] == ["in(sponge, bin)"] for r in result.tree["readings"])


def test_a_restated_goal_that_keeps_the_provisional_name_is_refused(library):
    def answer(user, fields):
        if "pen" not in section(user, "Current observation"):
            return {"goal": ["in(old_sponge, bin)"], "next": child("open_drawer(drawer=drawer)")}
        return {"goal": ["in(old_sponge, bin)"], "next": child("pick(object=sponge)")}

    result, executor, model, _ = run(library, "workshop", SPONGE, answer)
    assert not result.success and executor.calls == ["open_drawer(drawer=drawer)"]
    assert any("provisional_name_kept" in r["rules"] for r in result.goal_rejections)


def test_a_renaming_without_a_shared_word_is_settled_by_the_person(library):
    def answer(user, fields):
        if "pen" not in section(user, "Current observation"):
            return {"goal": ["in(old_rag, bin)"], "next": child("open_drawer(drawer=drawer)")}
        if "goal" in fields:
            return {"goal": ["in(pen, bin)"], "next": child("pick(object=pen)")}
        return steps(["pick(object=pen)", "place(object=pen, target=bin)"])(user)

    result, executor, _, person = run(library, "workshop", "There should be an old rag in the drawer. Bin it.",
                                      answer, Reply(ReplyKind.REFUSE, "no, the rag"))
    assert result.error is GoalError.GOAL_NOT_CONFIRMED
    ((confirmation, _),) = person.asked
    assert confirmation.kind is AskKind.GOAL and "'old_rag' -> pen" in confirmation.text
    assert executor.calls == ["open_drawer(drawer=drawer)"]


# ---- item 8: the prompt does not contradict its schema ------------------------------------------------------
def _first(library, scene_name, instruction, answer, **kw):
    result, executor, model, person = run(library, scene_name, instruction, answer, **kw)
    return result, model


def test_the_ask_rule_names_fields_the_schema_has(library):
    _, model = _first(library, "colour_sort", BLUE, lambda u, f: {"question": "Which?", "goal": []}, person=False)
    user, schema = model.calls[0][1], model.schemas[0]
    ambiguity = section(user, "Ambiguity")
    assert "leave the other fields empty" not in ambiguity + model.systems[0]
    props = schema["properties"]
    for field_name in re.findall(r"`(\w+)` (?:to|is) ", ambiguity):
        assert field_name in props, field_name
    assert {"question", "goal", "next", "done", "reasoning"} <= set(props)
    said = json.dumps(schema)
    assert "next is null" in said and "leave the other fields empty" not in said


def test_holding_is_a_finished_end_for_hand_me(library):
    result, model = _first(library, "workshop", "Can you hand me the screwdriver?",
                           lambda u, f: {"goal": ["holding(screwdriver)"], **steps(["pick(object=screwdriver)"])(u)})
    assert result.success, result.message
    system = model.systems[0]
    assert "unless its facts say to hold" in system and "holding(<object>)" in system


def test_on_the_tray_and_in_tray_are_said_to_be_one_place(library):
    _, model = _first(library, "colour_sort", BLUE, lambda u, f: {"question": "Which?", "goal": []}, person=False)
    assert "a person's \"on the tray\" is the observation's \"in tray\"" in model.systems[0]
    assert "in red_tray" in section(model.calls[0][1], "Current observation")


def test_a_child_that_says_which_is_not_a_restatement_of_its_parent(library):
    plans = {BLUE: [("move blue_block_4 to the blue tray", None, ["in(blue_block_4, blue_tray)"])],
             "move blue_block_4 to the blue tray": [("pick", "pick(object=blue_block_4)", []),
                                                    ("place", "place(object=blue_block_4, target=blue_tray)", [])]}

    def answer(user, fields):
        if "question" in fields and "Answers from the person" not in user:
            return {"question": "Which blue block?", "goal": []}
        done = {re.sub(r" \[.*\]$", "", c.rsplit(" -> ", 1)[0]) for c in children_so_far(user)
                if c.endswith("-> succeeded")}
        rest = [s for s in plans[parent_of(user)] if s[0] not in done]
        if not rest:
            return {"done": True, "goal": ["in(blue_block_4, blue_tray)"]}
        return {"goal": ["in(blue_block_4, blue_tray)"],
                "next": {"subgoal": rest[0][0], "call": rest[0][1], "success_when": rest[0][2]}}

    result, _, model, _ = run(library, "colour_sort", BLUE, answer, Reply(ReplyKind.ANSWER, "the one on the red tray"))
    assert result.success, result.message
    assert not any("restates its parent" in user for _, user, _ in model.calls)
