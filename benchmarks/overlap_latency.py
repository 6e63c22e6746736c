"""Latency hiding: wall time with the overlap feature on and off, on the MuJoCo Panda at real-time pace.

    python benchmarks/overlap_latency.py --profiles grounded,paper --planner-config config/bench.yaml \
        [--delays 0.5,1.5,3] [--tasks ID,...] [--suite table3] [--waste-seeds 3]

Each run: the scripted expert (NOT an LLM) behind the loopback OpenAI-compatible server, answering every
request after ``delay`` seconds (an endpoint's latency), the real ``openai`` client, and the MuJoCo
backend with ``realtime=True`` (a primitive takes its physical duration in wall time, as on the robot).
Printed per (profile, task, delay): wall time serial (``profile-overlap``) and with ``profile+overlap``,
motion alone (the sum of the primitive durations, planning included), and the two ratios of issue 12:
overlap / (motion + one answer's latency) [target <= 1.15 at 1.5 s] and overlap / serial [target <= 0.65].

Then wasted speculative calls per task on the symbolic Table III suite at p = 0 and 0.2 (the predicted
world is the symbolic effect of the call, so a wasted call is a failed or refused step).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from step_planner.bench.expert import ScriptedExpert  # noqa: E402
from step_planner.bench.tasks import load_suite  # noqa: E402
from step_planner.domain.primitives import PrimitiveLibrary  # noqa: E402
from step_planner.execution.symbolic import SymbolicExecutor  # noqa: E402
from step_planner.llm.client import LLMClient  # noqa: E402
from step_planner.llm.config import LLMConfig  # noqa: E402
from step_planner.llm.loopback import LoopbackServer  # noqa: E402
from step_planner.planner.config import PlannerConfig  # noqa: E402
from step_planner.planner.runner import run_goal  # noqa: E402


class Delayed:
    def __init__(self, expert: ScriptedExpert, delay: float) -> None:
        self.expert, self.delay = expert, delay

    def __call__(self, request: dict) -> str:
        time.sleep(self.delay)
        return self.expert(request)


def timed_run(library, task, base: PlannerConfig, profile: str, delay: float,
              pace: float = 1.0) -> tuple[float, float, dict, bool]:
    from step_planner.execution.sim.executor import SimExecutor

    expert = ScriptedExpert(library, seed=0)
    expert.register(task.instruction, task.goal, task.stated_goal)
    executor = SimExecutor(library, task.fresh_world(), seed=1, realtime=pace)
    try:
        with LoopbackServer(Delayed(expert, delay)) as server:
            llm = LLMClient(LLMConfig(model="scripted-expert", base_url=server.base_url, timeout_s=60.0))
            config = base.with_changes(profile=profile)
            t0 = time.perf_counter()
            result = run_goal(task.instruction, library=library, executor=executor, llm=llm, config=config)
            wall = time.perf_counter() - t0
            llm.close()
    finally:
        executor.close()
    motion = sum(o.duration_s for _, o in result.executed)
    return wall, motion, result.usage, result.success


def wasted_per_task(library, base: PlannerConfig, suite: str, noise: float, seeds: int) -> tuple[float, float, int]:
    """(mean wasted speculative calls per task, mean made per task, runs) on the symbolic backend."""
    wasted, made, runs = [], [], 0
    config = base.with_changes(profile="grounded+overlap")
    for seed in range(seeds):
        for task in load_suite(suite):
            expert = ScriptedExpert(library, seed=seed, mistake_rate=noise)
            expert.register(task.instruction, task.goal, task.stated_goal)
            result = run_goal(task.instruction, library=library, executor=SymbolicExecutor(library, task.world),
                              llm=LLMClient(LLMConfig(model="scripted-expert"), handler=expert), config=config)
            wasted.append(result.usage.get("speculative_wasted", 0))
            made.append(result.usage.get("speculative_made", 0))
            runs += 1
    return statistics.mean(wasted), statistics.mean(made), runs


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="benchmarks/overlap_latency.py", description=__doc__.split("\n")[0])
    p.add_argument("--delays", default="0.5,1.5,3")
    p.add_argument("--suite", default="table3")
    p.add_argument("--tasks", default="ls01_put_tools_away,lc09_empty_and_refill",
                   help="MuJoCo tasks (comma-separated ids); empty: skip the MuJoCo runs")
    p.add_argument("--profiles", default="grounded,paper", help="each run serial (-overlap) and with +overlap")
    p.add_argument("--planner-config", default="config/bench.yaml", help="budgets (profiles come from --profiles)")
    p.add_argument("--waste-seeds", type=int, default=3, help="seeds of the wasted-call sweep (0: skip it)")
    p.add_argument("--pace", type=float, default=1.0,
                   help="simulated seconds per wall second; the ratios compare wall time with motion as the robot "
                        "takes it, so they hold at 1 (real time) only (the test of this script runs faster)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    library = PrimitiveLibrary.load(ROOT / "config" / "primitives.yaml")
    path = Path(args.planner_config)
    base = PlannerConfig.from_yaml(path if path.is_absolute() else ROOT / path)
    print(f"profiles {args.profiles} (each serial, -overlap, and with +overlap), budgets {args.planner_config}")
    suite = {t.id: t for t in load_suite(args.suite)}
    delays = [float(d) for d in args.delays.split(",")]
    print("scripted expert behind a loopback server with a fixed delay per answer (NOT an LLM); "
          + ("MuJoCo Panda at real-time pace" if args.pace == 1 else
             f"MuJoCo Panda at {args.pace:g} x real time: the ratios below do NOT hold (motion is not wall time)"))
    task_ids = [t for t in args.tasks.split(",") if t]  # none: only the symbolic wasted-call sweep
    if task_ids:
        print("| profile | task | primitives | delay s | LLM calls | serial s | overlap s | motion s | "
              "overlap / (motion + delay) | overlap / serial | prepared used / made |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
    for profile in args.profiles.split(","):
        for task_id in task_ids:
            task = suite[task_id]
            for delay in delays:
                # The serial run removes the feature: a profile may carry it already (grounded does).
                serial, motion_s, usage_s, ok_s = timed_run(library, task, base, profile + "-overlap", delay,
                                                             args.pace)
                if usage_s.get("speculative_made", 0):
                    raise SystemExit(f"the serial run of {profile} prepared answers during motion: not serial")
                overlap, motion_o, usage_o, ok_o = timed_run(library, task, base, profile + "+overlap", delay,
                                                             args.pace)
                motion = (motion_s + motion_o) / 2
                print(f"| {profile} | {task_id} | {usage_o['primitives']} | {delay:g} | {usage_s['llm_calls']} | "
                      f"{serial:.1f} | {overlap:.1f} | {motion:.1f} | {overlap / (motion + delay):.2f} | "
                      f"{overlap / serial:.2f} | {usage_o.get('speculative_used', 0)} / "
                      f"{usage_o.get('speculative_made', 0)} |" + ("" if ok_s and ok_o else " FAILED"), flush=True)
    for noise in (0.0, 0.2) if args.waste_seeds > 0 else ():
        wasted, made, runs = wasted_per_task(library, base, args.suite, noise, args.waste_seeds)
        print(f"symbolic {args.suite}, grounded+overlap, p = {noise:g}: {wasted:.2f} wasted speculative calls per "
              f"task ({made:.2f} made), {runs} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
