"""step_planner on a Franka through MoveIt 2 (moveit_py): the FR3 with franka_ros2 (Jazzy), or the Panda demo.

    ros2 launch step_planner franka.launch.py robot_ip:=<ip>                      # the FR3 (approval mode first!)
    ros2 launch step_planner franka.launch.py use_fake_hardware:=true             # the FR3 without the arm
    ros2 launch step_planner franka.launch.py robot_type:=panda                   # the Panda, with moveit_resources'
                                                                                  # demo.launch.py running beside it

The robot's arguments are franka_bringup's (franka_bringup/launch/franka.launch.py, ``FBL``: robot_type, robot_ip,
load_gripper, use_fake_hardware, fake_sensor_commands, namespace, arm_prefix, joint_state_rate,
load_franka_robot_state_broadcaster, controllers_yaml) with its defaults,
except where launch_common.FRANKA_DIFFERENCES says why; booleans read as franka_ros2 reads them (true/false in any
case). ``robot:=`` (before robot_type) still works, with a deprecation warning. An argument the file does not
declare, arm_prefix, load_gripper:=false, or a robot_type other than fr3/panda stops the launch before anything
starts. Every robot-side node ends the launch when it exits (on_exit: Shutdown, as FBL:146), and the MoveIt
parameter file written for the node is removed when the launch shuts down.

robot_type:=fr3 brings the arm up the way franka_ros2's franka_fr3_moveit_config/launch/moveit.launch.py does
(frankarobotics/franka_ros2@29cb85a, ``FML``; the pieces of franka_bringup/launch/franka.launch.py, ``FBL``):
robot_state_publisher on franka_bringup's xacro, ros2_control_node with the arm controller (joint states remapped to
franka/joint_states), spawners for fr3_arm_controller and joint_state_broadcaster, joint_state_publisher merging
franka/joint_states and franka_gripper/joint_states into joint_states, franka_robot_state_broadcaster on the real
arm, and franka_gripper's node as its gripper.launch.py:42-51 starts it (started here, not included, so that
its exit ends the launch too). It differs from FML where FML would not work with this backend
(docs/moveit_backend.md): no move_group (MoveItPy plans and executes in the node), MoveIt's parameters composed by
step_planner/ros/moveit_params.py with what franka_fr3_moveit_config lacks (config/fr3_moveit/), the joint-state
merge names franka_gripper (FML:246-253 names fr3_gripper, which nothing publishes), and with use_fake_hardware:=true
a position-commanded arm controller (config/fr3_moveit/fake_hardware_controllers.yaml) and this package's
franka_gripper on a mock hand instead of franka's fixed finger-state publisher (which serves no action).

MoveIt's parameters are written for every node of the process (``/**``), so MoveItPy inside the node gets them in
any namespace (namespace:=). Written against franka_ros2 jazzy, moveit_configs_utils and launch_ros; it has not
been run here (no MoveIt, franka_ros2 or arm on the dev machine). MoveIt, xacro and franka_ros2 are imported only
in launch_setup, after a check that they are installed, so ``--show-args`` works without them (see launch_common).
"""

import os

from launch.actions import OpaqueFunction, Shutdown
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from launch import LaunchDescription
from step_planner.ros.launch_common import (
    MOVEIT_ROSDEP,
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
    removed_at_shutdown,
    require,
    robot_state_broadcaster,
    robot_type,
    rviz,
    step_planner_node,
)

FILE = "franka.launch.py"
ROBOT_TYPES = ("fr3", "panda")
PANDA_CONFIG = "moveit_resources_panda_moveit_config"
FR3_PACKAGES = ["franka_bringup", "franka_description", "franka_fr3_moveit_config", "franka_hardware",
                "controller_manager", "robot_state_publisher", "joint_state_publisher", "xacro", "moveit_py"]
FR3_CONTROLLERS = ["fr3_arm_controller", "joint_state_broadcaster"]  # FML:232-244
FRANKA_HINT = "franka_ros2 jazzy built in the robot's workspace: https://github.com/frankarobotics/franka_ros2"


def text(flag: bool) -> str:
    return "true" if flag else "false"


def panda_parameters() -> dict:
    """The Panda MoveIt config plus the moveit_py settings the backend uses (pipelines, plan requests)."""
    builder = import_from(FILE, "moveit_configs_utils", "MoveItConfigsBuilder", "moveit_configs_utils",
                          hint=MOVEIT_ROSDEP)
    return (
        builder(robot_name="panda", package_name=PANDA_CONFIG)
        .robot_description(file_path="config/panda.urdf.xacro")
        .trajectory_execution(file_path="config/gripper_moveit_controllers.yaml")
        .planning_pipelines(pipelines=["ompl", "pilz_industrial_motion_planner"])
        .moveit_cpp(file_path=package_file("config", "moveit_cpp.yaml"))
        .to_moveit_configs()
        .to_dict()
    )


def fr3_description(context) -> tuple[str, str]:
    """robot_description and robot_description_semantic as FML:82-101 makes them (xacro, hand on, franka_hand)."""
    from ament_index_python.packages import get_package_share_directory

    process_file = import_from(FILE, "xacro", "process_file", "xacro")
    urdf = process_file(os.path.join(get_package_share_directory("franka_bringup"), "urdf", "franka_arm.urdf.xacro"),
                        mappings={"hand": "true", "robot_type": "fr3", "ee_id": "franka_hand",
                                  "robot_ip": LaunchConfiguration("robot_ip").perform(context),
                                  "use_fake_hardware": text(boolean(context, "use_fake_hardware")),
                                  "fake_sensor_commands": text(boolean(context, "fake_sensor_commands"))})
    srdf = process_file(os.path.join(get_package_share_directory("franka_description"), "robots", "fr3",
                                     "fr3.srdf.xacro"), mappings={"hand": "true", "ee_id": "franka_hand"})
    return urdf.toprettyxml(indent="  "), srdf.toprettyxml(indent="  ")


def fr3_nodes(context, robot_description: str) -> list:
    """The FR3 bring-up of FML:203-298 without move_group and RViz (see the module docstring for the changes)."""
    from ament_index_python.packages import get_package_share_directory

    ns = LaunchConfiguration("namespace").perform(context)
    fake = boolean(context, "use_fake_hardware")
    description = {"robot_description": robot_description}
    broadcaster = robot_state_broadcaster(context)
    spawned = [*FR3_CONTROLLERS, *(["franka_robot_state_broadcaster"] if broadcaster else [])]
    controllers = controllers_file(context, FILE, package_file("config", "fr3_moveit", "fake_hardware_controllers.yaml")
                                   if fake else os.path.join(get_package_share_directory("franka_fr3_moveit_config"),
                                                             "config", "fr3_ros_controllers.yaml"), spawned)
    controllers, written = for_any_namespace(controllers, namespace_of(context, ns))
    rate = int(LaunchConfiguration("joint_state_rate").perform(context))
    nodes = [
        *written,
        Node(package="robot_state_publisher", executable="robot_state_publisher", name="robot_state_publisher",
             namespace=ns, output="both", parameters=[description], on_exit=Shutdown()),  # FML:204-211
        Node(package="controller_manager", executable="ros2_control_node", namespace=ns,
             parameters=[description, controllers], remappings=[("joint_states", "franka/joint_states")],
             output="screen", on_exit=Shutdown()),  # FML:218-229; on_exit as FBL:146
        *[Node(package="controller_manager", executable="spawner", namespace=ns, output="screen",
               arguments=[name, "--controller-manager-timeout", "60"])  # the manager in its namespace (FBL:161-171)
          for name in FR3_CONTROLLERS],  # FML:232-244
        Node(package="joint_state_publisher", executable="joint_state_publisher", name="joint_state_publisher",
             namespace=ns, parameters=[{"source_list": ["franka/joint_states", "franka_gripper/joint_states"],
                                        "rate": rate}], on_exit=Shutdown()),  # FML:246-253, FBL:121-125's names
    ]
    if fake:  # franka's fake gripper serves no action (gripper.launch.py:52-60): the mock of this package does
        nodes.append(Node(package="step_planner", executable="franka_gripper", name="franka_gripper", namespace=ns,
                          output="screen", parameters=[{"fake_hardware": True}], on_exit=Shutdown()))
        return nodes
    require(FILE, "franka_gripper", *(["franka_robot_state_broadcaster"] if broadcaster else []), hint=FRANKA_HINT)
    if broadcaster:  # FML:255-262; FBL:174-188 (load_franka_robot_state_broadcaster, not on fake hardware)
        nodes.append(Node(package="controller_manager", executable="spawner", namespace=ns, output="screen",
                          arguments=["franka_robot_state_broadcaster"]))
    return [*nodes, gripper_node(context, ns)]


def gripper_node(context, ns: str) -> Node:
    """franka_gripper's node on the real hand, as franka_gripper/launch/gripper.launch.py:25-51 starts it."""
    from ament_index_python.packages import get_package_share_directory

    config = os.path.join(get_package_share_directory("franka_gripper"), "config", "franka_gripper_node.yaml")
    return Node(package="franka_gripper", executable="franka_gripper_node", name="franka_gripper", namespace=ns,
                parameters=[{"robot_ip": LaunchConfiguration("robot_ip").perform(context),
                             "joint_names": ["fr3_finger_joint1", "fr3_finger_joint2"]}, config],
                on_exit=Shutdown())


def launch_setup(context) -> list:
    """Everything MoveIt and franka_ros2, checked before anything starts."""
    from pathlib import Path

    from step_planner.ros.moveit_params import fr3_parameters, write_params_file

    robot = robot_type(context, FILE, ROBOT_TYPES)
    franka_checks(context, FILE)
    ns = LaunchConfiguration("namespace").perform(context)
    nodes: list = []
    if robot == "panda":
        require(FILE, "moveit_configs_utils", "moveit_py", PANDA_CONFIG, hint=MOVEIT_ROSDEP)
        params = panda_parameters()
    else:
        require(FILE, *FR3_PACKAGES, hint=f"{MOVEIT_ROSDEP}; {FRANKA_HINT}")
        if not boolean(context, "use_fake_hardware") and not LaunchConfiguration("robot_ip").perform(context):
            raise RuntimeError(f"{FILE}: robot_type:=fr3 needs robot_ip:=<the arm's address> "
                               "(or use_fake_hardware:=true for a dry run without the arm)")
        from ament_index_python.packages import get_package_share_directory

        urdf, srdf = fr3_description(context)
        params = fr3_parameters(urdf, srdf, Path(get_package_share_directory("franka_fr3_moveit_config")),
                                Path(package_file("config", "moveit_cpp.yaml")).parent)
        nodes = fr3_nodes(context, urdf)
    viewer = rviz(context, fixed_frame=f"{robot}_link0")
    # For every node of the process (key /**), MoveItPy's in any namespace included (moveit_params.py); written
    # last, after every check, and removed at the launch's shutdown
    moveit = Path(write_params_file(params))
    node = step_planner_node(extra_parameters=[moveit, {"moveit.robot": robot}, {"markers.frame": f"{robot}_link0"}],
                             namespace=ns)
    return [removed_at_shutdown(str(moveit)), *nodes, node, *viewer]


def generate_launch_description() -> LaunchDescription:
    return described(FILE, [*arguments(backend="moveit", confirm_goal="approval_mode"),
                            *franka_arguments(ROBOT_TYPES, robot_ip="172.16.0.3")],
                     OpaqueFunction(function=launch_setup))
