"""The ExecuteTask action end to end: real rclpy + Fast DDS on loopback, real openai client over HTTP."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("step_planner_interfaces", reason="build the interfaces first: make interfaces")

from ros_support import (  # noqa: E402
    DRAWER_PRIMITIVES,
    PLANS,
    TASK,
    RosHarness,
    ScriptedPlans,
    wait_for,
    wait_quiet,
    wait_until,
)

from step_planner.ros.qos import latched  # noqa: E402
from step_planner_interfaces.action import ExecuteTask  # noqa: E402
from step_planner_interfaces.msg import SubgoalTree  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.timeout(120)]
R = ExecuteTask.Result


@pytest.fixture
def handler():
    return ScriptedPlans(PLANS, unavailable=("fetch the unicorn",))


@pytest.fixture
def ros(handler):
    harness = RosHarness(handler)
    yield harness
    harness.close()


def test_drawer_task_succeeds_with_ordered_feedback(ros):
    feedback = []
    handle = ros.send(TASK, feedback=feedback)
    result = wait_for(handle.get_result_async()).result
    assert result.success, result.error_msg
    assert result.error_code == R.NONE
    assert [p.rsplit(" -> ", 1)[0] for p in result.executed_primitives] == DRAWER_PRIMITIVES
    assert all(p.endswith("-> SUCCESS") for p in result.executed_primitives)
    # The harness reads the feedback topic itself; feedback published just before the result may arrive
    # after it. Everything the node published must arrive, in order, and show every primitive as it ran.
    wait_quiet(feedback)
    revisions = [f.tree_revision for f in feedback]
    assert len(revisions) > 20
    assert revisions == sorted(revisions) and len(set(revisions)) == len(revisions), "feedback out of order"
    assert revisions[-1] <= result.final_tree.revision
    last_of = {}
    for f in feedback:
        last_of.setdefault(f.leaves_done, f)
    assert sorted(last_of) == list(range(len(DRAWER_PRIMITIVES) + 1))
    assert [last_of[i].last_primitive for i in range(1, 7)] == DRAWER_PRIMITIVES
    assert all(f.last_outcome == "SUCCESS" for f in feedback if f.last_primitive)
    assert feedback[-1].llm_calls > 0 and 0 < feedback[-1].node_count <= len(result.final_tree.nodes)
    assert max(f.active_node_depth for f in feedback) == 2
    tree = result.final_tree
    assert tree.nodes[0].parent_id == -1 and tree.nodes[0].text == TASK
    assert all(n.status == "succeeded" for n in tree.nodes)
    assert {n.primitive for n in tree.nodes if n.primitive} == set(DRAWER_PRIMITIVES)
    assert all(tree.nodes[c].parent_id == n.id for n in tree.nodes for c in n.child_ids)


def test_late_subscriber_gets_the_final_tree(ros):
    result = wait_for(ros.send(TASK).get_result_async()).result
    assert result.success
    received: list[SubgoalTree] = []
    ros.client_node.create_subscription(SubgoalTree, f"{ros.name}/tree", received.append, latched())
    wait_until(lambda: received)
    assert received[0].revision == result.final_tree.revision
    assert [n.status for n in received[0].nodes] == [n.status for n in result.final_tree.nodes]
    wait_until(lambda: any(not m.changed for m in received))  # the heartbeat repeats it, marked unchanged
    assert all(m.revision == result.final_tree.revision for m in received)


def test_cancel_mid_goal_ends_canceled_and_runs_nothing_more(ros, handler):
    feedback = []
    handle = ros.send(TASK, feedback=feedback)
    wait_until(lambda: any(f.leaves_done >= 1 for f in feedback))
    handler.hold()  # the planner's next LLM request waits: the goal is mid-plan
    wait_until(handler.waiting.is_set)
    wait_quiet(feedback)  # feedback published before the planner blocked may still be on its way
    done_before_cancel = max(f.leaves_done for f in feedback)
    cancel = wait_for(handle.cancel_goal_async())
    assert len(cancel.goals_canceling) == 1
    handler.release()
    response = wait_for(handle.get_result_async())
    result = response.result
    assert response.status == 5  # action_msgs/GoalStatus.STATUS_CANCELED
    assert not result.success and result.error_code == R.CANCELED
    assert "canceled by the client" in result.error_msg
    succeeded = [p for p in result.executed_primitives if p.endswith("-> SUCCESS")]
    assert len(succeeded) == done_before_cancel < len(DRAWER_PRIMITIVES)


def test_invalid_goals_are_refused_with_a_reason(ros, handler):
    empty = wait_for(ros.send("   ").get_result_async()).result
    assert empty.error_code == R.INVALID_GOAL and "empty" in empty.error_msg
    no_scene = wait_for(ros.send(TASK, scene="no_such_scene").get_result_async()).result
    assert no_scene.error_code == R.INVALID_GOAL and "no_such_scene" in no_scene.error_msg
    assert handler.prompts == [], "an invalid goal must not reach the LLM"


def test_after_a_failed_goal_the_node_serves_the_next(ros):
    failed = wait_for(ros.send("fetch the unicorn").get_result_async()).result
    assert not failed.success and failed.error_code == R.LLM_UNAVAILABLE, failed.error_msg
    assert failed.executed_primitives == []
    ok = wait_for(ros.send(TASK).get_result_async()).result
    assert ok.success, ok.error_msg


def test_dry_run_plans_on_a_named_scene(ros):
    result = wait_for(ros.send(TASK, scene="drawer_desk", dry_run=True).get_result_async()).result
    assert result.success, result.error_msg
    assert len(result.executed_primitives) == len(DRAWER_PRIMITIVES)


MOTION_S = 0.4  # what each symbolic primitive takes in the overlap test: longer than overlap_min_motion_s (0.25)


def _paced(node, seconds: float) -> None:
    """The node's per-goal executors take ``seconds`` per primitive, as an arm's motions take time: the symbolic
    backend's are instant, and the planner then asks before a prediction is sent (and asks itself, by design).
    CI met that race once: no prediction made in six primitives."""
    make = node._executor

    def executor(goal, world):
        made = make(goal, world)
        execute = made.inner.execute

        def moving(call, cancel=None):
            time.sleep(seconds)
            return execute(call, cancel)

        made.inner.execute = moving
        return made

    node._executor = executor


def test_the_overlap_feature_through_the_node(handler):
    ros = RosHarness(handler, **{"planner.features": ["+overlap", "-plan_ahead"]})
    try:
        _paced(ros.node, MOTION_S)
        result = wait_for(ros.send(TASK).get_result_async()).result
        assert result.success, result.error_msg
        assert [p.rsplit(" -> ", 1)[0] for p in result.executed_primitives] == DRAWER_PRIMITIVES
        # the node's episode says how the feature went: every primitive took MOTION_S, time to prepare an answer
        import json
        from pathlib import Path

        (summary,) = Path(ros.episodes_dir).glob("*/summary.json")
        usage = json.loads(summary.read_text())["usage"]
        assert usage["speculative_made"] >= 1 and usage["profile"] == "grounded+overlap-plan_ahead"
        assert usage["speculative_used"] + usage["speculative_wasted"] == usage["speculative_made"]
        assert any(n.prepared for n in result.final_tree.nodes) == (usage["speculative_used"] > 0)
    finally:
        ros.close()
