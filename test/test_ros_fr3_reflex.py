"""A reflex through the node: the node (controllers backend, robot fr3) and the MuJoCo FR3 in its own process, over
real DDS. A reflex stops the FR3 mid-goal; the goal ends naming the stop; the next goal is refused saying why;
`step-planner recover` (the node's ~/recover) runs franka_ros2's three steps and says what it did; then a goal
succeeds. With auto_recover the node recovers by itself after the reflex."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from robot_support import RobotProcess, inject_fault, load_world
from ros_support import PLANS as SCRIPTED
from ros_support import RosHarness, ScriptedPlans, wait_for

from step_planner.domain.scene import load_scene
from step_planner.resources import config_path
from step_planner_interfaces.action import ExecuteTask

pytestmark = [pytest.mark.ros, pytest.mark.sim, pytest.mark.timeout(400)]
R = ExecuteTask.Result
CUP = "put the cup on the tray"


def call_recover(ros) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "step_planner.cli", "recover", "--node", ros.name, "--wait", "20"],
                          capture_output=True, text=True, timeout=120, env=dict(os.environ))


@pytest.fixture(scope="module")
def robot():
    with RobotProcess(scene="drawer_desk", robot="fr3") as process:
        yield process


def test_a_reflex_ends_the_goal_naming_it_refuses_the_next_and_recover_brings_the_fr3_back(robot):
    ros = RosHarness(ScriptedPlans(SCRIPTED), backend="controllers", scene="drawer_desk",
                     **{"controllers.robot": "fr3"})
    try:
        done = call_recover(ros)  # connects the backend; nothing is stopped yet
        assert done.returncode == 0 and "nothing to recover" in done.stdout, done.stderr
        inject_fault(ros.node._persistent_executor.connection, "reflex", "cartesian_reflex")
        result = wait_for(ros.send(CUP).get_result_async(), 180.0).result
        assert result.error_code == R.EXECUTION_FAILED
        assert "the FR3 stopped: " in result.error_msg and "(reflex" in result.error_msg
        assert "the controllers are inactive (joint_state_broadcaster, franka_robot_state_broadcaster, " \
               "fr3_arm_controller, FrankaHardwareInterface unconfigured)" in result.error_msg

        refused = wait_for(ros.send(CUP).get_result_async(), 60.0).result
        assert refused.error_code == R.EXECUTION_FAILED and refused.executed_primitives == []
        assert refused.error_msg.startswith("the FR3 stopped: ") and "step-planner recover" in refused.error_msg

        done = call_recover(ros)
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stdout.startswith("recovered in ")
        for step in ("1. error recovery: /action_server/error_recovery succeeded", "2. FrankaHardwareInterface active",
                     "3. activated joint_state_broadcaster, franka_robot_state_broadcaster, fr3_arm_controller",
                     "controllers active and joint states moving again",
                     "franka_robot_state_broadcaster: last_motion_errors cartesian_reflex"):
            assert step in done.stdout, done.stdout

        result = wait_for(ros.send(CUP).get_result_async(), 240.0).result
        assert result.success, result.error_msg
    finally:
        ros.close()


def test_with_auto_recover_the_node_recovers_after_the_goal_the_reflex_ended(robot):
    ros = RosHarness(ScriptedPlans(SCRIPTED), backend="controllers", scene="drawer_desk",
                     **{"controllers.robot": "fr3", "auto_recover": True})
    try:
        assert call_recover(ros).returncode == 0
        connection = ros.node._persistent_executor.connection
        load_world(connection, load_scene(config_path("scenes", "drawer_desk.yaml")))  # the cup back on the table
        inject_fault(connection, "reflex", "joint_reflex")
        result = wait_for(ros.send(CUP).get_result_async(), 180.0).result
        assert result.error_code == R.EXECUTION_FAILED and "the FR3 stopped: " in result.error_msg
        assert "; auto_recover: recovered in " in result.error_msg and "last_motion_errors joint_reflex" \
            in result.error_msg
        assert ros.node._robot_stop_now() is None
    finally:
        ros.close()
