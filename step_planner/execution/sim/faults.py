"""The faults the MuJoCo robot can be asked to make happen (its ``~/inject_fault``, ``step-planner fault``).

Plain names, no MuJoCo: the command line lists them without loading the simulator.
"""

from __future__ import annotations

FAULTS = ("slip", "miss_place", "drawer_short", "reflex")
# reflex faults (FR3 with a controller manager): the errors franka_ros2 reports, one flag each in franka_msgs/msg/
# Errors.msg (franka_ros2@29cb85a, jazzy, lines 1-36: libfranka's include/franka/errors.h), in that order; the
# broadcaster's current_errors / last_motion_errors then name the one injected (test_fr3_reflex.py checks the list
# against the message's fields)
REFLEXES = ("joint_position_limits_violation", "cartesian_position_limits_violation",
            "self_collision_avoidance_violation", "joint_velocity_violation", "cartesian_velocity_violation",
            "force_control_safety_violation", "joint_reflex", "cartesian_reflex", "max_goal_pose_deviation_violation",
            "max_path_pose_deviation_violation", "cartesian_velocity_profile_safety_violation",
            "joint_position_motion_generator_start_pose_invalid", "joint_motion_generator_position_limits_violation",
            "joint_motion_generator_velocity_limits_violation", "joint_motion_generator_velocity_discontinuity",
            "joint_motion_generator_acceleration_discontinuity",
            "cartesian_position_motion_generator_start_pose_invalid",
            "cartesian_motion_generator_elbow_limit_violation", "cartesian_motion_generator_velocity_limits_violation",
            "cartesian_motion_generator_velocity_discontinuity",
            "cartesian_motion_generator_acceleration_discontinuity",
            "cartesian_motion_generator_elbow_sign_inconsistent", "cartesian_motion_generator_start_elbow_invalid",
            "cartesian_motion_generator_joint_position_limits_violation",
            "cartesian_motion_generator_joint_velocity_limits_violation",
            "cartesian_motion_generator_joint_velocity_discontinuity",
            "cartesian_motion_generator_joint_acceleration_discontinuity",
            "cartesian_position_motion_generator_invalid_frame", "force_controller_desired_force_tolerance_violation",
            "controller_torque_discontinuity", "start_elbow_sign_inconsistent", "communication_constraints_violation",
            "power_limit_violation", "joint_p2p_insufficient_torque_for_planning", "tau_j_range_violation",
            "instability_detected")
DEFAULT_REFLEX = "cartesian_reflex"  # `step-planner fault reflex` without a name: a collision's reflex
