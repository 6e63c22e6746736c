"""`step-planner hmi`'s ROS client against the real node (loopback DDS), without a browser: a goal's feedback,
tree and result reach the page's state with every field the interfaces define, and a goal whose node goes
away ends LOST instead of keeping the pages from sending another."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

pytest.importorskip("step_planner_interfaces", reason="build the interfaces first: make interfaces")

from ros_support import PLANS, TASK, RosHarness, ScriptedPlans, wait_until  # noqa: E402

from step_planner.hmi import ros_link  # noqa: E402
from step_planner.hmi.session import HmiState  # noqa: E402
from step_planner.llm.loopback import LoopbackServer  # noqa: E402
from step_planner_interfaces.action import ExecuteTask  # noqa: E402
from step_planner_interfaces.msg import SubgoalNode  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.timeout(120)]


def test_a_goal_reaches_the_state_with_every_field():
    ros = RosHarness(ScriptedPlans(PLANS))
    state = HmiState(ros.name)
    link = ros_link.RosLink(state, ros.name)
    try:
        wait_until(lambda: state.server_ready)
        state.begin(TASK)
        link.send_goal(TASK)
        wait_until(lambda: state.result is not None, timeout=60)
        snap = state.snapshot()
        assert snap["result"]["status"] == "SUCCEEDED" and snap["result"]["error"] == "NONE"
        assert len(snap["result"]["executed_primitives"]) == 6 and "final_tree" not in snap["result"]
        assert all(c["holds"] for c in snap["result"]["conditions"])
        wait_until(lambda: state.feedback.get("leaves_done") == 6)
        assert set(state.feedback) == set(ExecuteTask.Feedback.get_fields_and_field_types())
        wait_until(lambda: state.tree is not None and state.tree["nodes"][0]["status"] == "succeeded")
        assert set(state.tree["nodes"][0]) == set(SubgoalNode.get_fields_and_field_types())
        assert [line for line in snap["log"] if line.startswith("ran ")][:1] == [
            "ran open_drawer(drawer=drawer) -> SUCCESS"]
        assert link.cancel() == (False, "no goal sent from this page is running")
        # the table's picture from the node's ~/scene_json: the tape and the screwdriver shut in the drawer
        wait_until(lambda: 'data-object="tape"' in state.picture and 'data-location="drawer"' in state.picture)
        assert state.scene["schema"] == "step_planner/scene/v1"
        assert {o["name"]: o["location"] for o in state.scene["objects"]}["screwdriver"] == "drawer"
        assert state.camera is None and link.camera_topic == f"{ros.name}/sim/camera/image/compressed"
        assert snap["words"]["outcome"]["headline"].startswith("Done: ")
    finally:
        link.close()
        ros.close()


def test_a_goal_whose_node_goes_away_ends_lost(monkeypatch, tmp_path):
    monkeypatch.setattr(ros_link, "LOST_AFTER_S", 2.0)
    handler = ScriptedPlans(PLANS)
    handler.hold()  # the model "thinks": the goal runs until the node is killed
    server = LoopbackServer(handler).start()
    name = f"step_planner_lost_{os.getpid()}"
    # Killed, the node says no goodbye: the others drop it when its lease ends, 20 s by Fast DDS's default (and then
    # the page waits LOST_AFTER_S more). The test gives it a 2 s lease: the page's rule is the same, sooner.
    env = {**os.environ, "FASTRTPS_DEFAULT_PROFILES_FILE": str(Path(__file__).parent / "data" / "short_lease.xml")}
    node = subprocess.Popen([sys.executable, "-m", "step_planner.cli", "node", "--ros-args", "-r", f"__node:={name}",
                             "-p", f"llm.base_url:={server.base_url}", "-p", "llm.model:=loopback",
                             "-p", f"episodes.folder:={tmp_path}"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env)
    state = HmiState(f"/{name}")
    link = ros_link.RosLink(state, f"/{name}")
    try:
        wait_until(lambda: state.server_ready, timeout=60)
        state.begin(TASK)
        link.send_goal(TASK)
        wait_until(lambda: state.goal.status == "running" and handler.waiting.is_set())
        started = time.monotonic()
        node.kill()  # no result will ever come
        wait_until(lambda: not state.busy, timeout=60)
        assert state.result["status"] == "LOST" and "went away" in state.result["error_msg"], state.result
        assert time.monotonic() - started < 15  # the lease, then LOST_AFTER_S, on a loaded machine
        state.begin("put the cup on the tray")  # the pages may send again
    finally:
        link.close()
        node.kill()
        node.wait(10)
        handler.release()
        server.close()


def test_a_goal_whose_accepted_answer_was_lost_is_followed_to_its_result():
    """The node runs the page's goal but its "accepted" answer never arrives (rmw_fastrtps dropped it): the link
    finds the goal on the action's status topic and the page gets its result, instead of showing it sending while
    it runs (as ``step-planner send`` does, test_ros_cli.py)."""
    from losing_action import AnswerLosingServer

    node = f"/losing_{uuid.uuid4().hex[:6]}"
    server = AnswerLosingServer(ExecuteTask, f"{node}/execute_task", run_s=0.5)
    state = HmiState(node)
    link = ros_link.RosLink(state, node)
    try:
        wait_until(lambda: state.server_ready, timeout=30)
        state.begin(TASK)
        link.send_goal(TASK)
        wait_until(lambda: state.result is not None, timeout=30)
        assert len(server.goals) == 1
        assert state.goal.goal_id == next(iter(server.goals)).hex()
        assert state.result["status"] == "SUCCEEDED", state.result
    finally:
        link.close()
        server.close()
