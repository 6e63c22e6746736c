"""franka_gripper (franka_ros2 jazzy) and the libfranka gripper behind it, reproduced on plain numbers.

The FR3's gripper is not a ros2_control controller but a node of its own, ``franka_gripper``, which wraps
libfranka's blocking gripper calls in four actions. Whoever drives it (the MoveIt backend, the controllers backend)
meets its conventions, which differ from GripperActionController's: a grasp names the object's width and succeeds
only if the fingers stop within an epsilon of it; the GripperCommand goal is per finger but its result is the full
width; results come when the firmware's command returns. This module is that node and that firmware as numbers:
the MuJoCo robot (``ros/mujoco_robot.py``, FR3 names) runs it on MuJoCo's fingers, and the mock hand of
``ros/franka_gripper_node.py`` (fake hardware, test stand-in) on a finger model. Every rule names its upstream line:

- ``FG``  frankarobotics/franka_ros2@29cb85a (jazzy, 3.4.0) franka_gripper/src/gripper_action_server.cpp
- ``FGH`` the same, franka_gripper/include/franka_gripper/gripper_action_server.hpp
- ``FGY`` the same, franka_gripper/config/franka_gripper_node.yaml (what the launch file loads)
- ``LF``  frankarobotics/libfranka@3cc708c (0.20.5) include/franka/gripper.h and src/gripper.cpp

What upstream leaves to the gripper's firmware is not in any source read here and is marked UNVERIFIED, with the
model this module uses: how the fingers move during a move or a grasp (at the commanded speed, a grasp closes
until something stops the fingers), what a move that is blocked returns (false), what an interrupted command
returns (libfranka's kAborted: false, "libfranka gripper: Command aborted!"), and a second command while one runs
(it interrupts the first; upstream runs each goal in a detached thread of its own, FG:92-123).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from step_planner.execution.sim.controller_emulation import GoalEnd

COMMAND_FAILED = "libfranka gripper: Command failed!"  # LF src/gripper.cpp:21-32 (kFail)
COMMAND_ABORTED = "libfranka gripper: Command aborted!"  # LF src/gripper.cpp:21-32 (kAborted)
SAME_POSITION = 1e-4  # FG:170 kSamePositionThreshold (m)
KINDS = ("homing", "move", "grasp", "gripper_command")


@dataclass(frozen=True)
class FrankaGripperParams:
    """The node's parameters as its launch file sets them (FGY:1-8) and the hand's firmware model."""

    default_speed: float = 0.1  # FGY:5 (the code default is the same, FGH:90)
    default_epsilon_inner: float = 0.005  # FGY:6-7 (FGH:89)
    default_epsilon_outer: float = 0.005
    state_publish_rate: float = 15.0  # FGY:3 (code default 30, FGH:91)
    feedback_publish_rate: float = 30.0  # FGY:4 (code default 10, FGH:92)
    max_width: float = 0.08  # GripperState.max_width, measured by homing (LF gripper.h:66-78); 80 mm: UNVERIFIED
    reached_tolerance: float = 0.0005  # firmware: how close to the target counts as reached (UNVERIFIED)
    blocked_speed: float = 0.002  # m/s: fingers slower than this ...
    blocked_time: float = 0.1  # ... for this long, short of the target, are blocked (UNVERIFIED)


@dataclass
class _Command:
    """One libfranka call the firmware is executing."""

    goal_id: Hashable
    kind: str  # homing | move | grasp | gripper_command
    target: float  # the width the fingers are driven to (m)
    speed: float
    started: float
    setpoint: float  # where the fingers are commanded now, moving to ``target`` at ``speed``
    grasp: tuple[float, float, float] | None = None  # (width, epsilon_inner, epsilon_outer) for a grasp
    force: float = 0.0
    slow_since: float | None = None
    invalid: str = ""  # the firmware refuses the command (a failed command, LF gripper.cpp:21-32)


class FrankaGripper:
    """The franka_gripper node and its hand, for one goal at a time per the firmware.

    Goals: :meth:`homing`, :meth:`move`, :meth:`grasp` (franka_msgs actions ``~/homing``, ``~/move``, ``~/grasp``)
    and :meth:`gripper_command` (control_msgs GripperCommand ``~/gripper_action``). Every goal is accepted
    (FG:137-140). :meth:`update` is one step of the hand: it takes the measured width and returns the width the
    fingers are driven to. How goals end is collected in ``ended`` (status and result fields, as the node sets
    them). ``state_width`` is the node's ``current_gripper_state_.width``, refreshed only at ``state_publish_rate``
    (FG:128-129, 260-278): results and feedback report it, not the live width.
    """

    def __init__(self, params: FrankaGripperParams, width: float, now: float = 0.0) -> None:
        self.params = params
        self.width = float(width)  # the last measured width
        self.state_width = float(width)  # current_gripper_state_.width
        self.hold = float(width)  # where the fingers are held between commands
        self._next_state = now
        self.command: _Command | None = None
        self.ended: list[GoalEnd] = []

    # ---- goals ----------------------------------------------------------------------------------------------
    def homing(self, goal_id: Hashable, now: float) -> None:
        """LF gripper.h:65-78: homing estimates the maximum width; modelled as opening to ``max_width`` (the
        firmware's closing and reopening sequence is UNVERIFIED). FG:142-145."""
        self._start(_Command(goal_id, "homing", self.params.max_width, self.params.default_speed, now, self.width))

    def move(self, goal_id: Hashable, width: float, speed: float, now: float) -> None:
        """FG:147-153: ``gripper_->move(width, speed)``, no range check in the node. A width outside the hand's
        range fails in the firmware (UNVERIFIED: modelled as kFail)."""
        command = _Command(goal_id, "move", float(width), float(speed), now, self.width)
        if not 0.0 <= width <= self.params.max_width or speed <= 0.0:
            command.invalid = COMMAND_FAILED
        self._start(command)

    def grasp(self, goal_id: Hashable, width: float, speed: float, force: float, epsilon_inner: float,
              epsilon_outer: float, now: float) -> None:
        """FG:155-162: ``gripper_->grasp(width, speed, force, epsilon.inner, epsilon.outer)``, no range check and
        no default substitution in the node. The fingers close (open, for a width beyond the current one) until
        something stops them (UNVERIFIED); success is decided by LF gripper.h:83-84."""
        target = 0.0 if width <= self.width else self.params.max_width
        command = _Command(goal_id, "grasp", target, float(speed), now, self.width,
                           grasp=(float(width), float(epsilon_inner), float(epsilon_outer)), force=float(force))
        if speed <= 0.0:
            command.invalid = COMMAND_FAILED
        self._start(command)

    def gripper_command(self, goal_id: Hashable, position: float, max_effort: float, now: float) -> None:
        """``~/gripper_action`` (FG:164-198): the goal's position is doubled into a width (FG:167); a width beyond
        the hand's max_width or below 0 aborts at once with an empty result (FG:173-178); a width within 0.1 mm of
        the current one succeeds at once (FG:180-187); otherwise opening is a move and closing a grasp at that width
        with the default speed and epsilons and ``max_effort`` as the force (FG:189-195)."""
        target = 2.0 * float(position)
        current = self.state_width
        if target > self.params.max_width or target < 0.0:
            self.ended.append(GoalEnd(goal_id, "aborted", _command_result(0.0, False)))
            return
        if abs(target - current) < SAME_POSITION:
            self.ended.append(GoalEnd(goal_id, "succeeded", _command_result(current, True)))
            return
        p = self.params
        if target >= current:
            command = _Command(goal_id, "gripper_command", target, p.default_speed, now, self.width)
        else:
            command = _Command(goal_id, "gripper_command", 0.0, p.default_speed, now, self.width,
                               grasp=(target, p.default_epsilon_inner, p.default_epsilon_outer),
                               force=float(max_effort))
        self._start(command)

    def cancel(self, goal_id: Hashable) -> bool:
        """A cancel stops the hand (``gripper_->stop()``) and the goal ends CANCELED with what the interrupted
        command returned (FGH:161-168, FG:220-227; the reply to an interrupted command is UNVERIFIED). Every
        cancel is accepted (FG:132-135)."""
        c = self.command
        if c is None or c.goal_id != goal_id:
            return False
        self.command = None
        self.hold = self.width
        result = _command_result(0.0, False) if c.kind == "gripper_command" else _action_result(False, COMMAND_ABORTED)
        self.ended.append(GoalEnd(goal_id, "canceled", result))  # FG:221-226 never sets position on this path
        return True

    def _start(self, command: _Command) -> None:
        if self.command is not None:  # the firmware runs one command: the running one is interrupted (UNVERIFIED)
            self._finish(False, COMMAND_ABORTED)
        self.command = command

    # ---- the hand -------------------------------------------------------------------------------------------
    def update(self, now: float, width: float, velocity: float) -> float:
        """One step: the measured finger width (m) and its rate; returns the width the fingers are driven to."""
        self.width = float(width)
        if now >= self._next_state:  # publishGripperState: readOnce at state_publish_rate (FG:260-264)
            self.state_width = self.width
            self._next_state = now + 1.0 / self.params.state_publish_rate
        c = self.command
        if c is None:
            return self.hold
        if c.invalid:
            self._finish(False, c.invalid)
            return self.hold
        step = c.speed * max(now - c.started, 0.0)  # the setpoint travels at the commanded speed
        c.setpoint = c.target if abs(c.target - c.setpoint) <= step else \
            (c.setpoint + step if c.target > c.setpoint else c.setpoint - step)
        c.started = now
        if abs(self.width - c.target) <= self.params.reached_tolerance:
            self._finish(True, "")
            return self.hold
        if abs(velocity) >= self.params.blocked_speed:
            c.slow_since = None
        elif c.slow_since is None:
            c.slow_since = now
        elif now - c.slow_since >= self.params.blocked_time:  # stopped short of the target: something is there
            self._finish(False, "")  # (UNVERIFIED for a move: modelled as kUnsuccessful, false without error)
            return self.hold
        return c.setpoint

    @property
    def force(self) -> float:
        """The grasp force of the running grasp (N), 0 otherwise."""
        return self.command.force if self.command is not None and self.command.grasp is not None else 0.0

    def _finish(self, reached: bool, error: str) -> None:
        """The firmware's command returned: map it to the goal's end (FGH:171-179, FG:230-242)."""
        c = self.command
        assert c is not None
        self.command = None
        # a grasp keeps squeezing with its force (UNVERIFIED: the hand holds its grasp), anything else stops there
        self.hold = c.target if c.grasp is not None and not error else self.width
        if c.grasp is not None and not error:
            width, inner, outer = c.grasp  # LF gripper.h:83-84: (width - inner) < d < (width + outer)
            success = width - inner < self.width < width + outer
        else:
            success = reached and not error
        status = "succeeded" if success else "aborted"
        if c.kind == "gripper_command":  # result.position is the node's last read width, FG:233-234
            self.ended.append(GoalEnd(c.goal_id, status, _command_result(self.state_width, success)))
        else:
            self.ended.append(GoalEnd(c.goal_id, status, _action_result(success, error)))

    def feedback(self) -> dict[str, Any] | None:
        """The running goal's feedback: franka_msgs ``current_width`` (FGH:209-215) or GripperCommand ``position``
        (FG:280-287), both the node's last read width, effort 0."""
        c = self.command
        if c is None:
            return None
        if c.kind == "gripper_command":
            return {"goal_id": c.goal_id, "position": self.state_width, "effort": 0.0, "stalled": False,
                    "reached_goal": False}
        return {"goal_id": c.goal_id, "current_width": self.state_width}


def start_goal(gripper: FrankaGripper, action: str, goal_id: Hashable, request: Any, now: float) -> None:
    """Hand a goal of one of the node's actions (``homing``, ``move``, ``grasp``, ``gripper_command``; a ROS goal or
    anything with its fields) to the emulation, field by field as FG:142-198 reads it."""
    if action == "homing":
        gripper.homing(goal_id, now)
    elif action == "move":
        gripper.move(goal_id, request.width, request.speed, now)
    elif action == "grasp":
        gripper.grasp(goal_id, request.width, request.speed, request.force, request.epsilon.inner,
                      request.epsilon.outer, now)
    else:
        gripper.gripper_command(goal_id, request.command.position, request.command.max_effort, now)


def _action_result(success: bool, error: str) -> dict[str, Any]:
    """franka_msgs Homing/Move/Grasp result (FGH:193-200)."""
    return {"success": bool(success), "error": error}


def _command_result(position: float, reached: bool) -> dict[str, Any]:
    """GripperCommand result as the node fills it: full width, effort 0, never stalled (FG:207-234)."""
    return {"position": float(position), "effort": 0.0, "stalled": False, "reached_goal": bool(reached)}
