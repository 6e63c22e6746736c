"""step_planner on the FR3 through the controllers backend: franka_ros2's bring-up with the arm controller we ship.

    ros2 launch step_planner fr3_controllers.launch.py robot_ip:=<ip>     # approval mode first: approval_mode:=true
    ros2 launch step_planner fr3_controllers.launch.py use_fake_hardware:=true     # without the arm

The robot's arguments are franka_bringup's (franka_bringup/launch/franka.launch.py, ``FBL``: robot_type, robot_ip,
load_gripper, use_fake_hardware, fake_sensor_commands, namespace, arm_prefix, joint_state_rate,
load_franka_robot_state_broadcaster, controllers_yaml) with its defaults, except where launch_common.FRANKA_DIFFERENCES
says why; booleans read as franka_ros2 reads them (true/false in any case); ``robot:=`` still works, with a
deprecation warning. ``namespace:=arm1`` puts every node under /arm1 as FBL does (FBL:127-188), the step_planner node
too, whose controllers backend then finds the arm's actions, /arm1/joint_states, the gripper and the controller
manager under /arm1 (config/robot_boundary.yaml's names are the robot's without a namespace). A parent launch file's
PushRosNamespace, SetRemap and SetParameter reach every node (docs/launch.md). What this file cannot honour stops the
launch before anything starts, with a message: an argument it does not declare, robot_type other than fr3, arm_prefix,
load_gripper:=false, a backend other than controllers, a controllers_yaml without the controllers it spawns.
``rviz:=true`` adds RViz with fixed frame fr3_link0.

What it starts is franka_fr3_moveit_config/launch/moveit.launch.py's bring-up (frankarobotics/franka_ros2@29cb85a,
``FML``) without MoveIt: robot_state_publisher on franka_bringup's franka_arm.urdf.xacro (FML:82-92, 204-211),
ros2_control_node with config/ros2_controllers_fr3.yaml (fr3_arm_controller: joint_trajectory_controller on the
effort interface with franka's gains, joint_state_broadcaster and franka_robot_state_broadcaster; joint states
remapped to franka/joint_states, FML:218-229), spawners for them (FML:232-244, 255-262), joint_state_publisher
merging franka/joint_states and franka_gripper/joint_states into joint_states at joint_state_rate (FML:246-253 with
the gripper node's real name, FBL:121-125), franka_gripper's node as franka_gripper/launch/gripper.launch.py:42-51
starts it, and the node on the ``controllers`` backend with ``controllers.robot: fr3``, whose actions and joint
names are config/robot_boundary.yaml's fr3 entry (test/test_fr3_controllers_launch.py checks they agree with this
file and the controllers file).

use_fake_hardware:=true runs the arm as upstream does (franka_arm.urdf.xacro with use_fake_hardware: mock
components; no franka_robot_state_broadcaster, FBL:174-188), with a position-commanded fr3_arm_controller
(config/fr3_moveit/fake_hardware_controllers.yaml: the mock hardware does not turn effort into motion), and this
package's mock franka_gripper, since upstream's fake gripper (gripper.launch.py:52-60,
fake_gripper_state_publisher.py) publishes fixed finger states and serves no action. Every robot-side node ends the
launch when it exits (on_exit: Shutdown, as FBL:146).

The backend also needs every object's pose on the boundary's object_poses topic (/model_poses, tf2_msgs/TFMessage)
from the team's perception; without it the node refuses to start the backend, naming the topic. Without the arm, try
the same boundary on the MuJoCo robot: ``step-planner mujoco-robot --ros-args -p robot:=fr3``. Written against
franka_ros2 jazzy and launch_ros; it has not been run here (no franka_ros2 or arm on the dev machine).
"""

import os

from launch.actions import OpaqueFunction, Shutdown
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from launch import LaunchDescription
from step_planner.ros.launch_common import (
    RefusedArguments,
    arguments,
    boolean,
    controllers_file,
    described,
    for_any_namespace,
    franka_arguments,
    franka_checks,
    import_from,
    namespace_of,
    package_file,
    require,
    robot_state_broadcaster,
    robot_type,
    rviz,
    step_planner_node,
)

FILE = "fr3_controllers.launch.py"
PACKAGES = ["franka_bringup", "franka_description", "franka_hardware", "controller_manager",
            "joint_trajectory_controller", "joint_state_broadcaster", "robot_state_publisher", "joint_state_publisher",
            "xacro"]
CONTROLLERS = ["fr3_arm_controller", "joint_state_broadcaster"]  # FML:232-244; config/ros2_controllers_fr3.yaml
GRIPPER_NODE = "franka_gripper"  # franka_gripper/launch/gripper.launch.py:42-50
HINT = "franka_ros2 jazzy built in the robot's workspace: https://github.com/frankarobotics/franka_ros2"


def fr3_urdf(robot_ip: str, fake: bool, fake_sensor_commands: bool) -> str:
    """robot_description as FML:82-92 makes it (xacro, hand on, franka_hand)."""
    from ament_index_python.packages import get_package_share_directory

    process_file = import_from(FILE, "xacro", "process_file", "xacro")
    urdf = process_file(os.path.join(get_package_share_directory("franka_bringup"), "urdf", "franka_arm.urdf.xacro"),
                        mappings={"hand": "true", "robot_type": "fr3", "ee_id": "franka_hand", "robot_ip": robot_ip,
                                  "use_fake_hardware": "true" if fake else "false",
                                  "fake_sensor_commands": "true" if fake_sensor_commands else "false"})
    return urdf.toprettyxml(indent="  ")


def checked(context) -> bool:
    """Every argument this file cannot honour refused; returns use_fake_hardware."""
    robot_type(context, FILE, ("fr3",))
    franka_checks(context, FILE)
    if LaunchConfiguration("backend").perform(context) != "controllers":
        raise RefusedArguments(f"{FILE} runs the controllers backend only, not backend:="
                               f"{LaunchConfiguration('backend').perform(context)} (franka.launch.py: moveit)")
    fake = boolean(context, "use_fake_hardware")
    if not fake and not LaunchConfiguration("robot_ip").perform(context):
        raise RefusedArguments(f"{FILE} needs robot_ip:=<the arm's address> (or use_fake_hardware:=true; without "
                               "an arm also: step-planner mujoco-robot --ros-args -p robot:=fr3, and backend "
                               "controllers)")
    return fake


def launch_setup(context) -> list:
    """Every argument, package and the arm's address checked before anything starts."""
    from ament_index_python.packages import get_package_share_directory

    fake = checked(context)
    broadcaster = robot_state_broadcaster(context)
    require(FILE, *PACKAGES, *(["franka_gripper"] if not fake else []),
            *(["franka_robot_state_broadcaster"] if broadcaster else []), hint=HINT)
    spawned = [*CONTROLLERS, *(["franka_robot_state_broadcaster"] if broadcaster else [])]
    controllers = controllers_file(context, FILE, package_file("config", "fr3_moveit", "fake_hardware_controllers.yaml")
                                   if fake else package_file("config", "ros2_controllers_fr3.yaml"), spawned)
    viewer = rviz(context, fixed_frame="fr3_link0")  # its argument checked before a file is written
    ns = LaunchConfiguration("namespace").perform(context)  # every robot-side node in it, as FBL:127-188
    controllers, written = for_any_namespace(controllers, namespace_of(context, ns))
    robot_ip = LaunchConfiguration("robot_ip").perform(context)
    description = {"robot_description": fr3_urdf(robot_ip, fake, boolean(context, "fake_sensor_commands"))}
    rate = int(LaunchConfiguration("joint_state_rate").perform(context))
    nodes = [
        Node(package="robot_state_publisher", executable="robot_state_publisher", name="robot_state_publisher",
             namespace=ns, output="both", parameters=[description], on_exit=Shutdown()),
        Node(package="controller_manager", executable="ros2_control_node", namespace=ns,
             parameters=[description, controllers], remappings=[("joint_states", "franka/joint_states")],
             output="screen", on_exit=Shutdown()),
        # the spawner's default --controller-manager is the relative controller_manager, in its own namespace: the
        # ros2_control_node's (FBL:161-171 passes none)
        *[Node(package="controller_manager", executable="spawner", namespace=ns, output="screen",
               arguments=[name, "--controller-manager-timeout", "60"]) for name in spawned],
        Node(package="joint_state_publisher", executable="joint_state_publisher", name="joint_state_publisher",
             namespace=ns, parameters=[{"source_list": ["franka/joint_states", f"{GRIPPER_NODE}/joint_states"],
                                        "rate": rate}], on_exit=Shutdown()),
    ]
    if fake:  # upstream's fake gripper serves no action (gripper.launch.py:52-60): this package's mock does
        nodes.append(Node(package="step_planner", executable="franka_gripper", name=GRIPPER_NODE, namespace=ns,
                          output="screen", parameters=[{"fake_hardware": True}], on_exit=Shutdown()))
    else:
        gripper_config = os.path.join(get_package_share_directory("franka_gripper"), "config",
                                      "franka_gripper_node.yaml")
        # franka_gripper/launch/gripper.launch.py:42-51
        nodes.append(Node(package="franka_gripper", executable="franka_gripper_node", name=GRIPPER_NODE,
                          namespace=ns, parameters=[{"robot_ip": robot_ip, "joint_names": ["fr3_finger_joint1",
                                                                                         "fr3_finger_joint2"]},
                                                    gripper_config], on_exit=Shutdown()))
    # the node in the robot's namespace: the boundary's names resolve under it (config/robot_boundary.yaml)
    node = step_planner_node(extra_parameters=[{"backend": "controllers", "controllers.robot": "fr3",
                                                "controllers.fake_hardware": fake}], namespace=ns)
    return [*written, *nodes, node, *viewer]


def generate_launch_description() -> LaunchDescription:
    return described(FILE, [*arguments(backend="controllers", confirm_goal="approval_mode"),
                            *franka_arguments(("fr3",), robot_ip="172.16.0.3")],
                     OpaqueFunction(function=launch_setup))
