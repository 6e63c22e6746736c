"""The node with the controllers backend and the MuJoCo robot, each in its own process, over real DDS: a goal
runs through the robot's actions; the robot killed mid-goal ends the goal EXECUTION_FAILED naming the lost
action server, the node stays up and serves the next goal once the robot is back."""

from __future__ import annotations

import time

import pytest
from robot_support import RobotProcess
from ros_support import DRAWER_PRIMITIVES, PLANS, TASK, RosHarness, ScriptedPlans, wait_for, wait_until

from step_planner_interfaces.action import ExecuteTask

pytestmark = [pytest.mark.ros, pytest.mark.sim, pytest.mark.timeout(300)]
R = ExecuteTask.Result


def test_robot_killed_mid_goal_fails_the_goal_naming_the_server_and_the_node_serves_the_next_one():
    robot = RobotProcess(scene="drawer_desk").start()
    ros = RosHarness(ScriptedPlans(PLANS), backend="controllers", scene="drawer_desk")
    try:
        feedback: list = []
        handle = ros.send(TASK, feedback=feedback)
        wait_until(lambda: any(f.leaves_done >= 1 for f in feedback), 120.0)  # the drawer is open: the arm works
        robot.kill()
        killed = time.monotonic()
        result = wait_for(handle.get_result_async(), 60.0).result
        assert result.error_code == R.EXECUTION_FAILED, result.error_msg
        assert "/panda_arm_controller/follow_joint_trajectory" in result.error_msg
        assert time.monotonic() - killed < 5.0 + 6.0  # state_stale_s, well within the trajectory's timeout

        # the robot is still gone: a goal ends at once with the reason, the node is up
        result = wait_for(ros.send(TASK).get_result_async(), 30.0).result
        assert result.error_code == R.EXECUTION_FAILED and "no joint state" in result.error_msg

        robot = RobotProcess(scene="drawer_desk").start()  # back, in its initial world
        restarted = time.monotonic()
        connection = ros.node._persistent_executor.connection
        # back = its joint states heard again and both servers discovered; the goal goes at once. CI met "no joint
        # state for 1.0 s" here when the robot came back quickly: no state was missing, the backend counted the robot
        # as back only a state_stale_s after the loss and repeated the loss's message (test/test_robot_recovery.py)
        wait_until(lambda: (j := connection.joints()) is not None and j.received > restarted
                   and connection.lost() is None and not connection.missing_servers(), 60.0)
        result = wait_for(ros.send(TASK).get_result_async(), 240.0).result
        assert result.success, result.error_msg
        assert [p.rsplit(" -> ", 1)[0] for p in result.executed_primitives] == DRAWER_PRIMITIVES
    finally:
        ros.close()
        robot.close()

