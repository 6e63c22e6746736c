"""`step-planner hmi`'s state and input rules, without ROS or a web server: one goal at a time from the pages,
heartbeats not redrawn, what the goal waits for, each primitive logged once, inputs checked as the node checks
them."""

from __future__ import annotations

import json

import pytest

from step_planner.hmi.session import Command, HmiState, Refused, check_facts, parse_command


def test_one_goal_at_a_time_until_it_ends_or_fails():
    state = HmiState()
    changes: list[int] = []
    state.on_change = lambda: changes.append(state.version)
    state.begin("put the tape in the drawer")
    assert state.busy and state.snapshot()["goal"]["status"] == "sending"
    with pytest.raises(Refused, match="already running"):
        state.begin("put the cup on the tray")
    state.accepted("f" * 32)
    state.on_result("0" * 32, {"status": "SUCCEEDED"})  # another goal's result: not ours
    assert state.busy
    state.on_result("f" * 32, {"status": "SUCCEEDED", "error_msg": ""})
    assert not state.busy and state.snapshot()["result"]["status"] == "SUCCEEDED"
    state.begin("put the cup on the tray")  # the next one clears the last outcome
    assert state.snapshot()["result"] is None and state.snapshot()["log"] == ["sent: put the cup on the tray"]
    state.failed("no action server /step_planner/execute_task")
    assert not state.busy and state.snapshot()["result"]["status"] == "NOT SENT"
    assert changes == [1, 2, 3, 4, 5]  # each change once; the refusal and the other goal's result none


def test_heartbeats_are_not_redrawn_and_each_primitive_is_logged_once():
    state = HmiState()
    changes: list[int] = []
    state.on_change = lambda: changes.append(1)
    tree = {"goal_id": "g", "revision": 3, "nodes": []}
    state.on_tree(tree)
    state.on_tree(dict(tree))  # a heartbeat repeats the revision
    assert len(changes) == 1
    state.on_tree({**tree, "revision": 4})
    assert len(changes) == 2
    fb = {"last_primitive": "pick(object=tape)", "last_outcome": "SUCCESS", "leaves_done": 1, "elapsed_s": 1.0}
    state.on_feedback("g", fb)
    state.on_feedback("g", {**fb, "elapsed_s": 1.5})  # same primitive, later feedback
    state.on_feedback("g", {**fb, "last_primitive": "place(object=tape, target=drawer)", "leaves_done": 2})
    assert [line for line in state.snapshot()["log"] if line.startswith("ran ")] == [
        "ran pick(object=tape) -> SUCCESS", "ran place(object=tape, target=drawer) -> SUCCESS"]
    assert state.snapshot()["feedback"]["leaves_done"] == 2


def test_what_the_goal_waits_for_follows_the_pending_topics():
    state = HmiState()
    state.on_pending("goal_confirmation", "in(tape, drawer): the tape is in the drawer")
    state.on_pending("question", "")
    assert state.snapshot()["waiting"] == {"goal_confirmation": "in(tape, drawer): the tape is in the drawer"}
    state.on_pending("goal_confirmation", "")
    state.on_pending("question", "which blue block?")
    assert state.snapshot()["waiting"] == {"question": "which blue block?"}


def test_commands_are_parsed_and_trimmed():
    assert parse_command('{"type": "send", "instruction": "  put the tape away "}') == Command(
        "send", instruction="put the tape away")
    assert parse_command('{"type": "confirm", "decision": "accept"}').decision == "accept"
    assert parse_command('{"type": "confirm", "decision": "refuse", "reason": "the tray"}').text == "the tray"
    assert parse_command('{"type": "confirm", "decision": "refuse"}').text == "refused on the page"
    assert parse_command('{"type": "confirm", "decision": "correct", "facts": "closed(drawer)"}').text == ""
    assert parse_command('{"type": "answer", "answer": " the green one "}').text == "the green one"
    assert parse_command('{"type": "cancel"}').kind == "cancel"
    assert check_facts("in(tape, drawer);\nclosed(drawer)") == ("in(tape, drawer)", "closed(drawer)")
    assert check_facts(["not open(drawer)"]) == ("not open(drawer)",)


@pytest.mark.parametrize("raw", [b'{"type": "cancel"}', "[1, 2]", '{"type": "confirm", "decision": "correct", '
                                 '"facts": {"a": 1}}', '{"type": "confirm", "decision": "correct", "facts": [3]}'])
def test_malformed_commands_are_refused(raw):
    with pytest.raises(Refused):
        parse_command(raw)


def test_the_dialogue_comes_from_the_json_snapshot_and_bad_json_is_ignored():
    state = HmiState()
    exchange = {"kind": "question", "text": "which block?", "reply": {"kind": "answer", "text": "the blue one"}}
    state.on_tree_json(json.dumps({"goal_id": "g", "dialogue": [exchange]}))
    state.on_tree_json("{not json")
    state.on_tree_json("[1]")
    assert state.snapshot()["dialogue"] == [exchange]
