"""launch/franka.launch.py robot:=fr3, read without franka_ros2 or MoveIt: what it would start, that its names agree
with config/franka.yaml, and that MoveIt's parameters reach MoveItPy inside the node under a namespace.

The launch file runs against the ``launch`` stand-in of fake_launch with an ament index holding franka_ros2's
packages (a franka_fr3_moveit_config share folder with the two files the launch reads, test/moveit_support.py) and a
``xacro`` module that names the robot. The parameter file it writes is then read by the moveit_py stand-in's
MoveItPy, which keeps only the blocks whose key matches its node's fully qualified name (rcl's rules), and the
backend is started on it with the stand-in servers in the same namespace.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest
import yaml
from fake_launch import Node, fake_launch, load_launch_file, run
from moveit_support import fr3_config_share

from step_planner.execution.moveit.config import FrankaConfig

ROOT = Path(__file__).resolve().parents[1]
FR3 = {"franka_bringup", "franka_description", "franka_fr3_moveit_config", "franka_hardware", "controller_manager",
       "robot_state_publisher", "joint_state_publisher", "xacro", "moveit_py", "franka_gripper",
       "franka_robot_state_broadcaster"}
CFG = FrankaConfig.load(ROOT / "config" / "franka.yaml", robot="fr3")
XACRO: list = []  # (file, mappings) of every xacro.process_file call


def fake_xacro(calls: list) -> types.ModuleType:
    class Document:
        def __init__(self, path: str) -> None:
            self.path = path

        def toprettyxml(self, indent: str = "") -> str:
            return f'<robot name="fr3"><!-- {Path(self.path).name} --></robot>'

    module = types.ModuleType("xacro")
    module.process_file = lambda path, mappings=None: calls.append((Path(path).name, dict(mappings or {}))) or \
        Document(path)
    return module


def launch(tmp_path: Path, arguments: dict[str, str]) -> tuple[list, list, Exception | None]:
    """Run franka.launch.py robot:=fr3: (every entity launch_setup returned, the nodes started, the error)."""
    XACRO.clear()
    fr3_config_share(tmp_path / "share")  # share/franka_fr3_moveit_config/config/...
    for package in FR3:
        (tmp_path / "share" / package).mkdir(parents=True, exist_ok=True)
    with fake_launch(tmp_path, installed=FR3, provided={"xacro": fake_xacro(XACRO)}):
        module = load_launch_file(ROOT / "launch" / "franka.launch.py")
        started, error = run(module.generate_launch_description(), arguments)
        entities = []
        if error is None:
            from fake_launch import Context

            context = Context(arguments)
            for a in module.generate_launch_description().entities:
                if type(a).__name__ == "DeclareLaunchArgument" and a.name not in context.launch_configurations:
                    context.launch_configurations[a.name] = a.default_value
            entities = module.launch_setup(context)
    return entities, started, error


def by_executable(nodes: list, executable: str) -> list:
    return [n for n in nodes if isinstance(n, Node) and n.executable == executable]


def test_fr3_with_the_arm_brings_up_franka_ros2s_pieces_named_as_config_franka_yaml(tmp_path):
    entities, started, error = launch(tmp_path, {"robot_ip": "172.16.0.2"})
    assert error is None, error
    names = [n.executable for n in started]
    assert names.count("spawner") == 3 and {"robot_state_publisher", "ros2_control_node", "joint_state_publisher",
                                             "step_planner_node"} <= set(names)
    spawned = [n.kwargs["arguments"][0] for n in by_executable(started, "spawner")]
    arm_controller = CFG.variant.arm_controller.split("/")[0]
    assert spawned == [arm_controller, "joint_state_broadcaster", "franka_robot_state_broadcaster"]
    (control,) = by_executable(started, "ros2_control_node")
    assert control.parameters[1].endswith("franka_fr3_moveit_config/config/fr3_ros_controllers.yaml")  # upstream's
    assert ("joint_states", "franka/joint_states") in control.kwargs["remappings"]
    (merge,) = by_executable(started, "joint_state_publisher")
    sources = merge.parameters[0]["source_list"]
    assert sources == ["franka/joint_states", f"{CFG.variant.gripper.action}/joint_states"]  # not fr3_gripper
    # franka_gripper's node as its gripper.launch.py:42-51 starts it (robot_ip, fr3 finger joints, its config)
    (gripper,) = by_executable(started, "franka_gripper_node")
    assert gripper.package == "franka_gripper" and gripper.node_name == CFG.variant.gripper.action
    assert gripper.parameters[0] == {"robot_ip": "172.16.0.2", "joint_names": ["fr3_finger_joint1",
                                                                               "fr3_finger_joint2"]}
    assert gripper.parameters[1].endswith("franka_gripper/config/franka_gripper_node.yaml")
    assert by_executable(started, "franka_gripper") == []  # the real node, not this package's mock
    (node,) = by_executable(started, "step_planner_node")
    assert {"moveit.robot": "fr3"} in node.parameters
    (moveit_file,) = [p for p in node.parameters if isinstance(p, Path)]
    params = yaml.safe_load(moveit_file.read_text())["/**"]["ros__parameters"]
    # MoveIt executes the arm through the controller the launch spawned, under the name config/franka.yaml checks
    manager = params["moveit_simple_controller_manager"]
    assert manager["controller_names"] == [arm_controller]
    assert f"{arm_controller}/{manager[arm_controller]['action_ns']}" == CFG.variant.arm_controller
    assert params["robot_description"].startswith('<robot name="fr3">')
    # the descriptions as franka_fr3_moveit_config/launch/moveit.launch.py:82-101 makes them
    assert XACRO[-2:] == [("franka_arm.urdf.xacro", {"hand": "true", "robot_type": "fr3", "ee_id": "franka_hand",
                                                "robot_ip": "172.16.0.2", "use_fake_hardware": "false",
                                                "fake_sensor_commands": "false"}),
                     ("fr3.srdf.xacro", {"hand": "true", "ee_id": "franka_hand"})]
    assert params["robot_description_planning"]["cartesian_limits"]["max_trans_vel"] > 0  # Pilz needs them
    assert set(params["planning_pipelines"]["pipeline_names"]) == {CFG.free_space.pipeline, CFG.cartesian.pipeline}
    for pipeline in params["planning_pipelines"]["pipeline_names"]:
        assert params[pipeline]["planning_plugins"]
    assert CFG.variant.arm_group in params["ompl"]  # franka's ompl_planning.yaml names only Panda groups
    for recipe in (CFG.free_space, CFG.cartesian):
        block = params[recipe.params_namespace]["plan_request_params"]
        assert (block["planning_pipeline"], block["planner_id"]) == (recipe.pipeline, recipe.planner_id)


def test_fr3_with_fake_hardware_serves_the_gripper_and_moves_the_mock_arm_by_position(tmp_path):
    entities, started, error = launch(tmp_path, {"use_fake_hardware": "true"})
    assert error is None, error
    (gripper,) = by_executable(started, "franka_gripper")
    assert gripper.package == "step_planner" and gripper.node_name == CFG.variant.gripper.action
    assert [n.kwargs["arguments"][0] for n in by_executable(started, "spawner")] == [
        CFG.variant.arm_controller.split("/")[0], "joint_state_broadcaster"]
    (control,) = by_executable(started, "ros2_control_node")
    controllers = yaml.safe_load(Path(control.parameters[1]).read_text())["/**"]
    assert controllers["fr3_arm_controller"]["ros__parameters"]["command_interfaces"] == ["position"]
    assert not [e for e in entities if type(e).__name__ == "IncludeLaunchDescription"]


def test_fr3_without_an_address_stops_before_anything_starts(tmp_path):
    _, started, error = launch(tmp_path, {"robot_ip": ""})  # franka_bringup's default is 172.16.0.3 (FBL:228-232)
    assert started == [] and "robot_ip:=" in str(error) and "use_fake_hardware:=true" in str(error)


@pytest.fixture
def moveit_standin(monkeypatch):
    standin = Path(__file__).resolve().parent / "moveit_standin"
    for name in [n for n in sys.modules if n.split(".")[0] in ("moveit", "moveit_msgs", "shape_msgs", "_msg")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.syspath_prepend(str(standin))
    import moveit._standin

    moveit._standin.reset()
    yield moveit._standin
    for name in [n for n in sys.modules if n.split(".")[0] in ("moveit", "moveit_msgs", "shape_msgs", "_msg")]:
        del sys.modules[name]


@pytest.mark.ros
def test_under_a_namespace_moveits_parameters_reach_moveitpy_in_the_node(tmp_path, moveit_standin, library):
    """namespace:=robot1: the node is /robot1/step_planner, MoveItPy's node /robot1/step_planner_moveit. A dict given
    to launch_ros's Node is written under the node's own name once it has a namespace (launch_ros
    actions/node.py:365-377): such a file never reaches MoveItPy. The launch file's ``/**`` file does."""
    from robot_standin import StandInRobot

    from step_planner.domain.scene import load_scene
    from step_planner.execution.errors import BackendUnavailable
    from step_planner.execution.moveit import make_moveit_executor
    from step_planner.ros.moveit_params import load_yaml

    _, started, error = launch(tmp_path, {"use_fake_hardware": "true", "namespace": "robot1"})
    assert error is None, error
    assert {n.kwargs.get("namespace") for n in started} == {"robot1"}
    (node,) = by_executable(started, "step_planner_node")
    (moveit_file,) = [p for p in node.parameters if isinstance(p, Path)]
    params = load_yaml(moveit_file)["/**"]["ros__parameters"]
    as_launch_ros_writes_a_dict = tmp_path / "by_node_name.yaml"
    as_launch_ros_writes_a_dict.write_text(yaml.safe_dump({"/robot1/step_planner": {"ros__parameters": params}}))
    world = load_scene(ROOT / "test" / "data" / "drawer_desk_moveit.yaml")
    servers = StandInRobot(namespace="/robot1")
    try:
        with pytest.raises(BackendUnavailable, match="MoveIt did not start"):
            make_moveit_executor(library, world, robot="fr3", namespace="/robot1",
                                 launch_params_filepaths=[str(as_launch_ros_writes_a_dict)])
        executor = make_moveit_executor(library, world, robot="fr3", namespace="/robot1",
                                        launch_params_filepaths=[str(moveit_file)])
        try:
            made = moveit_standin.LOG.of("MoveItPy")[-1]
            assert made["node_fqn"] == "/robot1/step_planner_moveit" and "robot_description" in made["params"]
            assert executor.arm.link.resolve(CFG.variant.arm_controller) == \
                "/robot1/fr3_arm_controller/follow_joint_trajectory"  # and its gripper is /robot1/franka_gripper
            assert executor.execute(library.parse_call_text("home()")).success
        finally:
            executor.close()
    finally:
        servers.close()
