"""How long the scripted expert's symbolic planner (A*) takes per call over a suite.

    python benchmarks/expert_planner_speed.py --suite long_horizon

Every call the expert makes while solving each task (as ``bench.tasks.check_optimal`` does): the cost of
the answers' source, not of the planner under test. No LLM and no planner profile are involved.
"""

from __future__ import annotations

import argparse
import statistics


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="long_horizon", help="suite name in config/tasks or a YAML path")
    return parser


def main(argv: list[str] | None = None) -> int:
    from step_planner.bench.symbolic_planner import solve_online
    from step_planner.bench.tasks import load_suite
    from step_planner.domain.primitives import PrimitiveLibrary
    from step_planner.resources import config_path

    args = build_parser().parse_args(argv)
    library = PrimitiveLibrary.load(config_path("primitives.yaml"))
    calls: list[tuple[float, int, str]] = []
    tasks = load_suite(args.suite)
    for task in tasks:
        timings: list[tuple[float, int]] = []
        solve_online(library, task.world, task.goal, task.instruction, timings=timings)
        calls += [(seconds, length, task.id) for seconds, length in timings]
    ms = sorted(1000 * c[0] for c in calls)
    worst = max(calls)
    print("The scripted expert's own planner (NOT an LLM, no planner under test).")
    print(f"{args.suite}: {len(calls)} planner calls while solving {len(tasks)} tasks; "
          f"plans up to {max(c[1] for c in calls)} primitives")
    print(f"per call: median {statistics.median(ms):.1f} ms, p95 {ms[int(0.95 * (len(ms) - 1))]:.1f} ms, "
          f"max {ms[-1]:.1f} ms ({worst[2]}, a {worst[1]}-primitive plan)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
