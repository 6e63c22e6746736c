"""Whether a reflex stopped the FR3, what it was, and upstream's three recovery steps in order. No ROS here.

WHY: after a reflex, franka_ros2 on Jazzy keeps running and deactivates (franka_ros2@29cb85a franka_hardware/doc/
index.rst:73-95): the hardware component goes unconfigured and its controllers inactive, joint_state_broadcaster
included, while joint_state_publisher keeps republishing the arm's last positions with fresh stamps. A client that
watches /joint_states for staleness sees nothing. The state is in the controller manager (list_hardware_components,
list_controllers); the reflex's name is in franka_robot_state_broadcaster's ``current_errors`` /
``last_motion_errors``, but that broadcaster is deactivated with the others, and the state carrying the errors is never
published (franka_hardware's read throws before storing it, franka_hardware_interface.cpp:243-258): the name comes with
the first state after recovery (``last_motion_errors``). Until then it is inferred from what the client sees (a joint at
or past its position limit: joint_position_limits_violation), and said to be inferred.

The ROS side (service calls, the action, the topics) is :mod:`step_planner.execution.franka_link`; this module takes
their answers as plain data, so the logic is tested without a ROS graph.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

ACTIVE = "active"
ROBOT_MODE_REFLEX = 4  # franka_msgs/msg/FrankaRobotState ROBOT_MODE_REFLEX
LIMIT_REFLEX = "joint_position_limits_violation"
# rad: a joint this close to (or past) a position limit is taken to have tripped it. The arm's last joint state before
# the reflex is what joint_state_publisher keeps repeating; it may be a sample before the crossing (at 1 kHz on the
# FR3, 10 ms at the MuJoCo robot's 100 Hz: up to ~0.02 rad at its speeds).
AT_LIMIT = 0.02


RECOVER_HINT = "recover with `step-planner recover` (the node's ~/recover), after looking at why it stopped"


class RobotStopped(RuntimeError):
    """A reflex stopped the robot (franka_hardware deactivated itself and its controllers); the message names it and
    how to recover. Raised by a robot backend's observe() (controllers, moveit): a world that cannot change until
    recovery is not reported as if it could."""


@dataclass(frozen=True)
class ManagerState:
    """What the controller manager said: hardware component -> lifecycle label, controller -> lifecycle label."""

    components: dict[str, str]
    controllers: dict[str, str]


@dataclass(frozen=True)
class RobotErrors:
    """The last FrankaRobotState: the robot mode and the names of the errors set in current_errors and
    last_motion_errors (franka_msgs/msg/Errors field names, libfranka's error names)."""

    robot_mode: int
    current: tuple[str, ...]
    last_motion: tuple[str, ...]
    received: float  # time.monotonic()


@dataclass(frozen=True)
class Stop:
    """The robot is stopped: its hardware component is not active or a controller it needs is not."""

    component: str
    component_state: str  # "" when the controller manager does not list the component
    inactive: tuple[str, ...]  # the watched controllers that are loaded and not active
    errors: tuple[str, ...]  # the reflex's error names, when known
    how_known: str  # "" (published by franka_robot_state_broadcaster) or why it is inferred / unknown

    def message(self, robot: str = "FR3") -> str:
        """``the FR3 stopped: joint_position_limits_violation (reflex); the controllers are inactive (...)``."""
        what = ", ".join(self.errors) if self.errors else "an error it did not name"
        reflex = f"reflex; {self.how_known}" if self.how_known else "reflex"
        parts = [f"{name}" for name in self.inactive]
        if self.component_state != ACTIVE:
            parts.append(f"{self.component} {self.component_state or 'not listed'}")
        return f"the {robot} stopped: {what} ({reflex}); the controllers are inactive ({', '.join(parts)})"


def assess(state: ManagerState, component: str, watched: Sequence[str], errors: RobotErrors | None = None,
           positions: dict[str, float] | None = None, limits: tuple[Sequence[str], Sequence[float],
                                                                   Sequence[float]] | None = None) -> Stop | None:
    """The stop the controller manager's answer shows, or None when ``component`` is active (or not listed) and every
    ``watched`` controller it lists is active. ``errors``: the broadcaster's last state; ``positions`` (by controller
    joint name) and ``limits`` (joint names, lower, upper): to infer a limit reflex when the broadcaster is silent."""
    component_state = state.components.get(component, "")
    inactive = tuple(name for name in watched if name in state.controllers and state.controllers[name] != ACTIVE)
    # a component of another name (a simulator's system) is not franka_hardware: the controllers alone decide
    if component_state in (ACTIVE, "") and not inactive:
        return None
    names, how = reflex_names(errors, positions, limits)
    return Stop(component, component_state, inactive, names, how)


def reflex_names(errors: RobotErrors | None, positions: dict[str, float] | None,
                 limits: tuple[Sequence[str], Sequence[float], Sequence[float]] | None) -> tuple[tuple[str, ...], str]:
    """(error names, "" when published, else how they were inferred or why unknown)."""
    if errors is not None and errors.current:
        return errors.current, ""
    if errors is not None and errors.robot_mode == ROBOT_MODE_REFLEX and errors.last_motion:
        return errors.last_motion, ""
    unpublished = "franka_robot_state_broadcaster publishes the errors only once it is active again"
    if positions and limits:
        joints, lower, upper = limits
        for name, lo, hi in zip(joints, lower, upper, strict=True):
            q = positions.get(name)
            if q is not None and (q < lo + AT_LIMIT or q > hi - AT_LIMIT):
                limit = lo if q < lo + AT_LIMIT else hi
                return (LIMIT_REFLEX,), f"inferred: {name} at {q:.4f} rad, its limit {limit:.4f}; {unpublished}"
    return (), unpublished


@dataclass
class RecoveryReport:
    ok: bool
    steps: list[str] = field(default_factory=list)
    problem: str = ""
    seconds: float = 0.0

    @property
    def message(self) -> str:
        done = "; ".join(f"{i}. {s}" for i, s in enumerate(self.steps, 1))
        if self.ok:
            return f"recovered in {self.seconds:.2f} s: {done}" if self.steps else done
        return f"recovery failed: {self.problem}" + (f" (done: {done})" if done else "")


@dataclass
class RecoverySteps:
    """The ROS calls recovery needs, as plain callables (franka_link.FrankaLink supplies them; tests pass fakes).

    ``error_recovery() -> (ok, text)``; ``set_component_active(name) -> (ok, state label)``;
    ``switch(activate) -> (ok, message)``; ``manager() -> ManagerState``; ``joints_moved_since(t) -> bool``: an arm
    joint state received after ``t`` differs from the one before it; ``last_motion_errors(since) -> names | None``:
    what the broadcaster published after ``since``.
    """

    error_recovery: Callable[[], tuple[bool, str]]
    set_component_active: Callable[[str], tuple[bool, str]]
    switch: Callable[[list[str]], tuple[bool, str]]
    manager: Callable[[], ManagerState]
    joints_moved_since: Callable[[float], bool]
    last_motion_errors: Callable[[float], tuple[str, ...] | None]


def recover(steps: RecoverySteps, component: str, controllers: Sequence[str], timeout_s: float = 10.0,
            poll_s: float = 0.02, clock: Callable[[], float] = time.monotonic,
            sleep: Callable[[float], None] = time.sleep) -> RecoveryReport:
    """franka_hardware/doc/index.rst:97-145, in order: (1) the error recovery action, (2) the hardware component
    active, (3) switch_controller activating ``controllers`` (those loaded and not active); then wait until they are
    active and the arm's joint states move again. The first step that fails ends it, saying which."""
    start = clock()
    report = RecoveryReport(False)
    before = steps.manager()
    if before.components.get(component) == ACTIVE and all(before.controllers.get(c, ACTIVE) == ACTIVE
                                                           for c in controllers):
        report.ok, report.steps = True, [f"nothing to recover: {component} and the controllers are active"]
        return report
    ok, text = steps.error_recovery()
    if not ok:
        report.problem = f"the error recovery action failed: {text}"
        return report
    report.steps.append(f"error recovery: {text or 'succeeded'}")
    ok, state = steps.set_component_active(component)
    if not ok:
        report.problem = f"set_hardware_component_state {component} active failed ({component} is {state})"
        return report
    report.steps.append(f"{component} {state}")
    loaded = steps.manager().controllers
    activate = [c for c in controllers if c in loaded and loaded[c] != ACTIVE]
    switched_at = clock()
    if activate:
        ok, text = steps.switch(activate)
        if not ok:
            left = activate
        else:  # a message with ok (BEST_EFFORT): some may not have come up
            left = [c for c in activate if steps.manager().controllers.get(c) != ACTIVE] if text else []
        if not ok or left:
            report.problem = f"switch_controller could not activate {', '.join(left)}: {text}"
            return report
    report.steps.append(f"activated {', '.join(activate)}" if activate else "the controllers were active")
    deadline = switched_at + timeout_s
    while True:
        now_state = steps.manager()
        still = [c for c in controllers if c in now_state.controllers and now_state.controllers[c] != ACTIVE]
        moving = steps.joints_moved_since(switched_at)
        if not still and now_state.components.get(component) == ACTIVE and moving:
            break
        if clock() > deadline:
            why = (f"{', '.join(still)} not active" if still else "") or \
                ("the arm's joint states did not change (still republished?)" if not moving else f"{component} "
                 f"is {now_state.components.get(component, 'not listed')}")
            report.problem = f"after {timeout_s:.0f} s: {why}"
            return report
        sleep(poll_s)
    report.steps.append(f"controllers active and joint states moving again {clock() - switched_at:.2f} s after "
                        "the switch")
    errors = steps.last_motion_errors(switched_at)
    if errors:
        report.steps.append(f"franka_robot_state_broadcaster: last_motion_errors {', '.join(errors)}")
    report.ok, report.seconds = True, clock() - start
    return report
