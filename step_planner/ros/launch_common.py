"""Shared pieces of the launch files in launch/: the node with its launch arguments, and dependency checks.

Imported only by launch files (it needs the ROS ``launch`` packages, which the node itself does not).

A launch file imports at module level only ``launch``, ``launch_ros``, ``ament_index_python`` and this
module, and declares every argument at the top level of its description: ``ros2 launch ... --show-args``
imports the file and lists the arguments it finds without running anything (ros2/launch_ros jazzy,
ros2launch/api/api.py:95-124: print_arguments_of_launch_file), and arguments declared inside an
OpaqueFunction are invisible there. Everything that needs MoveIt, Gazebo or another optional package goes
into an OpaqueFunction body that first calls :func:`require` (and :func:`import_from` for Python modules):
a missing package then ends the launch before anything started, with one line naming what to install
(launch prints an exception from an action as "Caught exception in launch (see debug for traceback): <the
message>", ros2/launch jazzy, launch/launch/launch_service.py:351-359), instead of a module-level
ImportError that launch reports as a 35-line traceback and "The launch file may have a syntax error".
"""

import importlib
import os
from typing import Any

from ament_index_python.packages import PackageNotFoundError, get_package_prefix, get_package_share_directory
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

PACKAGE = "step_planner"
MOVEIT_ROSDEP = "STEP_PLANNER_MOVEIT=1 rosdep install --from-paths src --ignore-src -y"  # see package.xml


class MissingDependency(RuntimeError):
    """A package a launch file needs is not installed. The message is one line naming what to install."""


def apt_package(ros_package: str) -> str:
    """The distribution's package of a ROS package: ros-jazzy-robot-state-publisher."""
    return f"ros-{os.environ.get('ROS_DISTRO') or 'jazzy'}-{ros_package.replace('_', '-')}"


def installed(ros_package: str) -> bool:
    """Whether the ament index knows ``ros_package`` (what ``ros2 pkg prefix`` checks)."""
    try:
        get_package_prefix(ros_package)
    except PackageNotFoundError:
        return False
    return True


def missing_message(needed_by: str, ros_packages: list[str], hint: str = "") -> str:
    """One line: what is missing, as the command that installs it."""
    apt = " ".join(apt_package(p) for p in ros_packages)
    what = "a ROS package that is" if len(ros_packages) == 1 else "ROS packages that are"
    return f"{needed_by} needs {what} not installed: sudo apt install {apt}" + (f" (or {hint})" if hint else "")


def require(needed_by: str, *ros_packages: str, hint: str = "") -> None:
    """Raise :class:`MissingDependency` naming every package of ``ros_packages`` that is not installed."""
    missing = [p for p in ros_packages if not installed(p)]
    if missing:
        raise MissingDependency(missing_message(needed_by, missing, hint))


def import_from(needed_by: str, module: str, name: str, ros_package: str, hint: str = "") -> Any:
    """``from module import name``, where it is used, or :class:`MissingDependency` naming ``ros_package``."""
    try:
        return getattr(importlib.import_module(module), name)
    except ImportError:
        raise MissingDependency(missing_message(needed_by, [ros_package], hint)) from None


def package_file(*parts: str) -> str:
    return os.path.join(get_package_share_directory(PACKAGE), *parts)


def step_planner_node(extra_parameters=(), **node_kwargs) -> Node:
    """The node with the package defaults overlaid by the launch arguments (shared by all launch files)."""
    overrides = {
        "backend": LaunchConfiguration("backend"),
        "scene": LaunchConfiguration("scene"),
        "goal_policy": LaunchConfiguration("goal_policy"),
        "approval_mode": ParameterValue(LaunchConfiguration("approval_mode"), value_type=bool),
        "confirm_goal": ParameterValue(LaunchConfiguration("confirm_goal"), value_type=bool),
        "llm.model": ParameterValue(LaunchConfiguration("llm_model"), value_type=str),
        "llm.base_url": ParameterValue(LaunchConfiguration("llm_base_url"), value_type=str),
        "llm.offline": ParameterValue(LaunchConfiguration("offline"), value_type=bool),
    }
    return Node(
        package=PACKAGE,
        executable="step_planner_node",
        name="step_planner",
        output="screen",
        emulate_tty=True,
        parameters=[LaunchConfiguration("params_file"), overrides, *extra_parameters],
        **node_kwargs,
    )


def arguments(backend: str = "symbolic", confirm_goal: str = "false") -> list:
    """The shared launch arguments. ``confirm_goal``: its default, "true", "false" or the name of another
    launch argument it follows ("approval_mode": the Franka launch confirms the goal in approval mode)."""
    confirm_default = confirm_goal if confirm_goal in ("true", "false") else LaunchConfiguration(confirm_goal)
    return [
        DeclareLaunchArgument("params_file", default_value=package_file("config", "step_planner.yaml"),
                              description="Parameter file of the node"),
        DeclareLaunchArgument("backend", default_value=backend, choices=["symbolic", "sim", "controllers", "moveit"],
                              description="Executor backend"),
        DeclareLaunchArgument("scene", default_value="drawer_desk", description="Scene name or path"),
        DeclareLaunchArgument("goal_policy", default_value="reject", choices=["reject", "preempt", "queue"],
                              description="A goal arriving while another runs"),
        DeclareLaunchArgument("approval_mode", default_value="false", choices=["true", "false"],
                              description="Wait for ~/approve_step before every primitive"),
        DeclareLaunchArgument("confirm_goal", default_value=confirm_default, choices=["true", "false"],
                              description="Wait for ~/confirm_goal (accept, correct or refuse the interpreted "
                                          "goal) before anything moves"),
        DeclareLaunchArgument("llm_model", default_value="gpt-4o-mini", description="Model at the endpoint"),
        DeclareLaunchArgument("llm_base_url", default_value="",
                              description="OpenAI-compatible endpoint; empty = api.openai.com"),
        DeclareLaunchArgument("realtime_factor", default_value="1.0",
                              description="backend sim: the MuJoCo robot's pace (1.0 = real time)"),
        DeclareLaunchArgument("rviz", default_value="false", choices=["true", "false"],
                              description="Start RViz with config/step_planner.rviz (the robot, /tf and the node's "
                                          "~/markers); where rviz2 is not installed, one line says so"),
        DeclareLaunchArgument("offline", default_value="false", choices=["true", "false"],
                              description="Serve the answers shipped in config/replay (recorded from a scripted "
                                          "expert, NOT an LLM) from inside the node: try it with no model"),
    ]


def mujoco_robot(context) -> list:
    """backend:=sim: the MuJoCo robot in a process of its own (``mujoco_robot``: FollowJointTrajectory and
    GripperCommand with ros2_controllers' semantics, /joint_states, /clock, /model_poses), the node on the
    ``controllers`` backend talking to it across DDS as to Gazebo or the arm, and robot_state_publisher on the
    simulated URDF so RViz shows the arm. (The node's in-process ``sim`` backend stays for ``ros2 run`` and the
    benchmarks.)

    For an OpaqueFunction body, called before anything is created: the URDF is read (and MuJoCo's Python
    package imported) only for backend sim, and a missing MuJoCo stops the launch before anything started.
    Without robot_state_publisher the robot and the node run, with a warning saying what RViz lacks.
    Returns the actions and the node's parameters for the backend.
    """
    if LaunchConfiguration("backend").perform(context) != "sim":
        return []
    try:
        from step_planner.execution.sim.telemetry import robot_description
    except ImportError as exc:
        raise MissingDependency(f"backend:=sim needs the Python package {exc.name}, not installed: "
                                "pip install -r requirements-robot.txt (README: Install on a robot machine)") from None
    with_rsp = installed("robot_state_publisher")
    # the robot puts its objects on /tf, and its links too when no robot_state_publisher does
    robot = Node(package=PACKAGE, executable="mujoco_robot", name="mujoco_robot", output="screen", emulate_tty=True,
                 parameters=[{"scene": LaunchConfiguration("scene"),
                              "realtime_factor": ParameterValue(LaunchConfiguration("realtime_factor"),
                                                                value_type=float),
                              "tf": True, "tf_links": not with_rsp}])
    if not with_rsp:
        from launch.logging import get_logger

        get_logger("step_planner.launch").warning(
            "backend:=sim without robot_state_publisher: the MuJoCo robot publishes its link frames on /tf itself; "
            f"sudo apt install {apt_package('robot_state_publisher')} for the usual setup")
        return [robot]
    return [robot, Node(package="robot_state_publisher", executable="robot_state_publisher", output="screen",
                        parameters=[{"robot_description": robot_description()}])]


def rviz(context, fixed_frame: str = "") -> list:
    """rviz:=true: rviz2 with the package's config/step_planner.rviz (RobotModel, TF, the node's ~/markers), its
    fixed frame ``fixed_frame`` when given (the config's is panda_link0). Without rviz2 nothing more starts and one
    warning line says how to install it: the robot and the node do not need it."""
    if LaunchConfiguration("rviz").perform(context) != "true":
        return []
    if not installed("rviz2"):
        from launch.logging import get_logger

        get_logger("step_planner.launch").warning(
            f"rviz:=true but rviz2 is not installed, so RViz is not started: sudo apt install {apt_package('rviz2')}")
        return []
    frame = ["-f", fixed_frame] if fixed_frame else []
    return [Node(package="rviz2", executable="rviz2", name="rviz2", output="screen",
                 arguments=["-d", package_file("config", "step_planner.rviz"), *frame])]
