"""The controllers backend against the MuJoCo robot in another process, over real DDS and the real control_msgs
types: primitives, the controllers' refusals and aborts, grasps judged as a robot can judge them, cancel."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from robot_support import RobotProcess, inject_fault, load_world, wait_until

from step_planner.domain.primitives import PrimitiveLibrary
from step_planner.domain.scene import load_scene
from step_planner.domain.world import Place
from step_planner.execution.base import ExecCode
from step_planner.execution.errors import BackendUnavailable
from step_planner.execution.factory import make_executor
from step_planner.execution.sim.model import ARM_JOINTS
from step_planner.resources import config_path

pytestmark = [pytest.mark.ros, pytest.mark.sim]
DRAWER_CALLS = ("open_drawer(drawer)", "pick(tape)", "place(tape, drawer)", "pick(screwdriver)",
                "place(screwdriver, drawer)", "close_drawer(drawer)")


@pytest.fixture(scope="module")
def lib() -> PrimitiveLibrary:
    return PrimitiveLibrary.load(config_path("primitives.yaml"))


def drawer_world():
    return load_scene(config_path("scenes", "drawer_desk.yaml"))


@pytest.fixture(scope="module")
def robot():
    with RobotProcess(scene="drawer_desk") as process:
        yield process


@pytest.fixture
def executor(robot, lib):
    """A controllers executor whose reset puts the robot into the drawer scene first (its ~/load_scene)."""
    ex = make_executor("controllers", lib, drawer_world(), load_scene="/mujoco_robot/load_scene")
    yield ex
    ex.close()


def run(ex, lib, text, cancel=None):
    return ex.execute(lib.parse_call_text(text), cancel)


def test_the_drawer_task_runs_through_the_robots_actions_and_the_world_is_what_it_perceives(executor, lib):
    for text in DRAWER_CALLS:
        outcome = run(executor, lib, text)
        assert outcome.success, f"{text}: {outcome.code.value} {outcome.message}"
    world = executor.observe()
    assert world.objects["tape"].location == "drawer" and world.objects["screwdriver"].location == "drawer"
    assert not world.places["drawer"].is_open and world.held is None
    # the perceived pose, not a prediction: it matches what the robot reports of the tape
    tape = executor.connection.poses()["tape"].position
    assert np.allclose(world.objects["tape"].geometry["position"], tape, atol=1e-3)


def test_the_messages_on_the_boundary_are_upstream_jazzys_types(executor):
    from test_test_interfaces import UPSTREAM, UPSTREAM_FEEDBACK

    node = executor.connection.node
    expected = {"/panda_arm_controller/follow_joint_trajectory/_action/feedback":
                UPSTREAM_FEEDBACK["control_msgs/action/FollowJointTrajectory"],
                "/model_poses": UPSTREAM["tf2_msgs/msg/TFMessage"][0]}
    seen = {}

    def advertised() -> bool:
        for topic in expected:
            for info in node.get_publishers_info_by_topic(topic):
                seen[topic] = str(info.topic_type_hash)
        return len(seen) == len(expected)

    wait_until(advertised, 10.0, "the robot's publishers")
    assert seen == expected


def test_a_goal_the_controller_rejects_ends_the_primitive_with_a_clear_error_at_once(robot, lib):
    from step_planner.execution.controllers.config import BoundaryConfig

    data = __import__("yaml").safe_load(config_path("robot_boundary.yaml").read_text())
    data["robots"]["panda"]["arm"]["joints"][6] = "panda_joint7_typo"  # a joint the controller does not have
    config = BoundaryConfig.from_dict(data)
    from step_planner.execution.controllers.backend import ControllersExecutor

    ex = ControllersExecutor(lib, drawer_world(), config, load_scene="/mujoco_robot/load_scene")
    try:
        started = time.monotonic()
        outcome = run(ex, lib, "move_to(tape)")
        assert outcome.code is ExecCode.BACKEND_ERROR and "rejected the goal" in outcome.message
        assert time.monotonic() - started < 15.0  # planning plus one refusal, never a hang
        # the controller logs why (JTC.cpp:1702-1714), the client only learns that it refused
        wait_until(lambda: "panda_joint7_typo" in robot.output(), 5.0, "the controller's log line")
    finally:
        ex.close()


def test_an_arm_blocked_by_something_the_model_lacks_is_a_path_tolerance_abort(executor, lib):
    """The robot's world has a post where the client's model has nothing: the arm hits it, the controller aborts
    with PATH_TOLERANCE_VIOLATED and holds, the primitive fails with COLLISION (the planner re-plans)."""
    world = drawer_world()
    post = Place(name="post", kind="surface",  # a fixed block where move_to(table) goes; first: the table stays
                 geometry={"size": [0.12, 0.12, 0.5], "position": [0.45, 0.0, 0.25]})  # the scene's table
    world.places = {"post": post, **world.places}
    load_world(executor.connection, world)
    outcome = run(executor, lib, "move_to(table)")
    assert outcome.code is ExecCode.COLLISION, outcome.message
    assert "path tolerance" in outcome.message


def test_a_close_on_nothing_is_a_failed_grasp_and_nothing_is_held(executor, lib):
    """The client's model has a tape the robot's world does not: the fingers close fully, GRASP_FAILED."""
    world = drawer_world()
    del world.objects["tape"]
    load_world(executor.connection, world)
    executor.controller.sync(fresh=True)
    outcome = run(executor, lib, "pick(tape)")
    assert outcome.code is ExecCode.GRASP_FAILED, outcome.message
    assert executor.observe().held is None


def test_cancel_during_motion_stops_the_arm_within_200_ms(executor, lib):
    cancel = threading.Event()
    box: dict = {}
    worker = threading.Thread(target=lambda: box.setdefault("outcome", run(executor, lib, "open_drawer(drawer)",
                                                                           cancel)))
    worker.start()

    def moving() -> bool:
        joints = executor.connection.joints()
        return joints is not None and max(abs(v) for k, v in joints.velocity.items() if "finger" not in k) > 0.1

    wait_until(moving, 30.0, "the arm moving")
    cancel.set()
    cancelled = time.monotonic()
    stopped_at = None
    while time.monotonic() - cancelled < 2.0:
        joints = executor.connection.joints()
        if joints.received > cancelled and max(abs(v) for k, v in joints.velocity.items() if "finger" not in k) < 0.01:
            stopped_at = joints.received
            break
        time.sleep(0.002)
    worker.join(10)
    assert box["outcome"].code is ExecCode.CANCELED
    assert stopped_at is not None and stopped_at - cancelled < 0.2


def test_no_joint_moves_faster_than_it_can_stop_quickly(executor, lib):
    """pick(tape) swings the shoulder, which ran at 1.1 rad/s and took 224-242 ms to stop on a cancel (at its
    7.5 rad/s^2); planned under the boundary's cap, /joint_states never shows a joint above it."""
    cap = dict(zip(ARM_JOINTS, executor.config.velocity_cap, strict=True))
    fastest = dict.fromkeys(ARM_JOINTS, 0.0)
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            joints = executor.connection.joints()
            for name in ARM_JOINTS:
                fastest[name] = max(fastest[name], abs(joints.velocity.get(name, 0.0)))
            time.sleep(0.005)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        outcome = run(executor, lib, "pick(tape)")
    finally:
        done.set()
        watcher.join()
    assert outcome.success, outcome.message
    assert fastest["panda_joint2"] > 0.5 * cap["panda_joint2"]  # the shoulder did swing
    over = {j: round(v, 3) for j, v in fastest.items() if v > cap[j] * 1.05}  # the servo tracks within a few %
    assert not over, f"faster than the cap {cap}: {over}"


def test_without_the_robot_the_backend_says_what_is_missing(robot, lib):
    started = time.monotonic()  # the MuJoCo robot serves the Panda's names; nothing serves the FR3's
    with pytest.raises(BackendUnavailable, match="/fr3_arm_controller/follow_joint_trajectory"):
        make_executor("controllers", lib, drawer_world(), robot="fr3")
    assert time.monotonic() - started < 15.0


@pytest.mark.parametrize("kind, target, calls, code, says", [
    ("slip", "tape", ["pick(tape)"], ExecCode.OBJECT_SLIPPED, "tape"),
    ("miss_place", "tape", ["pick(tape)", "place(tape, tray)"], ExecCode.OBJECT_SLIPPED, "not in/on tray"),
    ("drawer_short", "drawer", ["open_drawer(drawer)", "close_drawer(drawer)"], ExecCode.COLLISION, "blocked"),
])
def test_a_physical_fault_is_caught_at_the_primitive_by_what_the_robot_perceives(executor, lib, kind, target, calls,
                                                                                code, says):
    """The robot makes the fault happen (the fingers let go, the object lands beside the tray, the drawer stops
    4 cm short); the backend sees it in the joint states and poses, and the primitive fails: no silent success."""
    *before, last = calls
    for text in before:
        assert run(executor, lib, text).success
    inject_fault(executor.connection, kind, target)
    outcome = run(executor, lib, last)
    assert not outcome.success, outcome.message
    assert code is None or outcome.code is code, (outcome.code, outcome.message)
    assert says in outcome.message
    world = executor.observe()
    if kind == "drawer_short":
        assert world.places["drawer"].is_open is False or world.places["drawer"].geometry["opening"] > 0.03
    else:
        assert world.objects["tape"].location not in ("gripper", "tray")
