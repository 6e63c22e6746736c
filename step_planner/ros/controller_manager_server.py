"""The FR3's controller manager services, franka_hardware's error recovery action and franka_robot_state_broadcaster's
topic, served by the MuJoCo robot (``robot:=fr3``) over the real controller_manager_msgs and franka_msgs types.

What they answer is :mod:`step_planner.execution.sim.controller_manager_emulation` (franka_ros2 and ros2_control on
Jazzy, cited there); this module only translates. Names come from robot_boundary.yaml's ``franka_hardware`` entry:
``<controller_manager>/list_controllers`` and ``list_hardware_components``, ``set_hardware_component_state``,
``switch_controller`` (controller_manager.cpp:1171-1217), the ErrorRecovery action (franka_action_server.cpp:36-43)
and FrankaRobotState on ``robot_state`` (franka_robot_state_broadcaster.cpp:148-150), published only while that
broadcaster is active (its publish thread runs from on_activate to on_deactivate, :185-197), at
``ROBOT_STATE_RATE_HZ`` instead of upstream's 1 kHz.
"""

from __future__ import annotations

from typing import Any

from controller_manager_msgs.msg import ControllerState, HardwareComponentState, HardwareInterface
from controller_manager_msgs.srv import (
    ListControllers,
    ListHardwareComponents,
    SetHardwareComponentState,
    SwitchController,
)
from franka_msgs.action import ErrorRecovery
from franka_msgs.msg import Errors, FrankaRobotState
from lifecycle_msgs.msg import State
from rclpy.action import ActionServer

from step_planner.execution.controllers import messages as m
from step_planner.execution.controllers.config import FrankaHardwareBoundary
from step_planner.execution.sim.controller_manager_emulation import (
    ACTIVE,
    FRANKA_PLUGIN,
    STATE_IDS,
    STATE_LABELS,
    ControllerManagerEmulation,
)
from step_planner.execution.sim.robot import SimRobot

ROBOT_STATE_RATE_HZ = 50.0  # simulated time; upstream publishes at the controller manager's 1 kHz
ROBOT_STATE_BROADCASTER = "franka_robot_state_broadcaster/FrankaRobotStateBroadcaster"
ERROR_NAMES = tuple(Errors.get_fields_and_field_types())  # libfranka's error names, franka_msgs/msg/Errors's fields


def errors_msg(names: frozenset[str]) -> Errors:
    msg = Errors()
    for name in names:
        if name in ERROR_NAMES:
            setattr(msg, name, True)
    return msg


def emulation_from_controllers(controllers_yaml: dict[str, Any], arm_controller: str) -> ControllerManagerEmulation:
    """The controller manager of a ros2_control controllers file: every controller of its ``controller_manager``
    section, all active (as the launch files spawn them); ``arm_controller`` claims command interfaces."""
    section = (controllers_yaml.get("controller_manager") or {}).get("ros__parameters") or {}
    kinds = {name: entry["type"] for name, entry in section.items() if isinstance(entry, dict) and "type" in entry}
    return ControllerManagerEmulation(kinds, commanding=[arm_controller])


class ControllerManagerServer:
    """Adds the services, the action and the publisher to ``node``; ``robot`` holds the emulation."""

    def __init__(self, node, robot: SimRobot, names: FrankaHardwareBoundary, arm_joints: tuple[str, ...],
                 command_interfaces: tuple[str, ...], update_rate: float, group) -> None:
        assert robot.cm is not None
        self.node, self.robot, self.names = node, robot, names
        self.arm_joints, self.command_interfaces, self.update_rate = arm_joints, command_interfaces, update_rate
        cm = names.controller_manager
        node.create_service(ListControllers, f"{cm}/list_controllers", self._list_controllers, callback_group=group)
        node.create_service(ListHardwareComponents, f"{cm}/list_hardware_components", self._list_components,
                            callback_group=group)
        node.create_service(SetHardwareComponentState, f"{cm}/set_hardware_component_state", self._set_state,
                            callback_group=group)
        node.create_service(SwitchController, f"{cm}/switch_controller", self._switch, callback_group=group)
        self._recovery = ActionServer(node, ErrorRecovery, names.error_recovery, execute_callback=self._recover,
                                      callback_group=group)
        self._state_pub = node.create_publisher(FrankaRobotState, names.robot_state, 10)
        # filled in place at each publish: FrankaRobotState() alone builds ~50 nested messages (112 us); rclpy's
        # publish serializes it before it returns. Errors by the set they report (a set changes at a reflex).
        self._state_msg = FrankaRobotState()
        self._errors: dict[frozenset[str], Errors] = {}
        self._logged = 0

    # ---- controller_manager --------------------------------------------------------------------------------------
    def _interfaces(self, commands: bool) -> tuple[list[str], list[str]]:
        command = [f"{j}/{c}" for j in self.arm_joints for c in self.command_interfaces] if commands else []
        return command, [f"{j}/{s}" for j in self.arm_joints for s in ("position", "velocity")]

    def _list_controllers(self, _request, response: ListControllers.Response) -> ListControllers.Response:
        with self.robot.lock:
            entries = [(c.name, c.state, c.type, c.commands) for c in self.robot.cm.controllers.values()]
        for name, state, kind, commands in entries:
            command, state_itfs = self._interfaces(commands)
            response.controller.append(ControllerState(
                name=name, state=state, type=kind, update_rate=int(self.update_rate),
                claimed_interfaces=command if state == ACTIVE else [], required_command_interfaces=command,
                required_state_interfaces=state_itfs))
        self._log_events()
        return response

    def _list_components(self, _request, response: ListHardwareComponents.Response) -> ListHardwareComponents.Response:
        cm: ControllerManagerEmulation = self.robot.cm
        with self.robot.lock:
            state, claimed = cm.hardware_state, any(c.commands and c.state == ACTIVE for c in cm.controllers.values())
        available = state == ACTIVE
        command, state_itfs = self._interfaces(True)
        response.component.append(HardwareComponentState(
            name=cm.hardware, type="system", rw_rate=int(self.update_rate), plugin_name=FRANKA_PLUGIN,
            state=State(id=STATE_IDS[state], label=state),
            command_interfaces=[HardwareInterface(name=i, data_type="double", is_available=available,
                                                  is_claimed=claimed) for i in command],
            state_interfaces=[HardwareInterface(name=i, data_type="double", is_available=available)
                              for i in state_itfs]))
        self._log_events()
        return response

    def _set_state(self, request: SetHardwareComponentState.Request,
                   response: SetHardwareComponentState.Response) -> SetHardwareComponentState.Response:
        ok, state = self.robot.set_hardware_state(request.name, int(request.target_state.id))
        response.ok, response.state = ok, State(id=state, label=STATE_LABELS.get(state, "unknown"))
        self._log_events()
        return response

    def _switch(self, request: SwitchController.Request,
                response: SwitchController.Response) -> SwitchController.Response:
        response.ok, response.message = self.robot.switch_controllers(list(request.activate_controllers),
                                                                      list(request.deactivate_controllers),
                                                                      int(request.strictness))
        self._log_events()
        return response

    # ---- franka_hardware's action server -------------------------------------------------------------------------
    def _recover(self, goal_handle) -> ErrorRecovery.Result:
        ok, _message = self.robot.error_recovery()
        if ok:
            goal_handle.succeed()
        else:
            goal_handle.abort()
        self._log_events()
        return ErrorRecovery.Result()

    # ---- franka_robot_state_broadcaster (physics thread, ROBOT_STATE_RATE_HZ) -------------------------------------
    def publish_state(self) -> None:
        if not self.robot.controller_active(ROBOT_STATE_BROADCASTER):
            self._log_events()
            return
        if not self._state_pub.get_subscription_count():  # nobody to see it: not built (as MujocoRobotNode's)
            return
        reading = self.robot.joint_state()
        cm: ControllerManagerEmulation = self.robot.cm
        n = len(self.arm_joints)
        msg, errors = self._state_msg, self._errors
        measured = msg.measured_joint_state
        msg.header.stamp = measured.header.stamp = m.stamp(reading.time)
        measured.name, measured.position, measured.velocity, measured.effort = (
            list(reading.names[:n]), list(reading.position[:n]), list(reading.velocity[:n]), list(reading.effort[:n]))
        msg.time, msg.robot_mode = reading.time, cm.robot_mode
        for names in (cm.current_errors, cm.last_motion_errors):
            if names not in errors:
                errors[names] = errors_msg(names)
        msg.current_errors, msg.last_motion_errors = errors[cm.current_errors], errors[cm.last_motion_errors]
        self._state_pub.publish(msg)

    def _log_events(self) -> None:
        """The emulation's log lines (the plugin's and the controller manager's) to this node's log, once each."""
        events = self.robot.cm.events
        for line in events[self._logged:]:
            if "error" in line or "reflex" in line:
                self.node.get_logger().error(line)
            else:
                self.node.get_logger().info(line)
        self._logged = len(events)
