"""The launch files take franka_bringup's arguments and refuse what they cannot honour (issue 38, part 3).

franka_bringup's arguments are the ones test/data/franka_ros2/extract.py read from franka_bringup/launch/
franka.launch.py at the commit upstream.json names. The files run against fake_launch's ``launch`` stand-in (see
test_franka_launch.py and test_fr3_controllers_launch.py, whose helpers bring up franka_ros2's packages there).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from fake_launch import LOGGED, Node, fake_launch, load_launch_file, run
from test_fr3_controllers_launch import launch as controllers_launch
from test_franka_launch import launch as franka_launch

ROOT = Path(__file__).resolve().parents[1]
UPSTREAM = json.loads((ROOT / "test" / "data" / "franka_ros2" / "upstream.json").read_text())
FBL = {a["name"]: a for a in UPSTREAM["launch_arguments"]["franka_bringup/launch/franka.launch.py"]}
FRANKA_FILES = ["franka.launch.py", "fr3_controllers.launch.py"]
ISSUE_NAMES = {"robot_type", "robot_ip", "load_gripper", "use_fake_hardware", "fake_sensor_commands", "namespace",
               "arm_prefix", "joint_state_rate"}
ARM = {"robot_ip": "172.16.0.2"}


def shown(tmp_path: Path, name: str) -> dict:
    with fake_launch(tmp_path, installed=set()):
        return {a.name: a for a in load_launch_file(ROOT / "launch" / name).generate_launch_description()
                .get_launch_arguments()}


def bring_up(tmp_path: Path, name: str, arguments: dict[str, str]):
    """(entities of launch_setup, nodes started, error) of franka.launch.py or fr3_controllers.launch.py."""
    if name == "franka.launch.py":
        return franka_launch(tmp_path, arguments)
    return controllers_launch(tmp_path, arguments)[:3]


def differences() -> dict[str, str]:
    with fake_launch(Path("/tmp") / f"launch_args_{os.getpid()}", installed=set()):
        from step_planner.ros.launch_common import FRANKA_COMMIT, FRANKA_DIFFERENCES
    assert UPSTREAM["commit"] == FRANKA_COMMIT
    return FRANKA_DIFFERENCES


def test_the_reference_is_franka_bringups_launch_file_at_the_cited_commit():
    assert UPSTREAM["repository"] == "frankarobotics/franka_ros2" and UPSTREAM["commit"].startswith("29cb85a")
    assert set(FBL) >= ISSUE_NAMES


@pytest.mark.parametrize("name", FRANKA_FILES)
def test_every_franka_bringup_argument_is_taken_with_its_default_or_the_difference_is_said(tmp_path, name):
    ours = shown(tmp_path, name)
    said = differences()
    for argument, upstream in FBL.items():
        if argument not in ours:
            assert "not taken" in said.get(argument, ""), f"{name}: {argument} neither taken nor said why not"
        elif ours[argument].default_value != upstream["default"]:
            assert argument in said and "default" in said[argument], (name, argument, ours[argument].default_value)
        else:
            assert argument not in said, f"{argument}: a difference is said where there is none"
    assert set(ours) >= ISSUE_NAMES
    # no choices on a boolean: 'True' must reach the check that reads it as franka_ros2 does
    for argument in ("use_fake_hardware", "fake_sensor_commands", "load_gripper", "approval_mode", "rviz", "offline"):
        assert not ours[argument].choices, argument


@pytest.mark.parametrize("name", ["franka.launch.py", "fr3_controllers.launch.py", "step_planner.launch.py",
                                  "gazebo.launch.py"])
def test_an_argument_the_file_does_not_declare_stops_it_before_anything_starts(tmp_path, name):
    with fake_launch(tmp_path, installed=set()):
        started, error = run(load_launch_file(ROOT / "launch" / name).generate_launch_description(),
                             {"robot_ip": "172.16.0.2", "use_fake_hardware": "true", "arm_id": "fr3",
                              "gripper": "false"} if name in FRANKA_FILES else {"use_fake_hardware": "true"})
    assert started == [] and error is not None
    assert type(error).__name__ == "RefusedArguments" and "\n" not in str(error)
    text = str(error)
    assert text.startswith(f"{name} does not take ")
    expected = ["arm_id:=", "gripper:="] if name in FRANKA_FILES else ["use_fake_hardware:="]
    assert all(e in text for e in expected), text


@pytest.mark.parametrize("name", FRANKA_FILES)
def test_namespace_puts_every_node_of_the_fake_arm_under_it(tmp_path, name):
    """robot_ip:=... use_fake_hardware:=true namespace:=arm1 (issue 45; it was refused, and before that started the
    real-arm bring-up in the root namespace): fake hardware honoured, every node in /arm1 as franka_bringup puts
    them (FBL:127-188), the node too, so the boundary's names resolve under it; the spawners find the controller
    manager in their own namespace (no absolute --controller-manager)."""
    _, started, error = bring_up(tmp_path, name, {**ARM, "use_fake_hardware": "true", "namespace": "arm1"})
    assert error is None, error
    assert started and {n.resolved["namespace"] for n in started} == {"/arm1"}
    assert any(n.executable == "step_planner_node" for n in started)
    assert not [n for n in started if n.executable == "franka_gripper_node"]  # the mock hand: fake hardware
    for spawner in [n for n in started if n.executable == "spawner"]:
        assert "--controller-manager" not in spawner.kwargs["arguments"], spawner.kwargs["arguments"]


@pytest.mark.parametrize("name", FRANKA_FILES)
@pytest.mark.parametrize("value, fake", [("True", True), ("TRUE", True), ("true", True), ("False", False),
                                         ("false", False)])
def test_booleans_are_read_as_franka_ros2_reads_them(tmp_path, name, value, fake):
    _, started, error = bring_up(tmp_path, name, {**ARM, "use_fake_hardware": value, "approval_mode": value.title()})
    assert error is None, error
    mock_hand = [n for n in started if n.executable == "franka_gripper" and n.package == "step_planner"]
    real_hand = [n for n in started if n.executable == "franka_gripper_node"]
    assert (len(mock_hand), len(real_hand)) == ((1, 0) if fake else (0, 1))


@pytest.mark.parametrize("name", FRANKA_FILES)
@pytest.mark.parametrize("value", ["1", "0", "yes", ""])
def test_a_boolean_franka_ros2_reads_two_ways_stops_the_launch(tmp_path, name, value):
    _, started, error = bring_up(tmp_path, name, {**ARM, "use_fake_hardware": value})
    assert started == [] and "is not a boolean" in str(error) and "use_fake_hardware" in str(error)


@pytest.mark.parametrize("name", FRANKA_FILES)
@pytest.mark.parametrize("arguments, says", [
    ({"load_gripper": "false"}, "load_gripper:=false cannot be honoured"),
    ({"arm_prefix": "left"}, "arm_prefix:=left is not supported"),
    ({"robot_type": "fp3"}, "robot_type:='fp3' is not driven here"),
    ({"robot_type": ""}, "robot_type:='' is not driven here"),
    ({"joint_state_rate": "fast"}, "joint_state_rate:='fast'"),
])
def test_what_cannot_be_honoured_stops_the_launch_before_anything_starts(tmp_path, name, arguments, says):
    _, started, error = bring_up(tmp_path, name, {**ARM, **arguments})
    assert started == [] and says in str(error), error


def test_fr3_controllers_refuses_another_backend(tmp_path):
    _, started, error = bring_up(tmp_path, "fr3_controllers.launch.py", {**ARM, "backend": "moveit"})
    assert started == [] and "backend:=moveit" in str(error)


@pytest.mark.parametrize("name", FRANKA_FILES)
def test_the_old_robot_argument_still_works_and_says_it_is_deprecated(tmp_path, name):
    _, started, error = bring_up(tmp_path, name, {**ARM, "robot": "fr3"})
    assert error is None and started
    warnings = [m for level, _, m in LOGGED if level in ("warning", "warn")]
    assert any("robot:=fr3 is deprecated; use robot_type:=fr3" in m for m in warnings), warnings
    _, started, error = bring_up(tmp_path, name, {**ARM, "robot": "fer"})
    assert started == [] and "robot_type:='fer' is not driven here" in str(error)


def test_joint_state_rate_reaches_the_joint_state_merge(tmp_path):
    for name in FRANKA_FILES:
        _, started, error = bring_up(tmp_path, name, {**ARM, "joint_state_rate": "50"})
        assert error is None, error
        (merge,) = [n for n in started if n.executable == "joint_state_publisher"]
        assert merge.parameters[0]["rate"] == 50


def test_fr3_controllers_runs_fake_hardware_as_upstream_with_a_gripper_that_serves_actions(tmp_path):
    calls: list = []
    entities, started, error, calls = controllers_launch(tmp_path, {"use_fake_hardware": "true"},
                                                         installed={"franka_bringup", "franka_description",
                                                                    "franka_hardware", "controller_manager",
                                                                    "joint_trajectory_controller",
                                                                    "joint_state_broadcaster", "robot_state_publisher",
                                                                    "joint_state_publisher", "xacro"})
    assert error is None, error  # neither franka_gripper nor franka_robot_state_broadcaster needed
    assert calls and all(mappings["use_fake_hardware"] == "true" for _, mappings in calls)
    spawned = [n.kwargs["arguments"][0] for n in started if n.executable == "spawner"]
    assert spawned == ["fr3_arm_controller", "joint_state_broadcaster"]  # FBL:179: no robot state broadcaster
    (control,) = [n for n in started if n.executable == "ros2_control_node"]
    assert control.parameters[1].endswith("config/fr3_moveit/fake_hardware_controllers.yaml")
    (hand,) = [n for n in started if n.executable == "franka_gripper"]
    assert hand.package == "step_planner" and hand.node_name == "franka_gripper"
    assert hand.parameters == [{"fake_hardware": True}]
    assert not [n for n in started if n.executable == "franka_gripper_node"]
    (node,) = [n for n in started if n.executable == "step_planner_node"]
    assert {"backend": "controllers", "controllers.robot": "fr3", "controllers.fake_hardware": True} in node.parameters


def long_running(node: Node) -> bool:
    return node.executable != "spawner"  # a spawner exits once its controller is active


@pytest.mark.parametrize("name, arguments", [("franka.launch.py", ARM), ("franka.launch.py", {"use_fake_hardware":
                                                                                               "true"}),
                                             ("fr3_controllers.launch.py", ARM),
                                             ("fr3_controllers.launch.py", {"use_fake_hardware": "true"})])
def test_the_robot_side_nodes_end_the_launch_together(tmp_path, name, arguments):
    _, started, error = bring_up(tmp_path, name, arguments)
    assert error is None, error
    for node in started:
        ends_launch = type(node.kwargs.get("on_exit")).__name__ == "Shutdown"
        assert ends_launch == long_running(node), (node.executable, node.kwargs.get("on_exit"))


def test_sim_launch_ends_together_too(tmp_path):
    with fake_launch(tmp_path, installed={"robot_state_publisher"}):
        started, error = run(load_launch_file(ROOT / "launch" / "step_planner.launch.py")
                             .generate_launch_description(), {"backend": "sim"})
    assert error is None
    assert [type(n.kwargs.get("on_exit")).__name__ for n in started] == ["Shutdown"] * 3


def test_the_moveit_parameter_file_is_removed_when_the_launch_shuts_down(tmp_path):
    entities, started, error = bring_up(tmp_path, "franka.launch.py", {"use_fake_hardware": "true"})
    assert error is None, error
    (node,) = [n for n in started if n.executable == "step_planner_node"]
    (moveit_file,) = [p for p in node.parameters if isinstance(p, Path)]
    handlers = [e for e in entities if type(e).__name__ == "RegisterEventHandler"]
    (on_shutdown,) = [h.args[0] for h in handlers if type(h.args[0]).__name__ == "OnShutdown"]
    (written,) = [p for e in entities if isinstance(e, Node) and e.executable == "step_planner_node"
                  for p in e.parameters if isinstance(p, Path)]
    assert written.exists() and entities.index(handlers[0]) == 0  # registered before anything starts
    on_shutdown.kwargs["on_shutdown"](None, None)
    assert not written.exists()
    moveit_file.unlink(missing_ok=True)  # the first run's file (the helper runs launch_setup twice)
