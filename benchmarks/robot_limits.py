"""Does each robot stay within its own joint limits? Every task's primitives, planned for the Panda's model and for
the FR3, counted against the FR3's limits (issue 30 item 1).

    python benchmarks/robot_limits.py --suites table3,long_horizon --robots panda_model,fr3 --out results/robot_limits

For every task of the suites, the symbolic expert's primitive sequence (``solve_online``: what an ideal planner runs,
searching closed drawers in scene order) is executed on the in-process MuJoCo robot with the motion stack planning
within one robot's joint ranges: ``panda_model`` (the Panda model's own, which the controllers backend used for
every robot before), ``panda`` and ``fr3`` (config/robot_boundary.yaml's position_limits less joint_limit_margin,
inside the model's: what the controllers backend plans with now, BoundaryConfig.planning_limits). Every trajectory is
cut into the waypoints a FollowJointTrajectory goal carries (every point_period_s) and each waypoint is checked
against the FR3's limits and the planned robot's. A failed primitive is counted and the task goes on with its next
call (whose preconditions may then fail). Nothing here runs ROS: the controllers backend adds the same check before
sending and refuses a goal outside the limits (test/test_joint_limits.py).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from step_planner.resources import config_path

ROBOTS = ("panda_model", "panda", "fr3")


@dataclass
class Tally:
    calls: int = 0
    succeeded: int = 0
    tasks: int = 0
    tasks_done: int = 0
    waypoints: int = 0
    outside_fr3: int = 0
    outside_own: int = 0
    worst_fr3_rad: float = 0.0  # the farthest a waypoint went past an FR3 limit
    failures: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suites", default="table3,long_horizon", help="comma-separated task suites")
    parser.add_argument("--robots", default=",".join(ROBOTS), help=f"comma-separated, of {', '.join(ROBOTS)}")
    parser.add_argument("--tasks", type=int, default=0, help="only the first N tasks of each suite (0: all)")
    parser.add_argument("--seed", type=int, default=0, help="scene jitter and planner seed")
    parser.add_argument("--out", default="", help="folder for summary.md and results.json (empty: print only)")
    return parser


def plan_limits(robot: str, model_lower: np.ndarray, model_upper: np.ndarray):
    from step_planner.execution.controllers.config import BoundaryConfig

    if robot == "panda_model":
        return None
    return BoundaryConfig.load(config_path("robot_boundary.yaml"), robot).planning_limits(model_lower, model_upper)


def outside(q: np.ndarray, arm) -> tuple[int, float]:
    """Waypoints with a joint past ``arm``'s limits, and the farthest past (rad)."""
    lower, upper = np.asarray(arm.lower), np.asarray(arm.upper)
    past = np.maximum(lower - q, q - upper).max(axis=1)
    return int(np.sum(past > 0)), float(max(0.0, past.max(initial=0.0)))


def run_robot(robot: str, tasks: list, seed: int) -> Tally:
    from step_planner.bench.symbolic_planner import solve_online
    from step_planner.domain.primitives import PrimitiveLibrary
    from step_planner.execution.controllers.config import BoundaryConfig
    from step_planner.execution.controllers.trajectory import waypoints
    from step_planner.execution.sim.executor import SimExecutor
    from step_planner.execution.sim.ik import IkSolver

    library = PrimitiveLibrary.load(config_path("primitives.yaml"))
    boundary = config_path("robot_boundary.yaml")
    fr3, own = BoundaryConfig.load(boundary, "fr3"), None if robot == "panda_model" else \
        BoundaryConfig.load(boundary, robot)
    period = fr3.trajectory.point_period_s
    model = IkSolver().index
    limits = plan_limits(robot, model.lower, model.upper)
    tally = Tally()
    for task in tasks:
        calls = solve_online(library, task.world, task.goal, task.instruction)
        executor = SimExecutor(library, task.fresh_world(), seed=seed, plan_limits=limits)
        sent: list[np.ndarray] = []
        follow = executor.controller.follow

        def recording(traj, *args, follow=follow, sent=sent, **kwargs):
            sent.append(waypoints(traj, period).q)
            return follow(traj, *args, **kwargs)

        executor.controller.follow = recording
        done = True
        for call in calls:
            outcome = executor.execute(call)
            tally.calls += 1
            if outcome.success:
                tally.succeeded += 1
            else:
                done = False
                tally.failures[outcome.code.value] = tally.failures.get(outcome.code.value, 0) + 1
                tally.notes.append(f"{task.id}: {call} -> {outcome.code.value}: {outcome.message[:140]}")
        executor.close()
        tally.tasks += 1
        tally.tasks_done += done
        for q in sent:
            tally.waypoints += len(q)
            n, worst = outside(q, fr3.arm)
            tally.outside_fr3 += n
            tally.worst_fr3_rad = max(tally.worst_fr3_rad, worst)
            tally.outside_own += outside(q, own.arm)[0] if own is not None else 0
    return tally


def table(results: dict[str, Tally]) -> str:
    rows = ["| planned within | primitives succeeded | tasks with every primitive succeeded | waypoints | "
            "outside the FR3's limits | farthest past an FR3 limit (rad) | outside its own limits |",
            "|---|---|---|---|---|---|---|"]
    for robot, t in results.items():
        own = "n/a (the model's ranges)" if robot == "panda_model" else str(t.outside_own)
        rows.append(f"| {robot} | {t.succeeded}/{t.calls} | {t.tasks_done}/{t.tasks} | {t.waypoints} | "
                    f"{t.outside_fr3} | {t.worst_fr3_rad:.3f} | {own} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    from step_planner.bench.tasks import load_suite

    args = build_parser().parse_args(argv)
    robots = [r for r in args.robots.split(",") if r]
    if unknown := set(robots) - set(ROBOTS):
        print(f"unknown robots {sorted(unknown)}; choose from {', '.join(ROBOTS)}", file=sys.stderr)
        return 2
    tasks = []
    for suite in args.suites.split(","):
        loaded = load_suite(suite)
        tasks += loaded[:args.tasks] if args.tasks else loaded
    t0 = time.perf_counter()
    results = {robot: run_robot(robot, tasks, args.seed) for robot in robots}
    lines = [f"{len(tasks)} tasks ({args.suites}), seed {args.seed}, {time.perf_counter() - t0:.0f} s; the primitive "
             "sequences from the scripted expert's symbolic planner (solve_online), NOT an LLM", "",
             table(results), ""]
    for robot, t in results.items():
        if t.failures:
            lines.append(f"{robot}: failures by code {dict(sorted(t.failures.items()))}")
            lines += [f"  - {note}" for note in t.notes[:12]]
    text = "\n".join(lines)
    print(text)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "summary.md").write_text(text + "\n")
        (out / "results.json").write_text(json.dumps({r: t.__dict__ for r, t in results.items()}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
