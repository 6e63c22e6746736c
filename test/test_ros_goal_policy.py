"""A second goal while one runs: reject, queue and preempt on the real action server."""

from __future__ import annotations

import pytest

pytest.importorskip("step_planner_interfaces", reason="build the interfaces first: make interfaces")

from ros_support import PLANS, TASK, RosHarness, ScriptedPlans, wait_for, wait_until  # noqa: E402

from step_planner_interfaces.action import ExecuteTask  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.timeout(120)]
R = ExecuteTask.Result
SECOND = "put the cup on the tray"


def _busy_node(policy: str):
    handler = ScriptedPlans(PLANS)
    ros = RosHarness(handler, goal_policy=policy)
    handler.hold()
    first = ros.send(TASK)
    wait_until(handler.waiting.is_set)  # the first goal is planning
    return ros, handler, first


def test_reject_policy_answers_busy_and_keeps_the_first_goal():
    ros, handler, first = _busy_node("reject")
    try:
        second = wait_for(ros.send(SECOND).get_result_async()).result
        assert second.error_code == R.BUSY and "busy" in second.error_msg
        handler.release()
        assert wait_for(first.get_result_async()).result.success
    finally:
        handler.release()
        ros.close()


def test_queue_policy_runs_the_second_goal_after_the_first():
    ros, handler, first = _busy_node("queue")
    try:
        second = ros.send(SECOND)
        handler.release()
        r1 = wait_for(first.get_result_async()).result
        r2 = wait_for(second.get_result_async(), timeout=30).result
        assert r1.success and r2.success, (r1.error_msg, r2.error_msg)
        assert r2.final_tree.stamp.sec * 10**9 + r2.final_tree.stamp.nanosec >= (
            r1.final_tree.stamp.sec * 10**9 + r1.final_tree.stamp.nanosec)
        assert [p.split(" -> ")[0] for p in r2.executed_primitives] == [
            "pick(object=cup)", "place(object=cup, target=tray)"]
    finally:
        handler.release()
        ros.close()


def test_preempt_policy_cancels_the_running_goal():
    ros, handler, first = _busy_node("preempt")
    try:
        second = ros.send(SECOND)
        handler.release()
        r1 = wait_for(first.get_result_async()).result
        r2 = wait_for(second.get_result_async(), timeout=30).result
        assert r1.error_code == R.CANCELED and "preempted by goal" in r1.error_msg
        assert r2.success, r2.error_msg
    finally:
        handler.release()
        ros.close()
