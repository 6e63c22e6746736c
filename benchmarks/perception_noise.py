"""Success checked against what the robot perceives: Table III through an imperfect perception.

    python benchmarks/perception_noise.py --suite table3 --profile grounded --planner-config config/bench.yaml \\
        --levels 0:0,0.005:0,0.01:0,0:0.1 --realtime-factor 0

Every task of the suite on the controllers backend against the MuJoCo robot (``step-planner mujoco-robot``, its
own process), answered by the scripted expert (NOT an LLM, mistake rate 0), once per perception level
``sigma:dropout``: the robot reports object and drawer positions with white Gaussian noise of that sigma (m,
every axis), drops each object from a report with that probability, and never reports what is inside a closed
drawer (a camera's view). The backend plans, checks every primitive and judges the goal on those reports. The
true final world is derived by the same fact deriver from the robot's exact poses (its truth topic). Prints, per
level: tasks solved in truth, goals SUCCEEDED, and goals SUCCEEDED whose true final world contradicts the goal
(target: 0 at every level).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def levels(text: str) -> list[tuple[float, float]]:
    out = []
    for item in text.split(","):
        sigma, _, dropout = item.partition(":")
        out.append((float(sigma), float(dropout or 0.0)))
    return out


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="table3")
    parser.add_argument("--tasks", default="", help="comma-separated task ids or categories (default: all)")
    parser.add_argument("--profile", default="grounded")
    parser.add_argument("--planner-config", default="config/bench.yaml")
    parser.add_argument("--levels", type=levels, default=levels("0:0,0.005:0,0.01:0,0:0.1"),
                        help="perception levels sigma_m:dropout, comma-separated")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--realtime-factor", type=float, default=0.0,
                        help="the MuJoCo robot's pace (0: as fast as it computes; the results do not need real time)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from step_planner.bench.cli import _select
    from step_planner.bench.goals import satisfied
    from step_planner.bench.robot_truth import TRUTH_TOPIC, RobotTruth
    from step_planner.bench.runner import in_process_expert, run_one
    from step_planner.bench.tasks import load_suite
    from step_planner.domain.primitives import PrimitiveLibrary
    from step_planner.execution.controllers.config import BoundaryConfig
    from step_planner.execution.controllers.connection import RobotConnection
    from step_planner.execution.factory import make_executor
    from step_planner.planner.config import PlannerConfig
    from step_planner.resources import config_path
    from step_planner.ros.robot_process import RobotProcess

    library = PrimitiveLibrary.load(config_path("primitives.yaml"))
    config = PlannerConfig.from_yaml(args.planner_config)
    tasks = _select(load_suite(args.suite), args.tasks)
    boundary = BoundaryConfig.load(config_path("robot_boundary.yaml"))
    make_llm = in_process_expert(library)
    print(f"Answers: the scripted expert (NOT an LLM), mistake rate 0; profile {args.profile}, budgets of "
          f"{args.planner_config}; {len(tasks)} tasks of {args.suite} on the controllers backend against the MuJoCo "
          f"robot in another process (real-time factor {args.realtime_factor}); nothing inside a closed drawer is "
          f"ever reported; success judged on the robot's exact poses.\n")
    print("| position noise (sigma) | dropout | solved (true world) | SUCCEEDED | SUCCEEDED but the true world "
          "contradicts the goal | failures (error: count) |")
    print("|---|---|---|---|---|---|")
    t0 = time.perf_counter()
    for sigma, dropout in args.levels:
        params = {"scene": tasks[0].scene, "truth_topic": TRUTH_TOPIC, "perception.position_noise_m": sigma,
                  "perception.dropout": dropout, "perception.hide_in_closed_drawers": True,
                  "perception.seed": args.seed}
        solved = succeeded = false_success = 0
        errors: dict[str, int] = {}
        with RobotProcess(realtime_factor=args.realtime_factor, **params):
            connection = RobotConnection(boundary, node_name="perception_noise_bench")
            truth = RobotTruth()
            try:
                connection.wait_ready(60.0)

                def controllers(lib, world, connection=connection):
                    return make_executor("controllers", lib, world, connection=connection,
                                         load_scene="/mujoco_robot/load_scene")

                for task in tasks:
                    record = run_one(task, args.profile, 0.0, args.seed, library=library, config=config,
                                     make_llm=make_llm, make_executor=controllers)
                    true_ok = satisfied(task.goal, truth.world(task.fresh_world()))
                    solved += true_ok
                    succeeded += record.claimed_success
                    false_success += record.claimed_success and not true_ok
                    if not true_ok:
                        errors[record.error] = errors.get(record.error, 0) + 1
                    print(f"sigma {sigma} dropout {dropout} {task.id}: true {true_ok}, claimed "
                          f"{record.claimed_success}, {record.error}: {record.message[:90]}", file=sys.stderr,
                          flush=True)
            finally:
                truth.close()
                connection.close()
        n = len(tasks)
        failures = ", ".join(f"{k}: {v}" for k, v in sorted(errors.items())) or "none"
        print(f"| {sigma * 1000:.0f} mm | {dropout:.0%} | {solved}/{n} | {succeeded}/{n} | {false_success} | "
              f"{failures} |", flush=True)
    print(f"\n{len(tasks)} tasks x {len(args.levels)} levels, wall time {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
