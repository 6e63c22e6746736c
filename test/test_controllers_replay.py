"""`step-planner replay EPISODE --controllers`: a recorded episode's joint states split into arm segments and gripper
events, sent through the robot's controllers (the MuJoCo robot in another process, real DDS, real control_msgs), and
the world the robot then perceives compared with the recording's final world."""

from __future__ import annotations

import glob
import io

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
