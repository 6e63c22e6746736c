"""The gripper as its server really behaves: franka_gripper's grasp/move/homing, or a GripperCommand server with that
server's own conventions.

Three ways, chosen per robot in config/franka.yaml (``variants.<robot>.gripper``):

- ``franka_gripper`` + ``grasp_move`` (the FR3): ``~/grasp`` at the object's width with the configured epsilons,
  speed and force; the firmware decides: held iff the fingers stop within (width - inner, width + outer)
  (libfranka 0.20.5 include/franka/gripper.h:83-84), else the goal ends ABORTED with success false
  (franka_ros2@29cb85a franka_gripper/include/franka_gripper/gripper_action_server.hpp:171-179). ``~/move``
  opens and closes on nothing; ``~/homing`` once at start if configured.
- ``franka_gripper`` + ``gripper_command``: its ``~/gripper_action`` takes one finger's position and doubles it
  (gripper_action_server.cpp:167), grasps below the current width with its own 5 mm epsilons and ``max_effort`` as
  the force (:189-195) and reports the full width in the result (:233). A grasp is commanded at half the object's
  width: commanded at 0 every real object would end ABORTED.
- ``gripper_action_controller`` + ``gripper_command`` (moveit_resources' Panda, mock hardware and Gazebo): the
  position is one finger's setpoint, the result one finger's position (ros2_controllers@ed360c9
  gripper_controllers/include/gripper_controllers/gripper_action_controller_impl.hpp:102-104, 166-175); a grasp
  closes to 0 and ends ABORTED stalled (:176-201) or SUCCEEDED within goal_tolerance, possibly before the fingers
  stopped; the grasp is judged from the fingers at rest in the joint states, by the same epsilons.

Every way sends the configured force (checked against config/safety.yaml before the backend starts). A close
that fails is a failed grasp (GRASP_FAILED), never a held object.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from step_planner.execution.base import ExecCode
from step_planner.execution.errors import BackendUnavailable
from step_planner.execution.moveit.config import GripperConfig, GripperServer
from step_planner.execution.moveit.ros_link import Ended, RosLink

REST_TIMEOUT_S = 1.5  # GripperActionController may report before the fingers stop: wait this long for rest


@dataclass(frozen=True)
class Grip:
    """What one gripper command did: ``code`` SUCCESS (opened, closed, or holding), the failure otherwise."""

    code: ExecCode
    message: str
    gap: float | None = None  # finger gap afterwards (m), when known

    @property
    def ok(self) -> bool:
        return self.code is ExecCode.SUCCESS


class Gripper:
    def __init__(self, link: RosLink, server: GripperServer, settings: GripperConfig, timeout_s: float) -> None:
        self.link, self.server, self.settings, self.timeout_s = link, server, settings, timeout_s
        try:
            from control_msgs.action import GripperCommand
        except ImportError as exc:
            raise BackendUnavailable(f"the gripper needs control_msgs ({exc}): sudo apt install "
                                     "ros-jazzy-control-msgs") from exc
        self._command_type = GripperCommand
        self.clients: dict[str, Any] = {}
        if server.interface == "grasp_move":
            try:
                from franka_msgs.action import Grasp, Homing, Move
            except ImportError as exc:
                raise BackendUnavailable(f"franka_gripper's grasp/move need franka_msgs ({exc}): build franka_ros2 "
                                         "(jazzy) in the robot's workspace") from exc
            self._types = {"grasp": Grasp, "move": Move, "homing": Homing}
            for name, kind in self._types.items():
                self.clients[f"{server.action}/{name}"] = link.action_client(kind, f"{server.action}/{name}")
        else:
            self.clients[server.action] = link.action_client(GripperCommand, server.action)

    def start(self, wait_s: float) -> None:
        """Wait for the server, then home the hand if configured; BackendUnavailable naming what to fix."""
        hint = (f"is {self.server.server} running? (config/franka.yaml variants.<robot>.gripper; franka.launch.py "
                "starts franka_gripper, or with use_fake_hardware:=true its mock)")
        self.link.wait_for_servers(self.clients, wait_s, hint)
        if self.server.homing:
            grip = self._franka("homing", self._types["homing"].Goal(), None, "homing")
            if not grip.ok:
                raise BackendUnavailable(f"franka_gripper homing failed at start-up: {grip.message}")

    # ---- the three commands ---------------------------------------------------------------------------------
    def open(self, cancel: threading.Event | None) -> Grip:
        width = self.settings.open_width
        if self.server.interface == "grasp_move":
            return self._franka("move", self._types["move"].Goal(width=width, speed=self.settings.speed), cancel,
                                f"open to {width * 1000:.0f} mm")
        fingers = self.link.fingers()
        if self.server.server == "franka_gripper" and fingers is not None and fingers.gap >= width - 0.001:
            # its gripper_action turns any width below the current one into a grasp (FG:189-195): a wider hand
            # "opened" to this width would grasp at it and fail; it is open already
            return Grip(ExecCode.SUCCESS, f"open: already {fingers.gap * 1000:.0f} mm", fingers.gap)
        return self._command(width / 2, cancel, f"open to {width * 1000:.0f} mm", expect=None)

    def grasp(self, width: float, cancel: threading.Event | None) -> Grip:
        """Close on an object ``width`` wide; SUCCESS only if it is held."""
        s = self.settings
        what = f"grasp at {width * 1000:.1f} mm"
        if self.server.interface == "grasp_move":
            goal = self._types["grasp"].Goal(width=width, speed=s.speed, force=s.max_effort)
            goal.epsilon.inner, goal.epsilon.outer = s.epsilon_inner, s.epsilon_outer
            return self._franka("grasp", goal, cancel, what)
        if self.server.server == "franka_gripper":  # its gripper_action grasps at twice the goal (FG:167, 189-195)
            return self._command(width / 2, cancel, what, expect=width)
        return self._command(0.0, cancel, what, expect=width)  # GripperActionController: squeeze, judge the rest

    def close(self, cancel: threading.Event | None) -> Grip:
        """Close on nothing (to push, or to close a drawer): SUCCESS if the fingers closed."""
        if self.server.interface == "grasp_move":
            return self._franka("move", self._types["move"].Goal(width=0.0, speed=self.settings.speed), cancel,
                                "close")
        return self._command(0.0, cancel, "close", expect=0.0)

    # ---- franka_gripper's actions ---------------------------------------------------------------------------
    def _franka(self, action: str, goal: Any, cancel: threading.Event | None, what: str) -> Grip:
        name = f"{self.server.action}/{action}"
        ended = self.link.run_goal(self.clients[name], goal, self.timeout_s, cancel)
        gap = self._gap_after(ended)
        if ended.status == "succeeded":
            return Grip(ExecCode.SUCCESS, f"{what}: done", gap)
        if ended.status in ("stopped", "timeout", "rejected"):
            return self._not_ended(ended, what)
        error = getattr(ended.result, "error", "") if ended.result is not None else ""
        if action == "grasp":  # success false: the fingers did not stop within the epsilons (or the hand failed)
            why = f" ({error})" if error else f": the fingers did not stop within {self._epsilons()} of its width"
            return Grip(ExecCode.GRASP_FAILED, f"{what}: nothing held, franka_gripper's grasp {ended.status}{why}"
                        + _gap_text(gap), gap)
        return Grip(ExecCode.BACKEND_ERROR, f"{what}: franka_gripper's {action} {ended.status}"
                    + (f" ({error})" if error else " (blocked?)") + _gap_text(gap), gap)

    # ---- GripperCommand -------------------------------------------------------------------------------------
    def _command(self, position: float, cancel: threading.Event | None, what: str, expect: float | None) -> Grip:
        """One GripperCommand goal. ``expect``: the width the fingers should stop at (None: open)."""
        goal = self._command_type.Goal()
        goal.command.position = float(position)
        goal.command.max_effort = float(self.settings.max_effort)
        ended = self.link.run_goal(self.clients[self.server.action], goal, self.timeout_s, cancel)
        if ended.status in ("stopped", "timeout", "rejected"):
            return self._not_ended(ended, what)
        r = ended.result
        if self.server.server == "franka_gripper":  # the result is the final full width (FG:233)
            gap = float(r.position)
            if ended.status == "succeeded" and r.reached_goal:
                return Grip(ExecCode.SUCCESS, f"{what}: done" + _gap_text(gap), gap)
            code = ExecCode.GRASP_FAILED if expect is not None else ExecCode.BACKEND_ERROR
            return Grip(code, f"{what}: franka_gripper's gripper_action {ended.status}, reached_goal false"
                        + (": nothing held" if expect else "") + _gap_text(gap), gap)
        # GripperActionController: per finger; a grasp ends stalled, a success may come before the fingers stop
        if ended.status == "canceled" or (ended.status == "aborted" and not r.stalled):
            return Grip(ExecCode.BACKEND_ERROR, f"{what}: the gripper controller {ended.status} the goal without "
                                                "stalling (deactivated or preempted?)")
        rest = self.link.fingers_after(ended.at - 0.05, REST_TIMEOUT_S, resting=3)
        gap = rest.gap if rest is not None else 2 * float(r.position)
        if expect is None:
            if ended.status == "succeeded" and r.reached_goal:
                return Grip(ExecCode.SUCCESS, f"{what}: done" + _gap_text(gap), gap)
            return Grip(ExecCode.BACKEND_ERROR, f"{what}: the fingers stalled" + _gap_text(gap), gap)
        s = self.settings
        if expect - s.epsilon_inner < gap < expect + s.epsilon_outer:
            return Grip(ExecCode.SUCCESS, f"{what}: holding" + _gap_text(gap), gap)
        if expect == 0.0:
            return Grip(ExecCode.BACKEND_ERROR, f"{what}: the fingers did not close" + _gap_text(gap), gap)
        return Grip(ExecCode.GRASP_FAILED, f"{what}: nothing held, the fingers rest outside {self._epsilons()} of the "
                    "object's width" + _gap_text(gap), gap)

    def _epsilons(self) -> str:
        return f"-{self.settings.epsilon_inner * 1000:.0f}/+{self.settings.epsilon_outer * 1000:.0f} mm"

    def _not_ended(self, ended: Ended, what: str) -> Grip:
        code = {"stopped": ExecCode.CANCELED, "timeout": ExecCode.TIMEOUT}.get(ended.status, ExecCode.BACKEND_ERROR)
        return Grip(code, f"{what}: {ended.message} ({self.link.resolve(self.server.action)})")

    def _gap_after(self, ended: Ended) -> float | None:
        """franka_gripper's commands return when the hand stopped (libfranka's blocking calls): the next joint
        state after the result is where the fingers are."""
        if ended.status not in ("succeeded", "aborted"):
            return None
        after = self.link.fingers_after(ended.at, 0.5)
        return after.gap if after is not None else None


def _gap_text(gap: float | None) -> str:
    return f" (finger gap {gap * 1000:.1f} mm)" if gap is not None else ""
