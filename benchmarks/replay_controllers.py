"""Recorded Table III episodes replayed through the controllers against the MuJoCo robot in another process.

    python benchmarks/replay_controllers.py --suite table3 --profile grounded --planner-config config/bench.yaml

1. Record: every task of the suite runs on the in-process MuJoCo backend, answered by the scripted expert (NOT an
   LLM, mistake rate 0), recorded as an episode (joint states at 50 Hz of simulated time, every primitive with the
   world after it) as ``step-planner plan --backend sim`` records one.
2. Replay: each recorded episode goes through ``step-planner replay --controllers``'s code (no LLM, no planning):
   the MuJoCo robot (``step-planner mujoco-robot``, real-time factor ``--realtime-factor``) is put into the
   episode's initial world, each arm segment is a FollowJointTrajectory goal and each gripper event a GripperCommand
   goal over real DDS, and the world the robot then perceives (its joint states and model poses) is compared with
   the recording's final world.

Prints each episode (segments, largest tracking errors, reached or why not), the share that reached the recorded
final world (target >= 90 %), and the tracking errors over all arm segments: the controller's feedback error during
the motion and where the arm came to rest against the recording. Writes ``--out``/summary.md and results.json.
The replay is open loop: where contact goes differently the motion does not adapt; such episodes are listed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="table3")
    parser.add_argument("--tasks", default="", help="comma-separated task ids or categories (default: all)")
    parser.add_argument("--profile", default="grounded", help="planner profile of the recorded runs")
    parser.add_argument("--planner-config", default="config/bench.yaml")
    parser.add_argument("--seed", type=int, default=0, help="the expert's seed (answers); scenes are exact (seed 0)")
    parser.add_argument("--realtime-factor", type=float, default=1.0, help="the MuJoCo robot's pace")
    parser.add_argument("--out", default="results/replay_controllers")
    return parser


def record(tasks, library, config, profile: str, seed: int, folder: Path) -> dict[str, tuple[Path, bool]]:
    """Each task run on the in-process MuJoCo backend and recorded: task id -> (episode folder, goal reached)."""
    from step_planner.bench.goals import satisfied
    from step_planner.bench.planners import run_planner
    from step_planner.bench.runner import in_process_expert
    from step_planner.episodes.recorder import EpisodeRecorder
    from step_planner.execution.sim.executor import SimExecutor

    make_llm = in_process_expert(library)
    out = {}
    for task in tasks:
        llm, _ = make_llm(task, 0.0, seed)
        executor = SimExecutor(library, task.fresh_world())
        recorder = EpisodeRecorder(folder, task.id, instruction=task.instruction, scene=task.scene, backend="sim",
                                   config=config.to_dict(), world=task.fresh_world())
        detach = recorder.attach_executor(executor)
        try:
            result = run_planner(profile, task.instruction, library=library, executor=executor, llm=llm,
                                 config=config, on_step=recorder.on_step)
        finally:
            if detach is not None:
                detach()
        path = recorder.finish(result)
        out[task.id] = (path, satisfied(task.goal, executor.observe()))
        print(f"recorded {task.id}: {'solved' if out[task.id][1] else 'NOT solved'}, {len(result.executed)} "
              f"primitives", file=sys.stderr, flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from step_planner.bench.cli import _select
    from step_planner.bench.tasks import load_suite
    from step_planner.domain.primitives import PrimitiveLibrary
    from step_planner.episodes.controllers_replay import ReplayError, replay_through_controllers
    from step_planner.episodes.episode import load_episode
    from step_planner.execution.controllers.config import BoundaryConfig
    from step_planner.execution.controllers.connection import RobotConnection
    from step_planner.planner.config import PlannerConfig
    from step_planner.resources import config_path
    from step_planner.ros.robot_process import RobotProcess

    library = PrimitiveLibrary.load(config_path("primitives.yaml"))
    config = PlannerConfig.from_yaml(args.planner_config)
    tasks = _select(load_suite(args.suite), args.tasks)
    out = Path(args.out)
    episodes_dir = out / "episodes"
    if episodes_dir.exists():
        import shutil

        shutil.rmtree(episodes_dir)
    print(f"Recorded runs: answers from the scripted expert (NOT an LLM), mistake rate 0, seed {args.seed}; profile "
          f"{args.profile}, budgets of {args.planner_config}; {len(tasks)} tasks of {args.suite} on the in-process "
          "MuJoCo backend (scenes exact, seed 0).")
    print(f"Replays: no LLM, no planning; the MuJoCo robot in another process at real-time factor "
          f"{args.realtime_factor}, over Fast DDS on loopback.\n")
    t0 = time.perf_counter()
    recorded = record(tasks, library, config, args.profile, args.seed, episodes_dir)
    rows = []
    with RobotProcess(realtime_factor=args.realtime_factor, scene=tasks[0].scene) as robot:
        connection = RobotConnection(BoundaryConfig.load(config_path("robot_boundary.yaml")),
                                     node_name="replay_controllers_bench")
        try:
            connection.wait_ready(60.0)
            for task in tasks:
                path, solved = recorded[task.id]
                lines: list[str] = []
                try:
                    report = replay_through_controllers(load_episode(path), load_scene="/mujoco_robot/load_scene",
                                                        connection=connection, out=lines.append)
                    why = report.stopped or "; ".join(report.differences)
                except ReplayError as exc:
                    report, why = None, f"not replayed: {exc}"
                rows.append((task, solved, report, why))
                print(f"{task.id}: {'reached' if report is not None and report.reached else 'NOT reached'} "
                      f"{why[:100]}", file=sys.stderr, flush=True)
        finally:
            connection.close()
        if robot.proc is not None and robot.proc.poll() not in (None, 0):
            print(robot.output()[-2000:], file=sys.stderr)
    summary = render(rows, args, time.perf_counter() - t0)
    print(summary)
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.md").write_text(summary + "\n")
    (out / "results.json").write_text(json.dumps({
        "meta": {"suite": args.suite, "profile": args.profile, "planner_config": args.planner_config,
                 "realtime_factor": args.realtime_factor, "answers": "scripted expert (NOT an LLM)"},
        "episodes": [{"task": t.id, "recorded_solved": solved, "why": why,
                      "report": report.to_dict() if report is not None else None}
                     for t, solved, report, why in rows]}, indent=1) + "\n")
    return 0


def _mrad(values: list[float]) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return f"median {statistics.median(values) * 1000:.2f}, p95 {p95 * 1000:.2f}, max {max(values) * 1000:.2f}"


def render(rows, args, wall_s: float) -> str:
    lines = ["| episode | recorded run | arm segments | gripper events | largest tracking error (mrad) | "
             "largest rest error (mrad) | recorded final world reached |", "|---|---|---|---|---|---|---|"]
    tracking, rest = [], []
    for task, solved, report, why in rows:
        segs = report.segments if report is not None else []
        arm = [s for s in segs if s.kind in ("arm", "to_start") and s.tracking_error is not None]
        tracking += [s.tracking_error for s in arm]
        rest += [s.end_error for s in arm]
        reached = report is not None and report.reached
        lines.append(f"| {task.id} | {'solved' if solved else 'NOT solved'} | {len(arm)} | "
                     f"{sum(s.kind == 'gripper' for s in segs)} | "
                     f"{max((s.tracking_error for s in arm), default=0) * 1000:.1f} | "
                     f"{max((s.end_error for s in arm), default=0) * 1000:.1f} | "
                     f"{'yes' if reached else 'NO: ' + why} |")
    n = len(rows)
    reached = sum(1 for _, _, r, _ in rows if r is not None and r.reached)
    misses = [(t.id, why) for t, _, r, why in rows if r is None or not r.reached]
    share = 100 * reached / max(n, 1)
    lines += ["", f"Reached the recorded final world: {reached}/{n} ({share:.0f} %; target >= 90 %)",
              f"Arm segments: {len(tracking)}; controller feedback tracking error (largest |desired - actual| of any "
              f"joint per segment, mrad): {_mrad(tracking)}",
              f"Where the arm came to rest against the recording (largest joint, per segment, mrad): {_mrad(rest)}"]
    if misses:
        lines += ["", "Not reached (open loop: the recorded motion does not adapt where contact goes differently):"]
        lines += [f"- {task_id}: {why}" for task_id, why in misses]
    lines += ["", f"{n} episodes recorded and replayed, wall time {wall_s:.0f} s"]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
