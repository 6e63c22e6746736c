"""MoveIt's parameters for the in-process MoveItPy: composed for the FR3, written for every node of the process.

WHY: the moveit backend creates MoveItPy inside the step_planner node's process; MoveItPy's C++ node reads only the
``--params-file`` files of the process, and only the blocks whose key matches its own fully qualified name
(moveit2@4d84106 moveit_py/src/moveit/moveit_ros/moveit_cpp/moveit_cpp.cpp:72-124; rclpy/rclcpp's node-name
matching, ros2/rclpy@85415f7 rclpy/src/rclpy/node.cpp:300-318). A dict given to launch_ros's Node is written under
the node's own name as soon as the node has a name and a namespace (ros2/launch_ros jazzy
launch_ros/actions/node.py:365-377), so under a namespace MoveIt's parameters would go to ``/ns/step_planner`` and
never reach ``/ns/step_planner_moveit``. Here they are written under ``/**``, which matches every node.

The FR3 composition follows franka_ros2's franka_fr3_moveit_config/launch/moveit.launch.py (frankarobotics/
franka_ros2@29cb85a, ``FML``) and adds what that config lacks for this backend (``config/fr3_moveit/``): OMPL
settings for the ``fr3_arm`` group (FML's ompl_planning.yaml names only Panda groups, :126-177 of that file), the
Pilz pipeline and its Cartesian limits (the straight segments), planning pipelines by name for MoveItCpp
(FML sets none, so move_group falls back to the deprecated ``move_group`` pipeline), and MoveIt controllers that
name only the arm (FML's fr3_controllers.yaml:18-24 points the gripper at ``fr3_gripper/gripper_action``, which
nothing serves: franka_gripper serves ``franka_gripper/gripper_action``). Pure Python: no launch, no MoveIt.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import yaml

from step_planner.config_schema import parse_yaml

EVERY_NODE = "/**"


def load_yaml(path: str | Path) -> Any:
    return parse_yaml(Path(path).read_text())


def write_params_file(params: dict[str, Any], directory: str | None = None) -> str:
    """``params`` under ``/**`` in a new parameter file (kept for the process's lifetime, as launch_ros's)."""
    with tempfile.NamedTemporaryFile("w", prefix="step_planner_moveit_", suffix=".yaml", delete=False,
                                     dir=directory) as handle:
        yaml.safe_dump({EVERY_NODE: {"ros__parameters": params}}, handle, default_flow_style=False)
        return handle.name


def fr3_parameters(robot_description: str, robot_description_semantic: str, fr3_moveit_config: Path,
                   ours: Path) -> dict[str, Any]:
    """Everything MoveItPy needs for the FR3.

    ``fr3_moveit_config``: franka_fr3_moveit_config's share folder (its config/kinematics.yaml and
    config/fr3_joint_limits.yaml are used as FML:103-117 uses them); ``ours``: this package's config folder.
    """
    upstream = fr3_moveit_config / "config"
    shipped = ours / "fr3_moveit"
    planning = {**(load_yaml(upstream / "fr3_joint_limits.yaml") or {}),
                **(load_yaml(shipped / "pilz_cartesian_limits.yaml") or {})}
    controllers = load_yaml(shipped / "moveit_controllers.yaml") or {}
    params: dict[str, Any] = {
        "robot_description": robot_description,  # FML:82-88
        "robot_description_semantic": robot_description_semantic,  # FML:90-101
        "robot_description_kinematics": load_yaml(upstream / "kinematics.yaml"),  # FML:103-109
        "robot_description_planning": planning,  # FML:111-117, plus Pilz's cartesian_limits
        "ompl": load_yaml(shipped / "ompl_planning.yaml"),
        "pilz_industrial_motion_planner": load_yaml(shipped / "pilz_industrial_motion_planner_planning.yaml"),
        **controllers,  # moveit_simple_controller_manager, moveit_controller_manager, trajectory_execution
        **(load_yaml(ours / "moveit_cpp.yaml") or {}),  # planning_pipelines, scene monitor, plan request blocks
    }
    return params
