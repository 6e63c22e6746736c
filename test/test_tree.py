"""Subgoal tree structure, statuses, events and the JSON snapshot schema."""

from __future__ import annotations

import json

from step_planner.domain.primitives import PrimitiveCall
from step_planner.planner.kinds import JudgedFrom, VerdictKind, VerdictSource
from step_planner.planner.tree import SCHEMA_ID, ConditionRecord, NodeStatus, SubgoalTree


class Recorder:
    def __init__(self):
        self.events = []

    def on_tree_event(self, event, tree):
        self.events.append((event.kind, event.node_id, event.revision, tree.revision))


def test_ids_depths_and_snapshot():
    tree = SubgoalTree("tidy up", goal_id="g1")
    rec = Recorder()
    tree.add_listener(rec)
    a = tree.add_node("open the drawer", tree.root)
    b = tree.add_node("put the tape away", tree.root)
    c = tree.add_node("pick(tape)", b.id)
    tree.set_call(c.id, PrimitiveCall.make("pick", {"object": "tape"}))
    tree.add_verdict(c.id, VerdictKind.EXECUTE, "maps to pick", VerdictSource.DETERMINISTIC)
    tree.set_conditions(c.id, [ConditionRecord("holding(tape)", True, JudgedFrom.OBSERVATION, 1)], "effects")
    tree.set_status(c.id, NodeStatus.SUCCEEDED)
    assert [a.id, b.id, c.id] == [1, 2, 3] and c.depth == 2
    assert [n.text for n in tree.ancestors(c.id)] == ["tidy up", "put the tape away"]
    snap = json.loads(json.dumps(tree.snapshot()))
    assert snap["schema"] == SCHEMA_ID and snap["goal_id"] == "g1" and snap["revision"] == tree.revision
    node = snap["nodes"][3]
    assert node == {
        "id": 3, "parent": 2, "children": [], "depth": 2, "text": "pick(tape)", "status": "succeeded",
        "control": "sequence", "call": {"name": "pick", "args": {"object": "tape"}},
        "conditions": [{"text": "holding(tape)", "holds": True, "judged_from": "observation", "met_after_step": 1}],
        "conditions_from": "effects",
        "verdicts": [{"verdict": "execute", "reason": "maps to pick", "source": "deterministic"}],
        "outcome": None, "summary": None, "prepared": False,
    }
    assert snap["nodes"][0]["children"] == [1, 2]
    # every change emitted exactly one event with a strictly increasing revision
    revisions = [r for _, _, r, _ in rec.events]
    assert revisions == list(range(2, tree.revision + 1))
    assert [k for k, *_ in rec.events] == ["added", "added", "added", "call", "verdict", "conditions", "status"]
    # re-judging conditions that did not change is not a change either
    tree.set_conditions(c.id, list(tree.node(c.id).conditions))
    assert rec.events[-1][0] == "status"


def test_a_v1_snapshot_is_read_as_v2():
    from step_planner.planner.tree import render_snapshot, upgrade

    v1 = {"schema": "step_planner/tree/v1", "root": 0, "active": None, "nodes": [
        {"id": 0, "parent": None, "children": [], "depth": 0, "text": "tidy", "status": "succeeded",
         "verdicts": [], "call": None, "outcome": None, "summary": None, "control": "sequence"}]}
    up = upgrade(v1)
    assert up["schema"] == SCHEMA_ID and up["nodes"][0]["conditions"] == [] and up["nodes"][0]["prepared"] is False
    assert render_snapshot(v1) == "[+] tidy"


def test_setting_the_same_status_twice_is_not_a_change():
    tree = SubgoalTree("x")
    rev = tree.revision
    tree.set_status(tree.root, NodeStatus.PENDING)
    assert tree.revision == rev


def test_abandon_open_keeps_finished_nodes():
    tree = SubgoalTree("x")
    done = tree.add_node("a", tree.root)
    tree.set_status(done.id, NodeStatus.SUCCEEDED)
    open_ = tree.add_node("b", tree.root)
    tree.set_status(open_.id, NodeStatus.EXPANDING)
    leaf = tree.add_node("c", open_.id)
    tree.abandon_open(tree.root)
    assert tree.node(done.id).status is NodeStatus.SUCCEEDED
    assert tree.node(open_.id).status is NodeStatus.ABANDONED
    assert tree.node(leaf.id).status is NodeStatus.ABANDONED
    assert "[+] a" in tree.render() and "    [-] c" in tree.render()
