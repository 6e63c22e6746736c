"""The task world in Gazebo (gz sim) with the package's Gazebo-ready Panda, and the node driving it.

    ros2 launch step_planner gazebo.launch.py scene:=drawer_desk                   # node: controllers backend
    ros2 launch step_planner gazebo.launch.py scene:=drawer_desk backend:=moveit   # node: MoveIt (move_group)
    step-planner send "put the tape and the screwdriver in the drawer"            # a goal, or instead:
    step-planner replay EPISODE --controllers                                     # replay a recorded episode

What starts:
- Gazebo on the scene's world, exported at launch from the same geometry description as the MuJoCo model
  (``step-planner export-world``: table, cabinets with drawers, trays, objects, pose publishers), ``-r`` (running);
  ``gui:=false`` runs the server only;
- the Panda of ``config/gazebo/panda_gazebo.urdf.xacro`` (a world link, gz_ros2_control with
  ``config/ros2_controllers_panda.yaml``) through robot_state_publisher and ``ros_gz_sim create``, with
  GZ_SIM_RESOURCE_PATH extended by the share parents of moveit_resources_panda_description and step_planner
  (franka_gazebo_bringup does the same: gazebo_franka_arm_example_controller.launch.py:149-150);
- one ros_gz_bridge with the exported config file: ``/clock`` (Gazebo is the only clock) and every model's poses
  onto ``/model_poses`` (tf2_msgs/TFMessage; see step_planner/execution/gazebo/world_sdf.py);
- the controllers of ``config/ros2_controllers_panda.yaml``, spawned once the arm exists in Gazebo;
- then the node with sim time and ``backend:=controllers`` (the boundary of config/robot_boundary.yaml, robot
  panda), or with ``backend:=moveit`` move_group and the Panda MoveIt config over the same robot description.

Needs ros-jazzy-ros-gz, ros-jazzy-gz-ros2-control, ros-jazzy-ros2-controllers, ros-jazzy-xacro and
ros-jazzy-moveit-resources-panda-description (backend moveit: MoveIt and its Panda config too). Written against
ros_gz_sim's gz_sim.launch.py and create, ros_gz_bridge's config_file, gz_ros2_control and controller_manager's
spawner; it has NOT been run here (no Gazebo on the dev machine): test/test_gazebo_launch.py checks statically that
its controllers, actions and topics agree with the config files and the client. Optional packages are imported
only in launch_setup after a check, so ``--show-args`` works without them (see launch_common).
"""

import os
import tempfile

from ament_index_python.packages import get_package_share_directory
from launch.actions import (
    DeclareLaunchArgument,
    IncludeLaunchDescription,
    OpaqueFunction,
    RegisterEventHandler,
    SetEnvironmentVariable,
    Shutdown,
)
from launch.event_handlers import OnProcessExit
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import Command, LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

from launch import LaunchDescription
from step_planner.ros.launch_common import (
    MOVEIT_ROSDEP,
    arguments,
    boolean,
    described,
    import_from,
    later_in_this_scope,
    package_file,
    removed_at_shutdown,
    require,
    rviz,
    step_planner_node,
)

MOVEIT_CONFIG = "moveit_resources_panda_moveit_config"
PANDA_DESCRIPTION = "moveit_resources_panda_description"
# config/ros2_controllers_panda.yaml's controllers, broadcaster first (test/test_gazebo_launch.py checks the names)
CONTROLLERS = ["joint_state_broadcaster", "panda_arm_controller", "panda_hand_controller"]
GAZEBO_NEEDS = ["ros_gz_sim", "ros_gz_bridge", "gz_ros2_control", "robot_state_publisher", "controller_manager",
                "joint_trajectory_controller", "gripper_controllers", "joint_state_broadcaster", "xacro",
                PANDA_DESCRIPTION]
MOVEIT_NEEDS = ["moveit_ros_move_group", "moveit_configs_utils", "moveit_py", MOVEIT_CONFIG]


def world_files(scene: str, seed: int) -> tuple[str, str]:
    """The scene's SDF world and its bridge config, written to a fresh folder (export-world, at launch)."""
    import yaml

    from step_planner.domain.scene import load_scene
    from step_planner.domain.scene_geometry import scene_geometry
    from step_planner.execution.gazebo.world_sdf import bridge_config, world_sdf
    from step_planner.resources import config_path

    path = scene if os.path.isfile(scene) else str(config_path("scenes", f"{scene.removesuffix('.yaml')}.yaml"))
    geometry = scene_geometry(load_scene(path), seed)
    name = os.path.splitext(os.path.basename(path))[0]
    folder = tempfile.mkdtemp(prefix="step_planner_gz_")
    world, bridge = os.path.join(folder, f"{name}.sdf"), os.path.join(folder, f"{name}_bridge.yaml")
    with open(world, "w") as f:
        f.write(world_sdf(geometry, name))
    with open(bridge, "w") as f:
        yaml.safe_dump(bridge_config(geometry, "/model_poses"), f, sort_keys=False)
    return world, bridge


def launch_setup(context) -> list:
    backend = LaunchConfiguration("backend").perform(context)
    if backend == "moveit":
        require("gazebo.launch.py", *GAZEBO_NEEDS, *MOVEIT_NEEDS, hint=MOVEIT_ROSDEP)
    else:
        require("gazebo.launch.py", *GAZEBO_NEEDS)
    viewer = rviz(context)  # its argument checked before any file is written
    description_file = LaunchConfiguration("description_file").perform(context) or \
        package_file("config", "gazebo", "panda_gazebo.urdf.xacro")
    world, bridge_file = world_files(LaunchConfiguration("scene").perform(context),
                                     int(LaunchConfiguration("seed").perform(context)))
    sim_time = {"use_sim_time": True}
    robot_description = {"robot_description": ParameterValue(Command(["xacro ", description_file]), value_type=str)}

    shares = [os.path.dirname(get_package_share_directory(p)) for p in (PANDA_DESCRIPTION, "step_planner")]
    resource_path = os.pathsep.join([*shares, os.environ.get("GZ_SIM_RESOURCE_PATH", "")]).rstrip(os.pathsep)
    headless = not boolean(context, "gui")
    gazebo = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(
            os.path.join(get_package_share_directory("ros_gz_sim"), "launch", "gz_sim.launch.py")),
        launch_arguments={"gz_args": f"-r {'-s ' if headless else ''}{world}", "on_exit_shutdown": "true"}.items(),
    )
    bridge = Node(package="ros_gz_bridge", executable="parameter_bridge", output="screen",
                  parameters=[{"config_file": bridge_file}, sim_time], on_exit=Shutdown())
    robot_state_publisher = Node(package="robot_state_publisher", executable="robot_state_publisher",
                                 output="screen", parameters=[robot_description, sim_time], on_exit=Shutdown())
    spawn = Node(package="ros_gz_sim", executable="create", output="screen",
                 arguments=["-topic", "robot_description", "-name", "panda", "-allow_renaming", "true"])
    spawners = [Node(package="controller_manager", executable="spawner", output="screen",
                     arguments=[name, "--controller-manager", "/controller_manager"]) for name in CONTROLLERS]
    if backend == "moveit":
        builder = import_from("gazebo.launch.py", "moveit_configs_utils", "MoveItConfigsBuilder",
                              "moveit_configs_utils", hint=MOVEIT_ROSDEP)
        moveit_config = (
            builder(robot_name="panda", package_name=MOVEIT_CONFIG)
            .robot_description(file_path=description_file)
            .trajectory_execution(file_path="config/gripper_moveit_controllers.yaml")
            .planning_pipelines(pipelines=["ompl", "pilz_industrial_motion_planner"])
            .moveit_cpp(file_path=package_file("config", "moveit_cpp.yaml"))
            .to_moveit_configs()
        )
        move_group = Node(package="moveit_ros_move_group", executable="move_group", output="screen",
                          parameters=[moveit_config.to_dict(), sim_time])
        last = [move_group, step_planner_node(extra_parameters=[moveit_config.to_dict(), sim_time])]
    else:
        # gz_ros2_control's controller manager and the bridge's topics stay in the root namespace whatever namespace
        # a parent pushes (the plugin's namespace comes from the URDF; the bridge config's names are absolute)
        last = [step_planner_node(extra_parameters=[{"controllers.robot": "panda", "controllers.namespace": "/"},
                                                    sim_time])]
    # the controllers once the arm exists in Gazebo; the node (and move_group) once they run
    # (with the namespace, remaps and parameters a parent pushed around this file, gone by the time they start)
    after_spawn = RegisterEventHandler(OnProcessExit(target_action=spawn,
                                                     on_exit=[later_in_this_scope(context, spawners)]))
    after_controllers = RegisterEventHandler(OnProcessExit(target_action=spawners[-1],
                                                           on_exit=[later_in_this_scope(context, last)]))
    return [removed_at_shutdown(os.path.dirname(world)),  # the world and bridge files written above
            SetEnvironmentVariable("GZ_SIM_RESOURCE_PATH", resource_path), gazebo, bridge, robot_state_publisher,
            spawn, after_spawn, after_controllers, *viewer]


def generate_launch_description() -> LaunchDescription:
    return described("gazebo.launch.py", [
        *arguments(backend="controllers"),
        DeclareLaunchArgument("description_file", default_value="",
                              description="Robot xacro with the gz_ros2_control plugin; empty = the package's "
                                          "config/gazebo/panda_gazebo.urdf.xacro"),
        DeclareLaunchArgument("seed", default_value="0",
                              description="Jitter the objects' start poses as the simulators' seed does (0: none)"),
        DeclareLaunchArgument("gui", default_value="true",
                              description="Gazebo's window; false runs the server only"),
    ], OpaqueFunction(function=launch_setup))
