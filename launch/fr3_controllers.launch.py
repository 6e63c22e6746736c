"""step_planner on the FR3 through the controllers backend: franka_ros2's bring-up with the arm controller we ship.

    ros2 launch step_planner fr3_controllers.launch.py robot_ip:=<ip>     # approval mode first: approval_mode:=true

What it starts is franka_fr3_moveit_config/launch/moveit.launch.py's bring-up (frankarobotics/franka_ros2@29cb85a,
``FML``) without MoveIt: robot_state_publisher on franka_bringup's franka_arm.urdf.xacro (FML:82-92, 204-211),
ros2_control_node with config/ros2_controllers_fr3.yaml (fr3_arm_controller: joint_trajectory_controller on the
effort interface with franka's gains, and joint_state_broadcaster; joint states remapped to franka/joint_states,
FML:218-229), spawners for both (FML:232-244), joint_state_publisher merging franka/joint_states and
franka_gripper/joint_states into joint_states (FML:246-253 with the gripper node's real name), franka_gripper's own
gripper.launch.py (franka_gripper/launch/gripper.launch.py:25-62: the node ``franka_gripper`` on the arm's address),
and the node on the ``controllers`` backend with ``controllers.robot: fr3``, whose actions and joint names are
config/robot_boundary.yaml's fr3 entry (test/test_fr3_controllers_launch.py checks they agree with this file and
the controllers file).

The backend also needs every object's pose on the boundary's object_poses topic (/model_poses, tf2_msgs/TFMessage)
from the team's perception; without it the node refuses to start the backend, naming the topic. Without the arm, try
the same boundary on the MuJoCo robot: ``step-planner mujoco-robot --ros-args -p robot:=fr3``. No namespace argument:
the boundary's names are absolute and the controllers file is written for the root namespace. Written against
franka_ros2 jazzy and launch_ros; it has not been run here (no franka_ros2 or arm on the dev machine).
"""

import os

from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription, OpaqueFunction
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from launch import LaunchDescription
from step_planner.ros.launch_common import arguments, import_from, package_file, require, step_planner_node

PACKAGES = ["franka_bringup", "franka_description", "franka_hardware", "franka_gripper", "controller_manager",
            "joint_trajectory_controller", "joint_state_broadcaster", "robot_state_publisher", "joint_state_publisher",
            "xacro"]
CONTROLLERS = ["fr3_arm_controller", "joint_state_broadcaster"]  # FML:232-244; config/ros2_controllers_fr3.yaml
GRIPPER_NODE = "franka_gripper"  # franka_gripper/launch/gripper.launch.py:42-50
HINT = "franka_ros2 jazzy built in the robot's workspace: https://github.com/frankarobotics/franka_ros2"


def fr3_urdf(robot_ip: str) -> str:
    """robot_description as FML:82-92 makes it for the real arm (xacro, hand on, franka_hand)."""
    from ament_index_python.packages import get_package_share_directory

    process_file = import_from("fr3_controllers.launch.py", "xacro", "process_file", "xacro")
    urdf = process_file(os.path.join(get_package_share_directory("franka_bringup"), "urdf", "franka_arm.urdf.xacro"),
                        mappings={"hand": "true", "robot_type": "fr3", "ee_id": "franka_hand", "robot_ip": robot_ip,
                                  "use_fake_hardware": "false", "fake_sensor_commands": "false"})
    return urdf.toprettyxml(indent="  ")


def launch_setup(context) -> list:
    """Every package checked and the arm's address given before anything starts."""
    from ament_index_python.packages import get_package_share_directory

    require("fr3_controllers.launch.py", *PACKAGES, hint=HINT)
    robot_ip = LaunchConfiguration("robot_ip").perform(context)
    if not robot_ip:
        raise RuntimeError("fr3_controllers.launch.py needs robot_ip:=<the arm's address> (without an arm: "
                           "step-planner mujoco-robot --ros-args -p robot:=fr3, and backend controllers)")
    description = {"robot_description": fr3_urdf(robot_ip)}
    controllers = package_file("config", "ros2_controllers_fr3.yaml")
    gripper = os.path.join(get_package_share_directory("franka_gripper"), "launch", "gripper.launch.py")
    return [
        Node(package="robot_state_publisher", executable="robot_state_publisher", name="robot_state_publisher",
             output="both", parameters=[description]),
        Node(package="controller_manager", executable="ros2_control_node", parameters=[description, controllers],
             remappings=[("joint_states", "franka/joint_states")], output="screen"),
        *[Node(package="controller_manager", executable="spawner", output="screen",
               arguments=[name, "--controller-manager-timeout", "60", "--controller-manager", "/controller_manager"])
          for name in CONTROLLERS],
        Node(package="joint_state_publisher", executable="joint_state_publisher", name="joint_state_publisher",
             parameters=[{"source_list": ["franka/joint_states", f"{GRIPPER_NODE}/joint_states"], "rate": 30}]),
        IncludeLaunchDescription(PythonLaunchDescriptionSource(gripper),
                                 launch_arguments={"robot_ip": robot_ip, "use_fake_hardware": "false",
                                                   "robot_type": "fr3", "namespace": ""}.items()),
        step_planner_node(extra_parameters=[{"backend": "controllers", "controllers.robot": "fr3"}]),
    ]


def generate_launch_description() -> LaunchDescription:
    return LaunchDescription([
        *arguments(backend="controllers", confirm_goal="approval_mode"),
        DeclareLaunchArgument("robot_ip", default_value="", description="The FR3's address"),
        OpaqueFunction(function=launch_setup),
    ])
