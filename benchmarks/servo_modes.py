"""A suite through the controllers backend against the MuJoCo robot in one servo mode (execution/sim/servo.py).

    python benchmarks/servo_modes.py --servo gazebo --suite table3 --realtime-factor 1.0

Every task runs on the ``controllers`` backend, answered by the scripted expert (NOT an LLM, mistake rate 0); its
every motion crosses real DDS as FollowJointTrajectory and gripper goals to the MuJoCo robot in its own process,
started with ``-p servo:=<mode>``: ``ideal`` (the MuJoCo PD), ``gazebo`` (gz_ros2_control's position loop with
the shipped xacro's position_proportional_gain, or ``--gain``), ``fr3_effort`` (franka_ros2's effort PID; the FR3
entry of robot_boundary.yaml). Prints each task, solved and verified, trajectory goals by outcome and aborts by
error string, and the largest tracking error per trajectory goal (the controller's feedback, at 20 Hz of the wall
clock: with a real-time factor r one sample per r/20 s of simulated time).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servo", default="gazebo", choices=("ideal", "gazebo", "fr3_effort"))
    parser.add_argument("--gain", type=float, default=0.0,
                        help="gazebo: position_proportional_gain instead of the shipped xacro's (0: the xacro's)")
    parser.add_argument("--suite", default="table3")
    parser.add_argument("--tasks", default="", help="comma-separated task ids or categories (default: all)")
    parser.add_argument("--every", type=int, default=1, help="every n-th task of the selection (1: all)")
    parser.add_argument("--start", type=int, default=0, help="with --every: the first task taken (0-based)")
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
    from step_planner.planner.config import PlannerConfig
    from step_planner.resources import config_path
    from step_planner.ros.robot_process import RobotProcess

    robot = "fr3" if args.servo == "fr3_effort" else "panda"
    library = PrimitiveLibrary.load(config_path("primitives.yaml"))
    config = PlannerConfig.from_yaml(args.planner_config)
    tasks = _select(load_suite(args.suite), args.tasks)[args.start::max(1, args.every)]
    make_llm = in_process_expert(library)
    boundary = BoundaryConfig.load(config_path("robot_boundary.yaml"), robot)
    params = {"scene": tasks[0].scene, "robot": robot, "servo": args.servo}
    if args.gain > 0:
        params["servo_position_gain"] = args.gain
    print(f"Answers: the scripted expert (NOT an LLM), mistake rate 0, seed {args.seed}; profile {args.profile}, "
          f"budgets of {args.planner_config}; {len(tasks)} tasks of {args.suite}"
          f"{f' (one in {args.every}, from task {args.start})' if args.every > 1 else ''}.")
    print(f"controllers backend, robot {robot}, vs the MuJoCo robot in another process: servo {args.servo}"
          f"{f', position_proportional_gain {args.gain}' if args.gain > 0 else ''}, real-time factor "
          f"{args.realtime_factor}; path tolerance {boundary.trajectory.path_tolerance} rad, goal tolerance "
          f"{boundary.trajectory.goal_tolerance} rad.\n")
    rows, reasons = [], Counter()
    t0 = time.perf_counter()
    with RobotProcess(realtime_factor=args.realtime_factor, **params) as process:
        connection = RobotConnection(boundary, node_name="servo_modes_bench")
        real = connection.run_trajectory

        def counted(*a, **k):  # every trajectory goal's end, by the controller's error string
            outcome = real(*a, **k)
            if outcome.status == "aborted":
                result = outcome.result
                reasons[(result.error_string or f"error_code {result.error_code}") if result else "no result"] += 1
            return outcome

        connection.run_trajectory = counted
        try:
            connection.wait_ready(60.0)

            def controllers(lib, world):
                return make_executor("controllers", lib, world, connection=connection, robot=robot,
                                     load_scene="/mujoco_robot/load_scene")

            for task in tasks:
                b = run_one(task, args.profile, 0.0, args.seed, library=library, config=config, make_llm=make_llm,
                            make_executor=controllers)
                rows.append((task.id, b))
                print(f"{task.id}: {b.success}/{b.verified} {b.wall_s:.0f} s ({b.message[:80]})", file=sys.stderr,
                      flush=True)
        finally:
            connection.close()
        if process.proc is not None and process.proc.poll() not in (None, 0):
            print(process.output()[-2000:], file=sys.stderr)
        servo_line = next((line for line in process.output().splitlines() if "servo" in line), "")
    print("| task | solved | verified | primitives | wall s |")
    print("|---|---|---|---|---|")
    for task_id, b in rows:
        print(f"| {task_id} | {mark(b.success)} | {mark(b.verified)} | {b.primitives} | {b.wall_s:.1f} |")
    n = len(rows)
    solved = sum(b.success for _, b in rows)
    verified = sum(b.success and b.verified for _, b in rows)
    stats = connection.stats
    errors = stats.tracking_errors
    print(f"\nservo {args.servo}: solved {solved}/{n}, verified {verified}/{n}")
    print(f"trajectory goals: {sum(stats.trajectories.values())} {dict(sorted(stats.trajectories.items()))}; "
          f"aborted by reason: {dict(reasons) or 'none'}; gripper goals {dict(sorted(stats.gripper.items()))}")
    print(f"largest tracking error per succeeded trajectory (controller feedback): median "
          f"{statistics.median(errors) * 1000 if errors else 0:.1f} mrad, max {max(errors, default=0) * 1000:.1f} mrad")
    if servo_line:
        print(f"robot: {servo_line.split('] ', 1)[-1].split(': ', 1)[-1][-120:]}")
    print(f"\n{n} tasks, wall time {time.perf_counter() - t0:.0f} s")
    return 0


def mark(flag: bool) -> str:
    return "yes" if flag else "NO"


if __name__ == "__main__":
    sys.exit(main())
