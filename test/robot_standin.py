"""What the MoveIt backend meets besides MoveIt, for its tests: the arm controller's action server and the gripper
servers with their upstream rules, over real rclpy actions and the real control_msgs / franka_msgs types.

- the Panda (moveit_resources on mock hardware): ``panda_hand_controller/gripper_cmd`` served by ros2_controllers'
  GripperActionController as reproduced in ``execution/sim/controller_emulation.py`` (goal and result per finger,
  SUCCEEDED within goal_tolerance, ABORTED stalled after stall_timeout, allow_stalling false: the moveit_resources
  defaults), on a mock hand;
- the FR3: the product's franka_gripper node on a mock hand (``ros/franka_gripper_node.py``: grasp / move / homing /
  gripper_action with franka_gripper's and libfranka's rules), not in fake-hardware mode: the hand holds what a
  test puts in it (``object_width``), nothing otherwise;
- the FR3's controller manager as franka_ros2 on Jazzy has it: ``/controller_manager``'s services and
  ``/action_server/error_recovery`` (robot_boundary.yaml's ``franka_hardware`` names) served by
  ``ros/controller_manager_server.py`` over ``execution/sim/controller_manager_emulation.py`` with the controllers of
  config/ros2_controllers_fr3.yaml; the FR3's arm joint states on ``joint_states`` while joint_state_broadcaster is
  active (the arm standing still, with encoder-sized noise), the same values republished once it is not
  (joint_state_publisher.py:468-536); :meth:`StandInRobot.reflex` puts it in the post-reflex state;
- both: ``<controller>/follow_joint_trajectory`` exists for the backend's start-up check and rejects every goal (the
  moveit_py stand-in executes without it: its trajectories never reach a controller), and ``joint_states`` carries
  the fingers at 100 Hz, as joint_state_broadcaster (Panda) and joint_state_publisher merging
  franka_gripper/joint_states (FR3, franka_ros2 franka_bringup/launch/franka.launch.py:148-159) do.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import rclpy
import yaml
from control_msgs.action import FollowJointTrajectory, GripperCommand
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import MultiThreadedExecutor
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState

from step_planner.execution.controllers.config import BoundaryConfig
from step_planner.execution.sim.controller_emulation import GoalEnd, GripperController, GripperParams
from step_planner.execution.sim.mock_hand import MockHand
from step_planner.execution.sim.robot import JointReading
from step_planner.resources import config_path
from step_planner.ros.franka_gripper_node import STEP_S, FrankaGripperNode
from step_planner.ros.franka_gripper_server import finish

ROBOTS = {
    "panda": {"arm": "panda_arm_controller/follow_joint_trajectory", "fingers": ("panda_finger_joint1",
                                                                               "panda_finger_joint2")},
    "fr3": {"arm": "fr3_arm_controller/follow_joint_trajectory", "fingers": ("fr3_finger_joint1",
                                                                           "fr3_finger_joint2")},
}


class GacHand:
    """GripperActionController on one finger of a mock hand, stepped at 500 Hz of wall time."""

    def __init__(self, node: Any, action: str, group: Any) -> None:
        self.lock = threading.Lock()
        self.hand = MockHand(width=0.08, max_speed=0.2)
        self.controller = GripperController(GripperParams(joint="panda_finger_joint1"), self.hand.width / 2)
        self._start = time.monotonic()
        self._ends: dict[bytes, GoalEnd] = {}
        self.goals: list[tuple[float, float]] = []  # (position, max_effort) of every goal received
        self.server = ActionServer(node, GripperCommand, action, execute_callback=self._execute,
                                   goal_callback=lambda _g: GoalResponse.ACCEPT,
                                   handle_accepted_callback=self._accepted, cancel_callback=self._cancel,
                                   callback_group=group)

    def now(self) -> float:
        return time.monotonic() - self._start

    def step(self) -> None:
        with self.lock:
            finger = self.controller.update(self.now(), self.hand.width / 2, self.hand.velocity / 2)
            self.hand.step(2 * finger, STEP_S)

    def _accepted(self, handle) -> None:
        command = handle.request.command
        with self.lock:
            self.goals.append((command.position, command.max_effort))
            self.controller.accept(bytes(handle.goal_id.uuid), command.position, command.max_effort, self.now())
        handle.execute()

    def _cancel(self, handle) -> CancelResponse:
        with self.lock:
            self.controller.cancel(bytes(handle.goal_id.uuid), self.hand.width / 2)
        return CancelResponse.ACCEPT

    def _execute(self, handle) -> GripperCommand.Result:
        key = bytes(handle.goal_id.uuid)
        while True:
            with self.lock:
                for end in self.controller.ended:
                    self._ends[end.goal_id] = end
                self.controller.ended.clear()
                end = self._ends.pop(key, None)
            if end is not None:
                break
            time.sleep(1.0 / self.controller.params.action_monitor_rate)  # results at 20 Hz (GAC:113-119)
        finish(handle, end.status)
        r = end.result
        return GripperCommand.Result(position=r["position"], effort=r["effort"], stalled=r["stalled"],
                                     reached_goal=r["reached_goal"])

    def width(self) -> float:
        with self.lock:
            return self.hand.width


FR3_READY = (0.0, -0.7854, 0.0, -2.3562, 0.0, 1.5708, 0.7854)  # franka_description's "ready" arm pose (rad)
NOISE = 1e-6  # rad: what a still arm's measured positions change by between samples


class Fr3ControllerManager:
    """What ControllerManagerServer asks of the MuJoCo robot (execution/sim/robot.py SimRobot: ``lock``, ``cm``,
    the three recovery calls, ``controller_active``, ``joint_state``), for an arm that stands still at ``arm``."""

    def __init__(self) -> None:
        from step_planner.ros.controller_manager_server import emulation_from_controllers

        self.lock = threading.RLock()
        controllers = yaml.safe_load(config_path("ros2_controllers_fr3.yaml").read_text())
        self.cm = emulation_from_controllers(controllers, "fr3_arm_controller")
        self.boundary = BoundaryConfig.load(config_path("robot_boundary.yaml"), "fr3")
        self.arm = list(FR3_READY)
        self.published: tuple[float, ...] | None = None  # the arm's last joint state sent (republished while stopped)
        self._start, self._ticks = time.monotonic(), 0

    def reflex(self, errors: tuple[str, ...] = ("joint_position_limits_violation",)) -> None:
        with self.lock:
            self.cm.reflex(errors, "the test's reflex")

    def controller_active(self, kind: str) -> bool:
        with self.lock:
            return any(c.type == kind and c.state == "active" for c in self.cm.controllers.values())

    def error_recovery(self) -> tuple[bool, str]:
        with self.lock:
            return self.cm.error_recovery()

    def set_hardware_state(self, name: str, target: int) -> tuple[bool, int]:
        with self.lock:
            return self.cm.set_hardware_state(name, target)

    def switch_controllers(self, activate, deactivate, strictness: int) -> tuple[bool, str]:
        with self.lock:
            return self.cm.switch(activate, deactivate, strictness)

    def arm_positions(self) -> tuple[float, ...]:
        """joint_state_broadcaster's measurement when it is active, else what joint_state_publisher repeats."""
        with self.lock:
            if self.cm.active("joint_state_broadcaster") or self.published is None:
                self._ticks += 1
                self.published = tuple(q + NOISE * (self._ticks % 2) for q in self.arm)
            return self.published

    def joint_state(self) -> JointReading:
        names = self.boundary.arm.joints
        return JointReading(time.monotonic() - self._start, names, self.arm_positions(), (0.0,) * len(names),
                            (0.0,) * len(names))


class StandInRobot:
    """The Panda's and the FR3's controller and gripper servers in this process, in ``namespace``; with
    ``fake_hardware`` the FR3's hand finds every grasp's object at its width (the fake-hardware mock)."""

    def __init__(self, namespace: str = "/", fake_hardware: bool = False) -> None:
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node("standin_robot", namespace=namespace, context=self.context)
        group = ReentrantCallbackGroup()
        self.arm_goals: list[str] = []
        self.arm_servers = [ActionServer(self.node, FollowJointTrajectory, robot["arm"],
                                         execute_callback=lambda h: None, goal_callback=self._reject_arm,
                                         callback_group=group)
                            for robot in ROBOTS.values()]
        self.panda = GacHand(self.node, "panda_hand_controller/gripper_cmd", group)
        self.fr3 = FrankaGripperNode(context=self.context, namespace=namespace,
                                     parameter_overrides=[Parameter("fake_hardware", value=fake_hardware)])
        self.joint_pub = self.node.create_publisher(JointState, "joint_states", 10)
        self.joint_states_on = threading.Event()  # cleared: the hand's joint states are not published (yet)
        self.joint_states_on.set()
        self.node.create_timer(0.01, self._publish_joints, callback_group=group)
        from step_planner.ros.controller_manager_server import ControllerManagerServer

        self.fr3_cm = Fr3ControllerManager()
        boundary = self.fr3_cm.boundary
        self.cm_server = ControllerManagerServer(self.node, self.fr3_cm, boundary.franka_hardware, boundary.arm.joints,
                                                 ("effort",), 1000.0, group)
        self.node.create_timer(0.02, self.cm_server.publish_state, callback_group=group)
        self.executor = MultiThreadedExecutor(num_threads=8, context=self.context)
        self.executor.add_node(self.node)
        self.executor.add_node(self.fr3)
        self._running = threading.Event()
        self._running.set()
        self._threads = [threading.Thread(target=self.executor.spin, daemon=True),
                         threading.Thread(target=self._step, daemon=True)]
        for thread in self._threads:
            thread.start()

    def _reject_arm(self, goal) -> GoalResponse:
        self.arm_goals.append("rejected")
        return GoalResponse.REJECT

    def _step(self) -> None:
        next_step = time.monotonic()
        while self._running.is_set():
            self.panda.step()
            next_step += STEP_S
            time.sleep(max(0.0, next_step - time.monotonic()))

    def _publish_joints(self) -> None:
        if not self.joint_states_on.is_set():
            return
        panda = self.panda.width() / 2
        fr3 = self.fr3.hand.state_width() / 2
        names = [*ROBOTS["panda"]["fingers"], *ROBOTS["fr3"]["fingers"], *self.fr3_cm.boundary.arm.joints]
        arm = self.fr3_cm.arm_positions()
        self.joint_pub.publish(JointState(name=names, position=[panda, panda, fr3, fr3, *arm],
                                          velocity=[self.panda.hand.velocity / 2] * 2 + [0.0] * (2 + len(arm))))

    def hold(self, robot: str, width: float | None) -> None:
        """Put an object ``width`` wide between the fingers of ``robot`` (None: nothing there)."""
        hand = self.panda.hand if robot == "panda" else self.fr3.hand.hand
        hand.object_width = width

    def forget_goals(self) -> None:
        self.panda.goals.clear()
        self.fr3_goals.clear()

    def reset(self) -> None:
        """Both hands open and empty, no goals remembered, joint states published."""
        self.joint_states_on.set()
        with self.fr3_cm.lock:  # the FR3 running, no reflex
            self.fr3_cm.cm.reset()
            self.fr3_cm.arm = list(FR3_READY)
        with self.panda.lock:
            self.panda.hand.object_width, self.panda.hand.width = None, 0.08
            self.panda.controller.setpoint = 0.04
            self.panda.goals.clear()
        with self.fr3.hand.lock:  # as a hand restarted open: a command a previous test left running ends, and the
            gripper = self.fr3.hand.gripper  # width it reports (sampled at 15 Hz) is the open one at once
            if gripper.command is not None:
                gripper.cancel(gripper.command.goal_id)
            self.fr3.hand.hand.object_width, self.fr3.hand.hand.width = None, 0.08
            self.fr3.hand.hand.velocity = 0.0
            gripper.hold = gripper.width = gripper.state_width = 0.08
        self.fr3_goals.clear()

    @property
    def fr3_goals(self) -> list:
        return self.fr3.hand.started

    def close(self) -> None:
        """Everything gone from the ROS graph: rclpy's destroy_node leaves action servers alive (their services and
        topics stay discoverable until the server object is destroyed), so they are destroyed first."""
        self._running.clear()
        self.executor.shutdown()
        for server in [*self.arm_servers, self.panda.server]:
            server.destroy()
        self.fr3.destroy_node()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)
