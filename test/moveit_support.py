"""MoveIt's parameters for the moveit_py stand-in, as the launch file hands them to the node's process.

The stand-in's MoveItPy reads the ``--params-file`` files it is given by rcl's node-name rules and builds its robot
model from the URDF's robot name (test/moveit_standin/moveit/_params.py, _models.py); these files are what
launch/franka.launch.py writes, under ``/**``:

- the FR3: ``step_planner.ros.moveit_params.fr3_parameters``, the launch file's own composition, over a stand-in
  franka_fr3_moveit_config folder holding the two files it reads (kinematics.yaml, fr3_joint_limits.yaml; upstream's
  full files are in franka_ros2@29cb85a franka_fr3_moveit_config/config/) and a URDF/SRDF naming the robot;
- the Panda: what MoveItConfigsBuilder gives for moveit_resources_panda_moveit_config (not installable here), reduced
  to what the stand-in reads: the descriptions, config/moveit_cpp.yaml, and the MoveIt controllers of
  config/gripper_moveit_controllers.yaml (moveit/moveit_resources@ef5836d, :11-32).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from step_planner.ros.moveit_params import fr3_parameters, write_params_file

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "config"
PANDA_ARM = [f"panda_joint{i}" for i in range(1, 8)]


def panda_parameters() -> dict[str, Any]:
    return {
        "robot_description": '<robot name="panda"/>',
        "robot_description_semantic": '<robot name="panda"/>',
        "moveit_simple_controller_manager": {
            "controller_names": ["panda_arm_controller", "panda_hand_controller"],
            "panda_arm_controller": {"action_ns": "follow_joint_trajectory", "type": "FollowJointTrajectory",
                                     "default": True, "joints": PANDA_ARM},
            "panda_hand_controller": {"action_ns": "gripper_cmd", "type": "GripperCommand", "default": True,
                                      "joints": ["panda_finger_joint1"]},
        },
        **yaml.safe_load((CONFIG / "moveit_cpp.yaml").read_text()),
    }


def fr3_config_share(directory: Path) -> Path:
    """A franka_fr3_moveit_config share folder with the two files fr3_parameters reads."""
    config = directory / "franka_fr3_moveit_config" / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "kinematics.yaml").write_text(yaml.safe_dump(
        {"fr3_arm": {"kinematics_solver": "kdl_kinematics_plugin/KDLKinematicsPlugin"}}))
    (config / "fr3_joint_limits.yaml").write_text(yaml.safe_dump(
        {"joint_limits": {f"fr3_joint{i}": {"has_acceleration_limits": True, "max_acceleration": 3.75}
                          for i in range(1, 8)}}))
    return config.parent


def moveit_parameters(robot: str, directory: Path) -> dict[str, Any]:
    if robot == "panda":
        return panda_parameters()
    return fr3_parameters('<robot name="fr3"/>', '<robot name="fr3"/>', fr3_config_share(directory), CONFIG)


def params_file(robot: str, directory: Path, **overrides: Any) -> str:
    """The ``/**`` parameter file franka.launch.py would write for ``robot`` (``overrides`` replace top keys)."""
    return write_params_file({**moveit_parameters(robot, directory), **overrides}, str(directory))
