"""The controllers backend against the MuJoCo robot in another process, side by side with the in-process simulator.

    python benchmarks/controllers_boundary.py --suite table3 --profile grounded --planner-config config/bench.yaml

Every task of the suite runs twice, one right after the other, answered by the scripted expert (NOT an LLM,
mistake rate 0), both at the pace ``--realtime-factor`` (1: real time): on the in-process MuJoCo backend, and on
the ``controllers`` backend, whose every motion crosses real DDS as control_msgs FollowJointTrajectory and
GripperCommand goals to the MuJoCo robot (``step-planner mujoco-robot``) in its own process, with the world read back
from its /joint_states and model poses. Success is the task's goal facts in the final world each backend
reports (the robot's: derived from the poses it publishes, its physics' ground truth). Prints each task, the
solved and verified counts, the wall-time ratio, and what crossed the boundary (goals by outcome, tracking error).
"""

from __future__ import annotations

import argparse
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
    parser.add_argument("--profile", default="grounded", help="planner profile (config/profiles.yaml)")
    parser.add_argument("--planner-config", default="config/bench.yaml")
    parser.add_argument("--seed", type=int, default=0, help="the expert's seed (answers); scenes are exact")
    parser.add_argument("--realtime-factor", type=float, default=1.0, help="the MuJoCo robot's pace")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from step_planner.bench.cli import _select
    from step_planner.bench.runner import in_process_expert, run_one
    from step_planner.bench.tasks import load_suite
    from step_planner.domain.primitives import PrimitiveLibrary
    from step_planner.execution.controllers.config import BoundaryConfig
    from step_planner.execution.controllers.connection import RobotConnection
    from step_planner.execution.factory import make_executor
    from step_planner.execution.sim.executor import SimExecutor
    from step_planner.planner.config import PlannerConfig
    from step_planner.resources import config_path
    from step_planner.ros.robot_process import RobotProcess

    library = PrimitiveLibrary.load(config_path("primitives.yaml"))
    config = PlannerConfig.from_yaml(args.planner_config)
    tasks = _select(load_suite(args.suite), args.tasks)
    make_llm = in_process_expert(library)
    print(f"Answers: the scripted expert (NOT an LLM), mistake rate 0, seed {args.seed}; profile {args.profile}, "
          f"budgets of {args.planner_config}; {len(tasks)} tasks of {args.suite}.")
    boundary = BoundaryConfig.load(config_path("robot_boundary.yaml"))
    cap = boundary.velocity_cap  # both plan with the same joint speed cap: the ratio is the boundary's own cost
    print(f"in-process: SimExecutor(realtime={args.realtime_factor:g}); controllers: the MuJoCo robot in another "
          f"process at real-time factor {args.realtime_factor:g}, over Fast DDS on loopback. Both plan with the "
          f"boundary's joint speed cap (stop_within_s {boundary.stop_within_s} s: "
          f"{list(cap) if cap else 'none'} rad/s).\n")
    rows = []
    t0 = time.perf_counter()
    with RobotProcess(realtime_factor=args.realtime_factor, scene=tasks[0].scene) as robot:
        connection = RobotConnection(boundary, node_name="controllers_boundary_bench")
        try:
            connection.wait_ready(60.0)

            def sim(lib, world):
                return SimExecutor(lib, world, realtime=args.realtime_factor, velocity_cap=cap)

            def controllers(lib, world):
                return make_executor("controllers", lib, world, connection=connection,
                                     load_scene="/mujoco_robot/load_scene")

            for task in tasks:
                a = run_one(task, args.profile, 0.0, args.seed, library=library, config=config, make_llm=make_llm,
                            make_executor=sim)
                b = run_one(task, args.profile, 0.0, args.seed, library=library, config=config, make_llm=make_llm,
                            make_executor=controllers)
                rows.append((task.id, a, b))
                print(f"{task.id}: in-process {a.success}/{a.verified} {a.wall_s:.0f} s, controllers "
                      f"{b.success}/{b.verified} {b.wall_s:.0f} s ({b.message[:80]})", file=sys.stderr, flush=True)
        finally:
            connection.close()
        if robot.proc is not None and robot.proc.poll() not in (None, 0):
            print(robot.output()[-2000:], file=sys.stderr)
    print("| task | in-process: solved, verified, primitives, wall s | controllers: solved, verified, primitives, "
          "wall s | wall ratio |")
    print("|---|---|---|---|")
    for task_id, a, b in rows:
        ratio = b.wall_s / a.wall_s if a.wall_s else float("nan")
        print(f"| {task_id} | {mark(a.success)} {mark(a.verified)} {a.primitives} {a.wall_s:.1f} | "
              f"{mark(b.success)} {mark(b.verified)} {b.primitives} {b.wall_s:.1f} | {ratio:.2f} |")
    n = len(rows)
    solved = [sum(r[i].success for r in rows) for i in (1, 2)]
    verified = [sum(r[i].success and r[i].verified for r in rows) for i in (1, 2)]
    both = [(a, b) for _, a, b in rows if a.success and b.success]
    ratios = [b.wall_s / a.wall_s for a, b in both if a.wall_s]
    total = sum(b.wall_s for _, b in both) / max(1e-9, sum(a.wall_s for a, _ in both))
    print(f"\nin-process MuJoCo: solved {solved[0]}/{n}, verified {verified[0]}/{n}")
    print(f"controllers backend vs the MuJoCo robot in another process: solved {solved[1]}/{n}, verified "
          f"{verified[1]}/{n} (target: >= 44/45, all verified)")
    if ratios:
        print(f"wall time, tasks both solved ({len(both)}): controllers / in-process = {total:.3f} in total, per task "
              f"median {statistics.median(ratios):.3f}, max {max(ratios):.3f} (target: within 1.1x)")
    stats = connection.stats
    errors = stats.tracking_errors
    print(f"over the boundary: {sum(stats.trajectories.values())} FollowJointTrajectory goals {stats.trajectories}, "
          f"{sum(stats.gripper.values())} GripperCommand goals {stats.gripper}; largest tracking error per "
          f"succeeded trajectory (controller feedback): median {statistics.median(errors) * 1000 if errors else 0:.2f}"
          f" mrad, max {max(errors, default=0) * 1000:.2f} mrad")
    print(f"\n{n} tasks x 2 backends, wall time {time.perf_counter() - t0:.0f} s")
    return 0


def mark(flag: bool) -> str:
    return "yes" if flag else "NO"


if __name__ == "__main__":
    sys.exit(main())
