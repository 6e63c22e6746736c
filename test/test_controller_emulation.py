"""The MuJoCo robot's controllers follow ros2_controllers' code (jazzy, ed360c97): each test is one upstream rule,
named by the file and lines it comes from (JTC = joint_trajectory_controller.cpp, TOL = tolerances.hpp,
TRAJ = trajectory.cpp, GAC = gripper_action_controller_impl.hpp)."""

from __future__ import annotations

import numpy as np
import pytest

from step_planner.execution.sim.controller_emulation import (
    GOAL_TOLERANCE_VIOLATED,
    INVALID_GOAL,
    PATH_TOLERANCE_VIOLATED,
    SUCCESSFUL,
    GripperController,
    GripperParams,
    JointToleranceSpec,
    TrajectoryController,
    TrajectoryGoal,
    TrajectoryParams,
    TrajectoryPoint,
    TrajectorySampler,
    segment_tolerances,
    validate,
)

JOINTS = ("j1", "j2")
PARAMS = TrajectoryParams(JOINTS)
DT = 0.002


def point(t, q, qd=(0.0, 0.0)):
    return TrajectoryPoint(t, np.array(q, dtype=float), None if qd is None else np.array(qd, dtype=float))


def goal(points, names=JOINTS, **kw):
    return TrajectoryGoal(tuple(names), tuple(points), **kw)


def run(ctl: TrajectoryController, q0, t0=0.0, seconds=2.0, follow=True, q_fixed=None):
    """Step the controller with a perfect (or a blocked) arm; returns the ends and the last command."""
    q = np.array(q0, dtype=float)
    qd = np.zeros_like(q)
    t = t0
    cmd = q
    for _ in range(int(seconds / DT)):
        cmd, cmd_v = ctl.update(t, DT, q if q_fixed is None else np.array(q_fixed), qd)
        if follow and q_fixed is None:
            q, qd = cmd.copy(), cmd_v.copy()
        t += DT
        if ctl.ended:
            break
    return ctl.ended, cmd, t


# ---- goal validation: rejected at goal_received, never accepted then aborted (JTC.cpp:1406-1420) ---------------
@pytest.mark.parametrize("bad, why", [
    (goal([point(1.0, [0, 0])], names=("j1",)), "don't match"),  # JTC.cpp:1676-1685
    (goal([]), "Empty trajectory"),  # JTC.cpp:1695-1699
    (goal([point(1.0, [0, 0])], names=("j1", "j3")), "doesn't match"),  # JTC.cpp:1702-1714
    (goal([point(1.0, [0, 0], (0.1, 0))]), "last trajectory point is not zero"),  # JTC.cpp:1717-1730
    (goal([point(1.0, [0, 0]), point(1.0, [1, 1])]), "strictly increasing"),  # JTC.cpp:1751-1764
    (goal([TrajectoryPoint(1.0, np.zeros(3))]), "positions"),  # JTC.cpp:1797-1804
    (goal([point(1.0, [0, 0])], start_stamp=5.0), "ends in the past"),  # JTC.cpp:1733-1749
    (goal([point(1.0, [0, 0])], has_effort=True), "effort"),  # JTC.cpp:1805-1813
])
def test_invalid_goals_are_rejected_with_the_controllers_reason(bad, why):
    assert why in (validate(PARAMS, bad, now=10.0) or "")


def test_valid_goals_pass_in_any_joint_order_with_a_point_at_zero():
    assert validate(PARAMS, goal([point(0.0, [0, 0]), point(1.0, [1, 1])], names=("j2", "j1")), now=0.0) is None
    assert validate(PARAMS, goal([point(1.0, [0, 0], None)]), now=0.0) is None  # velocities may be empty
    nonzero = goal([point(1.0, [0, 0], (0.1, 0))])
    assert validate(TrajectoryParams(JOINTS, allow_nonzero_velocity_at_trajectory_end=True), nonzero, 0.0) is None


# ---- tolerances (TOL:129-154, 165-288) -------------------------------------------------------------------------
def test_goal_tolerances_replace_keep_or_erase_the_defaults():
    params = TrajectoryParams(JOINTS, goal_time=2.0, path={"j1": 0.3, "j2": 0.3}, goal={"j1": 0.1, "j2": 0.1})
    tol = segment_tolerances(params, goal([point(1, [0, 0])], path_tolerance=(JointToleranceSpec("j1", 0.05),
                                                                              JointToleranceSpec("j2", -1)),
                                          goal_tolerance=(JointToleranceSpec("j2", 0.0),), goal_time_tolerance=0.5))
    assert tol.path.tolist() == [0.05, 0.0] and tol.goal.tolist() == [0.1, 0.1] and tol.goal_time == 0.5


def test_one_unknown_joint_drops_every_tolerance_of_the_goal():
    params = TrajectoryParams(JOINTS, path={"j1": 0.3, "j2": 0.3})
    tol = segment_tolerances(params, goal([point(1, [0, 0])], path_tolerance=(JointToleranceSpec("j1", 0.05),
                                                                              JointToleranceSpec("nope", 0.05))))
    assert tol.path.tolist() == [0.3, 0.3]


# ---- execution ---------------------------------------------------------------------------------------------
def test_a_followed_trajectory_succeeds_with_the_controllers_text():
    ctl = TrajectoryController(PARAMS, np.zeros(2))
    ctl.accept("a", goal([point(0.5, [0.2, -0.1]), point(1.0, [0.4, 0.2])],
                         goal_tolerance=(JointToleranceSpec("j1", 0.01), JointToleranceSpec("j2", 0.01))))
    ended, cmd, t = run(ctl, [0, 0])
    assert [(e.goal_id, e.status, e.result["error_code"]) for e in ended] == [("a", "succeeded", SUCCESSFUL)]
    assert ended[0].result["error_string"] == "Goal successfully reached!"  # JTC.cpp:493-510
    assert cmd.tolist() == pytest.approx([0.4, 0.2]) and t == pytest.approx(1.0, abs=0.01)


def test_without_tolerances_a_goal_succeeds_when_its_time_is_up_wherever_the_arm_is():
    """Every tolerance 0 (the Panda config): nothing is checked (TOL:45-49), success at the end (JTC.cpp:493)."""
    ctl = TrajectoryController(PARAMS, np.zeros(2))
    ctl.accept("a", goal([point(1.0, [1.0, 1.0])]))
    ended, _, t = run(ctl, [0, 0], q_fixed=[0, 0])  # the arm never moves
    assert ended[0].status == "succeeded" and t == pytest.approx(1.0, abs=0.01)


def test_a_blocked_arm_violates_the_path_tolerance_and_the_controller_holds_where_it_is():
    ctl = TrajectoryController(PARAMS, np.zeros(2))
    ctl.accept("a", goal([point(1.0, [1.0, 0.0])], path_tolerance=(JointToleranceSpec("j1", 0.1),)))
    ended, cmd, t = run(ctl, [0, 0], q_fixed=[0.05, 0])
    assert ended[0].status == "aborted" and ended[0].result["error_code"] == PATH_TOLERANCE_VIOLATED  # JTC.cpp:466
    assert t < 1.0 and cmd.tolist() == [0.05, 0.0]  # holds the measured position


def test_a_goal_missed_beyond_goal_time_aborts_and_without_goal_time_it_waits_forever():
    blocked = goal([point(0.5, [1.0, 0.0])], goal_tolerance=(JointToleranceSpec("j1", 0.01),), goal_time_tolerance=0.3)
    ctl = TrajectoryController(PARAMS, np.zeros(2))
    ctl.accept("a", blocked)
    ended, _, t = run(ctl, [0, 0], q_fixed=[0.5, 0])
    assert ended[0].result["error_code"] == GOAL_TOLERANCE_VIOLATED and t == pytest.approx(0.8, abs=0.01)
    assert ended[0].result["error_string"].startswith("Aborted due to goal_time_tolerance exceeding by")
    forever = TrajectoryController(PARAMS, np.zeros(2))  # goal_time 0: JTC.yaml:222-230
    forever.accept("b", goal([point(0.5, [1.0, 0.0])], goal_tolerance=(JointToleranceSpec("j1", 0.01),)))
    assert run(forever, [0, 0], seconds=5.0, q_fixed=[0.5, 0])[0] == []


def test_a_new_goal_preempts_the_running_one_which_is_aborted_with_invalid_goal():
    ctl = TrajectoryController(PARAMS, np.zeros(2))
    ctl.accept("old", goal([point(2.0, [1.0, 1.0])]))
    ctl.update(0.0, DT, np.zeros(2), np.zeros(2))
    ctl.accept("new", goal([point(1.0, [-1.0, 0.0])]))
    assert [(e.goal_id, e.status, e.result) for e in ctl.ended] == [
        ("old", "aborted", {"error_code": INVALID_GOAL,
                            "error_string": "Current goal preempted by new incoming action."})]  # JTC.cpp:1824-1837


def test_cancel_ends_the_goal_canceled_with_an_empty_result_and_holds_the_measured_position():
    ctl = TrajectoryController(PARAMS, np.zeros(2))
    ctl.accept("a", goal([point(2.0, [1.0, 1.0])]))
    ctl.update(0.0, DT, np.zeros(2), np.zeros(2))
    assert not ctl.cancel("other", 0.05, np.zeros(2), np.zeros(2))
    assert ctl.cancel("a", 0.05, np.array([0.3, 0.2]), np.zeros(2))  # JTC.cpp:1429-1450
    assert [(e.status, e.result) for e in ctl.ended] == [("canceled", {"error_code": 0, "error_string": ""})]
    cmd, cmd_v = ctl.update(0.1, DT, np.array([0.31, 0.2]), np.zeros(2))
    assert cmd.tolist() == [0.3, 0.2] and not cmd_v.any()


def test_with_decelerate_on_cancel_the_arm_ramps_to_rest_at_its_max_deceleration_and_holds_there():
    """JTC.cpp:1851-1937: stop time |v|/a, hold at q + v^2/(2a) per joint, a point every update period."""
    params = TrajectoryParams(JOINTS, decelerate_on_cancel=True, max_deceleration_on_cancel={"j1": 10.0, "j2": 5.0},
                              urdf_velocity={"j1": 2.0, "j2": 2.0})
    ctl = TrajectoryController(params, np.zeros(2))
    ctl.accept("a", goal([point(2.0, [2.0, -1.0])]))
    ctl.update(0.0, DT, np.zeros(2), np.zeros(2))
    q, qd = np.array([0.5, -0.2]), np.array([1.0, -0.5])
    assert ctl.cancel("a", 1.0, q, qd)
    cmd, cmd_v = ctl.update(1.05, DT, q, qd)  # mid-ramp
    assert cmd_v[0] == pytest.approx(1.0 - 10.0 * (0.05 + DT), abs=1e-6)
    assert cmd_v[1] == pytest.approx(-0.5 + 5.0 * (0.05 + DT), abs=1e-6)
    cmd, cmd_v = ctl.update(1.2, DT, q, qd)  # both stopped (0.1 s and 0.1 s)
    assert cmd.tolist() == pytest.approx([0.5 + 1.0 / 20, -0.2 - 0.25 / 10]) and not np.any(cmd_v)
    no_decel = TrajectoryParams(JOINTS, decelerate_on_cancel=True, max_deceleration_on_cancel={"j1": 10.0},
                                urdf_velocity={"j1": 2.0, "j2": 2.0})
    assert not no_decel.decelerates  # every joint needs one (JTC.cpp:144-169): else it holds


def test_without_a_urdf_velocity_limit_for_every_joint_decelerate_on_cancel_holds_instead():
    """JTC.cpp:94-100 reads each joint's <limit velocity> from robot_description; 0 (none, or no URDF) for any joint
    turns deceleration off (JTC.cpp:156-164): a cancel then holds the measured position."""
    decels = {"j1": 10.0, "j2": 5.0}
    for urdf in ({}, {"j1": 2.0}, {"j1": 2.0, "j2": 0.0}):
        params = TrajectoryParams(JOINTS, decelerate_on_cancel=True, max_deceleration_on_cancel=decels,
                                  urdf_velocity=urdf)
        assert not params.decelerates
        ctl = TrajectoryController(params, np.zeros(2))
        ctl.accept("a", goal([point(2.0, [2.0, -1.0])]))
        ctl.update(0.0, DT, np.zeros(2), np.zeros(2))
        q, qd = np.array([0.5, -0.2]), np.array([1.0, -0.5])
        assert ctl.cancel("a", 1.0, q, qd)
        cmd, cmd_v = ctl.update(1.05, DT, q, qd)
        assert cmd.tolist() == [0.5, -0.2] and not cmd_v.any()  # held where measured, no ramp
    yaml_params = {"joints": list(JOINTS), "constraints": {"decelerate_on_cancel": True, "j1": {
        "max_deceleration_on_cancel": 10.0}, "j2": {"max_deceleration_on_cancel": 5.0}}}
    assert not TrajectoryParams.from_ros_parameters(yaml_params).decelerates
    assert TrajectoryParams.from_ros_parameters(yaml_params, urdf_velocity={"j1": 2.0, "j2": 2.0}).decelerates


def test_goals_with_efforts_are_rejected_only_without_an_effort_command_interface():
    """JTC.cpp:1805-1813: effort fields are refused unless the controller commands effort (the FR3's does)."""
    with_effort = goal([point(1.0, [0, 0])], has_effort=True)
    position = TrajectoryParams.from_ros_parameters({"joints": list(JOINTS), "command_interfaces": ["position"]})
    effort = TrajectoryParams.from_ros_parameters({"joints": list(JOINTS), "command_interfaces": ["effort"]})
    assert "effort" in validate(position, with_effort, 0.0)
    assert validate(effort, with_effort, 0.0) is None


def test_splines_pass_through_every_point_with_its_velocity_and_start_from_the_measured_state():
    """Cubic with positions and velocities (TRAJ:315); the measured state is the point before (TRAJ:50-76)."""
    points = [point(0.5, [1.0, 0.0], (1.0, 0.0)), point(1.0, [1.5, 0.5], (0.0, 0.0))]
    sampler = TrajectorySampler(points, start=10.0, before=point(10.0, [0.2, 0.0], (0.0, 0.0)))
    q, qd, before_last, _ = sampler.sample(10.0)
    assert q.tolist() == pytest.approx([0.2, 0.0]) and before_last
    q, qd, _, _ = sampler.sample(10.5)
    assert q.tolist() == pytest.approx([1.0, 0.0]) and qd.tolist() == pytest.approx([1.0, 0.0])
    q, qd, before_last, since = sampler.sample(11.2)
    assert q.tolist() == pytest.approx([1.5, 0.5]) and not before_last and since == pytest.approx(0.2)
    linear = TrajectorySampler([point(1.0, [1.0, 1.0], None)], 0.0, point(0.0, [0.0, 0.0], None))
    assert linear.sample(0.25)[0].tolist() == pytest.approx([0.25, 0.25])  # positions only: linear


# ---- GripperActionController (GAC) -------------------------------------------------------------------------
def grip(params: GripperParams, stop_at: float, seconds: float = 3.0):
    """Close from open at 5 cm/s with fingers that stop at ``stop_at`` (an object, or 0 on nothing)."""
    ctl = GripperController(params, 0.04)
    ctl.accept("g", 0.0, 20.0, 0.0)
    pos, t = 0.04, 0.0
    while t < seconds and not ctl.ended:
        new = max(stop_at, pos - 0.05 * DT)
        velocity, pos = (new - pos) / DT, new
        ctl.update(t, pos, velocity)
        t += DT
    return ctl.ended, t


def test_a_close_on_an_object_stalls_and_aborts_unless_stalling_is_allowed():
    ended, t = grip(GripperParams("f"), 0.015)  # the fingers stop on a 3 cm object
    assert ended[0].status == "aborted" and ended[0].result["stalled"] and not ended[0].result["reached_goal"]
    assert ended[0].result["position"] == pytest.approx(0.015) and t > 1.0  # stall_timeout 1 s (GAC:176-201)
    ended, t = grip(GripperParams("f", allow_stalling=True, stall_timeout=0.25), 0.015)
    assert ended[0].status == "succeeded" and ended[0].result["stalled"] and t < 1.0


def test_a_close_on_nothing_reaches_its_goal_within_the_tolerance_while_the_fingers_still_move():
    ended, _ = grip(GripperParams("f"), 0.0)
    assert ended[0].status == "succeeded" and ended[0].result["reached_goal"]  # GAC:166-175
    assert 0.0099 < ended[0].result["position"] < 0.01  # goal_tolerance 0.01 m: the fingers are 1 cm from closed


def test_gripper_cancel_holds_the_current_position_and_a_new_goal_cancels_the_old():
    ctl = GripperController(GripperParams("f"), 0.04)
    ctl.accept("a", 0.0, 20.0, 0.0)
    assert ctl.cancel("a", 0.03) and ctl.setpoint == 0.03 and ctl.ended[0].status == "canceled"  # GAC:122-153
    ctl.accept("b", 0.0, 20.0, 0.1)
    ctl.accept("c", 0.04, 20.0, 0.2)
    assert [(e.goal_id, e.status) for e in ctl.ended[1:]] == [("b", "canceled")]  # GAC:28-38
