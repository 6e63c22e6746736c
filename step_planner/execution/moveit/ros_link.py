"""The MoveIt backend's own rclpy node: the action servers MoveIt does not cover, and the fingers' joint states.

WHY a node of its own: MoveItPy runs a C++ node that plans and executes the arm; the gripper servers (franka_gripper,
GripperActionController) are reached directly, and the start-up checks ask whether the arm controller's action
server exists at all. This node lives in a context of its own, in the step_planner node's namespace (relative names
resolve as MoveIt's do), spun on a thread of its own, so waiting here never blocks the step_planner node's
executor. rclpy is imported when the backend is built.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from step_planner.execution.errors import BackendUnavailable
from step_planner.execution.joint_state_tap import JointStateTap
from step_planner.execution.private_context import private_context
from step_planner.execution.spin_thread import cancel_if_accepted, on_spin_thread

POLL_S = 0.005
STATUS = {4: "succeeded", 5: "canceled", 6: "aborted"}  # action_msgs/GoalStatus STATUS_SUCCEEDED/CANCELED/ABORTED


@dataclass(frozen=True)
class Fingers:
    """The latest joint state of both finger joints."""

    positions: tuple[float, float]
    velocities: tuple[float, float]
    received: float  # time.monotonic()

    @property
    def gap(self) -> float:
        return self.positions[0] + self.positions[1]


@dataclass
class Ended:
    """How one goal ended: ``status`` succeeded | aborted | canceled | rejected | timeout | stopped (by ``cancel``)."""

    status: str
    result: Any = None
    message: str = ""
    at: float = 0.0  # time.monotonic() when the result arrived


class RosLink:
    def __init__(self, namespace: str, finger_joints: tuple[str, str], joint_states: str,
                 node_name: str = "step_planner_moveit_io") -> None:
        try:
            import rclpy
            from rclpy.executors import SingleThreadedExecutor
            from sensor_msgs.msg import JointState
        except ImportError as exc:
            raise BackendUnavailable(f"the moveit backend's gripper and controller checks need rclpy ({exc}); "
                                     "source /opt/ros/jazzy/setup.bash") from exc
        self._rclpy = rclpy
        # no command line: the node's process gets `-r __node:=step_planner` from ros2 launch, which as a global
        # remap would rename every node of a context parsing it to step_planner (the namespace is given below)
        self.context = private_context()
        self.node = rclpy.create_node(node_name, namespace=namespace or "/", context=self.context)
        self._finger_joints = finger_joints
        self._lock = threading.Lock()
        self._fingers: dict[str, tuple[float, float]] = {}
        self._fingers_at = 0.0
        self._watches: dict[int, Any] = {}  # id(action client) -> its goal_status.StatusWatch
        self._service_clients: dict[str, Any] = {}
        self.node.create_subscription(JointState, joint_states, self._on_joints, 10)
        self.joint_states = self.node.resolve_topic_name(joint_states)
        self.joint_tap = JointStateTap(self.joint_states, "moveit backend")
        self._executor = SingleThreadedExecutor(context=self.context)
        self._executor.add_node(self.node)
        self._thread = threading.Thread(target=self._spin, name="moveit_ros_link", daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        try:
            self._executor.spin()
        except Exception:  # noqa: BLE001 - the context was shut down under the executor
            pass

    def _on_joints(self, msg: Any) -> None:
        self.joint_tap(msg)  # every message as received, for an episode (execution/joint_state_tap.py)
        got = {n: (float(msg.position[i]) if i < len(msg.position) else 0.0,
                   float(msg.velocity[i]) if i < len(msg.velocity) else 0.0)
               for i, n in enumerate(msg.name) if n in self._finger_joints}
        if got:
            with self._lock:
                self._fingers.update(got)
                if len(self._fingers) == 2:
                    self._fingers_at = time.monotonic()

    def fingers(self) -> Fingers | None:
        with self._lock:
            if len(self._fingers) != 2:
                return None
            (p1, v1), (p2, v2) = (self._fingers[j] for j in self._finger_joints)
            return Fingers((p1, p2), (v1, v2), self._fingers_at)

    def fingers_after(self, since: float, timeout: float, resting: int = 1, speed: float = 1e-3) -> Fingers | None:
        """The fingers once ``resting`` joint states in a row, received after ``since``, show them slower than
        ``speed`` (m/s); the last one received if they never rest within ``timeout``; None without any."""
        deadline = time.monotonic() + timeout
        seen, still, last = since, 0, None
        while time.monotonic() < deadline:
            f = self.fingers()
            if f is not None and f.received > seen:
                seen, last = f.received, f
                still = still + 1 if max(abs(v) for v in f.velocities) < speed else 0
                if still >= resting:
                    return f
            time.sleep(POLL_S)
        return last

    # ---- actions --------------------------------------------------------------------------------------------
    def action_client(self, action_type: Any, name: str) -> Any:
        from rclpy.action import ActionClient

        from step_planner.execution.goal_status import StatusWatch

        client = ActionClient(self.node, action_type, name)
        self._watches[id(client)] = StatusWatch(self.node, name)  # for a goal whose accepted answer is lost
        return client

    def resolve(self, name: str) -> str:
        return self.node.resolve_topic_name(name)

    def wait_for_servers(self, clients: dict[str, Any], timeout: float, what: str) -> None:
        """Every client's server discovered within ``timeout``, or BackendUnavailable naming the missing ones."""
        deadline = time.monotonic() + timeout
        while True:
            missing = [name for name, client in clients.items() if not client.server_is_ready()]
            if not missing:
                return
            if time.monotonic() > deadline:
                raise BackendUnavailable(f"no action server at {', '.join(self.resolve(n) for n in missing)} within "
                                         f"{timeout:.0f} s: {what}")
            time.sleep(0.02)

    def run_goal(self, client: Any, goal: Any, timeout: float, cancel: threading.Event | None,
                 feedback: Any = None) -> Ended:
        """Send ``goal`` and wait for its end; ``cancel`` or ``timeout`` cancel it (and wait up to 2 s for it)."""
        from step_planner.execution.goal_status import ACCEPT_PROBE_S, adopt_on_spin_thread, new_goal_id

        deadline = time.monotonic() + timeout
        goal_id = new_goal_id()
        try:  # on the spinning thread: rclpy's action client drops a response that beats its own bookkeeping
            future = on_spin_thread(self._executor, lambda: client.send_goal_async(goal, feedback_callback=feedback,
                                                                                   goal_uuid=goal_id), timeout)
        except TimeoutError:
            return Ended("timeout", message="the goal could not be sent in time (the client is stalled)")
        probe_at = time.monotonic() + ACCEPT_PROBE_S
        while not future.done():
            watch = self._watches.get(id(client))
            if watch is not None and time.monotonic() > probe_at:  # the answer may be lost: is the goal listed?
                probe_at = time.monotonic() + ACCEPT_PROBE_S
                if adopt_on_spin_thread(self._executor, client, future, goal_id, watch):
                    break
            if cancel is not None and cancel.is_set():
                future.add_done_callback(cancel_if_accepted)  # it must not run after we gave up on it
                return Ended("stopped", message="canceled before the goal was accepted")
            if time.monotonic() > deadline:
                future.add_done_callback(cancel_if_accepted)
                return Ended("timeout", message="the goal was neither accepted nor rejected in time")
            time.sleep(POLL_S)
        handle = future.result()
        if handle is None or not handle.accepted:
            return Ended("rejected", message="the server rejected the goal")
        try:
            result = on_spin_thread(self._executor, handle.get_result_async, max(1.0, deadline - time.monotonic()))
        except TimeoutError:
            handle.cancel_goal_async()
            return Ended("timeout", message="its result could not be asked for in time (the client is stalled)")
        why = ""
        while not result.done():
            if cancel is not None and cancel.is_set():
                why = "stopped"
            elif time.monotonic() > deadline:
                why = "timeout"
            if why:
                handle.cancel_goal_async()
                end = time.monotonic() + 2.0
                while not result.done() and time.monotonic() < end:
                    time.sleep(POLL_S)
                return Ended(why, result.result().result if result.done() else None,
                             "canceled" if why == "stopped" else f"no result within {timeout:.1f} s")
            time.sleep(POLL_S)
        response = result.result()
        return Ended(STATUS.get(response.status, f"status {response.status}"), response.result, at=time.monotonic())

    # ---- services ---------------------------------------------------------------------------------------------
    def call_service(self, srv_type: Any, name: str, request: Any, timeout: float,
                     resend_s: float | None = None) -> Any:
        """The answer, or BackendUnavailable after ``timeout`` (service_call.call_service; the FR3's controller
        manager, for franka_link.FrankaLink)."""
        from step_planner.execution.service_call import call_service

        with self._lock:
            client = self._service_clients.get(name)
            if client is None:
                client = self._service_clients[name] = self.node.create_client(srv_type, name)
        return call_service(self.node, client, name, request, timeout, resend_s, BackendUnavailable)

    def close(self) -> None:
        self._executor.shutdown()
        self._thread.join(timeout=5.0)
        self.node.destroy_node()
        self._rclpy.try_shutdown(context=self.context)
