"""The client side of the standard robot boundary: one rclpy node, in a context of its own, spun on its thread.

It sends FollowJointTrajectory and GripperCommand goals and keeps the latest joint states and model poses. It
knows what joint_trajectory_controller and the gripper servers do (ros2_controllers jazzy, franka_ros2 jazzy;
see execution/sim/controller_emulation.py for the lines) and never hangs on them: a goal that is neither
accepted nor rejected, a result that does not come, a robot whose joint states stop, all end with a reason.
No MoveIt here.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import rclpy
from action_msgs.msg import GoalStatus
from control_msgs.action import FollowJointTrajectory, GripperCommand
from control_msgs.msg import GripperCommand as GripperCommandMsg
from rclpy.action import ActionClient
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage

from step_planner.domain.pose_tree import PoseTree, WorldPose
from step_planner.execution.controllers import messages as m
from step_planner.execution.controllers.config import BoundaryConfig
from step_planner.execution.controllers.trajectory import Waypoints
from step_planner.execution.goal_status import ACCEPT_PROBE_S, StatusWatch, adopt_on_spin_thread, new_goal_id
from step_planner.execution.joint_state_tap import JointStateTap
from step_planner.execution.private_context import private_context
from step_planner.execution.service_call import RESEND_S, call_service
from step_planner.execution.sim.model import ARM_JOINTS
from step_planner.execution.spin_thread import cancel_if_accepted, on_spin_thread

POLL_S = 0.005  # how often a waiting call looks at its futures, the cancel event and the robot's liveness
MONITOR_S = 0.05  # how often a running trajectory's monitor is asked (as the in-process simulator: 50 ms)
SERVICE_RESEND_S = RESEND_S  # a repeatable service request unanswered this long is sent again (call_service)
TICK_S = 0.05  # the spin thread's pulse (see RobotConnection._on_tick)
STALL_S = 0.25  # a pulse this late: the spin thread was starved, and heard nothing the robot sent meanwhile
FINGER_REST_SPEED = 1e-3  # m/s: the fingers have come to rest
STATUS = {GoalStatus.STATUS_SUCCEEDED: "succeeded", GoalStatus.STATUS_CANCELED: "canceled",
          GoalStatus.STATUS_ABORTED: "aborted"}


class RobotUnavailable(RuntimeError):
    """The robot's action servers or joint states are not there; the message names what is missing."""


@dataclass(frozen=True)
class Joints:
    """The latest joint state, by the planning model's joint names."""

    position: dict[str, float]
    velocity: dict[str, float]
    received: float  # time.monotonic()
    stamp: float  # the message's header stamp (sim time in simulation)


@dataclass
class ActionOutcome:
    """How one goal ended: ``status`` succeeded | aborted | canceled | rejected | lost | timeout | stopped."""

    status: str
    message: str
    result: Any = None
    stopped_by: tuple[Any, str] | None = None  # the monitor's (code, reason) when status is stopped
    max_error: float = 0.0  # largest |desired - actual| of any joint in the trajectory's feedback (rad)
    cancel_to_result_s: float | None = None
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class Stats:
    """What went over the boundary: goals by outcome, and each trajectory's largest tracking error in feedback."""

    trajectories: dict[str, int] = field(default_factory=dict)
    gripper: dict[str, int] = field(default_factory=dict)
    tracking_errors: list[float] = field(default_factory=list)
    adopted: int = 0  # goals whose "accepted" answer was lost and that were found on the status topic

    def count(self, kind: dict[str, int], status: str) -> None:
        kind[status] = kind.get(status, 0) + 1


class RobotConnection:
    """The robot of ``config`` (config/robot_boundary.yaml) as seen through its standard ROS interfaces."""

    def __init__(self, config: BoundaryConfig, node_name: str = "step_planner_controllers",
                 domain_id: int | None = None, namespace: str = "/") -> None:
        self.config = config
        self.context = private_context(domain_id)  # the process's remappings are the main node's
        # in the step_planner node's namespace, beside it (the config's names are absolute: BoundaryConfig.under)
        self.node = rclpy.create_node(node_name, namespace=namespace or "/", context=self.context)
        self._names = config.model_names
        self._lock = threading.Lock()
        self._joints: Joints | None = None
        self._poses = PoseTree()
        self._poses_received = 0.0
        self._feedback_error = 0.0
        self.stats = Stats()
        self._service_clients: dict[str, Any] = {}
        self._tick = self._listening_since = time.monotonic()
        self.arm = ActionClient(self.node, FollowJointTrajectory, config.arm.action)
        self.gripper = ActionClient(self.node, GripperCommand, config.gripper.action)
        self.franka: dict[str, ActionClient] = {}  # franka_gripper's grasp and move (franka_msgs), FR3 only
        self.hand_max_width: float | None = None  # m: the width franka_gripper reported after homing (None: not homed)
        if config.gripper.server == "franka_gripper":
            from franka_msgs.action import Grasp, Homing, Move

            node = config.gripper.node
            kinds = (("grasp", Grasp), ("move", Move)) + ((("homing", Homing),) if config.gripper.homing else ())
            self.franka = {f"{node}/{name}": ActionClient(self.node, kind, f"{node}/{name}") for name, kind in kinds}
        self._watches = {name: StatusWatch(self.node, name)
                         for name in (config.arm.action, config.gripper.action, *self.franka)}
        sensor = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        self.node.create_subscription(JointState, config.joint_states, self._on_joints, sensor)
        self.joint_tap = JointStateTap(self.node.resolve_topic_name(config.joint_states), "controllers backend")
        if config.object_poses:
            self.node.create_subscription(TFMessage, config.object_poses, self._on_poses, sensor)
        self.node.create_timer(TICK_S, self._on_tick)
        self._executor = SingleThreadedExecutor(context=self.context)
        self._executor.add_node(self.node)
        self._thread = threading.Thread(target=self._spin, name="robot_connection", daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        try:
            self._executor.spin()
        except Exception:  # noqa: BLE001 - the context was shut down under the executor: nothing to report
            pass

    # ---- state ----------------------------------------------------------------------------------------------
    def _on_joints(self, msg: JointState) -> None:
        self.joint_tap(msg)  # as received, for an episode (execution/joint_state_tap.py)
        known = [(self._names[n], i) for i, n in enumerate(msg.name) if n in self._names]
        if not known:
            return
        pos = {name: float(msg.position[i]) for name, i in known if i < len(msg.position)}
        vel = {name: float(msg.velocity[i]) for name, i in known if i < len(msg.velocity)}
        with self._lock:
            old = self._joints  # merge: arm and fingers may come in separate messages (franka_ros2)
            if old is not None:
                pos, vel = {**old.position, **pos}, {**old.velocity, **vel}
            self._joints = Joints(pos, vel, time.monotonic(), m.seconds(msg.header.stamp))

    def _on_tick(self) -> None:
        """The spin thread's pulse: a gap (this process held the GIL, e.g. compiling a MuJoCo model) is left out
        of the robot's silence, as the joint states it sent meanwhile are still queued; the silence heard before
        the gap still counts, so a robot already gone does not look alive after a stall."""
        now = time.monotonic()
        with self._lock:
            stall = now - self._tick
            if stall > STALL_S:  # the gap is not counted: a robot silent before it stays as silent as it was
                heard = max(self._joints.received, self._listening_since) if self._joints else self._listening_since
                self._listening_since = min(now, heard + stall)
            self._tick = now

    def _on_poses(self, msg: TFMessage) -> None:
        now = time.monotonic()
        with self._lock:
            self._poses.update(m.poses_from_msg(msg), now)
            self._poses_received = now

    def joints(self) -> Joints | None:
        with self._lock:
            return self._joints

    def poses(self, filtered: bool = True) -> dict[str, WorldPose]:
        """World poses by entity name: filtered (the mean over ``pose_filter_s``, for a world at rest) or the
        newest reports (for monitors during a motion)."""
        with self._lock:
            return self._poses.world_poses(self.config.pose_filter_s if filtered else 0.0)

    def forget_poses(self) -> None:
        """Drop every pose report so far: after a simulator's reset, earlier reports describe another world (and
        the filter would average them in)."""
        with self._lock:
            self._poses = PoseTree()
            self._poses_received = 0.0

    def wait_fresh(self, since: float, timeout: float) -> bool:
        """Wait until a joint state (and, with perception, a pose message) received after ``since`` is here."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                fresh = self._joints is not None and self._joints.received > since and \
                    (not self.config.object_poses or self._poses_received > since)
            if fresh:
                return True
            time.sleep(POLL_S)
        return False

    def lost(self) -> str | None:
        """Why the robot counts as lost, or None: its joint states stopped for ``state_stale_s`` while this
        connection was listening (a stall of its own spin thread is not the robot's silence)."""
        now = time.monotonic()
        with self._lock:
            joints, tick, since = self._joints, self._tick, self._listening_since
        stale = self.config.timeouts.state_stale_s
        if joints is None:
            return f"no joint state on {self.config.joint_states}"
        listened_until = tick if now - tick > STALL_S else now  # a stall going on right now is not counted
        age = listened_until - max(joints.received, since)
        if age > stale:
            return f"no joint state on {self.config.joint_states} for {age:.1f} s (limit {stale:.1f} s)"
        return None

    def missing_servers(self) -> list[str]:
        """The names of the action servers the robot must have (:meth:`_servers`) that are not discovered now."""
        return [name for client, name in self._servers() if not client.server_is_ready()]

    def _servers(self) -> list[tuple[ActionClient, str]]:
        """The action servers a robot must have: the arm's, and the gripper's the backend uses."""
        gripper = list(self.franka.items()) or [(self.config.gripper.action, self.gripper)]
        return [(self.arm, self.config.arm.action), *((client, name) for name, client in gripper)]

    def wait_ready(self, timeout: float | None = None) -> None:
        """Both action servers discovered and joint states arriving, or RobotUnavailable naming what is missing."""
        timeout = self.config.timeouts.server_wait_s if timeout is None else timeout
        deadline = time.monotonic() + timeout
        while True:
            missing = self.missing_servers()
            if self.lost() is not None:
                missing.append(f"joint states on {self.config.joint_states}")
            elif self.config.object_poses and not self._poses_received:
                missing.append(f"model poses on {self.config.object_poses}")
            if not missing:
                return
            if time.monotonic() > deadline:
                raise RobotUnavailable(f"after {timeout:.0f} s the robot ({self.config.robot}) still lacks: "
                                       f"{', '.join(missing)}; is the robot (or `step-planner mujoco-robot`) running "
                                       f"in this ROS_DOMAIN_ID?")
            time.sleep(0.05)

    # ---- goals ----------------------------------------------------------------------------------------------
    def _send(self, client: ActionClient, name: str, goal: Any, cancel: threading.Event | None,
              feedback: Callable[[Any], None] | None = None) -> tuple[Any, ActionOutcome | None]:
        """Send a goal and wait until it is accepted; (goal handle, None) or (None, the outcome)."""
        if not client.server_is_ready():
            return None, ActionOutcome("lost", f"the action server {name} is not available")
        deadline = time.monotonic() + self.config.timeouts.goal_accept_s
        goal_id = new_goal_id()
        try:  # made on the spinning thread: rclpy's action client drops a response that beats its own bookkeeping
            future = on_spin_thread(self._executor, lambda: client.send_goal_async(goal, feedback_callback=feedback,
                                                                                   goal_uuid=goal_id),
                                    self.config.timeouts.goal_accept_s)
        except TimeoutError:
            return None, ActionOutcome("timeout", f"{name}: the goal was not sent within "
                                                  f"{self.config.timeouts.goal_accept_s:.1f} s (the client is stalled)")
        probe_at = time.monotonic() + ACCEPT_PROBE_S
        while not future.done():
            if time.monotonic() > probe_at and name in self._watches:  # the answer may be lost: is the goal listed?
                probe_at = time.monotonic() + ACCEPT_PROBE_S
                if adopt_on_spin_thread(self._executor, client, future, goal_id, self._watches[name]):
                    self.stats.adopted += 1
                    self.node.get_logger().warning(f"{name}: the goal's answer did not arrive; the status topic "
                                                   "lists it as accepted, so it is followed from there")
                    break
            if time.monotonic() > deadline:
                future.add_done_callback(cancel_if_accepted)  # the primitive failed: it must not run later
                return None, ActionOutcome("timeout", f"{name} neither accepted nor rejected the goal within "
                                                      f"{self.config.timeouts.goal_accept_s:.1f} s")
            if (why := self.lost()) is not None:
                future.add_done_callback(cancel_if_accepted)
                return None, ActionOutcome("lost", f"lost the robot while sending to {name}: {why}")
            time.sleep(POLL_S)
        handle = future.result()
        if handle is None or not handle.accepted:
            return None, ActionOutcome("rejected", f"{name} rejected the goal")
        return handle, None

    def _await(self, handle: Any, name: str, deadline: float, cancel: threading.Event | None,
               monitor: Callable[[], tuple[Any, str] | None] | None = None) -> ActionOutcome:
        """Wait for the result; cancel the goal on ``cancel``, a monitor's complaint, a timeout or a lost robot."""
        try:
            result_future = on_spin_thread(self._executor, handle.get_result_async,
                                           max(1.0, deadline - time.monotonic()))
        except TimeoutError:
            handle.cancel_goal_async()
            return ActionOutcome("timeout", f"{name}: its result was not asked for in time (the client is stalled)")
        next_monitor = time.monotonic() + MONITOR_S
        outcome: ActionOutcome | None = None
        while not result_future.done():
            now = time.monotonic()
            if cancel is not None and cancel.is_set():
                outcome = ActionOutcome("canceled", "canceled")
            elif monitor is not None and now >= next_monitor:
                next_monitor = now + MONITOR_S
                if (bad := monitor()) is not None:
                    outcome = ActionOutcome("stopped", bad[1], stopped_by=bad)
            elif (why := self.lost()) is not None:
                return ActionOutcome("lost", f"lost the robot during a goal of {name}: {why}")
            elif now > deadline:
                outcome = ActionOutcome("timeout", f"{name} sent no result in time")
            if outcome is not None:
                break
            time.sleep(POLL_S)
        if outcome is None:
            return self._ended(result_future.result(), name)
        t0 = time.monotonic()
        handle.cancel_goal_async()  # the controller holds where the arm is (JTC.cpp:1429-1450)
        if (joints := self.joints()) is not None:
            outcome.details["joint_speed_at_cancel"] = max((abs(joints.velocity.get(n, 0.0)) for n in ARM_JOINTS),
                                                           default=0.0)
        end = time.monotonic() + 2.0
        while not result_future.done() and time.monotonic() < end:
            if (why := self.lost()) is not None:
                return ActionOutcome("lost", f"lost the robot while canceling a goal of {name}: {why}")
            time.sleep(POLL_S)
        outcome.cancel_to_result_s = time.monotonic() - t0 if result_future.done() else None
        if result_future.done():
            outcome.result = result_future.result().result
        return outcome

    @staticmethod
    def _ended(response: Any, name: str) -> ActionOutcome:
        status = STATUS.get(response.status, f"status {response.status}")
        return ActionOutcome(status, f"{name}: {status}", result=response.result)

    def run_trajectory(self, wp: Waypoints, cancel: threading.Event | None = None,
                       monitor: Callable[[], tuple[Any, str] | None] | None = None) -> ActionOutcome:
        """Execute ``wp`` (model joint order) on the arm controller; returns when the controller reports."""
        name = self.config.arm.action
        goal = m.trajectory_goal_msg(wp, self.config.arm.joints, self.config.trajectory)
        self._feedback_error = 0.0
        handle, refused = self._send(self.arm, name, goal, cancel, self._on_arm_feedback)
        if refused is not None:
            self.stats.count(self.stats.trajectories, refused.status)
            return refused
        deadline = time.monotonic() + wp.duration + self.config.timeouts.trajectory_margin_s \
            + self.config.trajectory.goal_time_tolerance_s
        outcome = self._await(handle, name, deadline, cancel, monitor)
        outcome.max_error = self._feedback_error
        self.stats.count(self.stats.trajectories, outcome.status)
        if outcome.status == "succeeded":
            self.stats.tracking_errors.append(outcome.max_error)
        if outcome.status in ("succeeded", "aborted") and outcome.result is not None:
            text = outcome.result.error_string or f"error_code {outcome.result.error_code}"
            outcome.message = f"{name}: {outcome.status} ({text})"
        return outcome

    def _on_arm_feedback(self, msg: Any) -> None:
        error = msg.feedback.error.positions
        if len(error):
            self._feedback_error = max(self._feedback_error, float(np.max(np.abs(error))))

    def command_gripper(self, opening: float, cancel: threading.Event | None = None,
                        grasp_width: float | None = None) -> ActionOutcome:
        """Command one finger's ``opening`` (m); ``grasp_width``: the closing fingers should stop on something that
        wide (m, between the fingers). When the outcome is not lost, rejected or a timeout, ``details["opening"]``
        is where the fingers came to rest (one finger, m), and for franka_gripper's grasp ``details["grasped"]``
        what the gripper decided.

        GripperActionController: a GripperCommand goal. franka_gripper: its own actions, as the FR3 is driven:
        ~/grasp at ``grasp_width`` with the epsilons and the force (franka_ros2@29cb85a
        franka_gripper/src/gripper_action_server.cpp:155-162; held iff the fingers stop within the epsilons of it,
        libfranka include/franka/gripper.h:83-84), ~/move for everything else (:147-153). Its GripperCommand would
        grasp at twice the goal's position with 5 mm epsilons (:167, 189-195): commanded at 0, every real object
        would end ABORTED."""
        g = self.config.gripper
        if self.franka:
            return self._franka_gripper(opening, cancel, grasp_width)
        goal = GripperCommand.Goal(command=GripperCommandMsg(position=g.goal_value(opening), max_effort=g.max_effort))
        handle, refused = self._send(self.gripper, g.action, goal, cancel)
        if refused is not None:
            self.stats.count(self.stats.gripper, refused.status)
            return refused
        outcome = self._await(handle, g.action, time.monotonic() + self.config.timeouts.gripper_s, cancel)
        self.stats.count(self.stats.gripper, outcome.status)
        if outcome.status in ("lost", "timeout"):
            return outcome
        outcome.details["opening"] = self._finger_rest(outcome.result)
        return outcome

    def open_limit(self) -> float:
        """The widest franka_gripper ~/move this backend sends (m between the fingers): ``open_width``, and never more
        than the width the hand reported after homing."""
        width = self.config.gripper.open_width
        return width if self.hand_max_width is None else min(width, self.hand_max_width)

    def home_gripper(self) -> ActionOutcome:
        """franka_gripper's ~/homing (libfranka measures the maximum width, gripper.h:65-78; that the fingers then rest
        open at it is assumed, UNVERIFIED), then the width its joint states report, kept as ``hand_max_width``."""
        from franka_msgs.action import Homing

        g = self.config.gripper
        name = f"{g.node}/homing"
        handle, refused = self._send(self.franka[name], name, Homing.Goal(), None)
        if refused is not None:
            return refused
        outcome = self._await(handle, name, time.monotonic() + self.config.timeouts.gripper_s, None)
        if outcome.status == "succeeded":
            width = self._settled_hand_width()
            if width is None:
                outcome.status, outcome.message = "lost", f"{name}: no finger joint states after homing"
            else:
                self.hand_max_width = width
        elif outcome.result is not None and outcome.result.error:
            outcome.message += f" ({outcome.result.error})"
        return outcome

    def _settled_hand_width(self, timeout: float = 1.5, still: float = 2e-4) -> float | None:
        """The finger gap once two joint states received after now agree within ``still`` (m): a joint state
        published just before the result can arrive after it (another topic), with the fingers still opening.
        The last width read if they never agree within ``timeout``; None without finger joint states."""
        deadline = time.monotonic() + timeout
        width = None
        while True:
            self.wait_fresh(time.monotonic(), max(0.0, deadline - time.monotonic()))
            joints = self.joints()
            fingers = [joints.position.get(f) for f in ("panda_finger_joint1", "panda_finger_joint2")] \
                if joints is not None else [None]
            if None in fingers:
                return None
            previous, width = width, float(sum(fingers))
            if previous is not None and abs(width - previous) <= still or time.monotonic() >= deadline:
                return width

    def _franka_gripper(self, opening: float, cancel: threading.Event | None,
                        grasp_width: float | None) -> ActionOutcome:
        from franka_msgs.action import Grasp, Move

        g = self.config.gripper
        joints = self.joints()
        current = joints.position.get("panda_finger_joint1") if joints is not None else None
        if grasp_width is not None and (current is None or opening < current):
            name = f"{g.node}/grasp"
            goal = Grasp.Goal(width=float(grasp_width), speed=g.speed, force=g.max_effort)
            goal.epsilon.inner = goal.epsilon.outer = g.grasp_epsilon
        else:
            name = f"{g.node}/move"
            goal = Move.Goal(width=min(2.0 * opening, self.open_limit()), speed=g.speed)
        handle, refused = self._send(self.franka[name], name, goal, cancel)
        if refused is not None:
            self.stats.count(self.stats.gripper, refused.status)
            return refused
        outcome = self._await(handle, name, time.monotonic() + self.config.timeouts.gripper_s, cancel)
        self.stats.count(self.stats.gripper, outcome.status)
        if outcome.status in ("lost", "timeout"):
            return outcome
        if outcome.result is not None and outcome.result.error:
            outcome.message += f" ({outcome.result.error})"
        if name.endswith("/grasp") and outcome.status in ("succeeded", "aborted"):
            outcome.details["grasped"] = outcome.status == "succeeded"
        outcome.details["opening"] = self._finger_rest(None)
        return outcome

    def _finger_rest(self, result: Any) -> float:
        """Where the fingers rest after a gripper goal. franka_gripper answers when libfranka's blocking move or
        grasp returns (franka_ros2@29cb85a franka_gripper/src/gripper_action_server.cpp:189-234): its result is
        final. GripperActionController answers as soon as a finger is within goal_tolerance (GAC:166-175), with
        the fingers possibly still moving: wait for the joint states to show them at rest."""
        g = self.config.gripper
        if g.server == "franka_gripper" and result is not None:
            return g.opening_from_result(result.position)
        fingers = ("panda_finger_joint1", "panda_finger_joint2")  # the planning model's names
        deadline, seen, still, opening = time.monotonic() + 1.0, None, 0, None
        while time.monotonic() < deadline:
            joints = self.joints()
            if joints is not None and joints.received != seen and all(f in joints.position for f in fingers):
                seen = joints.received
                opening = float(np.mean([joints.position[f] for f in fingers]))
                resting = max(abs(joints.velocity.get(f, 0.0)) for f in fingers) < FINGER_REST_SPEED
                still = still + 1 if resting else 0
                if still >= 3:  # three joint states in a row
                    return opening
            time.sleep(POLL_S)
        if opening is not None:
            return opening
        return g.opening_from_result(result.position) if result is not None else 0.0

    # ---- the simulator's reset ------------------------------------------------------------------------------
    def call_service(self, srv_type: Any, name: str, request: Any, timeout: float = 10.0,
                     resend_s: float | None = None) -> Any:
        """The service's answer, or RobotUnavailable after ``timeout``; ``resend_s``: see service_call.call_service
        (for requests safe to repeat)."""
        with self._lock:
            client = self._service_clients.get(name)
            if client is None:
                client = self._service_clients[name] = self.node.create_client(srv_type, name)
        return call_service(self.node, client, name, request, timeout, resend_s, RobotUnavailable)

    def close(self) -> None:
        self._executor.shutdown()
        self._thread.join(timeout=5.0)
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)
