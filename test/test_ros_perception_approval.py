"""Perception reports reach the planner between primitives; approval mode gates every primitive."""

from __future__ import annotations

import pytest

pytest.importorskip("step_planner_interfaces", reason="build the interfaces first: make interfaces")

from ros_support import PLANS, TASK, RosHarness, ScriptedPlans, section, wait_for, wait_until  # noqa: E402

from step_planner.ros.qos import latched  # noqa: E402
from step_planner_interfaces.msg import ObjectPose, ObjectPoses  # noqa: E402
from step_planner_interfaces.srv import ApproveStep  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.timeout(120)]
STAPLER = "put the stapler on the tray"


def test_an_object_reported_mid_goal_appears_after_the_next_primitive():
    handler = ScriptedPlans({STAPLER: ["open_drawer(drawer)", "pick(stapler)", "place(stapler, tray)"]})
    ros = RosHarness(handler, **{"planner.features": ["-plan_ahead"]})  # ask after every primitive
    try:
        pub = ros.client_node.create_publisher(ObjectPoses, f"{ros.name}/object_poses", 10)
        wait_until(lambda: pub.get_subscription_count() > 0)
        handler.hold()
        handle = ros.send(STAPLER)
        wait_until(handler.waiting.is_set)  # planning started on a world without the stapler
        report = ObjectPose(name="stapler", class_name="stapler", container="drawer")
        report.pose.header.frame_id = "panda_link0"
        report.pose.pose.position.x, report.pose.pose.position.y = 0.62, -0.32
        pub.publish(ObjectPoses(objects=[report]))
        wait_until(lambda: ros.node.perception._pending)
        handler.release()
        result = wait_for(handle.get_result_async()).result
        assert result.success, result.error_msg
        assert [p.split(" -> ")[0] for p in result.executed_primitives] == [
            "open_drawer(drawer=drawer)", "pick(object=stapler)", "place(object=stapler, target=tray)"]
        observations = [section(p, "Current observation") for p in handler.prompts]
        assert "stapler" not in observations[0]
        assert any("object stapler" in o for o in observations[1:])
    finally:
        handler.release()
        ros.close()


def test_a_new_object_without_a_container_is_refused_not_guessed():
    handler = ScriptedPlans({STAPLER: ["pick(stapler)", "place(stapler, tray)"]})
    ros = RosHarness(handler, **{"planner.max_replans_per_node": 1})
    try:
        ros.node.perception.put([])  # nothing pending
        from step_planner.ros.perception import ObjectReport

        ros.node.perception.put([ObjectReport(name="stapler")])
        result = wait_for(ros.send(STAPLER).get_result_async()).result
        assert not result.success
        assert not any(p.startswith("pick(object=stapler)") and p.endswith("SUCCESS")
                       for p in result.executed_primitives)
    finally:
        ros.close()


def test_approval_mode_runs_only_approved_primitives():
    handler = ScriptedPlans(PLANS)
    ros = RosHarness(handler, approval_mode=True)
    try:
        approve = ros.client_node.create_client(ApproveStep, f"{ros.name}/approve_step")
        assert approve.wait_for_service(timeout_sec=15)
        idle = wait_for(approve.call_async(ApproveStep.Request(approve=True)))
        assert not idle.accepted and "no primitive is waiting" in idle.message
        pending = []
        from std_msgs.msg import String

        ros.client_node.create_subscription(String, f"{ros.name}/pending_step", lambda m: pending.append(m.data),
                                            latched())
        # depth 1: a subscription matched only after the first primitive was approved would never see it
        wait_until(lambda: ros.node._pending_pub.get_subscription_count() > 0)
        handle = ros.send(TASK)
        answers = []
        result_future = handle.get_result_async()
        while not result_future.done():
            wait_until(lambda: ros.node.approval.pending or result_future.done())
            step, asked = ros.node.approval.pending, ros.node.approval.asked
            if step is None:
                continue
            refuse = step == "pick(object=tape)" and not any(r for _, _, r in answers)
            wait_until(lambda s=step: s in pending)  # as an operator would: see the step, then answer
            reply = wait_for(approve.call_async(ApproveStep.Request(approve=not refuse, reason="not now")))
            answers.append((step, reply.accepted, refuse))
            # the same primitive may be proposed again at once after a refusal: wait for the next request
            wait_until(lambda n=asked: ros.node.approval.asked > n or result_future.done())
        result = result_future.result().result
        assert ("pick(object=tape)", True, True) in answers
        assert "pick(object=tape) -> REJECTED" in result.executed_primitives
        rejected = [n for n in result.final_tree.nodes if n.outcome_code == "REJECTED"]
        assert rejected and "refused by the operator: not now" in rejected[0].outcome_message
        assert "open_drawer(drawer=drawer)" in pending
        approved = [s for s, ok, refused in answers if ok and not refused]
        assert [p.split(" -> ")[0] for p in result.executed_primitives if p.endswith("SUCCESS")] == approved
    finally:
        handler.release()
        ros.close()
