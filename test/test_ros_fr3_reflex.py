"""A reflex through the node: the node (controllers backend, robot fr3) and the MuJoCo FR3 in its own process, over
real DDS. A reflex stops the FR3 mid-goal; the goal ends naming the stop; the next goal is refused saying why;
`step-planner recover` (the node's ~/recover) runs franka_ros2's three steps and says what it did; then a goal
succeeds. With auto_recover the node recovers by itself after the reflex. The rehearsal of docs/reflex_rehearsal.md
runs every step through the command line: `step-planner fault reflex`, `send`, `recover`, `send`."""

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


def cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """``step-planner ARGS`` in a process of its own, as a person types it."""
    return subprocess.run([sys.executable, "-m", "step_planner.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ), stdin=subprocess.DEVNULL)


def call_recover(ros) -> subprocess.CompletedProcess:
    return cli("recover", "--node", ros.name, "--wait", "20")


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


def test_a_reflex_rehearsed_from_the_command_line_fault_send_recover_send(robot):
    """docs/reflex_rehearsal.md: `step-planner fault reflex`, a goal ends naming the reflex, the next is refused until
    `step-planner recover`, then a goal SUCCEEDED; every step through the command line's own entry points."""
    ros = RosHarness(ScriptedPlans(SCRIPTED), backend="controllers", scene="drawer_desk",
                     **{"controllers.robot": "fr3"})
    try:
        assert call_recover(ros).returncode == 0  # connects the backend; nothing to recover
        load_world(ros.node._persistent_executor.connection, load_scene(config_path("scenes", "drawer_desk.yaml")))
        nobody = cli("fault", "reflex", "--robot-node", "/nobody_here", "--wait", "1")
        assert nobody.returncode == 2 and "no service /nobody_here/inject_fault" in nobody.stderr, nobody.stderr
        assert cli("fault", "slip").returncode == 2  # a slip needs its object
        wrong = cli("fault", "reflex", "cartesian_reflx")
        assert wrong.returncode == 1 and "did you mean cartesian_reflex?" in wrong.stderr, wrong.stdout + wrong.stderr
        armed = cli("fault", "reflex", "joint_reflex")
        assert armed.returncode == 0, armed.stderr
        assert armed.stdout.startswith("armed: reflex joint_reflex (the next arm goal stops with it"), armed.stdout

        stopped = cli("send", CUP, "--node", ros.name, "--wait", "20", timeout=240)
        assert stopped.returncode == 1, stopped.stdout + stopped.stderr
        assert "outcome: FAILED (EXECUTION_FAILED): the FR3 stopped: " in stopped.stdout, stopped.stdout
        assert "could not observe the world" not in stopped.stdout

        refused = cli("send", CUP, "--node", ros.name, "--wait", "20", timeout=120)
        assert refused.returncode == 1
        assert "outcome: FAILED (EXECUTION_FAILED): the FR3 stopped: " in refused.stdout, refused.stdout
        assert "step-planner recover" in refused.stdout

        done = call_recover(ros)
        assert done.returncode == 0 and done.stdout.startswith("recovered in "), done.stdout + done.stderr
        assert "last_motion_errors joint_reflex" in done.stdout, done.stdout

        succeeded = cli("send", CUP, "--node", ros.name, "--wait", "20", timeout=300)
        assert succeeded.returncode == 0, succeeded.stdout + succeeded.stderr
        assert "outcome: SUCCESS" in succeeded.stdout
    finally:
        ros.close()


def test_a_fault_armed_before_a_scene_load_fires_at_the_next_goal_and_the_load_says_so(robot):
    """~/load_scene keeps an armed reflex (and says so): it fires at the next goal, not silently lost."""
    ros = RosHarness(ScriptedPlans(SCRIPTED), backend="controllers", scene="drawer_desk",
                     **{"controllers.robot": "fr3", "auto_recover": True})
    try:
        done = call_recover(ros)
        assert done.returncode == 0, done.stdout + done.stderr
        connection = ros.node._persistent_executor.connection
        armed = cli("fault", "reflex")  # the default: cartesian_reflex
        assert armed.returncode == 0, armed.stdout + armed.stderr
        from step_planner.execution.controllers.connection import SERVICE_RESEND_S
        from step_planner_interfaces.srv import LoadScene

        answer = connection.call_service(LoadScene, "/mujoco_robot/load_scene",
                                         LoadScene.Request(scene="drawer_desk", request_id="keep-" + ros.name[-8:]),
                                         resend_s=SERVICE_RESEND_S)
        assert answer.success and "still armed: reflex cartesian_reflex" in answer.message, answer.message
        result = wait_for(ros.send(CUP).get_result_async(), 180.0).result
        assert result.error_code == R.EXECUTION_FAILED and "the FR3 stopped: " in result.error_msg, \
            (result.error_code, result.error_msg, result.executed_primitives)
        assert "last_motion_errors cartesian_reflex" in result.error_msg, result.error_msg
    finally:
        ros.close()
