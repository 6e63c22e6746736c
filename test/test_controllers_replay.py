"""`step-planner replay EPISODE --controllers`: a recorded episode's joint states split into arm segments and gripper
events, sent through the robot's controllers (the MuJoCo robot in another process, real DDS, real control_msgs), and
the world the robot then perceives compared with the recording's final world."""

from __future__ import annotations

import glob
import io
from pathlib import Path

import numpy as np
import pytest

from step_planner.domain.scene import load_scene
from step_planner.episodes.segments import ArmSegment, GripperEvent, SegmentError, split
from step_planner.resources import config_path

ARM = tuple(f"panda_joint{i}" for i in range(1, 8))
FINGERS = ("panda_finger_joint1", "panda_finger_joint2")
RATE = 50.0


def _timeline(pieces) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Samples at 50 Hz: ('rest', n), ('arm', n, joint, to) or ('fingers', n, to, effort)."""
    q, f, e = np.zeros(7), 0.04, 0.0
    rows_q, rows_e = [], []
    for piece in pieces:
        if piece[0] == "rest":
            steps = [(q.copy(), f)] * piece[1]
        elif piece[0] == "arm":
            _, n, joint, to = piece
            start = q[joint]
            steps = []
            for k in range(1, n + 1):
                q[joint] = start + (to - start) * k / n
                steps.append((q.copy(), f))
        else:
            _, n, to, e = piece
            steps = [(q.copy(), f + (to - f) * k / n) for k in range(1, n + 1)]
            f = to
        for qq, ff in steps:
            rows_q.append([*qq, ff, ff])
            rows_e.append([0.0] * 7 + [e, e])
    pos = np.array(rows_q)
    vel = np.vstack([np.zeros((1, 9)), np.diff(pos, axis=0) * RATE])
    return pos, vel, np.array(rows_e)


def test_a_timeline_splits_into_arm_segments_and_gripper_events():
    pos, vel, eff = _timeline([("rest", 5), ("fingers", 10, 0.028, 0.0), ("rest", 10), ("arm", 50, 1, 0.5),
                               ("rest", 10), ("fingers", 10, 0.01, 15.0), ("rest", 10), ("arm", 25, 3, -0.3),
                               ("rest", 10), ("fingers", 10, 0.035, 0.0), ("rest", 5)])
    events = split(ARM + FINGERS, pos, vel, RATE, ARM, FINGERS, eff)
    kinds = [type(e).__name__ for e in events]
    assert kinds == ["GripperEvent", "ArmSegment", "GripperEvent", "ArmSegment", "GripperEvent"]
    free, grasp, release = (e for e in events if isinstance(e, GripperEvent))
    assert free.command == pytest.approx(0.028) and not free.grasp  # a free move to a smaller opening
    assert grasp.command == 0.0 and grasp.grasp and grasp.after == pytest.approx(0.01)  # pressing: a grasp
    assert release.command == pytest.approx(0.035)
    first, second = (e for e in events if isinstance(e, ArmSegment))
    assert first.duration == pytest.approx(1.0) and first.q[-1][1] == pytest.approx(0.5)
    assert np.all(np.diff(first.t) > 0) and first.t[0] > 0 and np.all(first.qd[-1] == 0)
    assert first.largest_move == pytest.approx(0.5) and second.q[-1][3] == pytest.approx(-0.3)
    # without efforts every closing motion counts as a grasp
    no_effort = split(ARM + FINGERS, pos, vel, RATE, ARM, FINGERS)
    assert [e.command for e in no_effort if isinstance(e, GripperEvent)][:2] == [0.0, 0.0]


def test_contact_jitter_is_not_an_event_and_missing_joints_are_named():
    pos, vel, eff = _timeline([("rest", 5), ("fingers", 5, 0.0395, 0.0), ("rest", 5)])
    assert split(ARM + FINGERS, pos, vel, RATE, ARM, FINGERS, eff) == []
    with pytest.raises(SegmentError, match="panda_finger_joint2"):
        split(ARM + FINGERS[:1], pos[:, :8], vel[:, :8], RATE, ARM, FINGERS)


def test_world_differences_name_each_object_and_drawer():
    from step_planner.episodes.controllers_replay import world_differences

    recorded = load_scene(config_path("scenes", "drawer_desk.yaml"))
    perceived = recorded.copy()
    perceived.objects["tape"].location = "tray"
    perceived.places["drawer"].is_open = True
    assert world_differences(recorded, perceived) == ["tape: recorded at table, perceived at tray",
                                                      "drawer: recorded closed, perceived open"]
    assert world_differences(recorded, recorded.copy()) == []


# ---- joint states a robot backend received (its own messages, its own clock) -----------------------------------
def test_received_messages_are_merged_and_put_on_a_uniform_grid():
    """franka_ros2 publishes the arm and the fingers apart, at their own rates, without velocities for the fingers:
    every row holds each joint's latest value, missing velocities are the slope, and the grid is uniform."""
    from step_planner.episodes.segments import resample

    messages = [(0.0, FINGERS, [0.04, 0.04], [], [])]  # the fingers first: no row until the arm is known too
    for k in range(201):  # the arm at 100 Hz: joint 2 from 0 to 1 rad in 2 s
        t = k / 100
        messages.append((t + 0.001, ARM, [0, t / 2, 0, 0, 0, 0, 0], [0, 0.5, 0, 0, 0, 0, 0], [0.0] * 7))
        if k % 4 == 0:  # the fingers at 25 Hz, closing 10 mm a second, no velocity reported
            messages.append((t + 0.002, FINGERS, [0.04 - t / 100] * 2, [], []))
    messages.append((2.001, ARM, [0, 1.0, 0, 0, 0, 0, 0], [0] * 7, [0.0] * 7))  # the same instant again: newest
    q, qd, effort = resample(messages, ARM + FINGERS, RATE)
    assert q.shape == (101, 9) and qd.shape == (101, 9) and effort is None  # the fingers reported no effort
    assert q[0, 1] == pytest.approx(0.0, abs=1e-3) and q[-1, 1] == pytest.approx(1.0)
    assert qd[50, 1] == pytest.approx(0.5)  # reported
    assert qd[50, 7] == pytest.approx(-0.01, abs=1e-3)  # the slope: the fingers reported no velocity
    assert q[50, 7] == pytest.approx(0.04 - 0.01, abs=5e-4)
    with pytest.raises(SegmentError, match="panda_finger_joint1, panda_finger_joint2"):
        resample([m for m in messages if m[1] == ARM], ARM + FINGERS, RATE)
    with pytest.raises(SegmentError, match="fewer than two"):
        resample(messages[:2], ARM + FINGERS, RATE)


class _Stamp:
    def __init__(self, ns: int) -> None:
        self.sec, self.nanosec = divmod(ns, 1_000_000_000)


class _Msg:
    """What rclpy hands a JointState subscription, as far as the recorder reads it."""

    def __init__(self, stamp_ns: int, names, position, velocity=(), effort=()) -> None:
        self.header = type("Header", (), {"stamp": _Stamp(stamp_ns), "frame_id": ""})()
        self.name, self.position, self.velocity, self.effort = list(names), list(position), list(velocity), \
            list(effort)


class _Executor:
    def __init__(self) -> None:
        from step_planner.execution.joint_state_tap import JointStateTap

        self.joint_state_tap = JointStateTap("/joint_states", "controllers backend")


def _recorded(tmp_path, stamps_ns, timeline):
    """An episode whose joint states reached the recorder through a backend's tap, with these header stamps."""
    from step_planner.episodes.episode import load_episode
    from step_planner.episodes.recorder import EpisodeRecorder
    from step_planner.planner.result import GoalError, GoalResult

    world = load_scene(config_path("scenes", "drawer_desk.yaml"))
    recorder = EpisodeRecorder(tmp_path, "g", instruction="x", scene="drawer_desk", backend="controllers",
                               world=world, world_source="perceived")
    executor = _Executor()
    detach = recorder.attach_executor(executor)
    pos, vel, eff = timeline
    for stamp, p, v, e in zip(stamps_ns, pos, vel, eff, strict=True):
        executor.joint_state_tap(_Msg(stamp, ARM + FINGERS, p, v, e))
    path = recorder.finish(GoalResult(True, GoalError.NONE, "done"))
    detach()
    executor.joint_state_tap(_Msg(1, ARM + FINGERS, pos[0], vel[0], eff[0]))  # after the end: not recorded
    return load_episode(path)


def test_a_robot_backends_joint_states_are_recorded_as_received_and_replayed_in_the_robots_time(tmp_path):
    from step_planner.episodes.controllers_replay import events_of

    timeline = _timeline([("rest", 5), ("arm", 50, 1, 0.5), ("rest", 10), ("fingers", 10, 0.01, 15.0), ("rest", 5)])
    # the robot's clock (sim time at 3x real time: the messages arrive three times as fast; their stamps say 50 Hz)
    stamps = [int(7e9 + k * 1e9 / RATE) for k in range(len(timeline[0]))]
    episode = _recorded(tmp_path, stamps, timeline)
    assert episode.joints_received and episode.joint_source["topic"] == "/joint_states"
    assert episode.goal["world_source"] == "perceived" and episode.goal["scene"] == "drawer_desk"
    assert len(episode.joint_states) == len(stamps)  # every message, none after the end
    assert [r.stamp_ns for r in episode.joint_states] == stamps  # the robot's stamps, unchanged
    assert all(r.received_ns > 1e18 for r in episode.joint_states)  # logged at their (wall-clock) arrival
    arm, grasp = events_of(episode)
    assert isinstance(arm, ArmSegment) and arm.duration == pytest.approx(1.0, abs=0.03)  # the robot's time
    assert arm.q[-1][1] == pytest.approx(0.5)
    assert isinstance(grasp, GripperEvent) and grasp.grasp


def test_a_joint_state_that_cannot_be_written_stops_the_recording_of_joints_and_says_why():
    """A full disk: the writer thread keeps nothing more (no queue growing at the robot's rate) and the reason is
    kept for the summary; the tap (the connection) never sees the error."""
    import time

    from step_planner.episodes.recorder import ReceivedJoints

    executor = _Executor()
    written = []

    def write(received_ns, msg):
        if written:
            raise OSError(28, "No space left on device")
        written.append(msg)

    joints = ReceivedJoints(executor.joint_state_tap, write, period_s=0.01)
    for k in range(3):
        executor.joint_state_tap(_Msg(k + 1, ARM, [0.0] * 7))
    deadline = time.monotonic() + 5.0
    while joints.error is None and time.monotonic() < deadline:
        time.sleep(0.01)
    executor.joint_state_tap(_Msg(9, ARM, [0.0] * 7))  # after the error: not kept
    joints.stop()
    assert len(written) == 1 and "No space left" in joints.error and not joints._queue
    assert executor.joint_state_tap._listeners == ()


def test_the_recorded_start_is_the_perceived_world_on_a_robot_backend_and_the_scene_elsewhere():
    from step_planner.episodes.recorder import world_at_start

    scene = load_scene(config_path("scenes", "drawer_desk.yaml"))
    seen = scene.copy()
    seen.objects["tape"].location = "tray"

    class Robot:
        def observe(self):
            return seen

    class Lost:
        def observe(self):
            raise RuntimeError("no joint state on /joint_states")

    assert world_at_start(Robot(), scene, perceives=True) == (seen, "perceived")  # plan --backend controllers
    assert world_at_start(Robot(), None, perceives=False) == (seen, "perceived")  # the node: no world given
    assert world_at_start(Robot(), scene, perceives=False) == (scene, "given")  # sim: the scene is the world
    assert world_at_start(Lost(), None, perceives=False) == (None, "none")  # the goal ends at its own first look


def test_an_fr3_recording_replays_on_the_panda_and_back():
    """The names of every robot in robot_boundary.yaml stand for the same model joints: a run recorded on the FR3
    (fr3_joint1...) gives the same events when replayed on the Panda (Gazebo's arm) as under its own names."""
    from step_planner.episodes.controllers_replay import any_robot_names, events_of
    from step_planner.episodes.episode import Episode, JointRecord
    from step_planner.execution.controllers.config import BoundaryConfig

    boundary = config_path("robot_boundary.yaml")
    panda, fr3 = (BoundaryConfig.load(boundary, r).model_names for r in ("panda", "fr3"))
    pos, vel, eff = _timeline([("rest", 5), ("arm", 50, 1, 0.5), ("rest", 10), ("fingers", 10, 0.01, 15.0),
                               ("rest", 5)])
    names = tuple(n for n in fr3)  # the FR3's controller names, in the model's order
    records = [JointRecord(int(1e9 + k * 2e7), names, tuple(p), tuple(v), tuple(e), int(1e18 + k))
               for k, (p, v, e) in enumerate(zip(pos, vel, eff, strict=True))]
    episode = Episode(Path("fr3_run"), {}, joint_states=records, joint_source={"received": True})
    on_panda = events_of(episode, any_robot_names(panda, boundary))
    assert [type(e).__name__ for e in on_panda] == ["ArmSegment", "GripperEvent"]
    assert on_panda[0].q[-1][1] == pytest.approx(0.5) and on_panda[1].grasp
    with pytest.raises(Exception, match="lack panda_joint1"):
        events_of(episode, panda)  # the Panda's names alone do not know the FR3's


def test_joint_states_without_stamps_are_timed_by_their_arrival(tmp_path):
    """A publisher that leaves header stamps empty (MoveIt's joint_state_publisher stand-in here): the arrival
    times, so the motion is still there (not 50 samples at one instant)."""
    from step_planner.episodes.controllers_replay import received_times

    timeline = _timeline([("rest", 3), ("arm", 5, 1, 0.1), ("rest", 3)])
    episode = _recorded(tmp_path, [0] * len(timeline[0]), timeline)
    times = received_times(episode)
    assert np.all(np.diff(times) >= 0) and times[0] > 1e9


# ---- against the MuJoCo robot in another process ----------------------------------------------------------------
@pytest.fixture(scope="module")
def episode(tmp_path_factory):
    """The drawer task planned and executed on the in-process MuJoCo backend (the shipped answers, recorded from
    the scripted expert: NOT an LLM) and recorded as an episode with its joint states."""
    from step_planner.cli import main
    from step_planner.episodes.episode import load_episode

    folder = tmp_path_factory.mktemp("episodes")
    assert main(["plan", "put the tape and the screwdriver in the drawer", "--scene", "drawer_desk", "--backend",
                 "sim", "--offline", "--record", str(folder)]) == 0
    (path,) = glob.glob(str(folder / "*"))
    return load_episode(path)


@pytest.fixture(scope="module")
def robot():
    from robot_support import RobotProcess

    with RobotProcess(scene="drawer_desk") as process:
        yield process


@pytest.mark.ros
@pytest.mark.sim
def test_a_recorded_episode_replayed_through_the_controllers_reaches_its_final_world(episode, robot):
    from step_planner.episodes.controllers_replay import events_of, replay_through_controllers

    lines: list[str] = []
    report = replay_through_controllers(episode, load_scene="/mujoco_robot/load_scene", out=lines.append)
    events = events_of(episode)
    assert report.reached, (report.stopped, report.differences, lines[-5:])
    assert len(report.segments) == len(events) and {s.status for s in report.segments} == {"succeeded"}
    arm = [s for s in report.segments if s.kind == "arm"]
    assert arm and all(s.tracking_error < 0.02 and s.end_error < 0.01 for s in arm)  # rad
    grips = [s for s in report.segments if s.kind == "gripper"]
    assert sum(s.command == 0.0 for s in grips) == 4  # the handle twice, the tape, the screwdriver
    assert lines[0].startswith("replaying") and "no LLM" in lines[0]


@pytest.mark.ros
@pytest.mark.sim
def test_an_episode_ending_with_the_object_in_the_hand_is_perceived_holding_it(tmp_path, robot):
    """The grasp goes through the backend's own gripper call, so the perceived world holds the object as the
    recording's did (a replay that sent the GripperCommand past the mirror perceived the tape on the table)."""
    from step_planner.bench.planners import run_planner
    from step_planner.bench.runner import in_process_expert
    from step_planner.bench.tasks import load_suite
    from step_planner.domain.primitives import PrimitiveLibrary
    from step_planner.episodes.controllers_replay import final_world, replay_through_controllers
    from step_planner.episodes.episode import load_episode
    from step_planner.episodes.recorder import EpisodeRecorder
    from step_planner.execution.sim.executor import SimExecutor
    from step_planner.planner.config import PlannerConfig

    library = PrimitiveLibrary.load(config_path("primitives.yaml"))
    config = PlannerConfig.from_yaml(config_path("bench.yaml"))
    (task,) = [t for t in load_suite("table3") if t.id == "ss09_hold_screwdriver"]
    llm, _ = in_process_expert(library)(task, 0.0, 0)
    executor = SimExecutor(library, task.fresh_world())
    recorder = EpisodeRecorder(tmp_path, task.id, instruction=task.instruction, scene=task.scene, backend="sim",
                               world=task.fresh_world())
    recorder.attach_executor(executor)
    result = run_planner("grounded", task.instruction, library=library, executor=executor, llm=llm, config=config,
                         on_step=recorder.on_step)
    episode = load_episode(recorder.finish(result))
    assert final_world(episode).held == "screwdriver"  # scripted expert (NOT an LLM), on the in-process MuJoCo
    report = replay_through_controllers(episode, load_scene="/mujoco_robot/load_scene", out=lambda _: None)
    assert report.reached, (report.stopped, report.differences)


@pytest.mark.ros
@pytest.mark.sim
def test_a_replay_that_stops_short_reports_where_the_world_differs(episode, robot):
    """Only the first events (the drawer opened, nothing moved into it): the perceived world is not the recorded
    final world, and the report names each difference."""
    from step_planner.domain.primitives import PrimitiveLibrary
    from step_planner.episodes.controllers_replay import ControllersReplay, events_of, final_world
    from step_planner.execution.factory import make_executor

    lib = PrimitiveLibrary.load(config_path("primitives.yaml"))
    ex = make_executor("controllers", lib, episode.initial_world, load_scene="/mujoco_robot/load_scene")
    try:
        report = ControllersReplay(ex, out=lambda _: None).run(events_of(episode)[:8], final_world(episode))
    finally:
        ex.close()
    assert report.compared and not report.reached
    assert "tape: recorded at drawer, perceived at table" in report.differences
    assert "screwdriver: recorded at drawer, perceived at table" in report.differences


@pytest.mark.ros
@pytest.mark.sim
def test_a_refused_segment_sends_nothing_and_the_cli_says_so(episode, robot, monkeypatch, capsys):
    from step_planner.cli import main
    from step_planner.execution.controllers import connection as conn

    sent = []
    real = conn.RobotConnection.run_trajectory
    monkeypatch.setattr(conn.RobotConnection, "run_trajectory", lambda self, *a, **k: sent.append(a) or real(self, *a,
                                                                                                             **k))
    monkeypatch.setattr("sys.stdin", io.StringIO("n\n"))
    code = main(["replay", str(episode.path), "--controllers", "--approve", "--scene-service",
                 "/mujoco_robot/load_scene"])
    out = capsys.readouterr().out
    assert code == 1 and sent == []
    assert "[1/" in out and "send? [y/N]" in out and "not approved" in out and "nothing after it was sent" in out


@pytest.mark.ros
@pytest.mark.sim
def test_replay_publish_refuses_where_a_robot_publishes_joint_states(episode, robot):
    from step_planner.ros.replay_publisher import publish_episode

    out = io.StringIO()
    assert publish_episode(episode, delay_s=5.0, linger_s=0.0, out=out) == -1  # discovery under load
    assert "other publisher(s) of /joint_states" in out.getvalue() and "--controllers" in out.getvalue()


def test_a_replay_faster_than_recorded_is_refused():
    from step_planner.episodes.controllers_replay import ControllersReplay, ReplayError, peak_velocity_scaling

    class Executor:
        connection = None

    with pytest.raises(ReplayError, match="never runs faster"):
        ControllersReplay(Executor(), speed=1.5)
    segment = ArmSegment(0, np.zeros(7), np.array([0.5, 1.0]), np.zeros((2, 7)), np.array([[1.0] + [0] * 6, [0] * 7]))
    assert peak_velocity_scaling([segment], 0.5) == pytest.approx(0.5 / 2.175)
