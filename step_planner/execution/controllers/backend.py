"""The ``controllers`` backend: the project's own motion stack, executed through ros2_control's standard actions.

Every primitive is planned exactly as on the MuJoCo backend (IK, OMPL RRTConnect, TOPP-RA, dense collision
checks, the same primitive scripts and failure codes) over a mirror of the robot's world, and executed through
joint_trajectory_controller and the gripper's action server. The same executor drives Gazebo (gz_ros2_control),
the real arm's controllers and the MuJoCo robot process (``step-planner mujoco-robot``). The world it reports
is what the robot perceives (joint states, model poses), derived by the same rules as the MuJoCo backend.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from pathlib import Path

import numpy as np

from step_planner.domain import perceived_facts as facts
from step_planner.domain.primitives import PrimitiveCall, PrimitiveLibrary
from step_planner.domain.world import WorldState
from step_planner.execution.base import ExecCode, Outcome
from step_planner.execution.controllers.config import BoundaryConfig
from step_planner.execution.controllers.connection import SERVICE_RESEND_S, RobotConnection, RobotUnavailable
from step_planner.execution.controllers.port import RemoteController
from step_planner.execution.reflex import RECOVER_HINT, RobotStopped
from step_planner.execution.sim import perception as perc
from step_planner.execution.sim.executor import MotionStackExecutor
from step_planner.execution.sim.ik import IkSolver
from step_planner.execution.sim.model import narrow_arm_limits
from step_planner.execution.sim.motion import Arm
from step_planner.execution.sim.planning import CollisionChecker
from step_planner.execution.sim.primitives import SimPrimitives
from step_planner.execution.sim.scene_builder import scene_at_home

MIN_HOMED_WIDTH = 0.07  # m: a hand reporting less after homing is taken as not open there (the hand opens ~80 mm)
FAKE_GRIPPER = ("franka_ros2's fake gripper (franka_gripper/scripts/fake_gripper_state_publisher.py@29cb85a:29-44: "
                "fixed 0.035 m per finger, no action; what gripper.launch.py:52-60 starts with use_fake_hardware)")


def fake_hardware_hand(connection: RobotConnection, wait_s: float) -> str:
    """use_fake_hardware: what the backend does about homing and the width check, said once at start. A hand that
    serves ``~/homing`` (this package's mock franka_gripper, which fr3_controllers.launch.py starts on fake hardware)
    is homed as on the arm and its width checked; a hand that serves no action (franka_ros2's own fake gripper) can
    be neither homed nor moved: RobotUnavailable, naming the width it reports and what to start instead."""
    g = connection.config.gripper
    homing = f"{g.node}/homing"
    client = connection.franka.get(homing)
    deadline = time.monotonic() + wait_s
    while client is not None and not client.server_is_ready() and time.monotonic() < deadline:
        time.sleep(0.05)
    if client is not None and client.server_is_ready():
        return (f"use_fake_hardware: {homing} is served (a mock hand, e.g. this package's franka_gripper): homing it "
                f"once now, as on the arm; a width under {MIN_HOMED_WIDTH * 1000:.0f} mm after homing stops the "
                "backend, as on the arm")
    joints = connection.joints()
    fingers = [joints.position.get(f) for f in ("panda_finger_joint1", "panda_finger_joint2")] if joints else [None]
    width = "no finger joint states" if None in fingers else f"{sum(fingers) * 1000:.1f} mm from its joint states"
    raise RobotUnavailable(
        f"use_fake_hardware: {homing} is not served (the hand reports {width}): this looks like {FAKE_GRIPPER}. "
        f"Homing is skipped, and the {MIN_HOMED_WIDTH * 1000:.0f} mm width check is not reached (a fixed 70 mm would "
        "pass it), but the hand can be neither homed nor opened nor closed, so no primitive could run: start this "
        "package's mock hand instead (ros2 run step_planner franka_gripper; fr3_controllers.launch.py "
        "use_fake_hardware:=true does)")
MUJOCO_SPEED = 0.5  # the motion stack's limits are half the Panda's: velocity_scaling 0.5 is speed_scale 1


def yaw_deg(quat_wxyz: np.ndarray) -> float:
    w, x, y, z = quat_wxyz
    return float(np.degrees(np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))))


class RobotLost(RuntimeError):
    """The robot stopped answering (its joint states stopped); the message says since when and what."""


class ControllersExecutor(MotionStackExecutor):
    """``Executor`` through FollowJointTrajectory and GripperCommand (see module doc).

    ``connection`` may be shared by several executors (one DDS participant for a whole benchmark); without
    one, the executor opens its own and closes it in :meth:`close`. ``load_scene``: the name of a simulator's
    LoadScene service; then :meth:`reset` puts the robot into the given world first (the MuJoCo robot, in
    benchmarks). Without it, the world given is the scene model of the robot's own world (poses come from
    perception), as on a real arm.
    """

    def __init__(self, library: PrimitiveLibrary, world: WorldState, config: BoundaryConfig, *,
                 connection: RobotConnection | None = None, load_scene: str = "", seed: int = 0,
                 fake_hardware: bool = False, node_name: str = "step_planner_controllers",
                 namespace: str = "/") -> None:
        self.library = library
        self.config = config
        self.load_scene = load_scene
        self.seed = seed
        self._own_connection = connection is None
        self.connection = connection or RobotConnection(config, node_name=node_name, namespace=namespace)
        self.ik = IkSolver(seed)
        # IK, RRTConnect's bounds and the mirror plan within the robot's limits (inside the model's own ranges)
        self.limits = config.planning_limits(self.ik.index.lower, self.ik.index.upper)
        self.ik.restrict(*self.limits)
        self._executing = threading.Lock()
        self.start_note = ""  # what the backend said at start (fake hardware: homing and the width check)
        self.franka = self._franka_link() if config.franka_hardware is not None else None
        try:
            if fake_hardware and config.gripper.server == "franka_gripper":
                self.start_note = fake_hardware_hand(self.connection, config.timeouts.server_wait_s)
                self.connection.node.get_logger().info(self.start_note)
            if config.gripper.homing and self.connection.hand_max_width is None:
                self._home_gripper()
            self.reset(world)
        except BaseException:
            self.close()
            raise

    def _franka_link(self):
        """The FR3's controller manager and error recovery (execution/franka_link.py), one per connection."""
        from step_planner.execution.franka_link import FrankaLink

        connection = self.connection
        link = getattr(connection, "franka_link", None)
        if link is None:
            link = FrankaLink(connection.node, connection._executor,
                              # every request it makes may be asked twice (see FrankaLink): an answer lost to a
                              # new client's discovery race is asked for again (call_service)
                              lambda kind, name, request, timeout: connection.call_service(
                                  kind, name, request, timeout, resend_s=SERVICE_RESEND_S),
                              self.config.franka_hardware, self.config.joint_states, self.config.arm.joints)
            connection.franka_link = link
        return link

    def robot_stop(self, refresh: bool = False) -> str | None:
        """Why the robot is stopped (a reflex: its hardware component or controllers not active), or None. The answer
        is the one found when a motion failed or at the last ``refresh`` (which asks the controller manager now)."""
        if self.franka is None:
            return None
        arm = self.config.arm
        return self.franka.stop_reason(self.config.robot, refresh, (arm.joints, arm.lower, arm.upper)
                                       if arm.lower else None, RobotUnavailable)

    def _stopped_after_motion(self) -> str | None:
        """Asked by the remote controller when a goal of the arm did not succeed."""
        return self.robot_stop(refresh=True)

    def recover(self):
        """Upstream's three recovery steps (franka_link.FrankaLink.recover); the mirror is brought up to date after."""
        from step_planner.execution.reflex import RecoveryReport

        if self.franka is None:
            return RecoveryReport(False, problem=f"the {self.config.robot} entry of robot_boundary.yaml has no "
                                                 "franka_hardware: nothing to recover through")
        with self._executing:
            try:
                report = self.franka.recover()
            except RobotUnavailable as exc:
                return RecoveryReport(False, problem=str(exc))
            if report.ok:
                self.controller.lost = None
                self.controller.sync(fresh=True)
            return report

    def _home_gripper(self) -> None:
        """Home franka_gripper once per connection, as the MoveIt backend does at start-up: the width it then reports
        bounds every opening (RobotConnection.open_limit)."""
        self.connection.wait_ready()
        outcome = self.connection.home_gripper()
        if outcome.status != "succeeded":
            raise RobotUnavailable(f"franka_gripper homing failed at start-up: {outcome.message}")
        width = self.connection.hand_max_width or 0.0
        if width < MIN_HOMED_WIDTH:  # the assumption that homing ends open at the measured maximum did not hold
            raise RobotUnavailable(f"franka_gripper reported {width * 1000:.1f} mm after homing, taken as the hand's "
                                   f"maximum opening; below {MIN_HOMED_WIDTH * 1000:.0f} mm it cannot open for the "
                                   "primitives (is the hand open after homing? robot_boundary.yaml gripper.homing)")

    def reset(self, world: WorldState) -> None:
        if self.load_scene:
            self._load_robot_world(world)
            self.connection.forget_poses()
            time.sleep(0.1)  # reports sent before the reset may still be on their way
            self.connection.forget_poses()
        self.template = world.copy()
        self.model, self.info, self.data, self.index = scene_at_home(world)
        narrow_arm_limits(self.model, *self.limits)
        self.index.lower, self.index.upper = self.limits[0].copy(), self.limits[1].copy()
        self.connection.wait_ready()
        self.controller = RemoteController(self.connection, self.model, self.data, self.index, self.info)
        if self.franka is not None:
            self.controller.robot_stopped = self._stopped_after_motion
            self.robot_stop(refresh=True)
        self.controller.sync(fresh=True)
        self._openings = perc.drawer_openings(self.data, self.info)
        self.checker = CollisionChecker(self.model, self.index)
        self.arm = Arm(self.controller, self.ik, self.checker, seed=self.seed,
                       speed_scale=self.config.velocity_scaling / MUJOCO_SPEED, velocity_cap=self.config.velocity_cap)
        self.primitives = SimPrimitives(self.model, self.data, self.info, self.arm)

    def _load_robot_world(self, world: WorldState) -> None:
        from step_planner_interfaces.srv import LoadScene

        request = LoadScene.Request(world_json=json.dumps(world.to_dict()), seed=self.seed,
                                    request_id=uuid.uuid4().hex)  # asked again under this id if the answer is lost
        response = self.connection.call_service(LoadScene, self.load_scene, request, resend_s=SERVICE_RESEND_S)
        if not response.success:
            raise RobotUnavailable(f"{self.load_scene}: {response.message}")

    def execute(self, call: PrimitiveCall, cancel: threading.Event | None = None) -> Outcome:
        if self.franka is not None and self.franka.stop is not None and (why := self.robot_stop(refresh=True)):
            return Outcome(ExecCode.BACKEND_ERROR, f"not run: {why}; {RECOVER_HINT}")
        with self._executing:
            self.controller.sync(fresh=True)
            return super().execute(call, cancel)

    def observe(self) -> WorldState:
        """The world the robot perceives now, by the one fact deriver (``domain/perceived_facts.py``): objects
        from their perceived poses (one older than ``pose_max_age_s`` is unknown), drawers from their links'
        poses, the held object from what the fingers feel. Raises RobotLost when the robot stopped answering:
        a world that cannot be seen is not reported (the planner ends the goal, naming the lost server)."""
        why = self.connection.lost() or self.controller.still_lost()
        if why is not None:
            raise RobotLost(f"{why} (arm: {self.config.arm.action}, gripper: {self.config.gripper.action})")
        if (stopped := self.robot_stop()) is not None:
            raise RobotStopped(f"{stopped}; {RECOVER_HINT}")
        if self._executing.acquire(blocking=False):  # between primitives: bring the mirror up to date
            try:
                self.controller.sync(fresh=True)
            finally:
                self._executing.release()
        with self.controller.lock:
            return facts.perceived_world(self.template, self.info.volumes, self.perceive(),
                                         robot_at=self.primitives.robot_at)

    def perceive(self) -> facts.Perception:
        """What the robot's perception says now: poses with their ages, drawer openings (a drawer not seen
        lately keeps its last opening), and the object between the fingers."""
        now = time.monotonic()
        poses = self.connection.poses()
        objects = {name: facts.ObjectPose(tuple(map(float, p.position)), yaw_deg(p.quat), now - p.received)
                   for name, p in poses.items() if name in self.info.objects}
        for volume in self.info.volumes.drawers:
            pose = poses.get(volume.name)
            if pose is not None and now - pose.received <= self.config.pose_max_age_s:
                rest = np.asarray(volume.closed_origin)
                self._openings[volume.name] = float((pose.position - rest) @ np.asarray(volume.axis))
        held = next((n for n in self.info.objects if self.controller.holds(self.info, n)), None)
        return facts.Perception(objects, dict(self._openings), held, self.config.pose_max_age_s)

    @property
    def joint_state_tap(self):
        """The robot's joint states as the connection receives them (an episode records them)."""
        return self.connection.joint_tap

    def close(self) -> None:
        if self._own_connection and getattr(self, "connection", None) is not None:
            self.connection.close()


def make_controllers_executor(library: PrimitiveLibrary, world: WorldState, *, robot: str | None = None,
                              config_path: str | Path | None = None, safety_path: str | Path | None = None,
                              connection: RobotConnection | None = None, load_scene: str = "",
                              seed: int = 0, fake_hardware: bool = False,
                              node_name: str = "step_planner_controllers", namespace: str = "/",
                              robot_namespace: str | None = None) -> ControllersExecutor:
    """Load and check ``config/robot_boundary.yaml`` against ``config/safety.yaml``, then connect to the robot:
    the robot under ``robot_namespace`` (None: ``namespace``, the step_planner node's; BoundaryConfig.under),
    through a node ``node_name`` in ``namespace``. Every refusal is a ``BackendUnavailable`` naming what to fix;
    nothing moves."""
    from step_planner.domain.safety import SafetyConfigError, SafetyEnvelope
    from step_planner.execution.controllers.config import BoundaryConfigError
    from step_planner.execution.errors import BackendUnavailable
    from step_planner.resources import config_path as config_file

    try:
        config = connection.config if connection is not None else \
            BoundaryConfig.load(config_path or config_file("robot_boundary.yaml"), robot).under(
            namespace if robot_namespace is None else robot_namespace)
        envelope = SafetyEnvelope.load(safety_path or config_file("safety.yaml"))
    except (BoundaryConfigError, SafetyConfigError) as exc:
        raise BackendUnavailable(str(exc)) from exc
    if limits := envelope.check_motion_limits(config.velocity_scaling, config.velocity_scaling,
                                              config.gripper.max_effort):
        raise BackendUnavailable(f"robot_boundary.yaml exceeds config/safety.yaml: {'; '.join(limits)}")
    if not config.object_poses:
        raise BackendUnavailable("the controllers backend needs the world's model poses (robot_boundary.yaml "
                                 "object_poses): without them it cannot see what it picked or placed")
    try:
        return ControllersExecutor(library, world, config, connection=connection, load_scene=load_scene, seed=seed,
                                   fake_hardware=fake_hardware, node_name=node_name, namespace=namespace)
    except RobotUnavailable as exc:
        raise BackendUnavailable(str(exc)) from exc
