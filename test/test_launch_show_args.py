"""``ros2 launch step_planner <file> --show-args`` works without MoveIt, and a missing dependency stops a launch
before anything started, in one line naming what to install (issue 23).

``launch`` itself is not installable here, so the files are loaded the way ``ros2 launch`` loads them, against
the stand-in of ``fake_launch`` (MoveIt, Gazebo and ros2_control modules missing unless a test provides them)
and an ament index holding exactly the ROS packages a test says are installed.
"""

from __future__ import annotations

import ast
import sys
import types
from pathlib import Path

import pytest
from fake_launch import LOGGED, fake_launch, load_launch_file, run

ROOT = Path(__file__).resolve().parents[1]
LAUNCH_FILES = sorted((ROOT / "launch").glob("*.launch.py"))
COMMON = ROOT / "step_planner" / "ros" / "launch_common.py"
MOVEIT = {"moveit_configs_utils", "moveit_py", "moveit_resources_panda_moveit_config"}
FR3 = {"franka_bringup", "franka_description", "franka_fr3_moveit_config", "franka_hardware", "controller_manager",
       "robot_state_publisher", "joint_state_publisher", "xacro", "moveit_py"}  # franka.launch.py robot:=fr3
GAZEBO = {"ros_gz_sim", "ros_gz_bridge", "gz_ros2_control", "robot_state_publisher", "controller_manager", "xacro",
          "joint_trajectory_controller", "gripper_controllers", "joint_state_broadcaster",
          "moveit_resources_panda_description"}


def _declared(tree: ast.AST) -> set[str]:
    return {node.args[0].value for node in ast.walk(tree)
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) ==
            "DeclareLaunchArgument" and isinstance(node.args[0], ast.Constant)}


def declared_in_source(path: Path) -> set[str]:
    """Every DeclareLaunchArgument name written in the file or in the launch_common functions it calls."""
    tree = ast.parse(path.read_text())
    called = {getattr(n.func, "id", "") for n in ast.walk(tree) if isinstance(n, ast.Call)}
    names = _declared(tree)
    for function in ast.parse(COMMON.read_text()).body:
        if isinstance(function, ast.FunctionDef) and function.name in called:
            names |= _declared(function)
    return names


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
def test_show_args_lists_every_argument_without_moveit(path: Path, tmp_path: Path):
    with fake_launch(tmp_path, installed=set()):
        description = load_launch_file(path).generate_launch_description()
        shown = {a.name for a in description.get_launch_arguments()}
    assert {"backend", "offline", "params_file", "llm_model"} <= shown
    # nothing is declared where --show-args cannot see it (inside an OpaqueFunction)
    assert shown == declared_in_source(path)


def test_a_module_level_moveit_import_would_fail_to_load(tmp_path: Path):
    """The stand-in really refuses MoveIt: the check above can fail."""
    bad = tmp_path / "bad.launch.py"
    bad.write_text("from moveit_configs_utils import MoveItConfigsBuilder\n"
                   + (ROOT / "launch" / "step_planner.launch.py").read_text())
    with fake_launch(tmp_path / "prefix"), pytest.raises(ModuleNotFoundError, match="moveit_configs_utils"):
        load_launch_file(bad)


def one_line(exc: BaseException | None) -> str:
    assert exc is not None, "the launch went on without the dependency"
    text = str(exc)
    assert "\n" not in text, text
    return text


@pytest.mark.parametrize("name, needs, args", [
    ("franka.launch.py", FR3, {}),
    ("gazebo.launch.py", GAZEBO | MOVEIT | {"moveit_ros_move_group"}, {"backend": "moveit"}),
    ("gazebo.launch.py", GAZEBO, {})])
def test_without_moveit_nothing_starts_and_one_line_names_the_packages(name: str, needs: set[str], args, tmp_path):
    with fake_launch(tmp_path, installed=set()):
        started, error = run(load_launch_file(ROOT / "launch" / name).generate_launch_description(), args)
    text = one_line(error)
    assert started == []
    for package in sorted(needs):
        assert f"ros-jazzy-{package.replace('_', '-')}" in text, (package, text)
    assert ("STEP_PLANNER_MOVEIT=1 rosdep install" in text) == ("moveit_py" in needs)
    assert "moveit" not in text.replace("moveit_resources", "").replace("moveit-resources", "") or "moveit_py" in needs
    assert text.startswith(f"{name} needs ")


def test_franka_with_moveit_installed_passes_the_moveit_config_to_the_node(tmp_path: Path):
    """robot:=panda: where MoveIt is there, the lazy import finds it and the node gets MoveIt's parameters, in a
    file for every node of the process (see test/test_franka_launch.py for the FR3 and namespaces)."""
    import yaml

    calls = []

    class Builder:
        def __init__(self, **kwargs):
            calls.append(("MoveItConfigsBuilder", kwargs))

        def __getattr__(self, name):
            return lambda *args, **kwargs: calls.append((name, kwargs)) or self

        def to_dict(self):
            return {"robot_description": "<robot/>"}

    moveit = types.ModuleType("moveit_configs_utils")
    moveit.MoveItConfigsBuilder = Builder
    with fake_launch(tmp_path, installed=MOVEIT, provided={"moveit_configs_utils": moveit}):
        started, error = run(load_launch_file(ROOT / "launch" / "franka.launch.py").generate_launch_description(),
                             {"robot": "panda"})
    assert error is None
    (node,) = started
    assert node.executable == "step_planner_node" and {"moveit.robot": "panda"} in node.parameters
    (moveit_file,) = [p for p in node.parameters if isinstance(p, Path)]
    assert yaml.safe_load(moveit_file.read_text()) == {"/**": {"ros__parameters": {"robot_description": "<robot/>"}}}
    assert calls[0] == ("MoveItConfigsBuilder", {"robot_name": "panda",
                                                 "package_name": "moveit_resources_panda_moveit_config"})


def test_sim_runs_the_node_on_the_controllers_backend_against_the_mujoco_robot(tmp_path: Path):
    with fake_launch(tmp_path, installed={"robot_state_publisher"}):
        started, error = run(load_launch_file(ROOT / "launch" / "step_planner.launch.py")
                             .generate_launch_description(), {"backend": "sim", "scene": "two_drawers"})
    assert error is None
    robot, _, node = started
    assert {"backend": "controllers"} in node.parameters  # after the launch arguments: it wins
    assert robot.parameters[0]["scene"].variable_name == "scene"  # the same scene as the node


def test_sim_without_robot_state_publisher_runs_the_robot_and_the_node_and_warns(tmp_path: Path):
    with fake_launch(tmp_path, installed=set()):
        started, error = run(load_launch_file(ROOT / "launch" / "step_planner.launch.py")
                             .generate_launch_description(), {"backend": "sim"})
        logged = list(LOGGED)
    assert error is None
    assert [n.executable for n in started] == ["mujoco_robot", "step_planner_node"]
    (warning,) = [m for level, _, m in logged if level in ("warning", "warn")]
    assert "robot_state_publisher" in warning and "ros-jazzy-robot-state-publisher" in warning and "/tf" in warning



def test_sim_with_robot_state_publisher_starts_it_on_the_simulators_urdf(tmp_path: Path):
    with fake_launch(tmp_path, installed={"robot_state_publisher"}):
        started, error = run(load_launch_file(ROOT / "launch" / "step_planner.launch.py")
                             .generate_launch_description(), {"backend": "sim"})
        logged = list(LOGGED)
    assert error is None and not logged
    assert [n.executable for n in started] == ["mujoco_robot", "robot_state_publisher", "step_planner_node"]
    assert "<robot" in started[1].parameters[0]["robot_description"]


def test_symbolic_backend_starts_only_the_node(tmp_path: Path):
    with fake_launch(tmp_path, installed=set()):
        started, error = run(load_launch_file(ROOT / "launch" / "step_planner.launch.py")
                             .generate_launch_description(), {})
    assert error is None and [n.executable for n in started] == ["step_planner_node"]


def test_sim_without_mujoco_stops_before_the_node_in_one_line(tmp_path: Path, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_mujoco(name, *args, **kwargs):
        if name.split(".")[0] == "mujoco":
            raise ModuleNotFoundError("No module named 'mujoco'", name="mujoco")
        return real_import(name, *args, **kwargs)

    for module in [m for m in list(sys.modules) if m.startswith("step_planner.execution.sim")]:
        monkeypatch.delitem(sys.modules, module)
    monkeypatch.setattr(builtins, "__import__", no_mujoco)
    with fake_launch(tmp_path, installed={"robot_state_publisher"}):
        started, error = run(load_launch_file(ROOT / "launch" / "step_planner.launch.py")
                             .generate_launch_description(), {"backend": "sim"})
    text = one_line(error)
    assert started == []
    assert "mujoco" in text and "pip install -r requirements-robot.txt" in text
