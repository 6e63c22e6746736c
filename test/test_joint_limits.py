"""Each robot planned within its own joint limits (issue 30 item 1): the limits in config/robot_boundary.yaml as the
upstream files give them, IK and RRTConnect bounded by them, every waypoint re-checked before a goal is sent, and the
MuJoCo robot serving the FR3 stopped by its limit reflex the way franka_hardware and the controller manager stop it."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from step_planner.domain.scene import load_scene
from step_planner.execution.base import ExecCode
from step_planner.execution.controllers.config import BoundaryConfig, BoundaryConfigError
from step_planner.execution.controllers.port import RemoteController
from step_planner.execution.controllers.trajectory import waypoints
from step_planner.execution.sim.control import MotionInterrupted
from step_planner.execution.sim.controller_emulation import (
    DEACTIVATED,
    INACTIVE,
    INVALID_GOAL,
    TrajectoryController,
    TrajectoryGoal,
    TrajectoryParams,
    TrajectoryPoint,
)
from step_planner.execution.sim.franka_gripper_emulation import FrankaGripperParams
from step_planner.execution.sim.ik import IkSolver, topdown_rotation
from step_planner.execution.sim.model import HOME_Q
from step_planner.execution.sim.robot import SimRobot
from step_planner.execution.sim.timing import TimedTrajectory, time_parameterize
from step_planner.resources import config_path

# typed from the files: frankarobotics/franka_description@566ba44 robots/fr3/joint_limits.yaml:1-48, and the
# <limit> of moveit_resources@ef5836d panda_description/urdf/panda.urdf (the Panda this boundary drives)
FR3_LOWER = [-2.7437, -1.7837, -2.9007, -3.0421, -2.8065, 0.5445, -3.0159]
FR3_UPPER = [2.7437, 1.7837, 2.9007, -0.1518, 2.8065, 4.5169, 3.0159]
PANDA_LOWER = [-2.9671, -1.8326, -2.9671, -3.1416, -2.9671, -0.0873, -2.9671]
PANDA_UPPER = [2.9671, 1.8326, 2.9671, 0.0873, 2.9671, 3.8223, 2.9671]


def boundary(robot: str) -> BoundaryConfig:
    return BoundaryConfig.load(config_path("robot_boundary.yaml"), robot)


def raw(robot: str = "fr3", **arm) -> dict:
    import yaml

    data = yaml.safe_load(config_path("robot_boundary.yaml").read_text())
    data["robots"][robot]["arm"].update(arm)
    return data


def test_each_robots_limits_are_its_upstream_files():
    fr3, panda = boundary("fr3"), boundary("panda")
    assert list(fr3.arm.lower) == FR3_LOWER and list(fr3.arm.upper) == FR3_UPPER
    assert list(panda.arm.lower) == PANDA_LOWER and list(panda.arm.upper) == PANDA_UPPER
    assert list(fr3.arm.velocity_limits) == [2.62, 2.62, 2.62, 2.62, 5.26, 4.18, 5.26]
    assert fr3.arm.limit_reflex and not panda.arm.limit_reflex


def test_planning_limits_are_the_robots_less_the_margin_inside_the_models_own():
    fr3 = boundary("fr3")
    model = IkSolver().index
    lower, upper = fr3.planning_limits(model.lower, model.upper)
    m = fr3.joint_limit_margin
    assert m > 0
    assert lower[0] == pytest.approx(-2.7437 + m) and upper[3] == pytest.approx(-0.1518 - m)
    assert lower[5] == pytest.approx(0.5445 + m)
    assert upper[5] == pytest.approx(model.upper[5])  # the FR3's 4.5169 is past what the Panda model can turn
    assert np.all(lower >= model.lower) and np.all(upper <= model.upper)


@pytest.mark.parametrize("arm, words", [
    ({"position_limits": {"lower": FR3_UPPER, "upper": FR3_LOWER}}, "lower < upper"),
    ({"position_limits": {"lower": FR3_LOWER[:6], "upper": FR3_UPPER}}, "7 angles"),
    ({"velocity_limits": [1.0] * 7}, "below the motion stack's planned joint speeds"),
    ({"limit_reflex": "yes"}, "limit_reflex"),
    ({"position_limits": None, "limit_reflex": True}, "needs position_limits"),
])
def test_malformed_limits_are_refused_naming_the_key(arm, words):
    with pytest.raises(BoundaryConfigError, match=words):
        BoundaryConfig.from_dict(raw(**arm), "fr3")


def test_waypoints_outside_the_limits_are_found_by_joint():
    fr3 = boundary("fr3")
    q = np.array([HOME_Q, HOME_Q, HOME_Q])
    assert fr3.arm.outside_limits(q) == []
    q[1, 0], q[2, 5] = 2.80, 0.40  # joint 1 past 2.7437, joint 6 below 0.5445: inside the Panda's
    assert fr3.arm.outside_limits(q) == [(1, 0, 2.80), (2, 5, 0.40)]
    assert boundary("panda").arm.outside_limits(q) == []


def test_ik_restricted_to_the_fr3_never_answers_outside_it():
    """A top-down grasp low and near the base: the Panda's IK may use joint 6 below the FR3's 0.5445 or joint 4 above
    its -0.1518; restricted, every answer (or none) stays inside."""
    fr3 = boundary("fr3")
    ik = IkSolver(seed=3)
    limits = fr3.planning_limits(ik.index.lower, ik.index.upper)
    ik.restrict(*limits)
    assert np.allclose(ik.index.lower, limits[0]) and np.allclose(ik.index.upper, limits[1])
    answered = 0
    for x, y, z in [(0.3, 0.0, 0.1), (0.55, 0.2, 0.05), (0.7, -0.3, 0.2), (0.25, 0.35, 0.3)]:
        q = ik.solve(np.array([x, y, z]), topdown_rotation(0.0), HOME_Q)
        if q is not None:
            answered += 1
            assert np.all(q >= limits[0] - 1e-6) and np.all(q <= limits[1] + 1e-6), q
    assert answered >= 2


class _Connection:
    """Records what would have been sent."""

    def __init__(self, config: BoundaryConfig) -> None:
        self.config, self.sent = config, []

    def run_trajectory(self, wp, cancel=None, monitor=None):
        self.sent.append(wp)
        raise AssertionError("a goal outside the limits was sent")


def test_a_trajectory_leaving_the_robots_limits_is_never_sent():
    connection = _Connection(boundary("fr3"))
    port = RemoteController(connection, None, None, None, None)  # follow() refuses before touching the mirror
    q_out = HOME_Q.copy()
    q_out[3] = -0.10  # the elbow past the FR3's -0.1518 (the Panda allows -0.0698)
    traj = time_parameterize(np.array([HOME_Q, q_out]), 0.002)
    with pytest.raises(MotionInterrupted) as caught:
        port.follow(traj, threading.Event())
    assert caught.value.code is ExecCode.PLAN_FAILED and connection.sent == []
    assert "fr3_joint4" in caught.value.message and "-0.1518" in caught.value.message


def test_the_trajectory_controller_deactivated_aborts_its_goal_and_holds():
    params = TrajectoryParams(("a", "b"))
    c = TrajectoryController(params, np.zeros(2))
    c.accept("g", TrajectoryGoal(("a", "b"), (TrajectoryPoint(1.0, np.ones(2)),)))
    c.deactivate(np.array([0.2, 0.1]))
    (end,) = c.ended
    assert (end.status, end.result["error_code"], end.result["error_string"]) == ("aborted", INVALID_GOAL, DEACTIVATED)
    assert np.allclose(c.update(0.0, 0.002, np.zeros(2), np.zeros(2))[0], [0.2, 0.1])


def _fr3_robot() -> tuple[SimRobot, BoundaryConfig]:
    fr3 = boundary("fr3")
    import yaml

    data = yaml.safe_load(config_path("ros2_controllers_fr3.yaml").read_text())
    params = TrajectoryParams.from_ros_parameters(data["fr3_arm_controller"]["ros__parameters"])
    r = SimRobot(load_scene(config_path("scenes", "drawer_desk.yaml")), params, FrankaGripperParams(),
                 arm_joints=fr3.arm.joints, finger_joints=fr3.gripper.joints, realtime_factor=0.0,
                 limit_reflex=(fr3.arm.lower, fr3.arm.upper))
    return r, fr3


def _goal(fr3: BoundaryConfig, q_end: np.ndarray) -> TrajectoryGoal:
    wp = waypoints(time_parameterize(np.array([HOME_Q, q_end]), 0.002), 0.02)
    return TrajectoryGoal(fr3.arm.joints, tuple(TrajectoryPoint(float(t), q, qd)
                                                for t, q, qd in zip(wp.t, wp.q, wp.qd, strict=True)))


def test_the_mujoco_fr3_stops_with_its_limit_reflex_when_a_joint_leaves_its_limits():
    r, fr3 = _fr3_robot()
    q_end = HOME_Q.copy()
    q_end[5] = 0.3  # joint 6 down to 0.3 rad: inside the Panda's range, past the FR3's 0.5445
    assert r.trajectory_goal("g", _goal(fr3, q_end)) is None
    ended = []
    for _ in range(3000):
        r.step()
        if ended := r.take_ended():
            break
    (end,) = ended
    assert (end.status, end.result["error_code"], end.result["error_string"]) == ("aborted", INVALID_GOAL, DEACTIVATED)
    assert "joint_position_limits_violation" in r.reflex and "fr3_joint6" in r.reflex
    q6 = r.joint_state().position[5]
    assert 0.5445 - 0.05 < q6 < 0.5445  # stopped just past the limit, not at the goal's 0.3
    for _ in range(250):  # held there
        r.step()
    assert abs(r.joint_state().position[5] - q6) < 0.01
    assert r.trajectory_goal("h", _goal(fr3, HOME_Q)) == INACTIVE  # inactive: every goal rejected
    r.load(r.world)
    assert r.reflex is None and r.trajectory_goal("h", _goal(fr3, HOME_Q)) is None


def test_a_plan_inside_the_fr3s_limits_runs_to_its_end_without_a_reflex():
    r, fr3 = _fr3_robot()
    q_end = HOME_Q.copy()
    q_end[5] = 0.5445 + fr3.joint_limit_margin  # to the planning bound: the servo settles inside the limit
    assert r.trajectory_goal("g", _goal(fr3, q_end)) is None
    for _ in range(3000):
        r.step()
        if ended := r.take_ended():
            break
    assert [e.status for e in ended] == ["succeeded"] and r.reflex is None


def test_timed_plans_between_planning_bounds_keep_every_waypoint_inside_the_limits():
    """The spline TOPP-RA fits through a path touching the planning bounds overshoots by far less than the margin."""
    fr3 = boundary("fr3")
    lower, upper = fr3.planning_limits(IkSolver().index.lower, IkSolver().index.upper)
    rng = np.random.default_rng(0)
    for _ in range(20):
        path = np.clip(rng.uniform(lower - 0.2, upper + 0.2, (4, 7)), lower, upper)  # corners on the bounds
        traj: TimedTrajectory = time_parameterize(path, 0.002)
        assert fr3.arm.outside_limits(waypoints(traj, 0.02).q) == []


def test_the_fr3_hand_opens_to_at_most_what_it_reported_and_open_width():
    """Pure part of the franka_gripper opening rule (the ROS part: test_controllers_fr3.py)."""
    from types import SimpleNamespace

    from step_planner.execution.controllers.connection import RobotConnection

    fr3 = boundary("fr3")
    assert fr3.gripper.homing and fr3.gripper.open_width == 0.078
    limit = RobotConnection.open_limit
    assert limit(SimpleNamespace(config=fr3, hand_max_width=None)) == 0.078  # not homed: open_width
    assert limit(SimpleNamespace(config=fr3, hand_max_width=0.0805)) == 0.078
    assert limit(SimpleNamespace(config=fr3, hand_max_width=0.071)) == 0.071
    with pytest.raises(BoundaryConfigError, match="homing"):
        data = raw()
        data["robots"]["fr3"]["gripper"]["homing"] = "yes"
        BoundaryConfig.from_dict(data, "fr3")


def test_a_recording_that_leaves_the_robots_limits_is_not_replayed_on_it():
    """A recording on the in-process Panda replayed on the FR3: refused before anything moves (beyond_limits is what
    replay_through_controllers checks after the safety envelope)."""
    from step_planner.episodes.controllers_replay import beyond_limits
    from step_planner.episodes.segments import ArmSegment, GripperEvent

    q = np.array([HOME_Q, HOME_Q])
    q[1, 0] = 2.85  # joint 1: past the FR3's 2.7437, inside the Panda's 2.9671
    events = [GripperEvent.__new__(GripperEvent), ArmSegment(0, HOME_Q, np.array([0.5, 1.0]), q, np.zeros((2, 7)))]
    why = beyond_limits(events, boundary("fr3"))
    assert why is not None and "fr3_joint1" in why and "event 1" in why
    assert beyond_limits(events, boundary("panda")) is None
    q[1, 0] = 2.9671 + 0.0003  # measured a little past the Panda's stop its plan touched: within the goal tolerance
    assert beyond_limits(events, boundary("panda")) is None
    q[1, 0] = 2.9671 + 0.01
    assert "panda_joint1" in beyond_limits(events, boundary("panda"))
