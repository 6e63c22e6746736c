"""The FR3 in a namespace (issue 45, part 2): the MuJoCo robot as an FR3 under /arm1 serves franka_gripper, the
controller manager's services, the error recovery action and the robot state under it, as franka_bringup's
``namespace:=arm1`` does; the controllers backend of a node in /arm1 moves the arm, notices a reflex and recovers
it through upstream's three steps, all under /arm1, with its helper node beside the node."""

from __future__ import annotations

import pytest
from robot_support import RobotProcess
from test_fr3_reflex import past_joint6_limit

from step_planner.domain.primitives import PrimitiveLibrary
from step_planner.domain.scene import load_scene
from step_planner.execution.base import ExecCode
from step_planner.execution.factory import make_executor
from step_planner.resources import config_path

pytestmark = [pytest.mark.ros, pytest.mark.sim, pytest.mark.timeout(300)]


def test_an_fr3_under_a_namespace_moves_stops_and_recovers_there():
    from controller_manager_msgs.srv import ListControllers

    lib = PrimitiveLibrary.load(config_path("primitives.yaml"))
    with RobotProcess(scene="drawer_desk", robot="fr3", namespace="arm1") as robot:
        ex = make_executor("controllers", lib, load_scene(config_path("scenes", "drawer_desk.yaml")), robot="fr3",
                           namespace="/arm1", node_name="step_planner_controllers",
                           load_scene="/arm1/mujoco_robot/load_scene")
        try:
            node = ex.connection.node
            assert (node.get_name(), node.get_namespace()) == ("step_planner_controllers", "/arm1")
            assert ex.config.arm.action == "/arm1/fr3_arm_controller/follow_joint_trajectory"
            assert ex.config.gripper.node == "/arm1/franka_gripper"
            assert ex.robot_stop(refresh=True) is None
            assert past_joint6_limit(ex).status == "aborted"  # from home, as test_fr3_reflex does
            why = ex.robot_stop(refresh=True)
            assert why is not None and why.startswith("the FR3 stopped: joint_position_limits_violation")
            controllers = ex.connection.call_service(ListControllers, "/arm1/controller_manager/list_controllers",
                                                     ListControllers.Request()).controller
            assert {c.state for c in controllers} == {"inactive"}
            report = ex.recover()  # upstream's three steps, the action under /arm1
            steps = ("1. error recovery: /arm1/action_server/error_recovery succeeded; 2. FrankaHardwareInterface "
                     "active; 3. activated joint_state_broadcaster, franka_robot_state_broadcaster, fr3_arm_controller")
            assert report.ok and steps in report.message, report.message
            assert ex.robot_stop(refresh=True) is None
            # the arm back home through /arm1/mujoco_robot/load_scene; then a primitive moves it under /arm1
            ex.reset(load_scene(config_path("scenes", "drawer_desk.yaml")))
            outcome = ex.execute(lib.parse_call_text("open_drawer(drawer=drawer)"))
            assert outcome.code is ExecCode.SUCCESS, outcome.message
        finally:
            ex.close()
        assert "/arm1/fr3_arm_controller/follow_joint_trajectory" in robot.output()
