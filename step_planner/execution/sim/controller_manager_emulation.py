"""The FR3's controller_manager and franka_hardware after a reflex, and upstream's three recovery steps, on plain data.

The MuJoCo robot with ``robot:=fr3`` (:mod:`step_planner.ros.mujoco_robot`) serves this behind the real
controller_manager_msgs services and franka_msgs' ErrorRecovery action, so a client meets what franka_ros2 on Jazzy
does, not what we assumed it does. Every rule names the upstream line it follows:

- ``DOC``  frankarobotics/franka_ros2@29cb85a franka_hardware/doc/index.rst
- ``FHI``  same commit, franka_hardware/src/franka_hardware_interface.cpp
- ``FAS``  same commit, franka_hardware/src/franka_action_server.cpp
- ``CM``   ros-controls/ros2_control@9ffbf97 (jazzy) controller_manager/src/controller_manager.cpp
- ``HC``   same commit, hardware_interface/src/hardware_component.cpp
- ``RM``   same commit, hardware_interface/src/resource_manager.cpp
- ``LF``   frankarobotics/libfranka 0.20.5, src/robot_impl.cpp

Deviations, on purpose: every controller of the controllers file is taken to use the one hardware component (true
of the FR3's three: fr3_arm_controller, joint_state_broadcaster, franka_robot_state_broadcaster); ``inactive`` and
``unconfigured`` differ only in what list_hardware_components says; libfranka's reply to a motion started before the
error is cleared is modelled as a refused switch (see :meth:`ControllerManagerEmulation.switch`), which was not seen
on an arm.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

UNKNOWN, UNCONFIGURED, INACTIVE, ACTIVE, FINALIZED = "unknown", "unconfigured", "inactive", "active", "finalized"
STATE_IDS = {UNKNOWN: 0, UNCONFIGURED: 1, INACTIVE: 2, ACTIVE: 3, FINALIZED: 4}  # lifecycle_msgs/msg/State
STATE_LABELS = {v: k for k, v in STATE_IDS.items()}
FRANKA_HARDWARE = "FrankaHardwareInterface"  # DOC:124 (single arm, no prefix)
FRANKA_PLUGIN = "franka_hardware/FrankaHardwareInterface"
# franka_msgs/msg/FrankaRobotState robot_mode (libfranka RobotMode)
ROBOT_MODE_IDLE, ROBOT_MODE_REFLEX = 1, 4
# controller_manager_msgs/srv/SwitchController strictness
BEST_EFFORT, STRICT = 1, 2


@dataclass
class ControllerEntry:
    name: str
    type: str
    state: str = ACTIVE  # the launch files spawn them active
    commands: bool = False  # claims command interfaces of the hardware (the arm controller), not only state ones


class ControllerManagerEmulation:
    """One hardware component (franka_hardware) and the controllers on it, as the controller manager keeps them.

    ``controllers``: name -> type, from the controllers file's ``controller_manager`` section; ``commanding``: the
    names that claim command interfaces (the arm controller). Not thread-safe: the caller holds its lock.
    """

    def __init__(self, controllers: Mapping[str, str], commanding: Iterable[str] = (),
                 hardware: str = FRANKA_HARDWARE) -> None:
        commanding = set(commanding)
        self.hardware = hardware
        self.hardware_state = ACTIVE
        self.controllers = {name: ControllerEntry(name, kind, commands=name in commanding)
                            for name, kind in controllers.items()}
        self.robot_mode = ROBOT_MODE_IDLE
        self.current_errors: frozenset[str] = frozenset()
        self.last_motion_errors: frozenset[str] = frozenset()
        self.events: list[str] = []  # what happened, in order (the controller manager's and the plugin's log lines)

    # ---- what the robot and its controller manager are in ----------------------------------------------------
    def active(self, name: str) -> bool:
        entry = self.controllers.get(name)
        return entry is not None and entry.state == ACTIVE

    @property
    def hardware_state_id(self) -> int:
        return STATE_IDS[self.hardware_state]

    # ---- the reflex ----------------------------------------------------------------------------------------
    def reflex(self, errors: Iterable[str], detail: str = "") -> list[str]:
        """A reflex during a motion: libfranka's readOnce throws a ControlException whose text names the errors
        (LF:16-23, 91-103), franka_hardware logs it, stops the robot and returns ERROR from read (FHI:243-258, DOC:
        83-88); the component goes unconfigured (its on_error succeeds: HC:241-266, DOC:92) and the controller
        manager deactivates every controller cached for it (CM:3275-3304, DOC:93), joint_state_broadcaster included.
        Returns the controllers it deactivated."""
        errors = frozenset(errors)
        self.robot_mode = ROBOT_MODE_REFLEX
        self.current_errors = self.last_motion_errors = errors
        named = ", ".join(f'"{e}"' for e in sorted(errors))
        self.events.append(f"{self.hardware}: libfranka: Move command aborted: motion aborted by reflex! [{named}]"
                           + (f" ({detail})" if detail else ""))
        if self.hardware_state not in (ACTIVE, INACTIVE):
            return []
        self.hardware_state = UNCONFIGURED
        stopped = [c.name for c in self.controllers.values() if c.state == ACTIVE]
        for name in stopped:
            self.controllers[name].state = INACTIVE
        self.events.append(f"controller_manager: Deactivating following hardware components as their read cycle "
                           f"resulted in an error: [ {self.hardware} ]")
        if stopped:
            self.events.append(f"controller_manager: Deactivating following controllers as their hardware components "
                               f"read cycle resulted in an error: [ {' '.join(stopped)} ]")
        return stopped

    # ---- the three recovery steps (DOC:97-145) ------------------------------------------------------------------
    def error_recovery(self) -> tuple[bool, str]:
        """Step 1, ``/action_server/error_recovery``: libfranka's automaticErrorRecovery() clears the robot's errors
        (FAS:57-67: succeeded, or aborted when it throws). last_motion_errors stay: they describe the last motion."""
        self.robot_mode = ROBOT_MODE_IDLE
        self.current_errors = frozenset()
        self.events.append("action_server: Automatic recovery succeeded")
        return True, "Automatic recovery succeeded"

    def set_hardware_state(self, name: str, target: int) -> tuple[bool, int]:
        """Step 2, ``set_hardware_component_state``: (ok, the component's state id now) (CM:3228-3262). Active from
        unconfigured configures, then activates (RM:618-626); franka_hardware's on_activate only reads the state once
        (FHI:167-175), which outside a motion does not throw, so it succeeds before step 1 too."""
        if name != self.hardware:  # CM:3251-3257
            self.events.append(f"controller_manager: hardware component with name '{name}' does not exist")
            return False, STATE_IDS[UNKNOWN]
        label = STATE_LABELS.get(int(target))
        if label not in (UNCONFIGURED, INACTIVE, ACTIVE):
            return False, self.hardware_state_id
        if label in (UNCONFIGURED, INACTIVE) and self.hardware_state == ACTIVE:
            for entry in self.controllers.values():  # nothing reads or commands a component that is not active
                entry.state = INACTIVE if entry.state == ACTIVE else entry.state
        self.hardware_state = label
        return True, self.hardware_state_id

    def switch(self, activate: Iterable[str], deactivate: Iterable[str], strictness: int) -> tuple[bool, str]:
        """Step 3, ``switch_controller``: (ok, message). An unknown name fails STRICT and is skipped BEST_EFFORT; a
        controller whose hardware component is not active cannot be activated, its interfaces being unavailable
        (CM:4364-4410); a commanding controller cannot start a motion while the robot's errors are not cleared
        (franka_hardware starts libfranka's control in perform_command_mode_switch, FHI:423-502; libfranka refuses a
        motion in reflex mode -- modelled as a refused activation). STRICT: any refusal fails the whole switch;
        BEST_EFFORT: the others are activated, and it fails only when none could be (SwitchController.srv)."""
        activate, deactivate = list(activate), list(deactivate)
        unknown = [n for n in activate + deactivate if n not in self.controllers]
        if unknown and strictness == STRICT:
            return False, f"controllers not loaded: {', '.join(unknown)}"
        for name in deactivate:
            if name in self.controllers:
                self.controllers[name].state = INACTIVE
        problems, refused = [], set()
        for name in activate:
            entry = self.controllers.get(name)
            if entry is None or entry.state == ACTIVE:
                continue
            refused.add(name)
            if self.hardware_state != ACTIVE:
                problems.append(f"Unable to activate controller '{name}' since the interfaces of hardware component "
                                f"'{self.hardware}' are not available (it is {self.hardware_state}).")
            elif entry.commands and self.current_errors:
                problems.append(f"Unable to activate controller '{name}': libfranka: Move command rejected: command "
                                f"not possible in the current mode (\"Reflex\")")
            else:
                refused.discard(name)
        if problems and strictness == STRICT:
            return False, " ".join(problems)
        startable = [n for n in activate if n in self.controllers and n not in refused]
        for name in startable:
            self.controllers[name].state = ACTIVE
        if problems:
            return bool(startable), " ".join(problems)
        return True, "" if activate or deactivate else "After checking the controllers, no controllers need to be " \
            "activated or deactivated."

    def reset(self) -> None:
        """A fresh bring-up (the simulator's load_scene): everything active, no errors."""
        self.hardware_state = ACTIVE
        for entry in self.controllers.values():
            entry.state = ACTIVE
        self.robot_mode = ROBOT_MODE_IDLE
        self.current_errors = self.last_motion_errors = frozenset()
