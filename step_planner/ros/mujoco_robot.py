"""The MuJoCo Panda as a ROS robot in its own process: the actions, topics and clock a robot serves.

    step-planner mujoco-robot --ros-args -p scene:=drawer_desk        # or: ros2 run step_planner mujoco_robot

It stands where gz_ros2_control (or the real arm's ros2_control) and Gazebo's pose bridge stand, so the
node's ``controllers`` backend talks to it exactly as it would to Gazebo or the arm, over real DDS and the
real control_msgs types. The controllers follow ros2_controllers' own code (see
:mod:`step_planner.execution.sim.controller_emulation`); results and feedback go out at each controller's
``action_monitor_rate`` (20 Hz), as realtime_tools' goal handle delivers them. With the FR3 entry of
robot_boundary.yaml (``-p robot:=fr3``) the gripper is franka_gripper's node instead (its four actions and
``joint_states``, :mod:`step_planner.execution.sim.franka_gripper_emulation`) on the same MuJoCo fingers, and the
arm keeps the Panda's geometry under the FR3's names.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

from control_msgs.action import FollowJointTrajectory, GripperCommand
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Header, String
from tf2_msgs.msg import TFMessage

from step_planner.config_schema import parse_yaml
from step_planner.domain.pose_tree import ModelPose
from step_planner.domain.scene import SceneError, load_scene
from step_planner.domain.world import WorldState
from step_planner.execution.controllers import messages as m
from step_planner.execution.controllers.config import BoundaryConfig
from step_planner.execution.sim.controller_emulation import GoalEnd, GripperParams, TrajectoryParams
from step_planner.execution.sim.franka_gripper_emulation import FrankaGripperParams
from step_planner.execution.sim.robot import JointReading, SimRobot
from step_planner.execution.sim.servo import ServoSpec, parse_mode
from step_planner.execution.sim.simulated_perception import PerceptionNoise, SimulatedPerception
from step_planner.execution.sim.telemetry import BASE_FRAME, Sampler, link_transforms
from step_planner.resources import config_dir
from step_planner.ros.request_once import RequestOnce
from step_planner_interfaces.srv import InjectFault, LoadScene

JTC_TYPE = "joint_trajectory_controller/JointTrajectoryController"
JSB_TYPE = "joint_state_broadcaster/JointStateBroadcaster"
GRIPPER_TYPES = ("position_controllers/GripperActionController", "effort_controllers/GripperActionController")
PARAMETERS: dict[str, tuple[Any, str]] = {
    "scene": ("drawer_desk", "Scene the robot stands in (a name in config/scenes or a YAML path)."),
    "seed": (0, "Perturbs object poses by a few mm and degrees (0 = exactly the scene)."),
    "robot": ("", "Entry of robot_boundary.yaml whose names the robot serves (empty: the file's default)."),
    "boundary_file": ("", "robot_boundary.yaml (empty: the package's): action names and joint names per robot."),
    "controllers_file": ("", "ros2_control controllers YAML whose parameters the controllers follow "
                             "(empty: the package's config/ros2_controllers_<robot>.yaml)."),
    "servo": ("ideal", "How the joints follow the arm controller (execution/sim/servo.py): ideal (the MuJoCo PD), "
                       "gazebo (gz_ros2_control's position loop, the xacro's gain, at the controllers' update_rate) "
                       "or fr3_effort (franka_ros2's JTC effort PID gains; robot:=fr3)."),
    "servo_gazebo_description": ("", "gazebo servo: the xacro whose gz_ros2_control <position_proportional_gain> "
                                     "it uses (empty: the package's config/gazebo/panda_gazebo.urdf.xacro)."),
    "servo_position_gain": (0.0, "gazebo servo: position_proportional_gain instead of the xacro's (0: the xacro's; "
                                 "absent there: gz_ros2_control's default 0.1)."),
    "realtime_factor": (1.0, "Physics pace relative to the wall clock (1.0 = real time; 0 = as fast as it computes). "
                        "Above 1 only while a goal runs or anything moves; at rest the robot runs at real time."),
    "joint_state_rate_hz": (100.0, "/joint_states rate in simulated time (joint_state_broadcaster at update_rate)."),
    "pose_rate_hz": (50.0, "Rate of the model and drawer poses (tf2_msgs/TFMessage) in simulated time."),
    "clock_rate_hz": (250.0, "/clock rate in simulated time."),
    "world_name": ("", "The root frame of the poses (Gazebo: the world's name); empty: the scene's name."),
    "perception.position_noise_m": (0.0, "Simulated perception: white noise (sigma, m, every axis) on reported "
                                         "positions; 0 = exact, as Gazebo's pose bridge."),
    "perception.yaw_noise_deg": (0.0, "Simulated perception: white noise (sigma, degrees) on reported yaws."),
    "perception.dropout": (0.0, "Simulated perception: probability an object is missing from one report."),
    "perception.latency_s": (0.0, "Simulated perception: a report shows the world this long ago (simulated s)."),
    "perception.hide_in_closed_drawers": (False, "Simulated perception: objects inside a closed drawer are not "
                                                 "reported (a camera cannot see them)."),
    "perception.seed": (0, "Simulated perception: the noise's random seed."),
    "tf": (True, "Publish the true model poses on /tf at pose_rate_hz for RViz: the world frame (world_name) at the "
                 "robot base frame (panda_link0; the simulator's world is the base frame), objects and cabinets in it, "
                 "drawers in their cabinet."),
    "tf_links": (False, "Also publish the robot's link frames on /tf from the physics, at joint_state_rate_hz (for "
                        "when no robot_state_publisher runs; the launch file sets it then)."),
    "truth_topic": ("", "Also publish the exact model poses here (TFMessage), and on <truth_topic>/held what the "
                        "fingers truly hold (String), e.g. for a benchmark that judges the true world while the "
                        "client perceives a noisy one; empty: not published."),
}


# when an armed fault happens, as ~/inject_fault's answer says it
FAULT_WHEN = {"reflex": " (the next arm goal stops with it, 0.2 s in)",
              "slip": " (the fingers let go while the arm carries it)",
              "miss_place": " (it lands 12 cm beside where the fingers release it)",
              "drawer_short": " (the drawer now stops 4 cm short of closed, until the next scene)"}


def truth_held_topic(truth_topic: str) -> str:
    """Where, beside its exact poses, the robot says what the fingers truly hold (std_msgs/String, empty: nothing):
    poses alone cannot tell an object held up from one lying where the hand is."""
    return f"{truth_topic.rstrip('/')}/held"


def resolve_scene(value: str) -> Path | None:
    path = Path(value)
    if path.is_file():
        return path
    candidate = config_dir() / "scenes" / (value if value.endswith(".yaml") else f"{value}.yaml")
    return candidate if candidate.is_file() and "/" not in value else None


def load_controllers(path: Path, arm_action: str, gripper_action: str, franka: bool = False,
                     urdf_velocity: dict[str, float] | None = None
                     ) -> tuple[TrajectoryParams, GripperParams | FrankaGripperParams]:
    """The trajectory and gripper controllers of a ros2_control YAML whose action names are those given
    (``/<name>/follow_joint_trajectory``, JTC.cpp:1054-1060; ``/<name>/gripper_cmd``, GAC:299-304). ``franka``:
    the gripper is franka_gripper's node, not a controller; its parameters are its launch file's. ``urdf_velocity``:
    the joints' velocity limits the robot_description would give JTC (decelerate_on_cancel needs them)."""
    data = parse_yaml(path.read_text()) or {}
    types = ((data.get("controller_manager") or {}).get("ros__parameters") or {})
    update_rate = float(types.get("update_rate", 100.0))
    arm = grip = None
    for name, entry in types.items():
        kind = entry.get("type") if isinstance(entry, dict) else None
        params = (data.get(name) or {}).get("ros__parameters") or {}
        if kind == JTC_TYPE and f"/{name}/follow_joint_trajectory" == arm_action:
            arm = TrajectoryParams.from_ros_parameters(params, update_rate, urdf_velocity)
        elif kind in GRIPPER_TYPES and f"/{name}/gripper_cmd" == gripper_action:
            grip = GripperParams.from_ros_parameters(params)
    if franka:
        grip = FrankaGripperParams()
    if arm is None or grip is None:
        missing = [what for what, got in ((arm_action, arm), (gripper_action, grip)) if got is None]
        raise ValueError(f"{path} has no controller serving {' and '.join(missing)}")
    return arm, grip


class MujocoRobotNode(Node):
    """The MuJoCo Panda behind ros2_control's standard actions.

    Parameters: see ``PARAMETERS`` (scene, seed, robot, boundary_file, controllers_file, realtime_factor,
    joint_state_rate_hz, pose_rate_hz, clock_rate_hz, world_name, perception.*: the poses as an imperfect
    tracker would report them); all read at start.

    Every name below is under the node's namespace when it has one (``-r __ns:=/arm1``: /arm1/joint_states ...;
    ~/ services under /arm1/mujoco_robot), but /tf.

    Actions (names from robot_boundary.yaml, checked against the controllers file):
        /panda_arm_controller/follow_joint_trajectory (control_msgs/FollowJointTrajectory)
        /panda_hand_controller/gripper_cmd (control_msgs/GripperCommand; no feedback, as upstream)
    Publishers:
        /joint_states (sensor_msgs/JointState), /clock (rosgraph_msgs/Clock),
        the boundary's object_poses topic (tf2_msgs/TFMessage): objects and cabinets as models in the world,
        drawers as links of their cabinet, as gz-sim's PosePublisher through ros_gz_bridge
        /tf (tf2_msgs/TFMessage; parameters tf, tf_links): the true model poses under the world frame, the world
        frame at panda_link0, and with tf_links the robot's links from the physics, for RViz
    Services:
        ~/load_scene (step_planner_interfaces/LoadScene): another scene, the arm at home (a repeated request_id
            is answered from the first load)
        ~/inject_fault (step_planner_interfaces/InjectFault): a physical fault at its next moment (tests, and
            `step-planner fault`); with robot:=fr3 also kind "reflex", target a franka_msgs/msg/Errors field name
            (default cartesian_reflex): the next arm goal stops with that reflex. A fault stays armed across
            ~/load_scene until it happens (unless the new scene lacks its object); the load's answer says which
    FR3 (robot_boundary.yaml franka_hardware): franka_ros2's controller manager after a reflex and its recovery
    (step_planner/ros/controller_manager_server.py): /controller_manager/{list_controllers, list_hardware_components,
    set_hardware_component_state, switch_controller} (controller_manager_msgs), /action_server/error_recovery
    (franka_msgs/ErrorRecovery), /franka_robot_state_broadcaster/robot_state (franka_msgs/FrankaRobotState, while
    that broadcaster is active); /joint_states then repeats the arm's last state while joint_state_broadcaster is
    inactive, as joint_state_publisher does
    """

    def __init__(self, node_name: str = "mujoco_robot", **kwargs: Any) -> None:
        super().__init__(node_name, **kwargs)
        for name, (default, text) in PARAMETERS.items():
            self.declare_parameter(name, default, ParameterDescriptor(description=text, read_only=True))
        p = {name: self.get_parameter(name).value for name in PARAMETERS}
        cfg = config_dir()
        unplaced = BoundaryConfig.load(p["boundary_file"] or cfg / "robot_boundary.yaml", p["robot"] or None)
        franka = unplaced.gripper.server == "franka_gripper"
        controllers = Path(p["controllers_file"] or cfg / f"ros2_controllers_{unplaced.robot}.yaml")
        arm, grip = load_controllers(controllers, unplaced.arm.action, unplaced.gripper.action, franka,
                                     dict(zip(unplaced.arm.joints, unplaced.arm.velocity_limits,
                                              strict=False)))  # none stated: none in the URDF
        # served under this node's namespace (-r __ns:=/arm1, or a launch's namespace), as franka_bringup's
        # namespace puts the arm's every node under it; the client finds them there (BoundaryConfig.under)
        self.boundary = unplaced.under(self.get_namespace())
        servo = ServoSpec.from_controllers(
            parse_mode(str(p["servo"])), arm.command_interfaces, arm.joints, arm.gains, arm.update_rate,
            Path(p["servo_gazebo_description"] or cfg / "gazebo" / "panda_gazebo.urdf.xacro"),
            float(p["servo_position_gain"]))
        world = self._world(p["scene"])
        cm = None
        if self.boundary.franka_hardware is not None:  # franka_ros2's controller manager: reflex and recovery
            from step_planner.ros.controller_manager_server import emulation_from_controllers

            cm = emulation_from_controllers(parse_yaml(controllers.read_text()) or {},
                                            unplaced.arm.action.strip("/").split("/")[0])
        self.robot = SimRobot(world, arm, grip, arm_joints=self.boundary.arm.joints, servo=servo,
                              finger_joints=self.boundary.gripper.joints, seed=int(p["seed"]),
                              realtime_factor=float(p["realtime_factor"]),
                              world_name=p["world_name"] or Path(str(p["scene"])).stem,
                              limit_reflex=(self.boundary.arm.lower, self.boundary.arm.upper)
                              if self.boundary.arm.limit_reflex else None, controller_manager=cm)
        self._last_arm: JointReading | None = None  # joint_state_publisher's copy of the arm's last joint state
        self._ends: dict[bytes, GoalEnd] = {}
        self._ends_lock = threading.Lock()
        self._stopping = threading.Event()
        self._running_goals = 0
        group = ReentrantCallbackGroup()
        self._joint_pub = self.create_publisher(JointState, self.boundary.joint_states, 10)
        # /clock in the root namespace; under a namespace this world's own, <ns>/clock: two MuJoCo worlds keep two
        # times, and a sim-time node of that robot remaps /clock:=<ns>/clock
        self._clock_pub = self.create_publisher(Clock, "clock", 10)
        self._pose_pub = self.create_publisher(TFMessage, self.boundary.object_poses, 10) \
            if self.boundary.object_poses else None
        self._truth_pub = self.create_publisher(TFMessage, p["truth_topic"], 10) if p["truth_topic"] else None
        self._tf_pub = self.create_publisher(TFMessage, "/tf", 100) if p["tf"] or p["tf_links"] else None
        self._truth_held_pub = self.create_publisher(String, truth_held_topic(p["truth_topic"]), 10) \
            if p["truth_topic"] else None
        self.perception = SimulatedPerception(PerceptionNoise(
            float(p["perception.position_noise_m"]), float(p["perception.yaw_noise_deg"]),
            float(p["perception.dropout"]), float(p["perception.latency_s"]),
            bool(p["perception.hide_in_closed_drawers"])), int(p["perception.seed"]))
        self._arm = ActionServer(self, FollowJointTrajectory, self.boundary.arm.action,
                                 execute_callback=self._execute_arm, goal_callback=self._arm_goal,
                                 handle_accepted_callback=self._arm_accepted, cancel_callback=self._arm_cancel,
                                 callback_group=group)
        self._franka = None
        if franka:  # franka_gripper's node: ~/homing, ~/move, ~/grasp, ~/gripper_action, ~/joint_states
            from step_planner.ros.franka_gripper_server import FrankaGripperServer, GripperHand

            g = self.boundary.gripper
            hand = GripperHand(self.robot.franka_goal, self.robot.cancel_gripper, self._end_of,
                               self.robot.franka_feedback, self.robot.franka_state_width)
            self._franka = FrankaGripperServer(self, hand, grip, g.node, (g.joints[0], g.joints[1]), group)
        else:
            self._grip = ActionServer(self, GripperCommand, self.boundary.gripper.action,
                                      execute_callback=self._execute_grip, goal_callback=lambda _: GoalResponse.ACCEPT,
                                      handle_accepted_callback=self._grip_accepted, cancel_callback=self._grip_cancel,
                                      callback_group=group)
        self._cm_server = None
        if cm is not None:
            from step_planner.ros.controller_manager_server import ROBOT_STATE_RATE_HZ, ControllerManagerServer

            self._cm_server = ControllerManagerServer(self, self.robot, self.boundary.franka_hardware,
                                                      arm.joints, arm.command_interfaces, arm.update_rate, group)
            self.robot.hooks.append(Sampler(1.0 / ROBOT_STATE_RATE_HZ, self._cm_server.publish_state))
        self._loads = RequestOnce()
        self.create_service(LoadScene, "~/load_scene", self._on_load_scene, callback_group=group)
        self.create_service(InjectFault, "~/inject_fault", self._on_inject_fault, callback_group=group)
        # one message per publisher, filled in place at each publish (messages.py: the constructors are the cost)
        self._joint_msg, self._clock_msg = m.JointStateWriter(), Clock()
        self._model_frames_msg, self._link_frames_msg = m.TransformsWriter(), m.TransformsWriter()
        self._truth_msg, self._poses_msg = m.TransformsWriter(), m.TransformsWriter()
        self.robot.hooks += [Sampler(1.0 / p["joint_state_rate_hz"], self._publish_joints),
                             Sampler(1.0 / p["clock_rate_hz"], self._publish_clock)]
        if self._pose_pub is not None:
            self.robot.hooks.append(Sampler(1.0 / p["pose_rate_hz"], self._publish_poses))
        if p["tf"]:
            self.robot.hooks.append(Sampler(1.0 / p["pose_rate_hz"], self._publish_model_frames))
        if p["tf_links"]:
            self.robot.hooks.append(Sampler(1.0 / p["joint_state_rate_hz"], self._publish_link_frames))
        self.robot.start()
        gripper = f"franka_gripper at {self.boundary.gripper.node}/{{grasp,move,homing,gripper_action}} (the " \
            "model keeps the Panda's geometry under the FR3's names)" if franka else self.boundary.gripper.action
        self.get_logger().info(
            f"MuJoCo robot ({self.boundary.robot}) in scene {p['scene']!r}: {self.boundary.arm.action}, "
            f"{gripper}, {self.boundary.joint_states}, "
            f"{self.boundary.object_poses or 'no poses'}, "
            f"real-time factor {p['realtime_factor']}, servo {servo.mode}"
            + (f" (position_proportional_gain {servo.position_gain}, {servo.update_rate:g} Hz)"
               if servo.mode == "gazebo" else ""))

    def _world(self, scene: str) -> WorldState:
        path = resolve_scene(scene)
        if path is None:
            raise ValueError(f"no scene {scene!r} (neither a file nor a name in {config_dir() / 'scenes'})")
        return load_scene(path)

    # ---- publishers (on the physics thread, at rates of simulated time) ---------------------------------------
    # A message nobody is subscribed to is neither built nor published (rclpy's publish converts it even then): DDS
    # delivers nothing to a subscriber before it matches, so a subscriber sees the same messages either way. What
    # a publisher keeps from call to call (the arm's last joint state, the perception's noise and latency) is kept
    # whether or not anyone listens.
    @staticmethod
    def _listened(publisher: Any) -> bool:
        return publisher is not None and publisher.get_subscription_count() > 0

    def _publish_joints(self) -> None:
        """/joint_states as joint_state_publisher merges the arm's (joint_state_broadcaster's) and the hand's
        (franka_bringup franka.launch.py@29cb85a:121-124): it keeps the last message of each source and republishes
        it with a fresh stamp at its rate (ros/joint_state_publisher@fb29caa joint_state_publisher.py:432-466,
        468-536). So while joint_state_broadcaster is inactive (after a reflex) the arm's last positions and
        velocities go on with new stamps."""
        reading = self.robot.joint_state()
        if self.robot.controller_active(JSB_TYPE):
            self._last_arm = reading
        elif self._last_arm is not None:
            n, old = len(self.boundary.arm.joints), self._last_arm
            reading = JointReading(reading.time, reading.names, old.position[:n] + reading.position[n:],
                                   old.velocity[:n] + reading.velocity[n:], old.effort[:n] + reading.effort[n:])
        if self._listened(self._joint_pub):
            self._joint_pub.publish(self._joint_msg(reading))

    def _publish_clock(self) -> None:
        if self._listened(self._clock_pub):
            m.set_stamp(self._clock_msg.clock, self.robot.time)
            self._clock_pub.publish(self._clock_msg)

    def _publish_model_frames(self) -> None:
        """/tf: the models under the world frame, the world frame at the robot base (RViz's fixed frame)."""
        if not self._listened(self._tf_pub):
            return
        at = self.robot.time
        frames = [ModelPose(BASE_FRAME, self.robot.world_name, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0)),
                  *self.robot.model_poses()]
        self._tf_pub.publish(self._model_frames_msg(frames, at))

    def _publish_link_frames(self) -> None:
        if not self._listened(self._tf_pub):
            return
        at = self.robot.time
        frames = [ModelPose(parent, child, t, q) for parent, child, t, q in link_transforms(self.robot)]
        self._tf_pub.publish(self._link_frames_msg(frames, at))

    def _publish_poses(self) -> None:
        poses, truth, held = (self._listened(p) for p in (self._pose_pub, self._truth_pub, self._truth_held_pub))
        exact = self.perception.noise.exact  # else the report is drawn every period, listened to or not
        if exact and not (poses or truth or held):
            return
        truth_poses, at = self.robot.model_poses(), self.robot.time
        if truth:
            self._truth_pub.publish(self._truth_msg(truth_poses, at))
        if held:
            self._truth_held_pub.publish(String(data=self.robot.held_object() or ""))
        report = truth_poses if exact else self.perception.report(at, truth_poses, self.robot.hidden_objects())
        if report is not None and poses:
            stamp = at - self.perception.noise.latency_s
            self._pose_pub.publish(self._poses_msg(report, max(0.0, stamp)))

    # ---- goal bookkeeping -----------------------------------------------------------------------------------
    def _end_of(self, key: bytes) -> GoalEnd | None:
        with self._ends_lock:
            for end in self.robot.take_ended():
                self._ends[end.goal_id] = end
            return self._ends.pop(key, None)

    def _wait_end(self, goal_handle, rate: float, feedback=None) -> GoalEnd:
        """Poll at the controller's action_monitor_rate, as realtime_tools delivers results (RSGH:197-225)."""
        key = bytes(goal_handle.goal_id.uuid)
        with self._ends_lock:
            self._running_goals += 1
        try:
            while True:
                end = self._end_of(key)
                if end is not None:
                    return end
                if feedback is not None:
                    feedback(goal_handle, key)
                if self._stopping.is_set() or not self.context.ok():  # the robot shuts down: the goal cannot end
                    return GoalEnd(key, "aborted", {"error_code": -1, "error_string": "the robot is shutting down"})
                time.sleep(1.0 / rate)
        finally:
            with self._ends_lock:
                self._running_goals -= 1

    def _finish(self, goal_handle, end: GoalEnd) -> None:
        if end.status == "succeeded":
            goal_handle.succeed()
        elif end.status == "canceled" and self._cancel_requested(goal_handle):
            goal_handle.canceled()
        else:  # aborted, or canceled without a cancel request (a preempted gripper goal)
            goal_handle.abort()

    @staticmethod
    def _cancel_requested(goal_handle, wait_s: float = 1.0) -> bool:
        """The cancel callback ends the goal at once; rclpy moves it to CANCELING just after."""
        deadline = time.monotonic() + wait_s
        while not goal_handle.is_cancel_requested and time.monotonic() < deadline:
            time.sleep(0.002)
        return goal_handle.is_cancel_requested

    # ---- FollowJointTrajectory -------------------------------------------------------------------------------
    def _arm_goal(self, request: FollowJointTrajectory.Goal) -> GoalResponse:
        """Reject what joint_trajectory_controller rejects (JTC.cpp:1406-1420); the reason only goes to the log."""
        problem = self.robot.arm_problem(m.trajectory_goal_from_msg(request))
        if problem:
            self.get_logger().error(problem)
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def _arm_accepted(self, goal_handle) -> None:
        """The new goal preempts the running one at once (JTC.cpp:1455-1469)."""
        problem = self.robot.trajectory_goal(bytes(goal_handle.goal_id.uuid),
                                             m.trajectory_goal_from_msg(goal_handle.request))
        if problem:  # the world moved on between the two callbacks (a stamp now in the past)
            self.get_logger().error(problem)
            with self._ends_lock:
                self._ends[bytes(goal_handle.goal_id.uuid)] = GoalEnd(
                    bytes(goal_handle.goal_id.uuid), "aborted", {"error_code": -1, "error_string": problem})
        goal_handle.execute()

    def _arm_cancel(self, goal_handle) -> CancelResponse:
        self.robot.cancel_trajectory(bytes(goal_handle.goal_id.uuid))  # JTC.cpp:1429-1452
        return CancelResponse.ACCEPT

    def _arm_feedback(self, goal_handle, key: bytes) -> None:
        fb = self.robot.trajectory_feedback()
        if fb is None or fb["goal_id"] != key:
            return
        goal_handle.publish_feedback(FollowJointTrajectory.Feedback(
            header=Header(stamp=m.stamp(self.robot.time)), joint_names=fb["joint_names"],
            desired=m.trajectory_point(fb["desired"], fb["desired_velocity"], fb["since_start"]),
            actual=m.trajectory_point(fb["actual"], fb["actual_velocity"], fb["since_start"]),
            error=m.trajectory_point(fb["error"], None, fb["since_start"])))

    def _execute_arm(self, goal_handle) -> FollowJointTrajectory.Result:
        end = self._wait_end(goal_handle, self.robot.arm_params.action_monitor_rate, self._arm_feedback)
        self._finish(goal_handle, end)
        return FollowJointTrajectory.Result(error_code=int(end.result.get("error_code", -1)),
                                            error_string=str(end.result.get("error_string", "")))

    # ---- GripperCommand --------------------------------------------------------------------------------------
    def _grip_accepted(self, goal_handle) -> None:
        command = goal_handle.request.command
        self.robot.gripper_goal(bytes(goal_handle.goal_id.uuid), command.position, command.max_effort)
        goal_handle.execute()

    def _grip_cancel(self, goal_handle) -> CancelResponse:
        self.robot.cancel_gripper(bytes(goal_handle.goal_id.uuid))  # GAC:122-153
        return CancelResponse.ACCEPT

    def _execute_grip(self, goal_handle) -> GripperCommand.Result:
        end = self._wait_end(goal_handle, self.robot.grip_params.action_monitor_rate)
        self._finish(goal_handle, end)
        r = end.result
        return GripperCommand.Result(position=float(r.get("position", 0.0)), effort=float(r.get("effort", 0.0)),
                                     stalled=bool(r.get("stalled", False)), reached_goal=bool(r.get("reached_goal",
                                                                                                    False)))

    # ---- scene ---------------------------------------------------------------------------------------------
    def _on_load_scene(self, request: LoadScene.Request, response: LoadScene.Response) -> LoadScene.Response:
        """A repeated ``request_id`` gets the first load's answer (step_planner/ros/request_once.py)."""
        answer = self._loads.run(request.request_id, lambda: self._load(request.scene, request.world_json,
                                                                        int(request.seed)))
        response.success, response.message = answer or (False, "the first request of this id is still loading")
        return response

    def _load(self, scene: str, world_json: str, seed: int) -> tuple[bool, str]:
        try:
            world = self._world(scene) if scene else WorldState.from_dict(json.loads(world_json))
            notes = self.robot.load(world, seed)
        except (ValueError, SceneError, TypeError, KeyError) as exc:
            return False, f"scene not loaded: {exc}"
        message = f"loaded {scene or 'the given world'} (seed {seed})" + "".join(f"; {n}" for n in notes)
        self.get_logger().info(message)
        return True, message

    def _on_inject_fault(self, request: InjectFault.Request, response: InjectFault.Response) -> InjectFault.Response:
        problem = self.robot.arm_fault(request.kind, request.target)
        response.success = problem is None
        response.message = problem or f"armed: {request.kind} {self.robot.faults.get(request.kind, request.target)}" \
            + FAULT_WHEN.get(request.kind, "")
        self.get_logger().warning(f"fault {response.message}")
        return response

    def stop_goals(self, reason: str, timeout_s: float) -> bool:
        """Abort the goals in flight (their clients get a result) and stop the physics (run_node's quiesce)."""
        self._stopping.set()
        if self._franka is not None:
            self._franka.stopping = True
        deadline = time.monotonic() + timeout_s
        while self._running_goals and time.monotonic() < deadline:
            time.sleep(0.01)
        self.robot.stop()
        return not self._running_goals

    def destroy_node(self) -> None:
        self.robot.stop()
        super().destroy_node()


def build_parser(prog: str = "mujoco_robot") -> argparse.ArgumentParser:
    lines = [f"  {name} = {default!r}: {text}" for name, (default, text) in PARAMETERS.items()]
    return argparse.ArgumentParser(
        prog=prog, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="The MuJoCo Panda as a ROS robot: FollowJointTrajectory and GripperCommand action servers with "
                    "ros2_controllers' semantics, /joint_states, /clock and model poses (see MujocoRobotNode).",
        epilog="ROS arguments: --ros-args [-p name:=value]\n\nparameters:\n" + "\n".join(lines))


def main_robot(argv: list[str] | None = None) -> int:
    """``step-planner mujoco-robot [--ros-args ...]`` and ``ros2 run step_planner mujoco_robot``; stops cleanly on
    SIGINT and SIGTERM (step_planner/ros/shutdown.py)."""
    from rclpy.utilities import remove_ros_args

    from step_planner.ros.shutdown import run_node

    args = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser("mujoco_robot" if argv is None else "step-planner mujoco-robot")
    parser.parse_args(remove_ros_args(["mujoco_robot", *args])[1:])
    return run_node(MujocoRobotNode, ["mujoco_robot", *args], num_threads=8, quiesce=MujocoRobotNode.stop_goals)


def main() -> None:
    sys.exit(main_robot())


if __name__ == "__main__":
    main()
