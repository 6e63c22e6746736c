"""The ROS side of ``step-planner hmi``: a thin client of the node, feeding ``HmiState``.

It does what ``step-planner send`` does at a terminal, for the pages: sends the ExecuteTask goal, follows the
latched ``~/tree`` (and ``~/tree_json`` for the dialogue), ``~/scene_json`` (the table's picture), a camera
(``~/sim/camera/image/compressed`` on backend sim, or the ``camera_topic`` parameter's CompressedImage topic),
``~/pending_goal`` and ``~/pending_question`` and the action's feedback topic (of whichever goal runs, sent from
here or elsewhere), answers through ``~/confirm_goal`` and ``~/answer_question``, and cancels. Messages become
plain dicts field by field, so fields added to the interfaces reach the page as they are.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import rclpy
from action_msgs.msg import GoalStatus
from rclpy.action import ActionClient
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import CompressedImage
from std_msgs.msg import String
from unique_identifier_msgs.msg import UUID

from step_planner.execution.goal_status import ACCEPT_PROBE_S, StatusWatch, adopt_if_listed, new_goal_id
from step_planner.execution.private_context import private_context
from step_planner.execution.spin_thread import on_spin_thread
from step_planner.hmi.session import HmiState
from step_planner.ros.conversions import ERROR_NAMES
from step_planner.ros.qos import feedback_stream, latched
from step_planner_interfaces.action import ExecuteTask
from step_planner_interfaces.msg import SubgoalTree
from step_planner_interfaces.srv import AnswerQuestion, ConfirmGoal

CALL_TIMEOUT_S = 10.0
TICK_S = 0.5
LOST_AFTER_S = 10.0  # the action server unseen this long while the pages' goal runs: the goal is lost
DECISIONS = {"accept": ConfirmGoal.Request.ACCEPT, "correct": ConfirmGoal.Request.CORRECT,
             "refuse": ConfirmGoal.Request.REFUSE}
STATUS = {GoalStatus.STATUS_SUCCEEDED: "SUCCEEDED", GoalStatus.STATUS_CANCELED: "CANCELED",
          GoalStatus.STATUS_ABORTED: "ABORTED"}


def to_dict(msg: Any) -> Any:
    """A ROS message as plain data, every field (nested messages and arrays too); stamps become seconds."""
    if hasattr(msg, "get_fields_and_field_types"):
        if set(msg.get_fields_and_field_types()) == {"sec", "nanosec"}:
            return msg.sec + msg.nanosec * 1e-9
        return {name: to_dict(getattr(msg, name)) for name in msg.get_fields_and_field_types()}
    if isinstance(msg, (list, tuple)) or type(msg).__name__ == "ndarray" or type(msg).__name__ == "array":
        return [to_dict(x) for x in msg]
    if isinstance(msg, bytes):
        return msg.hex()
    return msg


def result_dict(status: int, result: ExecuteTask.Result) -> dict[str, Any]:
    data = to_dict(result)
    data.pop("final_tree", None)  # the tree topic shows it
    data["status"] = STATUS.get(status, f"status {status}")
    data["error"] = ERROR_NAMES.get(result.error_code, str(result.error_code))
    return data


class RosLink:
    """One rclpy node in a context of its own, spun by one thread; ``close()`` ends both.

    The pages' goal is sent, and canceled, on that thread (execution/spin_thread.py: rclpy 7.1's action client
    drops an answer handled by another thread before it registered the request), and a goal whose "accepted"
    answer is lost on the way is found on the action's status topic and followed (execution/goal_status.py), as
    ``step-planner send`` does: a page whose goal ran while it showed "sending" was the alternative."""

    def __init__(self, state: HmiState, node: str = "/step_planner", camera: str = "") -> None:
        self.state, self.prefix = state, node.rstrip("/")
        self.context = private_context()
        self.node = rclpy.create_node("step_planner_hmi", context=self.context)
        self.client = ActionClient(self.node, ExecuteTask, f"{self.prefix}/execute_task",
                                   feedback_sub_qos_profile=feedback_stream())
        self._confirm = self.node.create_client(ConfirmGoal, f"{self.prefix}/confirm_goal")
        self._answer = self.node.create_client(AnswerQuestion, f"{self.prefix}/answer_question")
        self.node.create_subscription(SubgoalTree, f"{self.prefix}/tree", lambda m: state.on_tree(to_dict(m)),
                                      latched())
        self.node.create_subscription(String, f"{self.prefix}/tree_json", lambda m: state.on_tree_json(m.data),
                                      latched())
        self.node.create_subscription(String, f"{self.prefix}/scene_json", lambda m: state.on_scene(m.data),
                                      latched())  # what is where: the page's picture of the table
        # the camera panel: a CompressedImage topic named by the parameter camera_topic (--camera); by default the
        # node's simulator view (backend sim, latched); none publishing: the panel stays absent
        camera = self.node.declare_parameter("camera_topic", camera).value or ""
        self.camera_topic = source = camera or f"{self.prefix}/sim/camera/image/compressed"
        self.node.create_subscription(CompressedImage, source,
                                      lambda m: state.on_camera(bytes(m.data), source, m.format),
                                      qos_profile_sensor_data if camera else latched())
        for kind, topic in (("goal_confirmation", "pending_goal"), ("question", "pending_question")):
            self.node.create_subscription(String, f"{self.prefix}/{topic}",
                                          lambda m, k=kind: state.on_pending(k, m.data), latched())
        # the feedback topic itself: every goal's feedback, and none lost when the result arrives first
        self.node.create_subscription(ExecuteTask.Impl.FeedbackMessage, f"{self.prefix}/execute_task/_action/feedback",
                                      self._on_feedback, feedback_stream())
        self._watch = StatusWatch(self.node, f"{self.prefix}/execute_task")
        self._handle = None
        self._sending: tuple[Any, UUID, float] | None = None  # a goal sent and not answered yet: future, id, when
        self._lock = threading.Lock()
        self._unseen = 0  # timer ticks the action server has been gone while the pages' goal runs
        self.node.create_timer(TICK_S, self._check_server)
        self.node.create_timer(ACCEPT_PROBE_S, self._probe_sent)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._spin = threading.Thread(target=self.executor.spin, daemon=True, name="hmi-ros")
        self._spin.start()

    def _check_server(self) -> None:
        """Show whether the node is there; a goal whose node vanished ends LOST instead of blocking the pages."""
        ready = self.client.server_is_ready()
        self.state.on_server(ready)
        self._unseen = 0 if ready or not self.state.busy else self._unseen + 1
        if self._unseen * TICK_S >= LOST_AFTER_S:
            self._unseen = 0
            self.state.failed(f"the action server {self.prefix}/execute_task went away while the goal ran "
                              f"(for {LOST_AFTER_S:g} s): its outcome is unknown", status="LOST")

    def _on_feedback(self, msg) -> None:
        self.state.on_feedback(bytes(msg.goal_id.uuid).hex(), to_dict(msg.feedback))

    # ---- what the pages ask for ---------------------------------------------------------------------------
    def send_goal(self, instruction: str) -> None:
        """Send the goal; its acceptance and result reach the state through callbacks."""
        if not self.client.wait_for_server(timeout_sec=CALL_TIMEOUT_S):
            self.state.failed(f"no action server {self.prefix}/execute_task (is the node running?)")
            return
        goal_id = new_goal_id()

        def send() -> None:  # on the spinning thread: no answer is handled before the future is registered
            future = self.client.send_goal_async(ExecuteTask.Goal(instruction=instruction), goal_uuid=goal_id)
            with self._lock:
                self._sending = (future, goal_id, time.monotonic())
            future.add_done_callback(lambda f: self._on_goal_response(f, bytes(goal_id.uuid).hex()))

        try:
            on_spin_thread(self.executor, send, CALL_TIMEOUT_S)
        except TimeoutError as exc:
            self.state.failed(f"the goal was not sent: {exc}")

    def _probe_sent(self) -> None:
        """A goal unanswered for ACCEPT_PROBE_S is looked for on the status topic; listed, it is followed."""
        with self._lock:
            sending = self._sending
        if sending is not None and time.monotonic() - sending[2] >= ACCEPT_PROBE_S:
            adopt_if_listed(self.client, sending[0], sending[1], self._watch)

    def _on_goal_response(self, future, goal_id: str) -> None:
        with self._lock:
            self._sending = None
        handle = future.result()
        if handle is None or not handle.accepted:
            self.state.failed("the node rejected the goal (it is stopping)")
            return
        with self._lock:
            self._handle = handle
        self.state.accepted(goal_id)
        handle.get_result_async().add_done_callback(
            lambda f: self.state.on_result(goal_id, result_dict(f.result().status, f.result().result)))

    def cancel(self) -> tuple[bool, str]:
        with self._lock:
            handle = self._handle
        if handle is None or not self.state.busy:
            return False, "no goal sent from this page is running"
        try:
            response = self._wait(on_spin_thread(self.executor, handle.cancel_goal_async, CALL_TIMEOUT_S))
        except TimeoutError:
            response = None
        if response is None:
            return False, "the node did not answer the cancel request"
        if not response.goals_canceling:
            return False, "the node refused the cancel (the goal already ended?)"
        return True, "canceling: the arm stops"

    def confirm(self, decision: str, facts: tuple[str, ...], reason: str) -> tuple[bool, str]:
        request = ConfirmGoal.Request(decision=DECISIONS[decision], goal=list(facts), reason=reason)
        return self._call(self._confirm, request)

    def answer(self, text: str) -> tuple[bool, str]:
        return self._call(self._answer, AnswerQuestion.Request(answer=text))

    def _call(self, client, request) -> tuple[bool, str]:
        if not client.wait_for_service(timeout_sec=CALL_TIMEOUT_S):
            return False, f"no service {client.srv_name}"
        response = self._wait(client.call_async(request))
        if response is None:
            return False, f"{client.srv_name} did not answer"
        return bool(response.accepted), response.message

    @staticmethod
    def _wait(future, timeout: float = CALL_TIMEOUT_S):
        done = threading.Event()
        future.add_done_callback(lambda f: done.set())
        return future.result() if done.wait(timeout) else None

    def close(self) -> None:
        self.executor.shutdown()
        self._spin.join(CALL_TIMEOUT_S)
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)
