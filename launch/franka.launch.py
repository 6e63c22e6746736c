"""step_planner on a Franka Panda through MoveIt 2 (moveit_py), with MoveIt's Panda demo config.

    ros2 launch moveit_resources_panda_moveit_config demo.launch.py      # MoveIt + mock or real controllers
    ros2 launch step_planner franka.launch.py approval_mode:=true         # then this

Needs ros-jazzy-moveit-py and ros-jazzy-moveit-resources-panda-moveit-config. For an FR3 use
franka_fr3_moveit_config and set `robot: fr3` in config/franka.yaml. Written against the documented
moveit_configs_utils and launch_ros APIs; it has not been run here (no MoveIt on the dev machine).
MoveIt is imported only in launch_setup, so `--show-args` works without it (see launch_common).
"""

from launch.actions import OpaqueFunction

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


def moveit_configs():
    """The Panda MoveIt config plus the moveit_py settings the backend uses (pipelines, plan requests)."""
    builder = import_from("franka.launch.py", "moveit_configs_utils", "MoveItConfigsBuilder", "moveit_configs_utils",
                          hint=MOVEIT_ROSDEP)
    return (
        builder(robot_name="panda", package_name=MOVEIT_CONFIG)
        .robot_description(file_path="config/panda.urdf.xacro")
        .trajectory_execution(file_path="config/gripper_moveit_controllers.yaml")
        .planning_pipelines(pipelines=["ompl", "pilz_industrial_motion_planner"])
        .moveit_cpp(file_path=package_file("config", "moveit_cpp.yaml"))
        .to_moveit_configs()
    )


def launch_setup(context) -> list:
    """Everything MoveIt, checked before anything starts."""
    require("franka.launch.py", "moveit_configs_utils", "moveit_py", MOVEIT_CONFIG, hint=MOVEIT_ROSDEP)
    moveit_config = moveit_configs()
    # launch_ros writes these into a params file for the whole process ("/**"), so the MoveItPy
    # node the backend creates inside step_planner_node ("step_planner_moveit") receives them too.
    return [step_planner_node(extra_parameters=[moveit_config.to_dict()])]


def generate_launch_description() -> LaunchDescription:
    return LaunchDescription([*arguments(backend="moveit", confirm_goal="approval_mode"),
                              OpaqueFunction(function=launch_setup)])
