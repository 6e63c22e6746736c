"""gazebo.launch.py and the Gazebo-ready Panda, checked statically (no Gazebo here): controller names, action names,
joint names and topics agree across the launch file, config/gazebo/panda_gazebo.urdf.xacro,
config/ros2_controllers_panda.yaml, config/robot_boundary.yaml and the client (RobotConnection), and the launch
starts what its docstring says with the world exported from the scene."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import yaml
from fake_launch import Context, Node, fake_launch, load_launch_file

from step_planner.execution.controllers.config import BoundaryConfig

ROOT = Path(__file__).resolve().parents[1]
XACRO = ROOT / "config" / "gazebo" / "panda_gazebo.urdf.xacro"
CONTROLLERS_FILE = ROOT / "config" / "ros2_controllers_panda.yaml"
XACRO_NS = "{http://www.ros.org/wiki/xacro}"
JTC = "joint_trajectory_controller/JointTrajectoryController"
GRIPPER = "position_controllers/GripperActionController"
INSTALLED = {"ros_gz_sim", "ros_gz_bridge", "gz_ros2_control", "robot_state_publisher", "controller_manager", "xacro",
             "joint_trajectory_controller", "gripper_controllers", "joint_state_broadcaster",
             "moveit_resources_panda_description"}


def controllers() -> dict:
    data = yaml.safe_load(CONTROLLERS_FILE.read_text())
    types = {k: v["type"] for k, v in data["controller_manager"]["ros__parameters"].items() if isinstance(v, dict)}
    return {"types": types, "params": {k: data.get(k, {}).get("ros__parameters", {}) for k in types}}


def xacro_joints() -> dict[str, dict]:
    """The <ros2_control> joints of the xacro, its macro calls expanded: command and state interfaces, initial value."""
    root = ET.parse(XACRO).getroot()
    (block,) = root.findall("ros2_control")
    joints = {}
    for el in block:
        if el.tag == f"{XACRO_NS}commanded_joint":
            joints[el.get("name")] = {"command": ["position"], "state": ["position", "velocity"],
                                      "initial": float(el.get("initial"))}
        elif el.tag == "joint":
            joints[el.get("name")] = {
                "command": [c.get("name") for c in el.findall("command_interface")],
                "state": [s.get("name") for s in el.findall("state_interface")],
                "initial": float(el.find("state_interface/param[@name='initial_value']").text)}
    (macro,) = root.findall(f"{XACRO_NS}macro")
    assert [c.get("name") for c in macro.findall("joint/command_interface")] == ["position"]
    assert [s.get("name") for s in macro.findall("joint/state_interface")] == ["position", "velocity"]
    return joints


def test_the_controllers_file_serves_the_boundary_the_client_talks_to():
    c = controllers()
    boundary = BoundaryConfig.load(ROOT / "config" / "robot_boundary.yaml", "panda")
    arm = [n for n, t in c["types"].items() if t == JTC]
    grip = [n for n, t in c["types"].items() if t == GRIPPER]
    assert len(arm) == 1 and len(grip) == 1 and "joint_state_broadcaster" in c["types"]
    # action names: <controller>/follow_joint_trajectory (JTC.cpp:1054-1060), <controller>/gripper_cmd (GAC)
    assert boundary.arm.action == f"/{arm[0]}/follow_joint_trajectory"
    assert boundary.gripper.action == f"/{grip[0]}/gripper_cmd"
    assert list(c["params"][arm[0]]["joints"]) == list(boundary.arm.joints)
    assert c["params"][grip[0]]["joint"] in boundary.gripper.joints
    assert boundary.joint_states == "/joint_states"  # joint_state_broadcaster's default topic
    assert boundary.object_poses == "/model_poses"


def test_the_gazebo_panda_claims_the_joints_and_interfaces_the_controllers_use():
    from step_planner.execution.sim.model import FINGER_MAX, HOME_Q

    c = controllers()
    joints = xacro_joints()
    arm = next(n for n, t in c["types"].items() if t == JTC)
    grip = next(n for n, t in c["types"].items() if t == GRIPPER)
    for name in c["params"][arm]["joints"]:
        assert set(c["params"][arm]["command_interfaces"]) <= set(joints[name]["command"]), name
        assert set(c["params"][arm]["state_interfaces"]) <= set(joints[name]["state"]), name
    assert joints[c["params"][grip]["joint"]]["command"] == ["position"]  # position_controllers/GripperAction...
    follower = "panda_finger_joint2"  # the URDF mimic of finger_joint1: state interfaces only (component_parser)
    assert joints[follower]["command"] == [] and "position" in joints[follower]["state"]
    assert np.allclose([joints[f"panda_joint{i}"]["initial"] for i in range(1, 8)], HOME_Q)
    assert joints["panda_finger_joint1"]["initial"] == joints[follower]["initial"] == FINGER_MAX
    root = ET.parse(XACRO).getroot()
    assert root.find("ros2_control/hardware/plugin").text == "gz_ros2_control/GazeboSimSystem"
    plugin = root.find("gazebo/plugin")
    assert (plugin.get("filename"), plugin.get("name")) == ("gz_ros2_control-system",
                                                            "gz_ros2_control::GazeboSimROS2ControlPlugin")
    assert plugin.find("parameters").text == "$(arg controllers_file)"
    (arg,) = [a for a in root.findall(f"{XACRO_NS}arg") if a.get("name") == "controllers_file"]
    assert arg.get("default") == "$(find step_planner)/config/ros2_controllers_panda.yaml"
    world = root.find("joint[@name='world_to_panda']")  # welded to the world, not standing free
    assert world.get("type") == "fixed" and world.find("parent").get("link") == "world"
    assert world.find("child").get("link") == "panda_link0" and root.find("link[@name='world']") is not None
    (include,) = root.findall(f"{XACRO_NS}include")
    assert include.get("filename") == "$(find moveit_resources_panda_description)/urdf/panda.urdf.xacro"


def _setup(tmp_path: Path, request, args: dict[str, str], provided=None) -> list:
    for package in INSTALLED:
        (tmp_path / "share" / package).mkdir(parents=True, exist_ok=True)
    with fake_launch(tmp_path, installed=INSTALLED, provided=provided):
        module = load_launch_file(ROOT / "launch" / "gazebo.launch.py")
        description = module.generate_launch_description()
        context = Context({a.name: a.default_value for a in description.get_launch_arguments()} | args)
        # the unknown-argument check (launch_common.described), then the launch's own setup, in order
        entities = [e for o in description.entities if type(o).__name__ == "OpaqueFunction"
                    for e in o.execute(context) or ()]
    (gazebo,) = [e for e in entities if type(e).__name__ == "IncludeLaunchDescription"]
    world = Path(dict(gazebo.kwargs["launch_arguments"])["gz_args"].split()[-1])
    request.addfinalizer(lambda: shutil.rmtree(world.parent, ignore_errors=True))  # the launch's export folder
    return entities, module


def _nodes(entities) -> list[Node]:
    """Nodes started now and by event handlers (OnProcessExit on_exit lists), in order."""
    out = []
    for e in entities:
        if isinstance(e, Node):
            out.append(e)
        elif type(e).__name__ == "RegisterEventHandler":
            out += _nodes(e.args[0].kwargs.get("on_exit") or ())  # OnShutdown handlers (temporary files) start none
        elif type(e).__name__ == "GroupAction":  # the scope a handler's actions get back (later_in_this_scope)
            out += _nodes(e.actions)
    return out


def test_the_launch_starts_the_world_the_bridge_the_arm_its_controllers_and_the_node(tmp_path, request):
    entities, module = _setup(tmp_path, request, {"scene": "workshop"})
    nodes = _nodes(entities)
    by_exe = {n.executable: n for n in nodes}
    # Gazebo runs the exported world of the scene
    (gazebo,) = [e for e in entities if type(e).__name__ == "IncludeLaunchDescription"]
    gz_args = dict(gazebo.kwargs["launch_arguments"])["gz_args"].split()
    assert gz_args[0] == "-r" and gz_args[-1].endswith("workshop.sdf") and Path(gz_args[-1]).is_file()
    world = ET.parse(gz_args[-1]).getroot().find("world")
    assert world.get("name") == "workshop" and world.find("model[@name='drawer_cabinet']") is not None
    # one bridge: /clock and the model poses onto the boundary's topic
    bridge = by_exe["parameter_bridge"]
    config = yaml.safe_load(Path(bridge.parameters[0]["config_file"]).read_text())
    boundary = BoundaryConfig.load(ROOT / "config" / "robot_boundary.yaml", "panda")
    assert {(e["ros_topic_name"], e["ros_type_name"]) for e in config} == {
        ("/clock", "rosgraph_msgs/msg/Clock"), (boundary.object_poses, "tf2_msgs/msg/TFMessage")}
    assert all(e["direction"] == "GZ_TO_ROS" for e in config)
    # the arm: the package's xacro through robot_state_publisher, spawned from /robot_description
    rsp = by_exe["robot_state_publisher"]
    command = rsp.parameters[0]["robot_description"].args[0].args[0]
    assert command[1].endswith("config/gazebo/panda_gazebo.urdf.xacro") and Path(command[1]).is_file()
    assert by_exe["create"].kwargs["arguments"][:2] == ["-topic", "robot_description"]
    spawned = [n.kwargs["arguments"][0] for n in nodes if n.executable == "spawner"]
    assert spawned == module.CONTROLLERS and set(spawned) == set(controllers()["types"])
    # the node last, with sim time and the controllers backend on the panda boundary
    node = nodes[-1]
    assert node.executable == "step_planner_node"
    # gz_ros2_control's controller manager and the bridge stay in the root namespace under any parent's namespace
    assert {"use_sim_time": True} in node.parameters
    assert {"controllers.robot": "panda", "controllers.namespace": "/"} in node.parameters
    assert all({"use_sim_time": True} in n.parameters for n in (bridge, rsp))
    # the resource path: the Panda description's share parent
    (env,) = [e for e in entities if type(e).__name__ == "SetEnvironmentVariable"]
    assert env.args[0] == "GZ_SIM_RESOURCE_PATH"
    assert str(tmp_path / "share") in env.args[1].split(":")


def test_backend_moveit_adds_move_group_on_the_same_description(tmp_path, request):
    import types

    calls = []

    class Builder:
        def __init__(self, **kwargs):
            calls.append(("init", kwargs))

        def __getattr__(self, name):
            return lambda *args, **kwargs: calls.append((name, kwargs)) or self

        def to_dict(self):
            return {"robot_description": "<robot/>"}

    moveit = types.ModuleType("moveit_configs_utils")
    moveit.MoveItConfigsBuilder = Builder
    installed = {"moveit_ros_move_group", "moveit_configs_utils", "moveit_py", "moveit_resources_panda_moveit_config"}
    global INSTALLED
    saved, INSTALLED = INSTALLED, INSTALLED | installed
    try:
        entities, _ = _setup(tmp_path, request, {"backend": "moveit"}, provided={"moveit_configs_utils": moveit})
    finally:
        INSTALLED = saved
    nodes = _nodes(entities)
    assert [n.executable for n in nodes[-2:]] == ["move_group", "step_planner_node"]
    (description,) = [kw for name, kw in calls if name == "robot_description"]
    assert description["file_path"].endswith("config/gazebo/panda_gazebo.urdf.xacro")


def test_the_launch_no_longer_plays_recorded_joint_states():
    """In Gazebo the arm is moved by gz_ros2_control's controllers: nothing in the launch publishes /joint_states
    besides joint_state_broadcaster, and no second /clock (the bridge's is Gazebo's)."""
    source = (ROOT / "launch" / "gazebo.launch.py").read_text()
    assert "replay_publisher" not in source and "--publish" not in source
    assert source.count("/clock") <= 2  # the docstring only; the bridge config carries it
