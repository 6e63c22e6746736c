"""step_planner on a Franka Panda through MoveIt 2 (moveit_py), with MoveIt's Panda demo config.

    ros2 launch moveit_resources_panda_moveit_config demo.launch.py      # MoveIt + mock or real controllers
    ros2 launch step_planner franka.launch.py approval_mode:=true         # then this

Needs ros-jazzy-moveit-py and ros-jazzy-moveit-resources-panda-moveit-config. For an FR3 use
franka_fr3_moveit_config and set `robot: fr3` in config/franka.yaml. Written against the documented
moveit_configs_utils and launch_ros APIs; it has not been run here (no MoveIt on the dev machine).
"""

from moveit_configs_utils import MoveItConfigsBuilder

from launch import LaunchDescription
from step_planner.ros.launch_common import arguments, package_file, step_planner_node


def moveit_configs():
    """The Panda MoveIt config plus the moveit_py settings the backend uses (pipelines, plan requests)."""
    return (
        MoveItConfigsBuilder(robot_name="panda", package_name="moveit_resources_panda_moveit_config")
        .robot_description(file_path="config/panda.urdf.xacro")
        .trajectory_execution(file_path="config/gripper_moveit_controllers.yaml")
        .planning_pipelines(pipelines=["ompl", "pilz_industrial_motion_planner"])
        .moveit_cpp(file_path=package_file("config", "moveit_cpp.yaml"))
        .to_moveit_configs()
    )


def generate_launch_description() -> LaunchDescription:
    moveit_config = moveit_configs()
    # launch_ros writes these into a params file for the whole process ("/**"), so the MoveItPy
    # node the backend creates inside step_planner_node ("step_planner_moveit") receives them too.
    node = step_planner_node(extra_parameters=[moveit_config.to_dict()])
    return LaunchDescription([*arguments(backend="moveit", confirm_goal="approval_mode"), node])
