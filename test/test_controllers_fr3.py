"""The controllers backend's FR3 path against the MuJoCo robot started with the FR3 entry of robot_boundary.yaml:
the arm as franka_ros2's fr3_arm_controller (config/ros2_controllers_fr3.yaml), the gripper as franka_gripper's node
(execution/sim/franka_gripper_emulation.py) on MuJoCo's fingers, over real DDS with the real franka_msgs types. The
model keeps the Panda's geometry under the FR3's names. A module of its own: its robot must not share the ROS graph
with another MuJoCo robot."""

from __future__ import annotations

import pytest
from robot_support import RobotProcess, load_world

from step_planner.domain.primitives import PrimitiveLibrary
from step_planner.domain.scene import load_scene
from step_planner.execution.base import ExecCode
from step_planner.execution.factory import make_executor
from step_planner.resources import config_path

pytestmark = [pytest.mark.ros, pytest.mark.sim]


@pytest.fixture(scope="module")
def lib() -> PrimitiveLibrary:
    return PrimitiveLibrary.load(config_path("primitives.yaml"))


def drawer_world():
    return load_scene(config_path("scenes", "drawer_desk.yaml"))


@pytest.fixture(scope="module")
def robot():
    with RobotProcess(scene="drawer_desk", robot="fr3") as process:
        yield process


@pytest.fixture
def executor(robot, lib, monkeypatch):
    ex = make_executor("controllers", lib, drawer_world(), robot="fr3", load_scene="/mujoco_robot/load_scene")
    sent = []
    real = ex.connection._send

    def recording(client, name, goal, cancel, feedback=None):  # the real call; what was sent is kept
        sent.append((name, goal))
        return real(client, name, goal, cancel, feedback)

    monkeypatch.setattr(ex.connection, "_send", recording)
    ex.sent = sent
    yield ex
    ex.close()


def run(ex, lib, text):
    return ex.execute(lib.parse_call_text(text))


def test_the_drawer_task_grasps_with_franka_gripper_at_the_widths_the_primitives_expect(executor, lib):
    for text in ("open_drawer(drawer)", "pick(tape)", "place(tape, drawer)", "close_drawer(drawer)"):
        outcome = run(executor, lib, text)
        assert outcome.success, f"{text}: {outcome.code.value} {outcome.message}"
    world = executor.observe()
    assert world.objects["tape"].location == "drawer" and not world.places["drawer"].is_open
    grasps = [goal for name, goal in executor.sent if name == "/franka_gripper/grasp"]
    tape = drawer_world().objects["tape"].geometry["size"][0] * 2  # a cylinder: [radius, height]
    assert [round(g.width, 4) for g in grasps] == [0.014, round(tape, 4), 0.014]  # handle, tape, handle
    assert all((g.force, g.epsilon.inner, g.epsilon.outer, g.speed) == (20.0, 0.005, 0.005, 0.1) for g in grasps)
    assert {name for name, _ in executor.sent} == {"/fr3_arm_controller/follow_joint_trajectory",
                                                   "/franka_gripper/grasp", "/franka_gripper/move"}


def test_a_grasp_of_an_absent_object_fails_and_nothing_is_held(executor, lib):
    world = drawer_world()
    del world.objects["tape"]
    load_world(executor.connection, world)
    executor.controller.sync(fresh=True)
    outcome = run(executor, lib, "pick(tape)")
    assert outcome.code is ExecCode.GRASP_FAILED, outcome.message
    assert executor.observe().held is None
    grasp = [g for name, g in executor.sent if name == "/franka_gripper/grasp"]
    assert grasp  # the close was franka_gripper's grasp, which said no


def test_franka_gripper_is_on_the_wire_with_upstreams_types(executor):
    from robot_support import wait_until
    from test_test_interfaces import UPSTREAM_FEEDBACK

    node = executor.connection.node
    topic = "/franka_gripper/grasp/_action/feedback"
    seen = {}

    def advertised() -> bool:
        for info in node.get_publishers_info_by_topic(topic):
            seen[topic] = str(info.topic_type_hash)
        return topic in seen

    wait_until(advertised, 10.0, "franka_gripper's grasp action")
    assert seen[topic] == UPSTREAM_FEEDBACK["franka_msgs/action/Grasp"]


def test_fingers_resting_on_something_of_another_width_are_not_a_held_object(robot, lib):
    """The client's model has a 7 cm tape where the robot's world has the 5 cm one: the fingers close on it and rest
    apart with the tape between them (what the GripperActionController path would take for a grasp), but
    franka_gripper's grasp at 7 cm says no: GRASP_FAILED, nothing held."""
    believed = drawer_world()
    believed.objects["tape"].geometry = {**believed.objects["tape"].geometry, "size": [0.035, 0.03]}
    ex = make_executor("controllers", lib, believed, robot="fr3", load_scene="/mujoco_robot/load_scene")
    try:
        load_world(ex.connection, drawer_world())  # the real tape, 5 cm
        ex.controller.sync(fresh=True)
        outcome = run(ex, lib, "pick(tape)")
        assert outcome.code is ExecCode.GRASP_FAILED, outcome.message
        assert ex.observe().held is None
        assert ex.controller.last_outcome is not None
    finally:
        ex.close()


def test_the_hand_is_homed_at_start_and_never_opened_wider_than_it_then_reports(executor, lib):
    """franka_gripper's ~/move has no range check (gripper_action_server.cpp:147-153): the backend homes the hand once,
    keeps the width its joint states then report, and opens to at most that and open_width (78 mm, our choice:
    MoveIt's FR3 "open" is 70 mm)."""
    connection = executor.connection
    assert connection.hand_max_width == pytest.approx(0.08, abs=0.001)  # the emulated hand's measured maximum
    assert connection.open_limit() == pytest.approx(0.078)
    for hand, opened in ((None, 0.078), (0.06, 0.06)):  # 0.06: a hand whose homing measured 60 mm (other fingers)
        connection.hand_max_width = hand or connection.hand_max_width
        executor.controller.gripper(0.04)  # the primitives' "fully open" (a release, home()): 80 mm asked
        assert executor.sent[-1][0] == "/franka_gripper/move" and executor.sent[-1][1].width == pytest.approx(opened)
        executor.controller.sync(fresh=True)
        assert 2 * executor.controller.finger_opening == pytest.approx(opened, abs=0.002)


@pytest.mark.parametrize(("widths", "kept"), [
    ((0.0776, 0.0795, 0.08, 0.08), 0.08),  # a joint state sent before the result arrives after it: fingers opening
    ((0.08, 0.08), 0.08),
    ((0.07, 0.0705, 0.0706), 0.0706),  # within 0.2 mm: at rest
])
def test_the_width_kept_after_homing_is_read_once_the_fingers_have_stopped(widths, kept):
    """A CI run kept 77.6 mm from homing to 80 mm: the joint state it read was sent before the homing result (they
    travel on different topics) while the fingers were still opening. The width is read from joint states that
    agree."""
    from types import SimpleNamespace

    from step_planner.execution.controllers.connection import RobotConnection

    reads = iter(widths)

    class Hand:
        _settled_hand_width = RobotConnection._settled_hand_width

        def wait_fresh(self, since, timeout):
            return True

        def joints(self):
            half = next(reads) / 2
            return SimpleNamespace(position={"panda_finger_joint1": half, "panda_finger_joint2": half})

    assert Hand()._settled_hand_width() == pytest.approx(kept)


def test_a_hand_that_reports_too_narrow_a_width_after_homing_stops_the_backend(robot, lib, monkeypatch):
    """Homing ending open at the measured maximum is assumed (libfranka's header does not say): a hand that reports
    less than the primitives need is refused at start-up, naming the width, before anything moves."""
    from step_planner.execution.controllers.connection import RobotConnection
    from step_planner.execution.errors import BackendUnavailable

    real = RobotConnection.home_gripper

    def closed_after_homing(self):
        outcome = real(self)
        self.hand_max_width = 0.02
        return outcome

    monkeypatch.setattr(RobotConnection, "home_gripper", closed_after_homing)
    with pytest.raises(BackendUnavailable, match="20.0 mm after homing"):
        make_executor("controllers", lib, drawer_world(), robot="fr3", load_scene="/mujoco_robot/load_scene")


def test_a_goal_leaving_the_fr3s_limits_trips_the_robots_reflex_and_a_load_recovers(executor, lib):
    """Sent past the backend's own check (which never sends it): the MuJoCo robot with robot:=fr3 stops as
    franka_hardware and the controller manager stop the FR3 (errors.h:67-71, franka_hardware_interface.cpp:250-257,
    controller_manager.cpp:3275-3304): ABORTED, INVALID_GOAL (JTC.cpp:1255-1268), and later goals are rejected."""
    import time

    import numpy as np

    from step_planner.execution.controllers.trajectory import waypoints
    from step_planner.execution.sim.model import HOME_Q
    from step_planner.execution.sim.timing import time_parameterize

    connection = executor.connection
    q_end = HOME_Q.copy()
    q_end[5] = 0.3  # joint 6 below the FR3's 0.5445, inside the Panda model's range
    wp = waypoints(time_parameterize(np.array([HOME_Q, q_end]), 0.002, speed=0.5), 0.02)
    outcome = connection.run_trajectory(wp)
    assert outcome.status == "aborted" and outcome.result.error_code == -1
    assert "deactivate" in outcome.result.error_string
    # /joint_states repeats joint_state_broadcaster's last sample, just before the crossing (joint_state_publisher
    # keeps republishing it while the broadcaster is inactive, test/test_fr3_reflex.py), not 0.3. Read from joint
    # states received well after the abort: under load the newest one received at the abort can be older still
    # (a CI run read 0.595, 50 mrad before the crossing at 0.65 rad/s)
    repeated = []
    for _ in range(2):
        assert connection.wait_fresh(time.monotonic() + 0.2, 5.0)
        repeated.append(connection.joints().position["panda_joint6"])
    assert repeated[0] == repeated[1], repeated  # the same sample again, with a fresh stamp
    # at most one 2 ms physics step past the limit (1.3 mrad at 0.65 rad/s): the sample of the very cycle that crossed
    # can go out before the controller is deactivated (a run read 0.54417)
    assert 0.5445 - 0.0015 <= repeated[0] < 0.5445 + 0.05, repeated
    assert connection.run_trajectory(waypoints(time_parameterize(np.array([HOME_Q, HOME_Q]), 0.002), 0.02)).status \
        == "rejected"  # an inactive controller rejects every goal
    load_world(connection, drawer_world())  # the stand-in for ~/error_recovery and reactivating the controller
    executor.controller.sync(fresh=True)
    assert run(executor, lib, "home()").success
