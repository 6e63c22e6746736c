"""The gripper through a ``control_msgs/action/GripperCommand`` action server (``gripper.mode:
gripper_action``), e.g. franka_gripper's ``gripper_action`` or a GripperActionController.

Used instead of planning the SRDF hand group when the hand controller should squeeze with a set
force (``max_effort``). rclpy + control_msgs are imported when this mode is chosen. The tests load the
real control_msgs types (a test-only build, docs/test_interfaces.md) but run no GripperCommand server, so
only the refusal when none answers is tested (see docs/moveit_backend.md).
"""

from __future__ import annotations

import threading
import time
from typing import Any

from step_planner.execution.base import ExecCode
from step_planner.execution.errors import BackendUnavailable


class GripperActionClient:
    def __init__(self, action_name: str, timeout_s: float, node_name: str = "step_planner_gripper") -> None:
        try:
            import rclpy
            from control_msgs.action import GripperCommand
            from rclpy.action import ActionClient
        except ImportError as exc:
            raise BackendUnavailable(
                f"gripper.mode gripper_action needs rclpy and control_msgs ({exc}); "
                "`sudo apt install ros-jazzy-control-msgs` and source /opt/ros/jazzy/setup.bash"
            ) from exc
        self._rclpy = rclpy
        self._action_type = GripperCommand
        self.timeout_s = timeout_s
        self._owns_context = not rclpy.ok()
        if self._owns_context:
            rclpy.init()
        self.node = rclpy.create_node(node_name)
        try:
            self.client = ActionClient(self.node, GripperCommand, action_name)
        except Exception as exc:  # noqa: BLE001 - e.g. a control_msgs build without type support
            self.close()
            raise BackendUnavailable(f"cannot create a GripperCommand action client for {action_name}: {exc!r}; "
                                     "is ros-jazzy-control-msgs installed and sourced?") from exc
        if not self.client.wait_for_server(timeout_sec=timeout_s):
            self.close()
            raise BackendUnavailable(f"no GripperCommand action server at {action_name} within {timeout_s} s; "
                                     "is the gripper driver running? (config/franka.yaml gripper.action_name)")

    def _wait(self, future: Any, cancel: threading.Event | None, deadline: float) -> str:
        while not future.done():
            if cancel is not None and cancel.is_set():
                return "canceled"
            if time.monotonic() > deadline:
                return "timeout"
            self._rclpy.spin_until_future_complete(self.node, future, timeout_sec=0.05)
        return "done"

    def command(self, position: float, max_effort: float,
                cancel: threading.Event | None) -> tuple[ExecCode, str, float | None]:
        """Send one goal and wait for its result: (code, message, final position)."""
        goal = self._action_type.Goal()
        goal.command.position = float(position)
        goal.command.max_effort = float(max_effort)
        deadline = time.monotonic() + self.timeout_s
        sent = self.client.send_goal_async(goal)
        state = self._wait(sent, cancel, deadline)
        if state != "done":
            return (ExecCode.CANCELED if state == "canceled" else ExecCode.TIMEOUT), f"gripper goal {state}", None
        handle = sent.result()
        if not handle.accepted:
            return ExecCode.BACKEND_ERROR, "the gripper action server rejected the goal", None
        result_future = handle.get_result_async()
        state = self._wait(result_future, cancel, deadline)
        if state != "done":
            handle.cancel_goal_async()
            return (ExecCode.CANCELED if state == "canceled" else ExecCode.TIMEOUT), f"gripper {state}", None
        result = result_future.result().result
        if result.reached_goal or result.stalled:  # stalled = squeezing an object with max_effort
            return ExecCode.SUCCESS, "gripper done", float(result.position)
        return ExecCode.GRASP_FAILED, "gripper neither reached its goal nor stalled", float(result.position)

    def close(self) -> None:
        self.node.destroy_node()
        if self._owns_context and self._rclpy.ok():
            self._rclpy.shutdown()
