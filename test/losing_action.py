"""Servers whose answers never arrive (an action's goal answers, a service's first answers), for the clients
that must cope with it."""

from __future__ import annotations

import threading
import time
from typing import Any

import rclpy
from rclpy.executors import MultiThreadedExecutor

FINGERS = ["panda_finger_joint1", "panda_finger_joint2"]


class _OwnNode:
    """A node in a context of its own, spun by a thread pool; ``release`` lets held-back answers go at close."""

    def __init__(self, node_name: str) -> None:
        self.release = threading.Event()
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node(node_name, context=self.context)

    def _spin(self) -> None:
        self.executor = MultiThreadedExecutor(num_threads=8, context=self.context)
        self.executor.add_node(self.node)
        threading.Thread(target=self.executor.spin, daemon=True).start()

    def close(self) -> None:
        self.release.set()
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)


class AnswerLosingServer(_OwnNode):
    """An action as rcl_action lays it on DDS (three services, two topics), served by hand: every goal is run for
    ``run_s`` and listed on the status topic, but the answer to the goal never arrives (as when rmw_fastrtps drops
    the response to a client it has not matched yet: the server logs it and runs the goal anyway). Results are
    ``action_type.Result()`` with SUCCEEDED. ``joint_states``: also a Panda's joint states at 50 Hz."""

    def __init__(self, action_type: Any, name: str, run_s: float = 0.3, joint_states: str | None = None) -> None:
        from action_msgs.msg import GoalStatusArray
        from rclpy.callback_groups import ReentrantCallbackGroup
        from rclpy.qos import qos_profile_action_status_default

        impl = action_type.Impl
        self.action_type, self.name, self.run_s = action_type, name, run_s
        self.goals: dict[bytes, float] = {}  # goal id -> when it ends
        self.cancels: list[bytes] = []  # goal ids a client asked to cancel
        super().__init__("answer_losing_server")
        group = ReentrantCallbackGroup()
        for kind, service, callback in ((impl.SendGoalService, "send_goal", self._send_goal),
                                        (impl.CancelGoalService, "cancel_goal", self._cancel),
                                        (impl.GetResultService, "get_result", self._result)):
            self.node.create_service(kind, f"{name}/_action/{service}", callback, callback_group=group)
        self.status = self.node.create_publisher(GoalStatusArray, f"{name}/_action/status",
                                                 qos_profile_action_status_default)
        self.node.create_publisher(impl.FeedbackMessage, f"{name}/_action/feedback", 10)  # a server has both
        self.node.create_timer(0.05, self._publish_status, callback_group=group)
        if joint_states:
            from sensor_msgs.msg import JointState

            names = [f"panda_joint{i}" for i in range(1, 8)] + FINGERS
            states = self.node.create_publisher(JointState, joint_states, 10)
            self.node.create_timer(0.02, lambda: states.publish(
                JointState(name=names, position=[0.0] * 9, velocity=[0.0] * 9, effort=[0.0] * 9)))
        self._spin()

    def _publish_status(self) -> None:
        from action_msgs.msg import GoalInfo, GoalStatus, GoalStatusArray
        from unique_identifier_msgs.msg import UUID

        now = time.monotonic()
        self.status.publish(GoalStatusArray(status_list=[
            GoalStatus(goal_info=GoalInfo(goal_id=UUID(uuid=list(key))),
                       status=GoalStatus.STATUS_SUCCEEDED if now >= end else GoalStatus.STATUS_EXECUTING)
            for key, end in list(self.goals.items())]))

    def _send_goal(self, request, response):
        self.goals[bytes(request.goal_id.uuid)] = time.monotonic() + self.run_s
        self._publish_status()
        self.release.wait(30.0)  # the answer is not delivered in time
        response.accepted = True
        return response

    def _cancel(self, request, response):
        self.cancels.append(bytes(request.goal_info.goal_id.uuid))
        return response

    def _result(self, request, response):
        from action_msgs.msg import GoalStatus

        end = self.goals.get(bytes(request.goal_id.uuid))
        if end is None:
            response.status = GoalStatus.STATUS_UNKNOWN
            return response
        time.sleep(max(0.0, end - time.monotonic()))
        response.status = GoalStatus.STATUS_SUCCEEDED
        return response


class LosingService(_OwnNode):
    """A ~/load_scene whose first ``lose`` answers never arrive in time (as rmw_fastrtps drops the answer to a
    client whose response reader it has not matched yet); later requests are answered at once."""

    def __init__(self, name: str, lose: int) -> None:
        from rclpy.callback_groups import ReentrantCallbackGroup

        from step_planner_interfaces.srv import LoadScene

        self.lose = lose
        self.requests: list[str] = []
        super().__init__("losing_service")
        self.node.create_service(LoadScene, name, self._answer, callback_group=ReentrantCallbackGroup())
        self._spin()

    def _answer(self, request, response):
        self.requests.append(request.request_id)
        if len(self.requests) <= self.lose:
            self.release.wait(30.0)
        response.success, response.message = True, f"answer {len(self.requests)}"
        return response
