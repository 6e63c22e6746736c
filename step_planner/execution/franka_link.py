"""The FR3's controller manager, franka_hardware's error recovery action and franka_robot_state_broadcaster, as a
backend's ROS node sees them: the calls :mod:`step_planner.execution.reflex` decides with.

Used by the controllers backend (on its RobotConnection's node) and the MoveIt backend (on its RosLink's node),
each spun on a thread of its own: every call waits by polling its future, never by spinning; the action's requests
are made on the spinning thread (step_planner/execution/spin_thread.py says why). Names come from robot_boundary.yaml's
``franka_hardware`` entry (controller_manager.cpp:1171-1217 for the services, franka_action_server.cpp:36-43 for the
action, franka_robot_state_broadcaster.cpp:148-150 for the topic).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from controller_manager_msgs.srv import (
    ListControllers,
    ListHardwareComponents,
    SetHardwareComponentState,
    SwitchController,
)
from franka_msgs.action import ErrorRecovery
from franka_msgs.msg import Errors, FrankaRobotState
from lifecycle_msgs.msg import State
from rclpy.action import ActionClient
from sensor_msgs.msg import JointState

from step_planner.execution.controllers.config import FrankaHardwareBoundary
from step_planner.execution.reflex import (
    ManagerState,
    RecoveryReport,
    RecoverySteps,
    RobotErrors,
    Stop,
    assess,
    recover,
)
from step_planner.execution.spin_thread import on_spin_thread

ERROR_NAMES = tuple(Errors.get_fields_and_field_types())
POLL_S = 0.005
# (type, name, request, timeout) -> response, raising when none comes. Every request below is safe to send twice
# (listing; a component set active again; BEST_EFFORT activation of an active controller is no error), so the caller
# may ask again when an answer is lost.
CallService = Callable[[Any, str, Any, float], Any]


def error_names(msg: Errors) -> tuple[str, ...]:
    return tuple(name for name in ERROR_NAMES if getattr(msg, name))


class FrankaLink:
    """``node``: a node spun by ``executor`` on another thread; ``call_service``: how that node's owner calls a
    service with a timeout. ``arm_joints``: the arm's controller joint names (whose joint states must move again
    after recovery)."""

    def __init__(self, node, executor, call_service: CallService, names: FrankaHardwareBoundary, joint_states: str,
                 arm_joints: Sequence[str], timeout_s: float = 5.0) -> None:
        self.node, self._executor, self._call, self.names, self.timeout_s = node, executor, call_service, names, \
            timeout_s
        self.arm_joints = tuple(arm_joints)
        self._lock = threading.Lock()
        self._errors: RobotErrors | None = None
        self._arm: tuple[float, ...] | None = None  # the arm's last positions and velocities on joint_states
        self._moved_at = 0.0  # time.monotonic() of the last joint state whose arm values differed from the one before
        self._positions: dict[str, float] = {}
        self._joints_at = 0.0  # time.monotonic() of the last arm joint state
        self._recovery = ActionClient(node, ErrorRecovery, names.error_recovery)
        node.create_subscription(FrankaRobotState, names.robot_state, self._on_state, 10)
        node.create_subscription(JointState, joint_states, self._on_joints, 10)
        self.stop: Stop | None = None  # the last stop seen (None: running, or not asked yet)

    # ---- what arrives ------------------------------------------------------------------------------------------
    def _on_state(self, msg: FrankaRobotState) -> None:
        errors = RobotErrors(int(msg.robot_mode), error_names(msg.current_errors), error_names(msg.last_motion_errors),
                             time.monotonic())
        with self._lock:
            self._errors = errors

    def _on_joints(self, msg: JointState) -> None:
        index = {n: i for i, n in enumerate(msg.name)}
        if not all(j in index and index[j] < len(msg.position) for j in self.arm_joints):
            return
        position = tuple(float(msg.position[index[j]]) for j in self.arm_joints)
        velocity = tuple(float(msg.velocity[index[j]]) if index[j] < len(msg.velocity) else 0.0
                         for j in self.arm_joints)
        values = position + velocity
        with self._lock:
            if self._arm is not None and values != self._arm:
                self._moved_at = time.monotonic()
            self._arm = values
            self._joints_at = time.monotonic()
            self._positions = dict(zip(self.arm_joints, position, strict=True))

    def joints_moved_since(self, since: float) -> bool:
        """The arm's joint states changed after ``since``: joint_state_broadcaster publishes again (a republished
        stale state repeats the same values, joint_state_publisher.py:468-536)."""
        with self._lock:
            return self._moved_at > since

    def last_motion_errors(self, since: float, wait_s: float = 1.0) -> tuple[str, ...] | None:
        """The broadcaster's last_motion_errors in a state received after ``since`` (waits up to ``wait_s``)."""
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            with self._lock:
                errors = self._errors
            if errors is not None and errors.received > since:
                return errors.last_motion
            time.sleep(0.02)
        return None

    # ---- the controller manager ----------------------------------------------------------------------------------
    def manager(self) -> ManagerState:
        cm = self.names.controller_manager
        components = self._call(ListHardwareComponents, f"{cm}/list_hardware_components",
                                ListHardwareComponents.Request(), self.timeout_s).component
        controllers = self._call(ListControllers, f"{cm}/list_controllers", ListControllers.Request(),
                                 self.timeout_s).controller
        return ManagerState({c.name: c.state.label for c in components}, {c.name: c.state for c in controllers})

    def check(self, limits: tuple[Sequence[str], Sequence[float], Sequence[float]] | None = None) -> Stop | None:
        """Ask the controller manager now; the stop (kept in ``stop``) or None. The positions a limit reflex is inferred
        from are those of a joint state received after the answer (the last one sent before the stop may still be on
        its way)."""
        state = self.manager()
        asked = time.monotonic()
        deadline = asked + 0.2
        while time.monotonic() < deadline:
            with self._lock:
                if self._joints_at > asked:
                    break
            time.sleep(POLL_S)
        with self._lock:
            errors, positions = self._errors, dict(self._positions)
        self.stop = assess(state, self.names.hardware_component, self.names.controllers, errors, positions, limits)
        return self.stop

    def stop_reason(self, robot: str, refresh: bool,
                    limits: tuple[Sequence[str], Sequence[float], Sequence[float]] | None,
                    unavailable: type[Exception]) -> str | None:
        """Why the robot is stopped, or None: the stop found at the last :meth:`check`, or (``refresh``) asked now. A
        controller manager that does not answer (``unavailable``, the caller's error for it) is said so."""
        if refresh:
            try:
                self.check(limits)
            except unavailable as exc:
                return f"the {robot}'s controller manager does not answer: {exc}"
        return self.stop.message(robot.upper()) if self.stop is not None else None

    def set_component_active(self, name: str) -> tuple[bool, str]:
        request = SetHardwareComponentState.Request(name=name, target_state=State(id=State.PRIMARY_STATE_ACTIVE,
                                                                                   label="active"))
        response = self._call(SetHardwareComponentState,
                              f"{self.names.controller_manager}/set_hardware_component_state", request, self.timeout_s)
        return bool(response.ok), response.state.label or str(response.state.id)

    def switch(self, activate: list[str]) -> tuple[bool, str]:
        # BEST_EFFORT: a controller already active is no error (SwitchController.srv), so a request asked twice is
        # harmless; whether they all came up is checked on list_controllers afterwards (reflex.recover)
        request = SwitchController.Request(activate_controllers=list(activate),
                                           strictness=SwitchController.Request.BEST_EFFORT)
        response = self._call(SwitchController, f"{self.names.controller_manager}/switch_controller", request,
                              self.timeout_s)
        return bool(response.ok), response.message

    # ---- franka_hardware's error recovery action ---------------------------------------------------------------
    def error_recovery(self) -> tuple[bool, str]:
        """Send the action's (empty) goal and wait for its result: succeeded, or why not."""
        from action_msgs.msg import GoalStatus

        name = self.names.error_recovery
        if not self._recovery.wait_for_server(timeout_sec=self.timeout_s):
            return False, f"no action server {name}"
        future = on_spin_thread(self._executor, lambda: self._recovery.send_goal_async(ErrorRecovery.Goal()),
                                self.timeout_s)
        if not _wait(future, self.timeout_s):
            return False, f"{name} did not answer the goal within {self.timeout_s:.0f} s"
        handle = future.result()
        if handle is None or not handle.accepted:
            return False, f"{name} rejected the goal"
        result = on_spin_thread(self._executor, handle.get_result_async, self.timeout_s)
        if not _wait(result, self.timeout_s * 4):
            return False, f"{name} sent no result within {self.timeout_s * 4:.0f} s"
        status = result.result().status
        if status != GoalStatus.STATUS_SUCCEEDED:
            return False, f"{name} ended with status {status} (libfranka's automaticErrorRecovery failed; see the " \
                          "robot's log)"
        return True, f"{name} succeeded"

    def recover(self, timeout_s: float = 10.0) -> RecoveryReport:
        """Upstream's three steps in order, then wait for the controllers and the joint states (reflex.recover)."""
        report = recover(RecoverySteps(self.error_recovery, self.set_component_active, self.switch, self.manager,
                                       self.joints_moved_since, self.last_motion_errors),
                         self.names.hardware_component, self.names.controllers, timeout_s)
        if report.ok:
            self.stop = None
        return report


def _wait(future, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while not future.done():
        if time.monotonic() > deadline:
            future.cancel()
            return False
        time.sleep(POLL_S)
    return True
