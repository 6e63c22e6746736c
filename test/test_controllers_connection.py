"""The boundary client against a server that answers late: a goal given up on is never left running."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
import rclpy
import yaml
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.executors import MultiThreadedExecutor

from step_planner.execution.controllers.config import BoundaryConfig
from step_planner.execution.controllers.connection import RobotConnection, RobotUnavailable
from step_planner.execution.controllers.trajectory import Waypoints
from step_planner.resources import config_path

pytestmark = pytest.mark.ros
ACTION = "/slow_arm_controller/follow_joint_trajectory"
JOINT_STATES = "/slow_arm/joint_states"


class SlowArm:
    """A FollowJointTrajectory server that accepts every goal ``delay_s`` after it arrives (a loaded robot
    computer), then runs it until canceled or ``run_s`` have passed; joint states at 50 Hz all along."""

    def __init__(self, delay_s: float, run_s: float = 5.0) -> None:
        from control_msgs.action import FollowJointTrajectory

        self.delay_s, self.run_s = delay_s, run_s
        self.accepted: list[bytes] = []
        self.canceled: list[bytes] = []
        self.finished: list[bytes] = []
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node("slow_arm", context=self.context)
        self.server = ActionServer(self.node, FollowJointTrajectory, ACTION, execute_callback=self._execute,
                                   goal_callback=self._goal, cancel_callback=self._cancel)
        from sensor_msgs.msg import JointState

        names = [f"panda_joint{i}" for i in range(1, 8)] + ["panda_finger_joint1", "panda_finger_joint2"]
        states = self.node.create_publisher(JointState, JOINT_STATES, 10)
        self.node.create_timer(0.02, lambda: states.publish(
            JointState(name=names, position=[0.0] * 9, velocity=[0.0] * 9, effort=[0.0] * 9)))
        self.executor = MultiThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.thread = threading.Thread(target=self.executor.spin, daemon=True)
        self.thread.start()

    def _goal(self, _request) -> GoalResponse:
        time.sleep(self.delay_s)
        return GoalResponse.ACCEPT

    def _cancel(self, handle) -> CancelResponse:
        self.canceled.append(bytes(handle.goal_id.uuid))
        return CancelResponse.ACCEPT

    def _execute(self, handle):
        from control_msgs.action import FollowJointTrajectory

        uuid = bytes(handle.goal_id.uuid)
        self.accepted.append(uuid)
        end = time.monotonic() + self.run_s
        while time.monotonic() < end and not handle.is_cancel_requested:
            time.sleep(0.01)
        if handle.is_cancel_requested:
            handle.canceled()
        else:
            self.finished.append(uuid)
            handle.succeed()
        return FollowJointTrajectory.Result()

    def close(self) -> None:
        self.server.destroy()
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)


def slow_config(accept_s: float) -> BoundaryConfig:
    data = yaml.safe_load(config_path("robot_boundary.yaml").read_text())
    data["robots"]["panda"]["arm"]["action"] = ACTION
    data["timeouts"]["goal_accept_s"] = accept_s
    data["joint_states"] = JOINT_STATES
    return BoundaryConfig.from_dict(data)


def until(predicate, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def test_a_goal_accepted_after_the_client_gave_up_is_canceled_at_once_never_run():
    arm = SlowArm(delay_s=1.0)
    connection = RobotConnection(slow_config(accept_s=0.3), node_name="slow_arm_client")
    try:
        assert until(connection.arm.server_is_ready, 10.0), "the slow arm's server was never discovered"
        assert until(lambda: connection.lost() is None, 10.0), connection.lost()
        q = np.zeros((2, 7))
        outcome = connection.run_trajectory(Waypoints(np.array([0.5, 1.0]), q, np.zeros((2, 7))))
        assert outcome.status == "timeout" and "neither accepted nor rejected" in outcome.message
        # the server accepts it 0.7 s later: the client cancels what it no longer waits for
        assert until(lambda: len(arm.canceled) == 1, 5.0), (arm.accepted, arm.canceled)
        assert until(lambda: len(arm.accepted) == 1, 5.0)
        assert arm.canceled == arm.accepted and arm.finished == []
    finally:
        connection.close()
        arm.close()


def test_goals_and_result_requests_are_made_on_the_spinning_thread():
    """rclpy's action client registers a request's future after sending it: a response handled in between on the
    spinning thread is dropped and the future never completes (1 of 645 replayed goals on a loaded machine)."""
    arm = SlowArm(delay_s=0.0, run_s=0.2)
    connection = RobotConnection(slow_config(accept_s=5.0), node_name="slow_arm_client")
    threads: list[str] = []
    for name in ("send_goal_async", "_get_result_async"):
        original = getattr(connection.arm, name)

        def recorded(*args, _original=original, **kwargs):
            threads.append(threading.current_thread().name)
            return _original(*args, **kwargs)

        setattr(connection.arm, name, recorded)
    try:
        assert until(connection.arm.server_is_ready, 10.0) and until(lambda: connection.lost() is None, 10.0)
        outcome = connection.run_trajectory(Waypoints(np.array([0.5, 1.0]), np.zeros((2, 7)), np.zeros((2, 7))))
        assert outcome.status == "succeeded", outcome.message
        assert threads == ["robot_connection", "robot_connection"]
    finally:
        connection.close()
        arm.close()


def test_a_request_the_executor_did_not_get_to_in_time_is_never_made():
    from rclpy.executors import SingleThreadedExecutor

    from step_planner.execution.spin_thread import on_spin_thread

    context = rclpy.Context()
    rclpy.init(context=context)
    executor = SingleThreadedExecutor(context=context)
    made: list[str] = []
    try:
        with pytest.raises(TimeoutError):
            on_spin_thread(executor, lambda: made.append("late"), 0.1)  # nobody spins yet
        thread = threading.Thread(target=executor.spin, daemon=True)
        thread.start()
        assert on_spin_thread(executor, lambda: threading.current_thread() is thread, 5.0)
        assert made == []
    finally:
        executor.shutdown()
        rclpy.try_shutdown(context=context)


def test_a_service_answer_that_does_not_come_is_asked_for_again_only_when_the_caller_allows_it():
    from losing_action import LosingService

    from step_planner_interfaces.srv import LoadScene

    name = "/losing_robot/load_scene"
    server = LosingService(name, lose=2)
    connection = RobotConnection(slow_config(accept_s=1.0), node_name="losing_client")
    try:
        request = LoadScene.Request(scene="drawer_desk", request_id="load-1")
        with pytest.raises(RobotUnavailable, match="did not answer within 1 s"):
            connection.call_service(LoadScene, name, request, timeout=1.0)  # not repeatable: asked once
        assert server.requests == ["load-1"]
        start = time.monotonic()
        response = connection.call_service(LoadScene, name, request, timeout=10.0, resend_s=0.5)
        assert response.message == "answer 3" and time.monotonic() - start < 5.0
        assert server.requests == ["load-1", "load-1", "load-1"]  # the same id each time
    finally:
        connection.close()
        server.close()


def test_the_connections_own_stall_is_not_the_robots_silence_but_real_silence_is():
    """While the connection's spin thread is held up (in the node's process a long call holding the GIL, or a busy
    CPU), the joint states the robot sends wait in the queue: the robot is not lost. A robot that stops
    publishing is lost after state_stale_s."""
    from step_planner.execution.spin_thread import on_spin_thread

    arm = SlowArm(delay_s=0.0)
    connection = RobotConnection(slow_config(accept_s=1.0), node_name="stall_client")
    stale = connection.config.timeouts.state_stale_s
    try:
        assert until(lambda: connection.joints() is not None and connection.lost() is None, 10.0), connection.lost()
        stall = threading.Thread(target=on_spin_thread, args=(connection._executor, lambda: time.sleep(2 * stale),
                                                              5.0))
        stall.start()
        said: list[str | None] = []
        age = 0.0
        end = time.monotonic() + 2 * stale
        while time.monotonic() < end:
            said.append(connection.lost())
            age = max(age, time.monotonic() - connection.joints().received)
            time.sleep(0.02)
        stall.join()
        assert age > stale, age  # nothing was heard for longer than the limit
        assert set(said) == {None}, set(said)
        time.sleep(0.2)
        assert connection.lost() is None, connection.lost()
        arm.close()  # the robot's joint states stop
        assert until(lambda: connection.lost() is not None, stale + 3.0)
        assert "no joint state" in connection.lost()
        # a stall now does not make the gone robot look alive, during it or after it
        time.sleep(0.3)  # well past the limit (the silence heard before a stall is what counts during it)
        stall = threading.Thread(target=on_spin_thread, args=(connection._executor, lambda: time.sleep(stale), 5.0))
        stall.start()
        said = []
        while stall.is_alive():
            said.append(connection.lost())
            time.sleep(0.02)
        said += [connection.lost() for _ in range(3) if time.sleep(0.1) is None]
        assert None not in said, said
    finally:
        connection.close()
        if arm.context.ok():
            arm.close()


def test_a_goal_whose_accepted_answer_was_lost_is_followed_from_the_status_topic():
    from control_msgs.action import FollowJointTrajectory
    from losing_action import AnswerLosingServer

    arm = AnswerLosingServer(FollowJointTrajectory, ACTION, joint_states=JOINT_STATES)
    connection = RobotConnection(slow_config(accept_s=5.0), node_name="lost_answer_client")
    try:
        assert until(connection.arm.server_is_ready, 10.0) and until(lambda: connection.lost() is None, 10.0)
        start = time.monotonic()
        outcome = connection.run_trajectory(Waypoints(np.array([0.5, 1.0]), np.zeros((2, 7)), np.zeros((2, 7))))
        assert outcome.status == "succeeded", outcome.message
        assert time.monotonic() - start < 3.0  # found on the status topic, not waited out
        assert connection.stats.adopted == 1 and len(arm.goals) == 1
    finally:
        connection.close()
        arm.close()
