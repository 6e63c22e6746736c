"""``step-planner replay EPISODE --controllers``: a recorded episode's motion, sent through the robot's controllers.

No LLM and no planning: the recorded joint states (:mod:`step_planner.episodes.segments`) go out as
FollowJointTrajectory goals (the arm segments, in recorded timing, ``--speed`` slower if asked) and GripperCommand
goals (the gripper events) through the controllers backend's :class:`RobotConnection`, to whatever serves
config/robot_boundary.yaml's actions: Gazebo (gz_ros2_control), the real arm, or the MuJoCo robot
(``step-planner mujoco-robot``). Each segment's result and tracking error is reported (the controller's feedback
error, and where the arm came to rest against where the recording did); at the end the world the robot perceives
(its joint states and model poses, facts derived as the controllers backend derives them) is compared with the
recording's final world. With a ``load_scene`` service (the MuJoCo robot) the robot's world is first reset to the
episode's initial world; otherwise the robot must already stand in it (Gazebo launched on the episode's scene).

This is open loop: the recorded joints are replayed, not the task. Where contact goes differently (an object
settles a few millimetres elsewhere, a grasp closes on a slightly different width) the recorded motion does not
adapt, and the final world may differ: the report says where.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from step_planner.config_schema import parse_yaml
from step_planner.domain.world import WorldState
from step_planner.episodes.episode import Episode
from step_planner.episodes.segments import ArmSegment, GripperEvent, SegmentError, resample, split

DEFAULT_RATE_HZ = 50.0  # EpisodeRecorder's joint_rate_hz before it was written into the goal record
START_TOLERANCE = 0.01  # rad: further than this from the recording's start, the arm is first moved there
TO_START_SPEED = 0.3  # rad/s of the largest joint move, for that first motion
# the simulator's motion limits are half the Panda's (execution/sim/model.py VEL_LIMITS): the joints' full limits
PANDA_VELOCITY_LIMITS = np.array([2.175, 2.175, 2.175, 2.175, 2.61, 2.61, 2.61])


class ReplayError(RuntimeError):
    """The episode cannot be replayed here (no joint states, unsafe speed, no robot); nothing moved."""


@dataclass
class SegmentReport:
    index: int
    kind: str  # arm | gripper | to_start
    status: str  # succeeded | aborted | canceled | rejected | lost | timeout | refused
    message: str
    duration_s: float = 0.0
    tracking_error: float | None = None  # rad: largest |desired - actual| in the controller's feedback
    end_error: float | None = None  # rad: the arm at rest against the recording's (arm segments)
    opening: float | None = None  # m: the fingers at rest (gripper events)
    command: float | None = None  # m: the GripperCommand position sent


@dataclass
class ReplayReport:
    segments: list[SegmentReport] = field(default_factory=list)
    differences: list[str] = field(default_factory=list)  # recorded final world vs perceived
    compared: bool = False  # a recorded final world existed and the robot's was perceived
    stopped: str = ""  # why the replay stopped early ("" when every segment ran)

    @property
    def reached(self) -> bool:
        """Every segment ran and the perceived world is the recorded final world."""
        return self.compared and not self.stopped and not self.differences

    def to_dict(self) -> dict[str, Any]:
        return {"reached": self.reached, "compared": self.compared, "stopped": self.stopped,
                "differences": self.differences, "segments": [vars(s) for s in self.segments]}


def joint_rate(episode: Episode) -> float:
    return float(episode.goal.get("joint_rate_hz") or DEFAULT_RATE_HZ)


def received_times(episode: Episode) -> np.ndarray:
    """Seconds of each received joint state: the robot's header stamps (its clock: sim time in a simulator, so a
    replay keeps the robot's timing whatever its real-time factor), or the arrival times where a publisher left
    its stamps empty."""
    stamps = np.array([r.stamp_ns for r in episode.joint_states], dtype=np.int64)
    if len(stamps) and np.all(stamps > 0):
        return stamps / 1e9
    return np.array([r.received_ns for r in episode.joint_states], dtype=np.int64) / 1e9


def events_of(episode: Episode, names_to_model: dict[str, str] | None = None) -> list[ArmSegment | GripperEvent]:
    """The episode's arm segments and gripper events. Joint names may be the model's (panda_joint1, as the MuJoCo
    backend records them) or a robot's controller names (mapped by ``names_to_model``). Joint states a robot
    backend received (:attr:`Episode.joints_received`) are first put on a uniform grid of ``DEFAULT_RATE_HZ``."""
    from step_planner.execution.sim.model import ARM_JOINTS, FINGER_JOINTS

    if not episode.joint_states:
        raise ReplayError(f"{episode.path}: no joint states recorded (episodes of the sim backend since typed "
                          "episodes, and of the controllers and MoveIt backends since they record what their "
                          "connection receives, carry them): nothing to replay through the controllers")
    mapping = names_to_model or {}
    if episode.joints_received:
        times = received_times(episode)
        order = np.argsort(times, kind="stable")  # the arm's and the fingers' publishers may interleave
        received = [(times[i], [mapping.get(n, n) for n in episode.joint_states[i].names],
                     episode.joint_states[i].position, episode.joint_states[i].velocity,
                     episode.joint_states[i].effort) for i in order]
        joints = (*ARM_JOINTS, *FINGER_JOINTS)
        try:
            q, qd, effort = resample(received, joints, DEFAULT_RATE_HZ)
            return split(joints, q, qd, DEFAULT_RATE_HZ, ARM_JOINTS, FINGER_JOINTS, effort)
        except SegmentError as exc:
            raise ReplayError(f"{episode.path}: {exc}") from exc
    names = [mapping.get(n, n) for n in episode.joint_states[0].names]
    q = np.array([r.position for r in episode.joint_states])
    qd = np.array([r.velocity if len(r.velocity) == len(r.position) else [0.0] * len(r.position)
                   for r in episode.joint_states])
    efforts = [r.effort for r in episode.joint_states]
    effort = np.array(efforts) if all(len(e) == len(q[0]) for e in efforts) else None
    try:
        return split(names, q, qd, joint_rate(episode), ARM_JOINTS, FINGER_JOINTS, effort)
    except SegmentError as exc:
        raise ReplayError(f"{episode.path}: {exc}") from exc


def any_robot_names(target: dict[str, str], boundary: Path) -> dict[str, str]:
    """Controller joint name -> model joint name for every robot of ``boundary`` (config/robot_boundary.yaml),
    ``target``'s first: an episode recorded on one robot (the FR3's fr3_joint1) replays on another (the Panda in
    Gazebo), as every robot's names stand for the same model joints."""
    import yaml

    from step_planner.execution.controllers.config import BoundaryConfig, BoundaryConfigError

    names: dict[str, str] = {}
    try:
        data = parse_yaml(boundary.read_text())
        for robot in data.get("robots") or {}:
            names.update(BoundaryConfig.from_dict(data, robot, source=str(boundary)).model_names)
    except (OSError, AttributeError, yaml.YAMLError, BoundaryConfigError):
        pass  # the target robot's names alone
    return {**names, **target}


def scaled(segment: ArmSegment, speed: float) -> ArmSegment:
    """The same path ``speed`` times as fast (speed < 1: slower)."""
    return ArmSegment(segment.index, segment.start, segment.t / speed, segment.q, segment.qd * speed)


def peak_velocity_scaling(events: list[ArmSegment | GripperEvent], speed: float) -> float:
    """The recorded motion's largest joint speed as a fraction of the Panda's limits, at ``speed``."""
    arm = [e for e in events if isinstance(e, ArmSegment)]
    if not arm:
        return 0.0
    return float(max(np.max(np.abs(e.qd) / PANDA_VELOCITY_LIMITS) for e in arm) * speed)


def beyond_limits(events: list[ArmSegment | GripperEvent], config: Any) -> str | None:
    """Why a recorded arm segment leaves the robot's joint limits (config/robot_boundary.yaml), or None: a recording
    on one robot (the in-process Panda) may leave another's (the FR3's), and is then refused before anything moves.
    Recordings are measured positions, which settle a little past a limit the plan touched (the in-process Panda's
    joint 5 at 0.3 mrad past its stop): within the goal tolerance of a limit counts as at it."""
    slack = config.trajectory.goal_tolerance
    for k, event in enumerate(events):
        if isinstance(event, ArmSegment) and (outside := config.arm.outside_limits(event.q, slack)):
            _, j, value = outside[0]
            return (f"event {k}: {config.arm.joints[j]} reaches {value:.4f} rad, outside the {config.robot}'s limits "
                    f"[{config.arm.lower[j]}, {config.arm.upper[j]}] ({len(outside)} positions outside): not replayed")
    return None


def world_differences(recorded: WorldState, perceived: WorldState) -> list[str]:
    """Where the perceived world is not the recorded one: object locations, what is held, drawers open/closed."""
    out = []
    for name, obj in recorded.objects.items():
        seen = perceived.objects.get(name)
        where = seen.location if seen is not None else "not perceived"
        if where != obj.location:
            out.append(f"{name}: recorded at {obj.location}, perceived at {where}")
    for name, place in recorded.places.items():
        seen = perceived.places.get(name)
        if place.openable and seen is not None and seen.is_open != place.is_open:
            out.append(f"{name}: recorded {'open' if place.is_open else 'closed'}, perceived "
                       f"{'open' if seen.is_open else 'closed'}")
    if recorded.held != perceived.held:
        out.append(f"held: recorded {recorded.held}, perceived {perceived.held}")
    return out


def final_world(episode: Episode) -> WorldState | None:
    """The world after the episode's last primitive, as the recording's backend perceived it."""
    for step in reversed(episode.steps):
        if step.get("world_after"):
            return WorldState.from_dict(step["world_after"])
    return None


Approve = Callable[[int, int, str], bool]


def describe(event: ArmSegment | GripperEvent) -> str:
    if isinstance(event, ArmSegment):
        return f"arm segment, {event.duration:.2f} s, largest joint move {event.largest_move:.3f} rad"
    verb = "close to 0 (stalls on what is between the fingers)" if event.grasp else \
        f"move to {event.command * 1000:.1f} mm per finger"
    return f"gripper: {verb}"


class ControllersReplay:
    """Replays an episode's events through ``executor`` (a ControllersExecutor: its connection sends the goals, its
    mirror perceives the world at the end)."""

    def __init__(self, executor: Any, *, speed: float = 1.0, approve: Approve | None = None,
                 out: Callable[[str], None] = print) -> None:
        if not 0 < speed <= 1.0:
            raise ReplayError(f"--speed must be in (0, 1], got {speed}: a replay never runs faster than recorded")
        self.executor = executor
        self.connection = executor.connection
        self.speed, self.approve, self.out = speed, approve, out

    def _arm_now(self) -> np.ndarray:
        from step_planner.execution.sim.model import ARM_JOINTS

        joints = self.connection.joints()
        if joints is None:
            raise ReplayError("no joint states from the robot")
        return np.array([joints.position[j] for j in ARM_JOINTS])

    def _to_start(self, start: np.ndarray) -> ArmSegment | None:
        now = self._arm_now()
        move = float(np.max(np.abs(start - now)))
        if move <= START_TOLERANCE:
            return None
        duration = max(2.0, move / TO_START_SPEED)
        t = np.linspace(0.0, duration, max(2, int(duration / 0.02)) + 1)[1:]
        s = 10 * (t / duration) ** 3 - 15 * (t / duration) ** 4 + 6 * (t / duration) ** 5  # rest to rest
        ds = (30 * (t / duration) ** 2 - 60 * (t / duration) ** 3 + 30 * (t / duration) ** 4) / duration
        return ArmSegment(-1, now, t, now + np.outer(s, start - now), np.outer(ds, start - now))

    def run(self, events: list[ArmSegment | GripperEvent], recorded_final: WorldState | None,
            cancel: threading.Event | None = None) -> ReplayReport:
        from step_planner.execution.controllers.trajectory import Waypoints

        report = ReplayReport()
        first_arm = next((e for e in events if isinstance(e, ArmSegment)), None)
        plan: list[tuple[str, ArmSegment | GripperEvent]] = []
        if first_arm is not None and (to_start := self._to_start(first_arm.start)) is not None:
            plan.append(("to_start", to_start))
        plan += [("arm" if isinstance(e, ArmSegment) else "gripper", e) for e in events]
        for k, (kind, event) in enumerate(plan):
            text = describe(event) if kind != "to_start" else "to the recording's start pose, " \
                f"{event.duration:.2f} s, largest joint move {event.largest_move:.3f} rad"
            if self.approve is not None and not self.approve(k, len(plan), text):
                report.segments.append(SegmentReport(k, kind, "refused", f"not approved: {text}"))
                report.stopped = f"segment {k} not approved: nothing after it was sent"
                break
            if isinstance(event, ArmSegment):
                seg = scaled(event, self.speed) if kind == "arm" else event
                outcome = self.connection.run_trajectory(Waypoints(seg.t, seg.q, seg.qd), cancel)
                self.connection.wait_fresh(time.monotonic(), 1.0)
                end_error = float(np.max(np.abs(self._arm_now() - seg.q[-1])))
                row = SegmentReport(k, kind, outcome.status, outcome.message, seg.duration, outcome.max_error,
                                    end_error)
            else:
                row = self._gripper(k, event, cancel)
            report.segments.append(row)
            self.out(self._line(row, len(plan), text))
            # a gripper that stalls on an object ends ABORTED unless allow_stalling (GAC:176-201): not a failure
            if row.status not in ("succeeded", "aborted") or (row.status == "aborted" and kind != "gripper"):
                report.stopped = f"segment {k} ({kind}) ended {row.status}: {row.message}"
                break
        if recorded_final is not None and not report.stopped:
            report.differences = world_differences(recorded_final, self.executor.observe())
            report.compared = True
        return report

    def _gripper(self, k: int, event: GripperEvent, cancel: threading.Event | None) -> SegmentReport:
        """Through the controllers backend's own gripper call, so the mirror judges what the fingers hold as it
        does for the backend's primitives (closed, moved, came to rest apart: port.RemoteController.gripper)."""
        from step_planner.execution.sim.control import MotionInterrupted

        controller = self.executor.controller
        controller.last_outcome = None
        try:
            controller.gripper(event.command, cancel)
            status, message = controller.last_outcome.status, controller.last_outcome.message
        except MotionInterrupted as exc:
            sent = controller.last_outcome
            status = sent.status if sent is not None and sent.status not in ("succeeded", "aborted") else "failed"
            message = str(exc)
        opening = controller.last_outcome.details.get("opening") if controller.last_outcome is not None else None
        return SegmentReport(k, "gripper", status, message, opening=opening, command=event.command)

    @staticmethod
    def _line(row: SegmentReport, n: int, text: str) -> str:
        extra = ""
        if row.tracking_error is not None:
            extra = f", tracking error {row.tracking_error * 1000:.1f} mrad, at rest {row.end_error * 1000:.1f} mrad " \
                    "from the recording"
        elif row.opening is not None:
            extra = f", fingers at rest at {row.opening * 1000:.1f} mm"
        return f"[{row.index + 1}/{n}] {text}: {row.status}{extra}"


def replay_through_controllers(episode: Episode, *, robot: str | None = None, load_scene: str = "", seed: int = 0,
                               speed: float | None = None, approve: Approve | None = None, connection: Any = None,
                               cancel: threading.Event | None = None,
                               out: Callable[[str], None] = print) -> ReplayReport:
    """Connect (or use ``connection``), put the robot into the episode's initial world when ``load_scene`` names a
    simulator's service, replay, and compare the final world. ReplayError before anything moved.

    ``speed`` None: the recorded speed, or just slower where the recorded (measured) joint velocities exceed
    config/safety.yaml's velocity scaling (the simulator tracks its limit with a little overshoot); a given
    ``speed`` whose motion exceeds the envelope is refused."""
    from step_planner.domain.primitives import PrimitiveLibrary
    from step_planner.domain.safety import SafetyEnvelope
    from step_planner.execution.controllers.backend import make_controllers_executor
    from step_planner.execution.errors import BackendUnavailable
    from step_planner.resources import config_path

    world = episode.initial_world
    if world is None:
        raise ReplayError(f"{episode.path}: the episode has no initial world")
    config = connection.config if connection is not None else None
    if config is None:
        from step_planner.execution.controllers.config import BoundaryConfig

        config = BoundaryConfig.load(config_path("robot_boundary.yaml"), robot)
    events = events_of(episode, any_robot_names(config.model_names, config_path("robot_boundary.yaml")))
    envelope = SafetyEnvelope.load(config_path("safety.yaml"))
    if speed is None:
        fastest = peak_velocity_scaling(events, 1.0)
        speed = min(1.0, envelope.max_velocity_scaling / fastest) if fastest > 0 else 1.0
    peak = peak_velocity_scaling(events, speed)
    if peak > envelope.max_velocity_scaling + 1e-9:
        raise ReplayError(f"the recorded motion reaches {peak:.2f} of the joints' velocity limits at --speed {speed}; "
                          f"config/safety.yaml allows {envelope.max_velocity_scaling}: replay with --speed "
                          f"{speed * envelope.max_velocity_scaling / peak:.2f} or less")
    if why := beyond_limits(events, config):
        raise ReplayError(why)
    library = PrimitiveLibrary.load(config_path("primitives.yaml"))
    try:
        executor = make_controllers_executor(library, world, robot=robot, connection=connection,
                                             load_scene=load_scene, seed=seed)
    except BackendUnavailable as exc:
        raise ReplayError(str(exc)) from exc
    try:
        arms = sum(isinstance(e, ArmSegment) for e in events)
        out(f"replaying {episode.path.name}: {arms} arm segments and {len(events) - arms} gripper events "
            f"({sum(e.duration for e in events if isinstance(e, ArmSegment)) / speed:.1f} s of arm motion at "
            f"{speed:.3g} of the recorded speed) through {config.arm.action} and {config.gripper.action}; no LLM, "
            "no planning")
        return ControllersReplay(executor, speed=speed, approve=approve, out=out).run(events, final_world(episode),
                                                                                     cancel)
    finally:
        executor.close()
