"""The MuJoCo robot's servo modes (execution/sim/servo.py) against what upstream's source says they do.

gazebo: gz_ros2_control's position loop (gz_system.cpp:641-660 @fa9ced4) lags a ramp by v (1/gain - 1) / rate, so
the default gain 0.1 breaks the backend's 0.1 rad path tolerance on a fast joint and the shipped xacro's does not.
fr3_effort: franka_ros2's fr3_arm_controller (fr3_ros_controllers.yaml:35-42 @29cb85a) commands p e + d de as torque.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from step_planner.domain.scene import load_scene
from step_planner.execution.controllers.trajectory import waypoints
from step_planner.execution.sim.controller_emulation import (
    PATH_TOLERANCE_VIOLATED,
    SUCCESSFUL,
    GripperParams,
    JointToleranceSpec,
    TrajectoryGoal,
    TrajectoryParams,
    TrajectoryPoint,
)
from step_planner.execution.sim.model import ARM_JOINTS, FINGER_JOINTS, HOME_Q
from step_planner.execution.sim.robot import SimRobot
from step_planner.execution.sim.servo import GZ_DEFAULT_GAIN, Servo, ServoSpec, parse_mode, xacro_position_gain
from step_planner.execution.sim.timing import time_parameterize
from step_planner.resources import config_path

FR3_JOINTS = tuple(f"fr3_joint{i}" for i in range(1, 8))
SHIPPED_XACRO = config_path("gazebo", "panda_gazebo.urdf.xacro")
PATH_TOL = 0.1  # config/robot_boundary.yaml trajectory.path_tolerance


def fr3_params() -> TrajectoryParams:
    data = yaml.safe_load(Path(config_path("ros2_controllers_fr3.yaml")).read_text())
    rate = data["controller_manager"]["ros__parameters"]["update_rate"]
    return TrajectoryParams.from_ros_parameters(data["fr3_arm_controller"]["ros__parameters"], rate)


def make_robot(spec: ServoSpec, params: TrajectoryParams | None = None, joints=ARM_JOINTS) -> SimRobot:
    return SimRobot(load_scene(config_path("scenes", "drawer_desk.yaml")),
                    params or TrajectoryParams(ARM_JOINTS, update_rate=100.0), GripperParams(FINGER_JOINTS[0]),
                    arm_joints=joints, finger_joints=FINGER_JOINTS, realtime_factor=0.0, servo=spec)


def run(r: SimRobot, points, joints, seconds: float = 8.0, on_step=None):
    """Send a goal with the backend's tolerances; returns (its end, the largest |error| per joint in feedback)."""
    goal = TrajectoryGoal(joints, tuple(points), path_tolerance=tuple(JointToleranceSpec(j, PATH_TOL) for j in joints),
                          goal_tolerance=tuple(JointToleranceSpec(j, 0.005) for j in joints), goal_time_tolerance=1.0)
    assert r.trajectory_goal("g", goal) is None
    worst, errors, end = np.zeros(len(joints)), [], r.time + seconds
    while r.time < end:
        r.step()
        if on_step is not None:
            on_step(r)
        if fb := r.trajectory_feedback():
            worst = np.maximum(worst, np.abs(fb["error"]))
            errors.append((fb["since_start"], fb["error"]))
        if ended := r.take_ended():
            return ended[0], worst, errors
    raise AssertionError("the goal did not end")


def fast_points(delta=(0.0, 0.0, 0.0, 0.0, 1.5, 1.0, 1.5)):
    """The time-optimal move the backend plans at the MuJoCo limits: joints 5 and 7 reach 1.31 rad/s."""
    wp = waypoints(time_parameterize(np.array([HOME_Q, HOME_Q + np.array(delta)]), 0.002), 0.02)
    assert np.max(np.abs(wp.qd)) > 1.25
    return [TrajectoryPoint(float(t), q, qd) for t, q, qd in zip(wp.t, wp.q, wp.qd, strict=True)]


def ramp_points(v: float = 0.5, seconds: float = 2.0):
    """Joint 1 at constant velocity v (positions only: JTC interpolates linearly, TRAJ:279-281)."""
    return [TrajectoryPoint(t, HOME_Q + np.array([v * t, 0, 0, 0, 0, 0, 0])) for t in np.arange(0.0, seconds, 0.1)]


# ---- gazebo ---------------------------------------------------------------------------------------------------
def test_the_gazebo_servo_commands_gain_times_rate_times_error_held_for_a_control_period():
    servo = Servo(ServoSpec("gazebo", update_rate=100.0, position_gain=0.1))
    q, cmd = np.array([0.0, 1.0]), np.array([0.2, 0.9])
    servo.latch(1.0, q, cmd, cmd, np.zeros(2), np.zeros(2), 0.01)
    kp, kv = np.ones(2), np.zeros(2)  # a pure position target: the ramp the velocity implies
    velocity = 0.1 * 100.0 * (cmd - q)  # gz_system.cpp:643-648
    np.testing.assert_allclose(servo.arm_ctrl(1.004, cmd, np.zeros(2), kp, kv), q + velocity * 0.004)
    np.testing.assert_allclose(servo.arm_ctrl(1.010, cmd, np.zeros(2), kp, kv), q + velocity * 0.010)
    assert ServoSpec("gazebo", update_rate=100.0).control_period(0.002) == 5  # read/update at 100 Hz


@pytest.mark.parametrize("gain", [0.1, 0.5])
def test_the_gazebo_arm_trails_a_ramp_by_v_times_one_over_gain_minus_one_over_the_rate(gain):
    v, rate = 0.5, 100.0
    r = make_robot(ServoSpec("gazebo", rate, gain))
    at_updates, state = [], {}

    def capture(robot: SimRobot) -> None:  # the controller's own error at each of its updates (JTC.cpp:374)
        if "q" in state and (robot._steps - 1) % 5 == 0 and robot.arm.active is not None:
            at_updates.append((robot.time, robot.arm.desired_now[0][0] - state["q"][0]))
        state["q"] = robot._arm_q()[0]

    t0 = r.time
    end, _, _ = run(r, ramp_points(v), ARM_JOINTS, on_step=capture)
    steady = [e for t, e in at_updates if 0.8 < t - t0 < 1.8]
    # per period the joint closes `gain` of the gap to the command one period ahead (JTC.cpp:326-328): at rest in
    # the ramp, gain (e + v / rate) = v / rate
    expected = v * (1.0 / gain - 1.0) / rate
    assert np.mean(steady) == pytest.approx(expected, rel=0.1)
    assert end.status == "succeeded"


def test_the_ideal_servo_does_not_trail_a_ramp():
    end, worst, _ = run(make_robot(ServoSpec()), ramp_points(0.5), ARM_JOINTS)
    assert end.status == "succeeded" and worst[0] < 0.005


def test_a_fast_segment_violates_the_path_tolerance_with_gazebos_default_gain_and_not_with_the_shipped_xacros():
    end, worst, _ = run(make_robot(ServoSpec("gazebo", 100.0, GZ_DEFAULT_GAIN)), fast_points(), ARM_JOINTS)
    assert end.status == "aborted" and end.result["error_code"] == PATH_TOLERANCE_VIOLATED
    shipped = xacro_position_gain(SHIPPED_XACRO)
    end, worst, _ = run(make_robot(ServoSpec("gazebo", 100.0, shipped)), fast_points(), ARM_JOINTS)
    assert end.status == "succeeded" and end.result["error_code"] == SUCCESSFUL
    assert np.max(worst) < PATH_TOL / 4  # a margin for what MuJoCo does not model of Gazebo


def test_the_shipped_xacro_sets_the_gain_as_gz_ros2_control_reads_it(tmp_path):
    assert xacro_position_gain(SHIPPED_XACRO) == 0.5
    bare = tmp_path / "bare.urdf.xacro"
    bare.write_text('<robot><gazebo><plugin filename="gz_ros2_control-system" '
                    'name="gz_ros2_control::GazeboSimROS2ControlPlugin"><parameters>x</parameters></plugin>'
                    '</gazebo></robot>')
    assert xacro_position_gain(bare) == GZ_DEFAULT_GAIN == 0.1  # gz_ros2_control_plugin.cpp:318
    spec = ServoSpec.from_controllers("gazebo", ("position",), ARM_JOINTS, {}, 100.0, SHIPPED_XACRO)
    assert (spec.position_gain, spec.update_rate) == (0.5, 100.0)
    assert ServoSpec.from_controllers("gazebo", ("position",), ARM_JOINTS, {}, 100.0, SHIPPED_XACRO,
                                      position_gain=0.1).position_gain == 0.1


# ---- fr3_effort -----------------------------------------------------------------------------------------------
def test_the_fr3_controllers_file_carries_franka_ros2s_gains():
    params = fr3_params()
    assert params.command_interfaces == ("effort",)
    assert [params.gains[j]["p"] for j in FR3_JOINTS] == [600, 600, 600, 600, 250, 150, 50]
    assert [params.gains[j]["d"] for j in FR3_JOINTS] == [30, 30, 30, 30, 10, 10, 5]
    assert all(params.gains[j]["i"] == 0 for j in FR3_JOINTS)


def test_the_fr3_effort_servo_applies_jtcs_pd_on_the_desired_state_as_joint_torque():
    params = fr3_params()
    spec = ServoSpec.from_controllers("fr3_effort", params.command_interfaces, params.joints, params.gains, 1000.0)
    r = make_robot(spec, params, FR3_JOINTS)
    p, d = np.array(spec.p), np.array(spec.d)
    limit = np.array([87.0, 87.0, 87.0, 87.0, 12.0, 12.0, 12.0])  # the model's forcerange (the Panda's efforts)
    checked, state = [], {}

    def capture(robot: SimRobot) -> None:  # after each step: its torque is the PD of the state it started from
        if "q" in state and robot.arm.active is not None and len(checked) < 50:
            desired, desired_v = robot.arm.desired_now  # desired at that step's update
            expected = p * (desired - state["q"]) + d * (desired_v - state["qd"])
            checked.append(np.allclose(robot.data.actuator_force[robot.index.arm_act], np.clip(expected, -limit,
                                                                                                limit)))
        state["q"], state["qd"] = robot._arm_q()

    end, worst, _ = run(r, fast_points(), FR3_JOINTS, on_step=capture)
    assert end.status == "succeeded" and all(checked) and len(checked) == 50
    # softer than the MuJoCo servo: joint 7 (p 50) trails by tens of mrad where the ideal servo stays within 5
    _, ideal, _ = run(make_robot(ServoSpec()), fast_points(), ARM_JOINTS)
    assert worst[6] > 0.02 > 0.005 > ideal[6]


def test_the_fr3_effort_pd_is_the_difference_of_desired_and_measured_state():
    servo = Servo(ServoSpec("fr3_effort", 1000.0, p=(600.0, 50.0), i=(0.0, 0.0), d=(30.0, 5.0)))
    servo.latch(0.0, np.array([0.0, 1.0]), np.array([9.0, 9.0]), np.array([0.01, 0.98]), np.array([0.5, 0.0]),
                np.array([0.4, 0.1]), 0.001)
    # the command point ahead is not used: JTC's PID takes state_error_ (JTC.cpp:374, 421-425)
    np.testing.assert_allclose(servo.arm_ctrl(0.002, np.zeros(2), np.zeros(2)), [600 * 0.01 + 30 * 0.1,
                                                                                  50 * -0.02 + 5 * -0.1])


# ---- choosing a mode ------------------------------------------------------------------------------------------
def test_a_mode_that_does_not_match_its_controller_is_refused_with_a_reason():
    with pytest.raises(ValueError, match="position interface"):
        ServoSpec.from_controllers("gazebo", ("effort",), FR3_JOINTS, {}, 1000.0)
    with pytest.raises(ValueError, match="robot:=fr3"):
        ServoSpec.from_controllers("fr3_effort", ("position",), ARM_JOINTS, {}, 100.0)
    with pytest.raises(ValueError, match="gains"):
        ServoSpec.from_controllers("fr3_effort", ("effort",), FR3_JOINTS, {}, 1000.0)
    with pytest.raises(ValueError, match="unknown servo mode"):
        parse_mode("mujoco")
    with pytest.raises(ValueError, match=r"\(0, 2\)"):
        ServoSpec("gazebo", 100.0, 2.5)
    assert parse_mode("FR3-effort") == "fr3_effort" and parse_mode("") == "ideal"


# ---- across ROS: the robot process picks the mode from its parameters ------------------------------------------
@pytest.mark.parametrize(("gain", "status"), [(0.1, "aborted"), (0.0, "succeeded")])  # 0.0: the shipped xacro's
def test_the_mujoco_robot_started_with_servo_gazebo_aborts_a_fast_goal_only_with_the_default_gain(gain, status):
    pytest.importorskip("rclpy")
    from robot_support import RobotProcess

    from step_planner.execution.controllers.config import BoundaryConfig
    from step_planner.execution.controllers.connection import RobotConnection

    wp = waypoints(time_parameterize(np.array([HOME_Q, HOME_Q + np.array([0, 0, 0, 0, 1.5, 1.0, 1.5])]), 0.002), 0.02)
    with RobotProcess(scene="drawer_desk", servo="gazebo", servo_position_gain=gain) as process:
        connection = RobotConnection(BoundaryConfig.load(config_path("robot_boundary.yaml")), node_name="servo_test")
        try:
            connection.wait_ready(60.0)
            outcome = connection.run_trajectory(wp)
        finally:
            connection.close()
        log = process.output()
    assert outcome.status == status, outcome.message
    assert f"servo gazebo (position_proportional_gain {gain or 0.5}, 100 Hz)" in log
    if status == "aborted":
        assert "path tolerance violation" in outcome.message


def test_the_mujoco_robot_refuses_a_servo_its_controller_cannot_sit_behind():
    pytest.importorskip("rclpy")
    from robot_support import RobotProcess

    with RobotProcess(scene="drawer_desk", servo="fr3_effort") as process:
        assert process.proc.wait(60) != 0
        assert "robot:=fr3" in process.output()
