"""The leaf-termination checker: each verdict, in each mode, deterministic where possible."""

from __future__ import annotations

import pytest
from conftest import ScriptedLLM

from step_planner.domain.conditions import parse_fact
from step_planner.domain.primitives import PrimitiveCall
from step_planner.domain.transitions import apply_call
from step_planner.planner.beliefs import Beliefs
from step_planner.planner.kinds import VerdictKind, VerdictSource
from step_planner.planner.prompts import PromptBook
from step_planner.planner.termination import Candidate, TerminationChecker
from step_planner.planner.tree import SubgoalTree

EXECUTE, DECOMPOSE, REPLAN = VerdictKind.EXECUTE, VerdictKind.DECOMPOSE, VerdictKind.REPLAN
PARENT = "put the tape in the drawer"


def judge(library, world, text, llm_answer=None, *, mode="hybrid", call=None, facts=(), parent=PARENT,
          parent_facts=("in(tape, drawer)",), challenged=()):
    llm = ScriptedLLM(lambda purpose, user: llm_answer)
    checker = TerminationChecker(library, PromptBook.load(library), llm, mode)
    tree = SubgoalTree("tidy the desk")
    p = tree.add_node(parent, tree.root)
    node = tree.add_node(text, p.id)
    candidate = Candidate(node.id, text, call, [parse_fact(f) for f in facts], [parse_fact(f) for f in parent_facts],
                          parent, challenged=set(challenged))
    return checker.judge(tree, candidate, Beliefs(world.observed())), llm


# ---- hybrid (STEP with deterministic call mapping) -------------------------------------------
def test_call_text_executes_without_asking_the_llm(library, drawer_world):
    verdict, llm = judge(library, drawer_world, "pick(tape)")
    assert verdict.kind is EXECUTE and verdict.source is VerdictSource.DETERMINISTIC
    assert verdict.call == PrimitiveCall.make("pick", {"object": "tape"})
    assert llm.prompts == []


def test_natural_language_is_mapped_by_the_llm_then_checked(library, drawer_world):
    answer = {"verdict": "execute", "call": "pick(object=tape)", "reasoning": "one grasp"}
    verdict, llm = judge(library, drawer_world, "grab the tape", answer)
    assert verdict.kind is EXECUTE and verdict.source is VerdictSource.LLM and str(verdict.call) == "pick(object=tape)"
    purpose, user = llm.prompts[0]
    assert purpose == "termination" and "grab the tape" in user and PARENT in user


def test_compound_subgoal_decomposes(library, drawer_world):
    verdict, _ = judge(library, drawer_world, "put the cup in the tray", {"verdict": "decompose"}, parent="tidy up",
                       parent_facts=())
    assert verdict.kind is DECOMPOSE


def test_too_abstract_subgoal_claimed_executable_is_decomposed(library, drawer_world):
    # the checker LLM claims one pick achieves "put the tape in the tray"; the tray is not covered
    verdict, _ = judge(library, drawer_world, "put the tape in the tray",
                       {"verdict": "execute", "call": "pick(object=tape)"})
    assert verdict.kind is DECOMPOSE and "tray" in verdict.reason


@pytest.mark.parametrize(
    "text, answer, reason_part",
    [
        ("pick(hammer)", None, "no 'hammer'"),
        ("teleport(tape)", None, "not a primitive"),
        ("pick(tape, drawer)", None, "takes 1 arguments"),
        ("grab the hammer", {"verdict": "execute", "call": "pick(object=hammer)"}, "no 'hammer'"),
        ("wave at the user", {"verdict": "execute", "call": "wave()"}, "gave no primitive call"),
        ("fly to the moon", {"verdict": "replan", "reasoning": "the robot cannot fly"}, "cannot fly"),
        ("do it", {"verdict": "execute"}, "gave no primitive call"),
        ("place(tape, drawer)", None, "must be holding tape"),
    ],
)
def test_inconsistent_subgoals_replan_with_a_reason(library, drawer_world, text, answer, reason_part):
    verdict, _ = judge(library, drawer_world, text, answer)
    assert verdict.kind is REPLAN
    assert reason_part in verdict.reason


def test_affordance_one_gripper(library, drawer_world):
    apply_call(PrimitiveCall.make("pick", {"object": "tape"}), library, drawer_world)
    verdict, _ = judge(library, drawer_world, "pick(screwdriver)", parent="put the screwdriver in the drawer",
                       parent_facts=("in(screwdriver, drawer)",))
    assert verdict.kind is REPLAN and "affordance" in verdict.categories


def test_hidden_object_is_not_mappable_until_seen(library, drawer_world):
    drawer_world.objects["cup"].location = "drawer"
    verdict, _ = judge(library, drawer_world, "pick(cup)", parent="put the cup on the tray",
                       parent_facts=("in(cup, tray)",))
    assert verdict.kind is REPLAN and "no 'cup'" in verdict.reason


@pytest.mark.parametrize(
    "text, call, expected",
    [
        ("pick up the tape from the table", "pick(object=tape)", EXECUTE),
        ("put the tape on the table", "pick(object=tape)", DECOMPOSE),
        ("grab the tape and put it in the tray", "pick(object=tape)", DECOMPOSE),
        ("open the drawer", "open_drawer(drawer=drawer)", EXECUTE),
    ],
)
def test_verbs_and_entities_decide_whether_one_call_covers_a_subgoal(library, drawer_world, text, call, expected):
    verdict, _ = judge(library, drawer_world, text, {"verdict": "execute", "call": call})
    assert verdict.kind is expected, verdict.reason


# ---- grounded (the default: calls in the answers) ---------------------------------------------
def test_grounded_maps_the_given_call_without_the_llm(library, drawer_world):
    verdict, llm = judge(library, drawer_world, "pick up the tape", mode="grounded", call="pick(object=tape)")
    assert verdict.kind is EXECUTE and verdict.source is VerdictSource.DETERMINISTIC and llm.prompts == []


def test_grounded_decomposes_a_child_without_a_call_without_the_llm(library, drawer_world):
    verdict, llm = judge(library, drawer_world, "put the tape in the drawer", mode="grounded",
                         facts=("in(tape, drawer)",), parent="tidy the desk", parent_facts=("in(tape, drawer)",))
    assert verdict.kind is DECOMPOSE and llm.prompts == []


def test_grounded_maps_from_conditions_when_exactly_one_call_achieves_them(library, drawer_world):
    verdict, _ = judge(library, drawer_world, "have the tape in hand", mode="grounded", facts=("holding(tape)",))
    assert verdict.kind is EXECUTE and str(verdict.call) == "pick(object=tape)"
    many, _ = judge(library, drawer_world, "empty hand", mode="grounded", facts=("gripper_empty", "holding(tape)"))
    assert many.kind is DECOMPOSE  # no single call makes both true


def test_a_malformed_call_field_is_refused(library, drawer_world):
    verdict, _ = judge(library, drawer_world, "pick up the tape", mode="grounded", call="grab the tape please")
    assert verdict.kind is REPLAN and "not written as a call" in verdict.reason


def test_at_the_depth_limit_a_compound_child_is_refused(library, drawer_world):
    llm = ScriptedLLM(lambda p, u: None)
    checker = TerminationChecker(library, PromptBook.load(library), llm, "grounded")
    tree = SubgoalTree("tidy")
    node = tree.add_node("put the tape in the drawer", tree.root)
    candidate = Candidate(node.id, node.text, None, [parse_fact("in(tape, drawer)")], [], "tidy", at_depth_limit=True)
    verdict = checker.judge(tree, candidate, Beliefs(drawer_world.observed()))
    assert verdict.kind is REPLAN and "depth limit" in verdict.reason


def test_calls_mode_refuses_a_sentence(library, drawer_world):
    verdict, llm = judge(library, drawer_world, "pick up the tape", mode="calls")
    assert verdict.kind is REPLAN and "not a primitive call" in verdict.reason and llm.prompts == []


def test_llm_mode_asks_even_for_a_call_and_still_checks_it(library, drawer_world):
    verdict, llm = judge(library, drawer_world, "pick(tape)", {"verdict": "execute", "call": "pick(object=tape)"},
                         mode="llm")
    assert verdict.kind is EXECUTE and verdict.source is VerdictSource.LLM and len(llm.prompts) == 1
    wrong, _ = judge(library, drawer_world, "pick(tape)", {"verdict": "execute", "call": "pick(object=hammer)"},
                     mode="llm")
    assert wrong.kind is REPLAN and "no 'hammer'" in wrong.reason


# ---- congruence ----------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["grounded", "hybrid", "llm", "calls"])
def test_a_feasible_but_irrelevant_call_is_challenged_in_every_mode(library, drawer_world, mode):
    answer = {"verdict": "execute", "call": "pick(object=cup)"}
    verdict, _ = judge(library, drawer_world, "pick(cup)", answer, mode=mode, call="pick(object=cup)")
    assert verdict.kind is REPLAN and verdict.source is VerdictSource.CONGRUENCE
    assert "acts on nothing 'put the tape in the drawer' needs (drawer, tape)" in verdict.reason
    confirmed, _ = judge(library, drawer_world, "pick(cup)", answer, mode=mode, call="pick(object=cup)",
                         challenged={"pick(object=cup)"})
    assert confirmed.kind is EXECUTE and "after a congruence challenge" in confirmed.reason


@pytest.mark.parametrize("text, parent, facts, ok", [
    ("open_drawer(drawer)", PARENT, ("in(tape, drawer)",), True),  # the target must be opened
    ("pick(tape)", PARENT, ("in(tape, drawer)",), True),
    ("home()", PARENT, ("in(tape, drawer)",), False),  # a detour
    ("move_to(tray)", PARENT, ("in(tape, drawer)",), False),
    ("open_drawer(drawer)", "find the pen and put it on the tray", ("at(pen, tray)",), True),  # search: pen unseen
    ("pick(cup)", "make room in the tray", ("in(tape, tray)",), False),
])
def test_congruence_by_what_the_parent_needs(library, drawer_world, text, parent, facts, ok):
    verdict, _ = judge(library, drawer_world, text, mode="grounded", parent=parent, parent_facts=facts)
    assert (verdict.source is not VerdictSource.CONGRUENCE) == ok, verdict.reason


def test_objects_in_a_needed_full_container_are_relevant(library, drawer_world):
    drawer_world.objects["cup"].location = "tray"
    verdict, _ = judge(library, drawer_world, "pick(cup)", mode="grounded", parent="put the tape in the tray",
                       parent_facts=("in(tape, tray)",))
    assert verdict.kind is EXECUTE
