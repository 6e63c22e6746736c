"""The domain's one condition grammar: facts, preconditions, effects; typed checks phrased for a reader."""

from __future__ import annotations

import pytest

from step_planner.domain.conditions import (
    CAPABILITY,
    EFFECT,
    FACT,
    ConditionError,
    check_fact,
    holds,
    parse_condition,
    parse_fact,
)


@pytest.mark.parametrize("text, rendered", [
    ("in(tape, drawer)", "in(tape, drawer)"),
    ("  not   open( drawer ) ", "not open(drawer)"),
    ("gripper_empty", "gripper_empty"),
    ("holding(red_block)", "holding(red_block)"),
    ("on(cup,table)", "on(cup, table)"),
])
def test_facts_parse_and_render_canonically(text, rendered):
    assert str(parse_fact(text)) == rendered


@pytest.mark.parametrize("text, message", [
    ("in(tape drawer)", "in is written in\\(<object>, <container>\\)"),
    ("near(tape, tray)", "unknown predicate 'near'"),
    ("reachable(tape)", "unknown predicate 'reachable'"),  # a capability, not a fact
    ("put(tape, tray)", "unknown predicate 'put'"),  # an effect, not a fact
    ("holding()", "holding is written holding\\(<object>\\)"),
    ("in(tape, the drawer)", "plain names"),
    ("tape is in the drawer", "cannot read"),
    (42, "a condition is a string"),
])
def test_malformed_facts_say_how_to_write_them(text, message):
    with pytest.raises(ConditionError, match=message):
        parse_fact(text)


def test_roles_limit_what_each_use_accepts():
    assert parse_condition("reachable(object)", {FACT, CAPABILITY}).predicate == "reachable"
    assert parse_condition("put(object, target)", {EFFECT}).predicate == "put"
    with pytest.raises(ConditionError):
        parse_condition("in(object, target)", {EFFECT})


@pytest.mark.parametrize("text, problem", [
    ("in(tape, drawer)", ""),
    ("in(hammer, drawer)", "there is no 'hammer' in the scene"),
    ("in(tape, table)", "table is a surface: use on(tape, table)"),
    ("on(tape, tray)", "tray is a container: use in(tape, tray)"),
    ("open(tray)", "not a drawer"),
    ("holding(drawer)", "not a object"),
])
def test_facts_are_checked_against_the_scene(drawer_world, text, problem):
    found = check_fact(parse_fact(text), drawer_world)
    assert (problem in found) if problem else found == ""


def test_unseen_objects_are_accepted_only_when_allowed(drawer_world):
    fact = parse_fact("in(pen, drawer)")
    assert "no 'pen'" in check_fact(fact, drawer_world)
    assert check_fact(fact, drawer_world, {"pen"}) == ""


def test_facts_evaluate_on_a_world(drawer_world):
    assert holds(parse_fact("closed(drawer)"), {}, drawer_world)
    assert holds(parse_fact("at(tape, table)"), {}, drawer_world)
    assert holds(parse_fact("on(tape, table)"), {}, drawer_world)
    assert not holds(parse_fact("not gripper_empty"), {}, drawer_world)
    assert parse_fact("in(tape, drawer)").objects == ("tape",)
    assert parse_fact("closed(drawer)").objects == ()
