"""franka_gripper's ROS interfaces around the emulation of :mod:`step_planner.execution.sim.franka_gripper_emulation`.

WHY: the FR3's gripper is reached through four actions and a joint-state topic of the ``franka_gripper`` node
(franka_ros2@29cb85a franka_gripper/src/gripper_action_server.cpp, ``FG``): ``~/homing``, ``~/move``, ``~/grasp``
(franka_msgs) and ``~/gripper_action`` (control_msgs GripperCommand), ``~/joint_states``. Two hands serve them here:
the MuJoCo robot's fingers (``ros/mujoco_robot.py`` with the FR3 entry) and the mock hand of
``ros/franka_gripper_node.py`` (fake hardware, the tests' stand-in). This module is the part they share: the action
servers, their feedback at the node's feedback rate, the results as the node fills them and the joint states.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from control_msgs.action import GripperCommand
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.node import Node
from sensor_msgs.msg import JointState

from step_planner.execution.sim.controller_emulation import GoalEnd
from step_planner.execution.sim.franka_gripper_emulation import FrankaGripperParams

ACTIONS = ("homing", "move", "grasp", "gripper_action")  # FG:88, 96, 105, 114


def action_types() -> dict[str, Any]:
    """The action type of each interface (franka_msgs is imported only where the FR3's gripper is served)."""
    from franka_msgs.action import Grasp, Homing, Move

    return {"homing": Homing, "move": Move, "grasp": Grasp, "gripper_action": GripperCommand}


@dataclass
class GripperHand:
    """What the server needs of whatever runs the emulation; every call is thread-safe."""

    start: Callable[[str, Hashable, Any], None]  # (action, goal id, the ROS goal)
    cancel: Callable[[Hashable], bool]
    end_of: Callable[[Hashable], GoalEnd | None]
    feedback: Callable[[], dict | None]
    state_width: Callable[[], float]


class FrankaGripperServer:
    """The four actions under ``prefix`` (``~`` for a node named franka_gripper, or ``/franka_gripper``) and, if
    ``joint_names`` are given, ``<prefix>/joint_states`` at the state rate (FG:126-129, 260-278)."""

    def __init__(self, node: Node, hand: GripperHand, params: FrankaGripperParams, prefix: str = "~",
                 joint_names: tuple[str, str] | None = None, callback_group: Any = None) -> None:
        self.node, self.hand, self.params = node, hand, params
        self.stopping = False
        types = action_types()
        self.servers = [
            ActionServer(node, types[name], f"{prefix}/{name}",
                         execute_callback=lambda handle, name=name: self._execute(name, handle),
                         goal_callback=lambda _goal: GoalResponse.ACCEPT,  # FG:137-140
                         handle_accepted_callback=lambda handle, name=name: self._accepted(name, handle),
                         cancel_callback=self._cancel, callback_group=callback_group)
            for name in ACTIONS
        ]
        self.joint_names = joint_names
        if joint_names is not None:
            self._joint_pub = node.create_publisher(JointState, f"{prefix}/joint_states", 1)  # FG:126-127
            node.create_timer(1.0 / params.state_publish_rate, self._publish_state, callback_group=callback_group)

    def destroy(self) -> None:
        """Remove the actions from the ROS graph (a node's destroy_node does not destroy its action servers)."""
        self.stopping = True
        for server in self.servers:
            server.destroy()

    def _accepted(self, action: str, handle) -> None:
        self.hand.start(action, bytes(handle.goal_id.uuid), handle.request)
        handle.execute()

    def _cancel(self, handle) -> CancelResponse:
        self.hand.cancel(bytes(handle.goal_id.uuid))  # gripper_->stop() (FG:221-222)
        return CancelResponse.ACCEPT  # FG:132-135

    def _execute(self, action: str, handle) -> Any:
        """Wait for the command's end, publishing feedback every feedback period (FGH:158-170, FG:217-229)."""
        key = bytes(handle.goal_id.uuid)
        types = action_types()
        period = 1.0 / self.params.feedback_publish_rate
        while True:
            end = self.hand.end_of(key)
            if end is not None:
                break
            if self.stopping or not self.node.context.ok():
                end = GoalEnd(key, "aborted", {"success": False, "error": "the gripper node is shutting down",
                                               "reached_goal": False})
                break
            fb = self.hand.feedback()
            if fb is not None and fb["goal_id"] == key:
                handle.publish_feedback(_feedback(types[action], fb))
            time.sleep(period)
        finish(handle, end.status)
        return _result(types[action], end.result)

    def _publish_state(self) -> None:
        assert self.joint_names is not None
        half = self.hand.state_width() / 2  # FG:268-277: each finger half the width, velocity and effort 0
        msg = JointState(name=list(self.joint_names), position=[half, half], velocity=[0.0, 0.0], effort=[0.0, 0.0])
        msg.header.stamp = self.node.get_clock().now().to_msg()
        self._joint_pub.publish(msg)


def finish(handle, status: str, wait_s: float = 1.0) -> None:
    """End the goal as the node does: succeed, abort, or canceled once rclpy has moved it to CANCELING (the cancel
    callback ends the command at once; rclpy sets CANCELING just after it returns)."""
    if status == "succeeded":
        handle.succeed()
        return
    if status == "canceled":
        deadline = time.monotonic() + wait_s
        while not handle.is_cancel_requested and time.monotonic() < deadline:
            time.sleep(0.002)
        if handle.is_cancel_requested:
            handle.canceled()
            return
    handle.abort()


def _feedback(action_type: Any, fb: dict) -> Any:
    if "current_width" in fb:
        return action_type.Feedback(current_width=float(fb["current_width"]))
    return action_type.Feedback(position=float(fb["position"]), effort=0.0, stalled=False, reached_goal=False)


def _result(action_type: Any, result: dict) -> Any:
    if action_type is GripperCommand:
        return GripperCommand.Result(position=float(result.get("position", 0.0)),
                                     effort=float(result.get("effort", 0.0)),
                                     stalled=bool(result.get("stalled", False)),
                                     reached_goal=bool(result.get("reached_goal", False)))
    return action_type.Result(success=bool(result.get("success", False)), error=str(result.get("error", "")))
