"""Simulated Panda in Gazebo (gz sim) + ros2_control + MoveIt move_group + step_planner (moveit backend).

    ros2 launch step_planner gazebo.launch.py
    step-planner send "put the tape and the screwdriver in the drawer"

Needs ros-jazzy-ros-gz, ros-jazzy-gz-ros2-control, ros-jazzy-moveit, ros-jazzy-moveit-py and
ros-jazzy-moveit-resources-panda-moveit-config.

The robot description must carry the gz_ros2_control plugin. The upstream Panda MoveIt config's xacro
only knows the mock_components and isaac hardware types, so pass a Gazebo-ready Panda xacro:

    ros2 launch step_planner gazebo.launch.py description_file:=/path/to/panda_gz.urdf.xacro

(same joint and link names as moveit_resources_panda; its <ros2_control> block uses
gz_ros2_control/GazeboSimSystem and loads the Panda MoveIt config's ros2_controllers.yaml). SRDF,
kinematics, joint limits and controllers come from the Panda MoveIt config. Written against the
documented ros_gz_sim, controller_manager, moveit_configs_utils and launch_ros APIs; it has NOT been
run here (no Gazebo or MoveIt on the dev machine). MoveIt is imported only in launch_setup, after a check of
every package it uses, so `--show-args` works without them (see launch_common).
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription, OpaqueFunction, RegisterEventHandler
from launch.event_handlers import OnProcessExit
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from launch import LaunchDescription
from step_planner.ros.launch_common import (
    MOVEIT_ROSDEP,
    arguments,
    import_from,
    package_file,
    require,
    step_planner_node,
)

MOVEIT_CONFIG = "moveit_resources_panda_moveit_config"
CONTROLLERS = ["joint_state_broadcaster", "panda_arm_controller", "panda_hand_controller"]
NEEDS = ["ros_gz_sim", "ros_gz_bridge", "gz_ros2_control", "robot_state_publisher", "controller_manager",
         "moveit_ros_move_group", "moveit_configs_utils", "moveit_py", MOVEIT_CONFIG]


def launch_setup(context) -> list:
    description_file = LaunchConfiguration("description_file").perform(context)
    if not description_file:
        raise RuntimeError("gazebo.launch.py needs description_file:=<Gazebo-ready Panda xacro> (see its docstring)")
    require("gazebo.launch.py", *NEEDS, hint=MOVEIT_ROSDEP)
    builder = import_from("gazebo.launch.py", "moveit_configs_utils", "MoveItConfigsBuilder", "moveit_configs_utils",
                          hint=MOVEIT_ROSDEP)
    moveit_config = (
        builder(robot_name="panda", package_name=MOVEIT_CONFIG)
        .robot_description(file_path=description_file)
        .trajectory_execution(file_path="config/gripper_moveit_controllers.yaml")
        .planning_pipelines(pipelines=["ompl", "pilz_industrial_motion_planner"])
        .moveit_cpp(file_path=package_file("config", "moveit_cpp.yaml"))
        .to_moveit_configs()
    )
    sim_time = {"use_sim_time": True}

    gazebo = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(
            os.path.join(get_package_share_directory("ros_gz_sim"), "launch", "gz_sim.launch.py")),
        launch_arguments={"gz_args": "-r empty.sdf", "on_exit_shutdown": "true"}.items(),
    )
    clock_bridge = Node(package="ros_gz_bridge", executable="parameter_bridge", output="screen",
                        arguments=["/clock@rosgraph_msgs/msg/Clock[gz.msgs.Clock"])
    robot_state_publisher = Node(package="robot_state_publisher", executable="robot_state_publisher",
                                 output="screen", parameters=[moveit_config.robot_description, sim_time])
    spawn = Node(package="ros_gz_sim", executable="create", output="screen",
                 arguments=["-topic", "robot_description", "-name", "panda", "-allow_renaming", "true"])
    spawners = [
        Node(package="controller_manager", executable="spawner", output="screen",
             arguments=[name, "--controller-manager", "/controller_manager"])
        for name in CONTROLLERS
    ]
    move_group = Node(package="moveit_ros_move_group", executable="move_group", output="screen",
                      parameters=[moveit_config.to_dict(), sim_time])
    planner = step_planner_node(extra_parameters=[moveit_config.to_dict(), sim_time])

    # Controllers once the robot exists in Gazebo; MoveIt and the planner once the controllers run.
    after_spawn = RegisterEventHandler(OnProcessExit(target_action=spawn, on_exit=spawners))
    after_controllers = RegisterEventHandler(OnProcessExit(target_action=spawners[-1],
                                                           on_exit=[move_group, planner]))
    return [gazebo, clock_bridge, robot_state_publisher, spawn, after_spawn, after_controllers]


def generate_launch_description() -> LaunchDescription:
    return LaunchDescription([
        *arguments(backend="moveit"),
        DeclareLaunchArgument("description_file", default_value="",
                              description="Panda xacro with the gz_ros2_control plugin (absolute path)"),
        OpaqueFunction(function=launch_setup),
    ])
