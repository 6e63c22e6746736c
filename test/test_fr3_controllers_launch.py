"""launch/fr3_controllers.launch.py, read without franka_ros2: what it would start, and that the controller, action
and joint names agree across the launch file, the controllers file it loads (config/ros2_controllers_fr3.yaml), the
boundary the node's backend uses (config/robot_boundary.yaml, fr3) and the MuJoCo robot that stands in for the arm.

Loaded against fake_launch's ``launch`` stand-in with an ament index holding franka_ros2's packages and a ``xacro``
module that names the robot, as test/test_franka_launch.py does for franka.launch.py.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest
import yaml
from fake_launch import Context, Node, fake_launch, load_launch_file, run

from step_planner.execution.controllers.config import BoundaryConfig
from step_planner.execution.sim.controller_emulation import TrajectoryParams
from step_planner.ros.mujoco_robot import load_controllers
from step_planner.ros.parameters import SPECS

ROOT = Path(__file__).resolve().parents[1]
FILE = ROOT / "launch" / "fr3_controllers.launch.py"
INSTALLED = {"franka_bringup", "franka_description", "franka_hardware", "franka_gripper", "controller_manager",
             "joint_trajectory_controller", "joint_state_broadcaster", "robot_state_publisher",
             "joint_state_publisher", "xacro", "franka_robot_state_broadcaster"}
BOUNDARY = BoundaryConfig.load(ROOT / "config" / "robot_boundary.yaml", "fr3")


def fake_xacro(calls: list) -> types.ModuleType:
    """xacro.process_file recording (file, mappings), returning a document that names the robot."""
    document = types.SimpleNamespace(toprettyxml=lambda indent="": '<robot name="fr3"/>')
    module = types.ModuleType("xacro")
    module.process_file = lambda path, mappings=None: calls.append((Path(path).name, dict(mappings or {}))) or document
    return module


def launch(tmp_path: Path, arguments: dict[str, str], installed: set[str] = INSTALLED):
    """(every entity launch_setup returned, the nodes started, the error, the xacro calls)."""
    calls: list = []
    for package in installed:
        (tmp_path / "share" / package).mkdir(parents=True, exist_ok=True)
    sys.modules.pop("xacro", None)  # fake_launch leaves a provided module imported: this call's must be used
    with fake_launch(tmp_path, installed=installed, provided={"xacro": fake_xacro(calls)}):
        module = load_launch_file(FILE)
        started, error = run(module.generate_launch_description(), arguments)
        entities = []
        if error is None:
            context = Context(arguments)
            for a in module.generate_launch_description().entities:
                if type(a).__name__ == "DeclareLaunchArgument" and a.name not in context.launch_configurations:
                    context.launch_configurations[a.name] = a.default_value
            entities = module.launch_setup(context)
    sys.modules.pop("xacro", None)  # nor leak ours into the next test
    return entities, started, error, calls


def by_executable(nodes: list, executable: str) -> list:
    return [n for n in nodes if isinstance(n, Node) and n.executable == executable]


def test_it_brings_up_the_fr3_and_the_node_on_the_controllers_backend(tmp_path):
    entities, started, error, xacro = launch(tmp_path, {"robot_ip": "172.16.0.2"})
    assert error is None, error
    (node,) = by_executable(started, "step_planner_node")
    assert {"backend": "controllers", "controllers.robot": "fr3", "controllers.fake_hardware": False} in node.parameters
    assert {"backend", "controllers.robot", "controllers.fake_hardware"} <= set(SPECS)
    expected = ("franka_arm.urdf.xacro", {"hand": "true", "robot_type": "fr3", "ee_id": "franka_hand",
                                          "robot_ip": "172.16.0.2", "use_fake_hardware": "false",
                                          "fake_sensor_commands": "false"})
    assert xacro and all(call == expected for call in xacro)  # once per run of launch_setup
    # franka_gripper's node as gripper.launch.py:25-51 starts it: the arm's address, fr3_finger_joint1/2
    (gripper,) = by_executable(started, "franka_gripper_node")
    assert gripper.package == "franka_gripper" and gripper.node_name == "franka_gripper"
    assert gripper.parameters[0] == {"robot_ip": "172.16.0.2", "joint_names": ["fr3_finger_joint1",
                                                                               "fr3_finger_joint2"]}


def test_controller_action_and_joint_names_agree_across_launch_config_and_client(tmp_path):
    _, started, error, _ = launch(tmp_path, {"robot_ip": "172.16.0.2"})
    assert error is None, error
    (control,) = by_executable(started, "ros2_control_node")
    controllers_file = Path(control.parameters[1])
    assert controllers_file.resolve() == (ROOT / "config" / "ros2_controllers_fr3.yaml").resolve()  # ours, shipped
    assert ("joint_states", "franka/joint_states") in control.kwargs["remappings"]
    data = yaml.safe_load(controllers_file.read_text())
    types = data["controller_manager"]["ros__parameters"]
    spawned = [n.kwargs["arguments"][0] for n in by_executable(started, "spawner")]
    assert spawned == ["fr3_arm_controller", "joint_state_broadcaster", "franka_robot_state_broadcaster"]
    assert all(name in types for name in spawned)
    assert types["fr3_arm_controller"]["type"] == "joint_trajectory_controller/JointTrajectoryController"
    # the backend's action is the spawned controller's (JTC serves /<name>/follow_joint_trajectory, JTC.cpp:1054-1060)
    assert BOUNDARY.arm.action == f"/{spawned[0]}/follow_joint_trajectory"
    arm = data["fr3_arm_controller"]["ros__parameters"]
    assert tuple(arm["joints"]) == BOUNDARY.arm.joints
    assert arm["command_interfaces"] == ["effort"] and set(arm["gains"]) == set(arm["joints"])  # JTC's PD needs them
    # franka_gripper's node (gripper.launch.py:42-50) is the one whose actions the backend uses
    assert BOUNDARY.gripper.server == "franka_gripper" and BOUNDARY.gripper.node == "/franka_gripper"
    (merge,) = by_executable(started, "joint_state_publisher")
    assert merge.parameters[0]["source_list"] == ["franka/joint_states", "franka_gripper/joint_states"]
    assert BOUNDARY.joint_states == "/joint_states"  # joint_state_publisher's merged output
    # the MuJoCo robot serving robot:=fr3 reads the same file for the same names
    params, _ = load_controllers(controllers_file, BOUNDARY.arm.action, BOUNDARY.gripper.action, franka=True)
    assert isinstance(params, TrajectoryParams) and params.joints == BOUNDARY.arm.joints and params.effort_command


def test_without_an_address_nothing_starts(tmp_path):
    _, started, error, _ = launch(tmp_path, {"robot_ip": ""})  # franka_bringup's default: 172.16.0.3
    assert started == [] and "robot_ip:=" in str(error)


def test_without_franka_ros2_nothing_starts_and_one_line_names_the_packages(tmp_path):
    _, started, error, _ = launch(tmp_path, {"robot_ip": "172.16.0.2"}, installed={"robot_state_publisher"})
    assert started == [] and "ros-jazzy-franka-gripper" in str(error) and "\n" not in str(error)


@pytest.mark.parametrize("argument", ["backend", "approval_mode", "confirm_goal", "robot_ip", "offline"])
def test_its_arguments_are_shown(tmp_path, argument):
    with fake_launch(tmp_path, installed=set()):
        shown = {a.name for a in load_launch_file(FILE).generate_launch_description().get_launch_arguments()}
    assert argument in shown
