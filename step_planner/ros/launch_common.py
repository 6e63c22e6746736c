"""Shared pieces of the launch files in launch/: the node with its launch arguments.

Imported only by launch files (it needs the ROS ``launch`` packages, which the node itself does not).
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

PACKAGE = "step_planner"


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
        DeclareLaunchArgument("backend", default_value=backend, choices=["symbolic", "sim", "moveit"],
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
        DeclareLaunchArgument("offline", default_value="false", choices=["true", "false"],
                              description="Serve the answers shipped in config/replay (recorded from a scripted "
                                          "expert, NOT an LLM) from inside the node: try it with no model"),
    ]


def sim_robot_state_publisher(context) -> list:
    """backend sim: robot_state_publisher on the simulator's URDF, so RViz gets /tf from /joint_states.

    An OpaqueFunction body: the URDF is read (and MuJoCo's Python package imported) only for backend sim.
    """
    if LaunchConfiguration("backend").perform(context) != "sim":
        return []
    from step_planner.execution.sim.telemetry import robot_description

    return [Node(package="robot_state_publisher", executable="robot_state_publisher", output="screen",
                 parameters=[{"robot_description": robot_description()}])]
