"""Each launch file included by a parent launch file, as a ROS bringup composes packages (issue 45, part 1).

The parent puts the include in a GroupAction with PushRosNamespace, SetRemap and SetParameter, declares an argument
of its own and is the file ``ros2 launch`` was given, with that argument on its command line. Every node the
included file starts must get the namespace, the remap and the global parameter as launch_ros gives them, and
nothing is refused. ``launch``/``launch_ros`` are not installable here: the files run against fake_launch, whose
GroupAction, IncludeLaunchDescription, PushRosNamespace, SetRemap, SetParameter, RegisterEventHandler and node
resolution follow ros2/launch and ros2/launch_ros at jazzy (file and line in fake_launch.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from fake_launch import fake_launch, load_launch_file, run
from moveit_support import fr3_config_share
from test_fr3_controllers_launch import INSTALLED as FR3_CONTROLLERS_INSTALLED
from test_fr3_controllers_launch import fake_xacro
from test_franka_launch import FR3
from test_gazebo_launch import INSTALLED as GAZEBO_INSTALLED

ROOT = Path(__file__).resolve().parents[1]
PARENT = "bringup.launch.py"  # the file ros2 launch was given: the parent
REMAP = ("/tf", "tf")
FILES = {  # launch file: (ROS packages installed, its launch arguments from the parent)
    "step_planner.launch.py": ({"robot_state_publisher"}, {"offline": "true"}),
    "step_planner.launch.py backend:=sim": ({"robot_state_publisher"}, {"offline": "true", "backend": "sim"}),
    "fr3_controllers.launch.py": (FR3_CONTROLLERS_INSTALLED, {"use_fake_hardware": "true"}),
    "franka.launch.py": (FR3, {"use_fake_hardware": "true"}),
    "gazebo.launch.py": (GAZEBO_INSTALLED, {"gui": "false"}),
}


def prefix(tmp_path: Path, installed: set[str]) -> Path:
    for package in installed:
        (tmp_path / "share" / package).mkdir(parents=True, exist_ok=True)
    fr3_config_share(tmp_path / "share")
    gz = tmp_path / "share" / "ros_gz_sim" / "launch"
    gz.mkdir(parents=True, exist_ok=True)  # gazebo.launch.py includes ros_gz_sim's gz_sim.launch.py
    (gz / "gz_sim.launch.py").write_text("from launch import LaunchDescription\n\n\n"
                                         "def generate_launch_description():\n    return LaunchDescription([])\n")
    return tmp_path


def composed(tmp_path: Path, key: str, outer: dict[str, str] | None = None, group: bool = True):
    """The parent's launch: its argument ``site``, the group around the include, a node of its own after the
    group. Returns (nodes of the included file, the parent's node, error)."""
    installed, arguments = FILES[key]
    name = key.split()[0]
    sys.modules.pop("xacro", None)
    with fake_launch(prefix(tmp_path, set(installed)), installed=set(installed), provided={"xacro": fake_xacro([])}):
        from launch.actions import DeclareLaunchArgument, GroupAction, IncludeLaunchDescription
        from launch.launch_description_sources import PythonLaunchDescriptionSource
        from launch_ros.actions import Node, PushRosNamespace, SetParameter, SetRemap

        from launch import LaunchDescription

        include = IncludeLaunchDescription(PythonLaunchDescriptionSource(str(ROOT / "launch" / name)),
                                           launch_arguments=arguments.items())
        pushed = [PushRosNamespace("robot1"), SetRemap(src=REMAP[0], dst=REMAP[1]),
                  SetParameter(name="use_sim_time", value=True)]
        parent = LaunchDescription([
            DeclareLaunchArgument("site", default_value="lab"),
            GroupAction([*pushed, include]) if group else include,
            Node(package="demo", executable="after", name="after"),
        ])
        started, error = run(parent, outer if outer is not None else {"site": "hall"}, launched=PARENT)
    sys.modules.pop("xacro", None)
    ours = [n for n in started if n.package != "demo"]
    theirs = [n for n in started if n.package == "demo"]
    return ours, theirs, error


@pytest.mark.parametrize("key", FILES)
def test_a_parents_namespace_remap_and_global_parameter_reach_every_node(tmp_path, key):
    ours, theirs, error = composed(tmp_path, key)
    assert error is None, repr(error)
    (node,) = [n for n in ours if n.executable == "step_planner_node"]
    assert (node.resolved["name"], node.resolved["namespace"]) == ("step_planner", "/robot1")
    for started in ours:  # the robot's side too: MuJoCo robot, ros2_control, the gripper, Gazebo's bridge ...
        assert started.resolved["namespace"] == "/robot1", (started.executable, started.resolved)
        assert started.resolved["remappings"][0] == REMAP, (started.executable, started.resolved)
        assert started.resolved["parameters"][0] == ("use_sim_time", True), (started.executable, started.resolved)
    # the node's own parameters come after the global one, so what the file sets wins (node.py:422-461)
    assert node.parameter("llm.offline") is True or key.startswith(("fr3", "franka", "gazebo"))
    # the group's scope ends with it: the parent's own node after the group gets none of it
    (after,) = theirs
    assert after.resolved == {"name": "after", "namespace": "/", "parameters": [], "remappings": []}


def test_a_mujoco_robot_and_its_node_share_the_pushed_namespace(tmp_path):
    ours, _, error = composed(tmp_path, "step_planner.launch.py backend:=sim")
    assert error is None, repr(error)
    names = {(n.resolved["namespace"], n.resolved["name"]) for n in ours}
    assert {("/robot1", "mujoco_robot"), ("/robot1", "step_planner")} <= names, names


def test_gazebos_node_started_after_the_controllers_keeps_the_parents_scope(tmp_path):
    """gazebo.launch.py starts the node from an event handler once the spawners exit, when the parent's group has
    popped its configurations: the file's own arguments (backend) and the namespace are re-applied to it."""
    ours, _, error = composed(tmp_path, "gazebo.launch.py")
    assert error is None, repr(error)
    (node,) = [n for n in ours if n.executable == "step_planner_node"]
    assert node.resolved["namespace"] == "/robot1" and node.parameter("backend") == "controllers"
    spawned = [n.kwargs["arguments"][0] for n in ours if n.executable == "spawner"]
    assert spawned == ["joint_state_broadcaster", "panda_arm_controller", "panda_hand_controller"]


@pytest.mark.parametrize("key", FILES)
def test_included_without_a_group_the_parents_argument_is_not_refused(tmp_path, key):
    """The parent's command line (site:=hall) is the parent's: the included file checks nothing of it."""
    ours, _, error = composed(tmp_path, key, group=False)
    assert error is None, repr(error)
    assert any(n.executable == "step_planner_node" and n.resolved["namespace"] == "/" for n in ours)


@pytest.mark.parametrize("name", ["step_planner.launch.py", "fr3_controllers.launch.py"])
def test_launched_directly_a_typo_is_still_refused_but_launch_ros_names_pass(tmp_path, name):
    installed, arguments = FILES[name]
    sys.modules.pop("xacro", None)
    with fake_launch(prefix(tmp_path, set(installed)), installed=set(installed), provided={"xacro": fake_xacro([])}):
        description = load_launch_file(ROOT / "launch" / name).generate_launch_description
        _, refused = run(description(), {**arguments, "bakend": "sim"})
        started, passed = run(description(), {**arguments, "ros_namespace": "/robot1", "launch-prefix": "nice"})
    sys.modules.pop("xacro", None)
    assert type(refused).__name__ == "RefusedArguments" and "bakend:=" in str(refused)
    assert passed is None, repr(passed)
    (node,) = [n for n in started if n.executable == "step_planner_node"]
    assert node.resolved["namespace"] == "/robot1"  # ros_namespace:= typed is what PushRosNamespace would set
