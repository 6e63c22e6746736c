"""Tree snapshots and goal results -> messages and back (no ROS graph needed, only the message types)."""

from __future__ import annotations

import pytest

pytest.importorskip("step_planner_interfaces", reason="build the interfaces first: make interfaces")

from step_planner.domain.primitives import PrimitiveCall  # noqa: E402
from step_planner.execution.base import ExecCode, Outcome  # noqa: E402
from step_planner.planner.kinds import JudgedFrom, VerdictKind, VerdictSource  # noqa: E402
from step_planner.planner.result import GoalError, GoalResult  # noqa: E402
from step_planner.planner.tree import ConditionRecord, NodeStatus, SubgoalTree  # noqa: E402
from step_planner.ros.conversions import (  # noqa: E402
    ERROR_CODES,
    feedback_msg,
    msg_to_tree,
    render_tree,
    result_msg,
    tree_to_msg,
)
from step_planner_interfaces.action import ExecuteTask  # noqa: E402

pytestmark = pytest.mark.ros


def _tree() -> SubgoalTree:
    tree = SubgoalTree("put the tape in the drawer", goal_id="g1")
    child = tree.add_node("pick(tape)", parent=tree.root)
    tree.set_call(child.id, PrimitiveCall.make("pick", {"object": "tape"}))
    tree.add_verdict(child.id, VerdictKind.EXECUTE, "one primitive", VerdictSource.DETERMINISTIC)
    tree.set_conditions(tree.root, [ConditionRecord("in(tape, drawer)", False, JudgedFrom.OBSERVATION)], "model")
    tree.set_conditions(child.id, [ConditionRecord("holding(tape)", True, JudgedFrom.OBSERVATION, 1)], "effects")
    tree.set_outcome(child.id, Outcome(ExecCode.GRASP_FAILED, "slipped").to_dict())
    tree.set_status(child.id, NodeStatus.FAILED)
    tree.set_active(child.id)
    return tree


def test_every_goal_error_has_its_named_constant():
    assert {e.name for e in ERROR_CODES} == {e.name for e in GoalError}
    assert len(set(ERROR_CODES.values())) == len(GoalError)
    assert ERROR_CODES[GoalError.NONE] == ExecuteTask.Result.NONE == 0
    assert ERROR_CODES[GoalError.CANCELED] == ExecuteTask.Result.CANCELED


def test_tree_message_keeps_ids_parents_status_verdict_primitive_and_outcome():
    snapshot = _tree().snapshot()
    msg = tree_to_msg(snapshot, changed=True)
    root, leaf = msg.nodes
    assert (msg.goal_id, msg.revision, msg.root_id, msg.active_id) == ("g1", snapshot["revision"], 0, 1)
    assert root.parent_id == -1 and list(root.child_ids) == [1] and leaf.parent_id == 0
    assert leaf.is_active and not root.is_active
    assert (leaf.verdict, leaf.verdict_source) == ("execute", "deterministic")
    assert leaf.primitive == "pick(object=tape)" and leaf.status == "failed"
    assert (leaf.outcome_code, leaf.outcome_message) == ("GRASP_FAILED", "slipped")
    assert [(c.text, c.holds, c.judged_from, c.met_after_step) for c in root.conditions] == [
        ("in(tape, drawer)", False, "observation", -1)]
    assert root.conditions_from == "model" and leaf.conditions[0].met_after_step == 1
    back = msg_to_tree(msg)
    assert [n["id"] for n in back["nodes"]] == [0, 1] and back["active"] == 1
    assert back["nodes"][0]["conditions"] == snapshot["nodes"][0]["conditions"]
    text = render_tree(back)
    assert "[x] pick(tape)  -> pick(object=tape)  [GRASP_FAILED] *" in text
    assert "goal: in(tape, drawer) [unmet: observation]" in text


def test_result_lists_primitives_with_outcomes_and_the_final_tree():
    tree = _tree()
    call = PrimitiveCall.make("pick", {"object": "tape"})
    result = GoalResult(False, GoalError.EXECUTION_FAILED, "grasp failed twice",
                        executed=[(call, Outcome(ExecCode.GRASP_FAILED))], tree=tree.snapshot(), verified=True,
                        conditions=[c.to_dict() for c in tree.node(tree.root).conditions])
    msg = result_msg(result)
    assert (msg.success, msg.error_code, msg.error_msg) == (False, ExecuteTask.Result.EXECUTION_FAILED,
                                                            "grasp failed twice")
    assert list(msg.executed_primitives) == ["pick(object=tape) -> GRASP_FAILED"]
    assert len(msg.final_tree.nodes) == 2
    assert msg.verified and [(c.text, c.holds) for c in msg.conditions] == [("in(tape, drawer)", False)]


def test_feedback_describes_the_active_node():
    fb = feedback_msg(_tree().snapshot(), last_primitive="pick(object=tape)", last_outcome="GRASP_FAILED",
                      leaves_done=0, elapsed_s=1.5, llm_calls=3)
    assert (fb.active_node_id, fb.active_node_text, fb.active_node_depth) == (1, "pick(tape)", 1)
    assert (fb.node_count, fb.llm_calls, fb.elapsed_s) == (2, 3, 1.5)
    assert (fb.conditions_met, fb.conditions_total) == (0, 1)


def test_a_success_has_no_error_msg_as_in_nav2_and_says_what_holds_in_conditions():
    tree = _tree()
    result = GoalResult(True, GoalError.NONE, "the instruction is achieved: in(tape, drawer) (observation)",
                        verified=True, conditions=[{**c.to_dict(), "holds": True}
                                                   for c in tree.node(tree.root).conditions])
    msg = result_msg(result)
    assert (msg.success, msg.error_code, msg.error_msg) == (True, ExecuteTask.Result.NONE, "")
    assert msg.verified and [(c.text, c.holds) for c in msg.conditions] == [("in(tape, drawer)", True)]
