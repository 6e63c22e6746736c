"""How the MuJoCo robot's joints follow the trajectory controller: the servo between a command and the arm.

WHY: the same joint_trajectory_controller goal tracks very differently behind different hardware, and the
controllers backend's tolerances (config/robot_boundary.yaml ``trajectory``) must hold behind each. Three modes:

- ``ideal``: the MuJoCo model's own stiff PD with velocity feed-forward (:mod:`control`), the controller updated
  every physics step. No upstream hardware behaves like this; it is the in-process simulator's servo.
- ``gazebo``: gz_ros2_control's position command interface (ros-controls/gz_ros2_control, jazzy fa9ced4,
  gz_ros2_control/src/gz_system.cpp:641-660): every write sets the joint's velocity command to
  ``-position_proportional_gain * (position - position_cmd) * update_rate``, where ``position`` is the state
  last read. The controller manager reads and updates only once per control period (gz_ros2_control_plugin.cpp
  :507-527: ``read``/``update`` when ``sim_period >= control_period_``, with update_rate from the controller
  manager, :449-452) while ``write`` runs every simulation step (:496-504), so the velocity is held for a period
  and per period the joint closes ``gain`` of the gap to the command. The gain is the plugin's
  ``<position_proportional_gain>`` element (gz_ros2_control_plugin.cpp:318-322, default 0.1) declared as the
  node's parameter (:409-411); read here from the shipped xacro (config/gazebo/panda_gazebo.urdf.xacro).
  The velocity command is met by the MuJoCo PD tracking the ramp it implies (Gazebo's DART joint velocity
  command is met within the URDF effort limit; the PD's own error is mrad, the loop's lag is what this shows).
- ``fr3_effort``: franka_ros2's fr3_arm_controller (frankarobotics/franka_ros2 jazzy 29cb85a,
  franka_fr3_moveit_config/config/fr3_ros_controllers.yaml:20-42): JTC on the effort interface alone, so its
  PID adapter commands ``effort = p * e + i * integral(e) + d * de`` from the error of the desired state now
  (ros2_controllers jazzy ed360c9, joint_trajectory_controller.cpp:374 and 414-426, use_closed_loop_pid_adapter
  :892-895; ff_velocity_scale defaults to 0, joint_trajectory_controller_parameters.yaml:174-178), with the
  file's gains (p 600/600/600/600/250/150/50, d 30/30/30/30/10/10/5, i 0). franka_hardware writes the efforts as
  libfranka joint torques (franka_hardware/src/robot.cpp:165-174) on top of the robot's own gravity
  compensation (the FR3 floats under zero torque: franka_example_controllers/src/fr3/
  gravity_compensation_example_controller.cpp:42-46); here the model's gravcomp stands for that and the arm
  actuators become torque motors clipped at the Panda's 87/12 Nm. Not reproduced: the optional torque rate
  limiter (robot.cpp:169-171), friction, and the 1 kHz rate (the PD runs every 2 ms physics step).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np

from step_planner.execution.sim.model import KP, KV

SERVO_MODES = ("ideal", "gazebo", "fr3_effort")
GZ_DEFAULT_GAIN = 0.1  # gz_ros2_control_plugin.cpp:318 (fa9ced4)


def xacro_position_gain(path: Path) -> float:
    """The ``<position_proportional_gain>`` of the gz_ros2_control plugin in a xacro, or upstream's default 0.1."""
    root = ET.fromstring(Path(path).read_text())
    for plugin in root.iter("plugin"):
        if "gz_ros2_control" in (plugin.get("filename") or "") + (plugin.get("name") or ""):
            element = plugin.find("position_proportional_gain")
            if element is not None and element.text and element.text.strip():
                return float(element.text.strip())
    return GZ_DEFAULT_GAIN


@dataclass(frozen=True)
class ServoSpec:
    """A servo mode and what it needs: the control period (0: every physics step), gz's gain, the PID gains."""

    mode: str = "ideal"
    update_rate: float = 0.0  # Hz, the controller manager's; 0 = every physics step
    position_gain: float = GZ_DEFAULT_GAIN  # gazebo
    p: tuple[float, ...] = ()  # fr3_effort, per controller joint
    i: tuple[float, ...] = ()
    d: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if self.mode not in SERVO_MODES:
            raise ValueError(f"unknown servo mode {self.mode!r}; one of {', '.join(SERVO_MODES)}")
        if self.mode == "gazebo" and not (0.0 < self.position_gain < 2.0):
            raise ValueError(f"position_proportional_gain {self.position_gain} must be in (0, 2): the loop closes "
                             "that fraction of the gap per control period and oscillates from 1, diverges from 2")
        if self.mode == "gazebo" and self.update_rate <= 0:
            raise ValueError("the gazebo servo needs the controller manager's update_rate > 0")
        if self.mode == "fr3_effort" and not (len(self.p) == len(self.d) == len(self.i) > 0):
            raise ValueError("the fr3_effort servo needs p, i and d gains for every arm joint")

    @classmethod
    def from_controllers(cls, mode: str, interfaces: tuple[str, ...], joints: tuple[str, ...],
                         gains: dict[str, dict[str, float]], update_rate: float,
                         gazebo_description: Path | None = None, position_gain: float = 0.0) -> ServoSpec:
        """The mode checked against the controller it sits behind (its command interfaces and gains)."""
        if mode == "gazebo":
            if tuple(interfaces) != ("position",):
                raise ValueError(f"servo gazebo reproduces gz_ros2_control's position interface; the arm controller "
                                 f"commands {list(interfaces)}")
            gain = position_gain if position_gain > 0 else \
                xacro_position_gain(gazebo_description) if gazebo_description is not None else GZ_DEFAULT_GAIN
            return cls(mode, update_rate, gain)
        if mode == "fr3_effort":
            if tuple(interfaces) != ("effort",):
                raise ValueError(f"servo fr3_effort is JTC's PID on the effort interface alone; the arm controller "
                                 f"commands {list(interfaces)} (use robot:=fr3)")
            missing = [j for j in joints if j not in gains]
            if missing:
                raise ValueError(f"servo fr3_effort needs `gains` (p, i, d) for {missing} in the controllers file "
                                 "(franka_ros2's fr3_ros_controllers.yaml:35-42 has them)")
            pick = [[float(gains[j].get(k, 0.0)) for j in joints] for k in ("p", "i", "d")]
            return cls(mode, update_rate, p=tuple(pick[0]), i=tuple(pick[1]), d=tuple(pick[2]))
        return cls(mode)

    def control_period(self, timestep: float) -> int:
        """Physics steps per controller update (at least 1: a faster rate runs every step)."""
        if self.update_rate <= 0:
            return 1
        return max(1, int(round(1.0 / (self.update_rate * timestep))))


class Servo:
    """One arm's servo state between controller updates; arrays in the trajectory controller's joint order."""

    def __init__(self, spec: ServoSpec) -> None:
        self.spec = spec
        self._read_t = 0.0
        self._read_q: np.ndarray | None = None
        self._held: np.ndarray | None = None
        self._integral: np.ndarray | None = None

    def attach(self, model: mujoco.MjModel, arm_act: np.ndarray) -> None:
        """fr3_effort: the arm actuators become torque motors (force = ctrl, still clipped at their forcerange)."""
        if self.spec.mode == "fr3_effort":
            model.actuator_gainprm[arm_act, 0] = 1.0
            model.actuator_biasprm[arm_act, :3] = 0.0
        self._read_q = self._held = self._integral = None

    def latch(self, t: float, q: np.ndarray, command: np.ndarray, desired: np.ndarray, desired_v: np.ndarray,
              qd: np.ndarray, period: float) -> None:
        """At a controller update: the state just read, the position command and the desired state now."""
        if self.spec.mode == "gazebo":  # gz_system.cpp:643-648
            self._read_t, self._read_q = t, q.copy()
            self._held = -self.spec.position_gain * (q - command) * self.spec.update_rate
        elif self.spec.mode == "fr3_effort":  # JTC.cpp:414-426 with control_toolbox's PID
            error = desired - q
            self._integral = error * period if self._integral is None else self._integral + error * period
            self._held = (np.array(self.spec.p) * error + np.array(self.spec.i) * self._integral
                              + np.array(self.spec.d) * (desired_v - qd))  # the effort, held until the next update

    def arm_ctrl(self, t_next: float, command: np.ndarray, command_v: np.ndarray, kp: np.ndarray = KP,
                 kv: np.ndarray = KV) -> np.ndarray:
        """The arm actuators' ctrl for the physics step ending at ``t_next`` (``kp``/``kv`` in this order)."""
        if self.spec.mode == "gazebo" and self._read_q is not None and self._held is not None:
            target = self._read_q + self._held * (t_next - self._read_t)  # the ramp the velocity command implies
            return target + self._held * (kv / kp)
        if self.spec.mode == "fr3_effort" and self._held is not None:
            return self._held.copy()
        return command + command_v * (kv / kp)


def parse_mode(text: str) -> str:
    """A servo mode name, or a clear error."""
    name = re.sub(r"[-\s]", "_", text.strip().lower()) or "ideal"
    if name not in SERVO_MODES:
        raise ValueError(f"unknown servo mode {text!r}; one of {', '.join(SERVO_MODES)}")
    return name
