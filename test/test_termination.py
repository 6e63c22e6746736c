"""The leaf-termination checker: each of the three verdicts, deterministic where possible."""

from __future__ import annotations

import pytest
from conftest import ScriptedLLM

from step_planner.domain.primitives import PrimitiveCall
from step_planner.domain.validation import apply_call
from step_planner.planner.prompts import PromptBook
from step_planner.planner.terminate import DECOMPOSE, EXECUTE, REPLAN, TerminationChecker
from step_planner.planner.tree import SubgoalTree


def judge(library, world, text, llm_answer=None, parent="put the tape in the drawer"):
    llm = ScriptedLLM(lambda purpose, user: llm_answer)
    checker = TerminationChecker(library, PromptBook.load(library), llm)
    tree = SubgoalTree("tidy the desk")
    p = tree.add_node(parent, tree.root)
    node = tree.add_node(text, p.id)
    return checker.judge(tree, node.id, world.observed()), llm


def test_call_text_executes_without_asking_the_llm(library, drawer_world):
    verdict, llm = judge(library, drawer_world, "pick(tape)")
    assert verdict.kind == EXECUTE and verdict.source == "deterministic"
    assert verdict.call == PrimitiveCall.make("pick", {"object": "tape"})
    assert llm.prompts == []


def test_natural_language_is_mapped_by_the_llm_then_checked(library, drawer_world):
    answer = {"verdict": "execute", "call": {"name": "pick", "args": {"object": "tape"}}, "reason": "one grasp"}
    verdict, llm = judge(library, drawer_world, "grab the tape", answer)
    assert verdict.kind == EXECUTE and verdict.source == "llm" and str(verdict.call) == "pick(object=tape)"
    purpose, user = llm.prompts[0]
    assert purpose == "termination" and "grab the tape" in user and "put the tape in the drawer" in user


def test_compound_subgoal_decomposes(library, drawer_world):
    verdict, _ = judge(library, drawer_world, "put the cup in the tray", {"verdict": "decompose", "reason": "2 steps"})
    assert verdict.kind == DECOMPOSE


def test_too_abstract_subgoal_claimed_executable_is_decomposed(library, drawer_world):
    # the checker LLM claims one pick achieves "put the tape in the tray"; the tray is not covered
    answer = {"verdict": "execute", "call": {"name": "pick", "args": {"object": "tape"}}}
    verdict, _ = judge(library, drawer_world, "put the tape in the tray", answer)
    assert verdict.kind == DECOMPOSE and "tray" in verdict.reason


@pytest.mark.parametrize(
    "text, answer, reason_part",
    [
        ("pick(hammer)", None, "no 'hammer'"),
        ("teleport(tape)", None, "not a primitive"),
        ("pick(tape, drawer)", None, "takes 1 arguments"),
        ("grab the hammer", {"verdict": "execute", "call": {"name": "pick", "args": {"object": "hammer"}}},
         "no 'hammer'"),
        ("wave at the user", {"verdict": "execute", "call": {"name": "wave", "args": {}}}, "not a primitive"),
        ("fly to the moon", {"verdict": "replan", "reason": "the robot cannot fly"}, "cannot fly"),
        ("do it", {"verdict": "execute"}, "gave no primitive call"),
        ("place(tape, drawer)", None, "must be holding tape"),
    ],
)
def test_inconsistent_subgoals_replan_with_a_reason(library, drawer_world, text, answer, reason_part):
    verdict, _ = judge(library, drawer_world, text, answer)
    assert verdict.kind == REPLAN
    assert reason_part in verdict.reason


def test_affordance_one_gripper(library, drawer_world):
    apply_call(PrimitiveCall.make("pick", {"object": "tape"}), library, drawer_world)
    verdict, _ = judge(library, drawer_world, "pick(screwdriver)")
    assert verdict.kind == REPLAN and "affordance" in verdict.categories


def test_hidden_object_is_not_mappable_until_seen(library, drawer_world):
    drawer_world.objects["cup"].location = "drawer"
    verdict, _ = judge(library, drawer_world, "pick(cup)")
    assert verdict.kind == REPLAN and "no 'cup'" in verdict.reason


@pytest.mark.parametrize(
    "text, call, expected",
    [
        ("pick up the tape from the table", {"name": "pick", "args": {"object": "tape"}}, EXECUTE),
        ("put the tape on the table", {"name": "pick", "args": {"object": "tape"}}, DECOMPOSE),
        ("grab the cup and put it in the tray", {"name": "pick", "args": {"object": "cup"}}, DECOMPOSE),
        ("open the drawer", {"name": "open_drawer", "args": {"drawer": "drawer"}}, EXECUTE),
    ],
)
def test_verbs_and_entities_decide_whether_one_call_covers_a_subgoal(library, drawer_world, text, call, expected):
    verdict, _ = judge(library, drawer_world, text, {"verdict": "execute", "call": call})
    assert verdict.kind == expected, verdict.reason
