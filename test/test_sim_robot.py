"""The MuJoCo robot without ROS: its controllers drive real MuJoCo physics (tracking, stalls, model poses)."""

from __future__ import annotations

import numpy as np
import pytest

from step_planner.domain.scene import load_scene
from step_planner.execution.controllers.trajectory import waypoints
from step_planner.execution.sim.controller_emulation import (
    GripperParams,
    JointToleranceSpec,
    TrajectoryGoal,
    TrajectoryParams,
    TrajectoryPoint,
)
from step_planner.execution.sim.model import ARM_JOINTS, FINGER_JOINTS, HOME_Q
from step_planner.execution.sim.robot import AT_REST_EVERY, SimRobot
from step_planner.execution.sim.servo import ServoSpec
from step_planner.execution.sim.timing import time_parameterize
from step_planner.resources import config_path


def robot(scene: str = "drawer_desk", **grip) -> SimRobot:
    return SimRobot(load_scene(config_path("scenes", f"{scene}.yaml")), TrajectoryParams(ARM_JOINTS),
                    GripperParams("panda_finger_joint1", **grip), arm_joints=ARM_JOINTS, finger_joints=FINGER_JOINTS,
                    realtime_factor=0.0)


def until_ended(r: SimRobot, seconds: float = 5.0):
    end = r.time + seconds
    while r.time < end:
        r.step()
        if ended := r.take_ended():
            return ended
    raise AssertionError("no goal ended")


def test_a_trajectory_goal_is_tracked_within_millimetres_and_ends_at_its_goal():
    r = robot()
    q1 = HOME_Q + np.array([0.3, 0.2, 0.0, 0.2, 0.0, 0.0, 0.3])
    wp = waypoints(time_parameterize(np.array([HOME_Q, q1]), 0.002), 0.02)
    points = tuple(TrajectoryPoint(float(t), q, qd) for t, q, qd in zip(wp.t, wp.q, wp.qd, strict=True))
    goal = TrajectoryGoal(ARM_JOINTS, points,
                          goal_tolerance=tuple(JointToleranceSpec(j, 0.005) for j in ARM_JOINTS),
                          goal_time_tolerance=1.0)
    assert r.trajectory_goal("g", goal) is None
    worst = 0.0
    end = r.time + 5.0
    while r.time < end and not (ended := r.take_ended()):
        r.step()
        if fb := r.trajectory_feedback():
            worst = max(worst, float(np.max(np.abs(fb["error"]))))
    assert [e.status for e in ended] == ["succeeded"]
    assert worst < 0.01 and np.max(np.abs(np.array(r.joint_state().position[:7]) - q1)) < 0.005


@pytest.mark.parametrize("servo", [ServoSpec(), ServoSpec("gazebo", update_rate=100.0, position_gain=0.5)],
                         ids=["ideal", "gazebo"])
def test_a_controller_naming_the_joints_in_another_order_moves_each_joint_it_names(servo):
    """The controller's joint order is not the model's (a configuration may list them in any order): positions,
    commands and gains go through the order step() caches at each load; a mix-up moves the wrong joints."""
    order = ARM_JOINTS[4:] + ARM_JOINTS[:4]  # not its own inverse: controller -> model differs from model -> controller
    to_controller = [ARM_JOINTS.index(j) for j in order]
    r = SimRobot(load_scene(config_path("scenes", "drawer_desk.yaml")), TrajectoryParams(order),
                 GripperParams("panda_finger_joint1"), arm_joints=ARM_JOINTS, finger_joints=FINGER_JOINTS,
                 realtime_factor=0.0, servo=servo)
    for _ in range(2):  # and again after a reload
        q1 = HOME_Q + np.array([0.3, -0.2, 0.1, 0.25, -0.15, 0.2, 0.35])  # model order
        wp = waypoints(time_parameterize(np.array([HOME_Q, q1]), 0.002), 0.02)
        points = tuple(TrajectoryPoint(float(t), q[to_controller], qd[to_controller])
                       for t, q, qd in zip(wp.t, wp.q, wp.qd, strict=True))
        goal = TrajectoryGoal(order, points, goal_tolerance=tuple(JointToleranceSpec(j, 0.005) for j in order),
                              goal_time_tolerance=2.0)
        assert r.trajectory_goal("g", goal) is None
        assert [e.status for e in until_ended(r, 6.0)] == ["succeeded"]
        assert np.max(np.abs(np.array(r.joint_state().position[:7]) - q1)) < 0.005
        r.load(r.world)


def test_fingers_closing_on_nothing_reach_their_goal():
    r = robot(allow_stalling=True, stall_timeout=0.25, goal_tolerance=0.002)
    r.gripper_goal("close", 0.0, 20.0)
    (end,) = until_ended(r)
    assert end.status == "succeeded" and end.result["reached_goal"] and end.result["position"] < 0.002


def _goal(q1: np.ndarray) -> TrajectoryGoal:
    wp = waypoints(time_parameterize(np.array([HOME_Q, q1]), 0.002), 0.02)
    points = tuple(TrajectoryPoint(float(t), q, qd) for t, q, qd in zip(wp.t, wp.q, wp.qd, strict=True))
    return TrajectoryGoal(ARM_JOINTS, points, goal_tolerance=tuple(JointToleranceSpec(j, 0.005) for j in ARM_JOINTS),
                          goal_time_tolerance=1.0)


def _steps_until(r: SimRobot, predicate, limit: int = 3000) -> int:
    for n in range(limit):
        if predicate():
            return n
        r.step()
    raise AssertionError(f"not within {limit} steps: pace {r.controller.pace}")


def test_faster_than_real_time_only_while_a_goal_runs_or_anything_moves():
    """realtime_factor 3: at rest and with no goal the robot is paced at real time; an arm goal, a gripper goal or
    a moving object bring the factor back at its next step (the goals) or its next look (AT_REST_EVERY steps)."""
    r = SimRobot(load_scene(config_path("scenes", "drawer_desk.yaml")), TrajectoryParams(ARM_JOINTS),
                 GripperParams("panda_finger_joint1"), arm_joints=ARM_JOINTS, finger_joints=FINGER_JOINTS,
                 realtime_factor=3.0)
    assert r.controller.pace == 3.0  # after a load, until it looks
    assert _steps_until(r, lambda: r.controller.pace == 1.0) <= AT_REST_EVERY + 1  # the settled scene is at rest
    assert r.trajectory_goal("g", _goal(HOME_Q + np.array([0.2, 0.1, 0.0, 0.1, 0.0, 0.0, 0.2]))) is None
    assert _steps_until(r, lambda: r.controller.pace == 3.0) <= 1
    assert _steps_until(r, lambda: bool(r.take_ended())) > 0  # the whole motion at 3x
    assert r.controller.pace == 3.0
    assert _steps_until(r, lambda: r.controller.pace == 1.0) <= 4 * AT_REST_EVERY  # the arm comes to rest
    r.gripper_goal("close", 0.0, 20.0)
    assert _steps_until(r, lambda: r.controller.pace == 3.0) <= 1
    _steps_until(r, lambda: r.controller.pace == 1.0)
    (cup,) = [j for j in range(r.model.njnt) if r.model.joint(j).name.startswith("cup")]
    r.data.qvel[r.model.jnt_dofadr[cup] + 2] = 0.5  # a knock: the cup jumps
    assert _steps_until(r, lambda: r.controller.pace == 3.0) <= AT_REST_EVERY


@pytest.mark.parametrize("factor", [1.0, 0.5, 0.0])
def test_a_factor_of_one_or_less_is_kept_at_rest(factor):
    r = SimRobot(load_scene(config_path("scenes", "drawer_desk.yaml")), TrajectoryParams(ARM_JOINTS),
                 GripperParams("panda_finger_joint1"), arm_joints=ARM_JOINTS, finger_joints=FINGER_JOINTS,
                 realtime_factor=factor)
    for _ in range(3 * AT_REST_EVERY if factor == 0.0 else 60):
        r.step()
    assert r.controller.pace == factor


def test_the_pace_changes_no_physics_step():
    """The same goal on a robot at 3x (real time while at rest) and on an unpaced one: the same states, bit for bit."""
    runs = []
    for factor in (3.0, 0.0):
        r = SimRobot(load_scene(config_path("scenes", "drawer_desk.yaml")), TrajectoryParams(ARM_JOINTS),
                     GripperParams("panda_finger_joint1"), arm_joints=ARM_JOINTS, finger_joints=FINGER_JOINTS,
                     realtime_factor=factor)
        for _ in range(2 * AT_REST_EVERY):  # at rest: real time for the paced one
            r.step()
        assert r.trajectory_goal("g", _goal(HOME_Q + np.array([0.1, 0.1, 0.0, 0.1, 0.0, 0.0, 0.1]))) is None
        _steps_until(r, lambda r=r: bool(r.take_ended()))
        for _ in range(AT_REST_EVERY):
            r.step()
        runs.append((r.data.time, r.data.qpos.copy(), r.data.qvel.copy()))
    assert runs[0][0] == runs[1][0]
    assert np.array_equal(runs[0][1], runs[1][1]) and np.array_equal(runs[0][2], runs[1][2])


def test_model_poses_report_objects_in_the_world_and_drawers_in_their_cabinet():
    r = robot("two_drawers")
    poses = {p.child_frame_id: p for p in r.model_poses()}
    drawer = next(k for k in poses if "/" in k)
    cabinet = drawer.split("/")[0]
    assert poses[drawer].frame_id == cabinet and poses[cabinet].frame_id == r.world_name
    assert all(p.frame_id == r.world_name for k, p in poses.items() if "/" not in k)
    assert {k for k in poses if "/" not in k} >= set(r.info.objects)
    assert pytest.approx(1.0) == float(np.linalg.norm(poses[drawer].orientation))


def test_no_physics_step_runs_while_a_reader_holds_the_robots_lock():
    """The truth and the perception the robot publishes are read under its lock: a physics step half done (its
    contacts rebuilt from none) must never be seen, so the physics thread steps under the same lock. Before, the
    step took the controller's own lock and a 'held' pen read as held by nothing now and then."""
    import time

    r = robot().start()
    try:
        start = r.time
        while r.time - start < 0.01:  # the physics thread runs
            time.sleep(0.001)
        for _ in range(20):
            with r.lock:
                before, ncon = r.time, r.data.ncon
                time.sleep(0.005)
                assert (r.time, r.data.ncon) == (before, ncon)
    finally:
        r.stop()


def test_a_scene_load_keeps_an_armed_fault_whose_object_it_has_and_says_which_it_cleared():
    """A fault armed before ~/load_scene is not silently lost: kept when the new scene can meet it, else named as
    cleared; a drawer_short (already in force) ends with its scene, said so."""
    r = robot()
    assert r.arm_fault("slip", "tape") is None and r.arm_fault("drawer_short", "drawer") is None
    assert r.load(load_scene(config_path("scenes", "drawer_desk.yaml"))) == [
        "cleared: drawer_short drawer (it ends with its scene)", "still armed: slip tape"]
    assert r.faults == {"slip": "tape"}
    assert r.load(load_scene(config_path("scenes", "blocks_tray.yaml"))) == [
        "cleared: slip tape (no object 'tape' in this scene)"]
    assert r.faults == {} and r.load(load_scene(config_path("scenes", "blocks_tray.yaml"))) == []


def test_a_reflex_needs_the_fr3s_controller_manager_and_a_name_franka_msgs_reports():
    r = robot()
    assert "no controller manager" in r.arm_fault("reflex", "joint_reflex")
    assert "unknown fault 'melt'" in r.arm_fault("melt", "tape")
    assert "did you mean joint_reflex?" in _fr3_like_refusal("joint_reflx")
    assert "franka_msgs/msg/Errors's names: joint_position_limits_violation, " in _fr3_like_refusal("bump")


def _fr3_like_refusal(name: str) -> str:
    """Why a robot with a controller manager refuses reflex ``name`` (the manager is only asked for its presence)."""
    r = robot()
    r.cm = object()
    return r.arm_fault("reflex", name)
