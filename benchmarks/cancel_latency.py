"""How fast does a cancel stop the robot and end the goal?

    python benchmarks/cancel_latency.py --profile grounded --planner-config config/planner.yaml --runs 10 --llm-runs 6

Three measurements, each the wall time from ``cancel.set()`` (on another thread, as the ROS node does
it) to the moment control returns:

1. MuJoCo ``SimExecutor.execute(pick(tape))``, cancel while the arm moves (a physics hook signals "moving"
   at > 0.2 rad/s after a random 0-0.6 s; a second thread sets the cancel): time until ``execute()``
   returns CANCELED with the arm held still.
2. ``run_goal`` on the MuJoCo backend (the scripted expert, NOT an LLM, answering in process through
   ``LLMClient(handler=...)``), cancel while a random one of the goal's primitives moves: time until
   ``run_goal`` returns CANCELED, and how many primitives *started* after the cancel.
3. ``run_goal`` while the planner waits for an LLM answer (real openai client, loopback server holding
   the scripted expert's answer for ``--hold`` s): with the goal's cancel wired into
   ``LLMClient(cancel=...)`` (what the node does) and without it (the goal waits for the answer).

The planner runs the profile ``--profile`` with the budgets of ``--planner-config``; both are printed.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CONFIG = ROOT / "config"
SCENE = CONFIG / "scenes" / "drawer_desk.yaml"
FAST = 0.2  # rad/s: "mid-trajectory" means some joint moves at least this fast
TASK_ID = "ss03_tape_in_drawer"  # open the drawer, pick the tape, place it in the drawer
LLM_INSTRUCTION, LLM_GOAL = "open the drawer", ("open(drawer)",)  # part 3: the answer itself does not matter


def ms(values: list[float]) -> str:
    if not values:
        return "n/a"
    return f"median {statistics.median(values) * 1000:.1f} ms, max {max(values) * 1000:.1f} ms (n={len(values)})"


def press_when(ready: threading.Event, cancel: threading.Event, stamp: dict) -> threading.Thread:
    """Set ``cancel`` from this thread as soon as ``ready`` is set (by the physics loop, mid-motion)."""

    def press() -> None:
        if ready.wait(120):
            stamp["set"] = time.perf_counter()
            cancel.set()

    thread = threading.Thread(target=press, daemon=True)
    thread.start()
    return thread


class MidMotion:
    """A physics step hook: sets ``ready`` once the arm moves fast (> FAST rad/s) at least ``after_s`` of
    simulated time after arming, while ``armed()`` holds. The cancel itself comes from another thread."""

    def __init__(self, sim, after_s: float, armed=lambda: True) -> None:
        self.sim, self.after_s, self.armed = sim, after_s, armed
        self.ready, self.t0 = threading.Event(), None

    def __call__(self, data) -> None:
        if self.ready.is_set() or not self.armed():
            return
        self.t0 = data.time if self.t0 is None else self.t0
        if data.time - self.t0 >= self.after_s and abs(data.qvel[self.sim.index.arm_dof]).max() > FAST:
            self.ready.set()


def bench_execute(library: Any, runs: int, rng: random.Random) -> None:
    from step_planner.domain.scene import load_scene
    from step_planner.execution.base import ExecCode
    from step_planner.execution.sim.executor import SimExecutor

    world = load_scene(SCENE)
    executor = SimExecutor(library, world, seed=1)
    call = library.parse_call_text("pick(tape)")
    t0 = time.perf_counter()
    full = executor.execute(call)
    duration = time.perf_counter() - t0
    print(f"pick(tape) uncanceled: {full.code.value} in {duration:.2f} s wall")
    latencies, stop_sim, speeds, phases, codes = [], [], [], {"planning": 0, "motion": 0}, []
    for _ in range(runs):
        executor.reset(world)
        cancel, stamp = threading.Event(), {}
        trigger = MidMotion(executor, rng.uniform(0.0, 0.6))
        executor.step_hooks[:] = [trigger]
        thread = press_when(trigger.ready, cancel, stamp)
        outcome = executor.execute(call, cancel)
        trigger.ready.set()  # release the presser if the primitive ended first
        returned = time.perf_counter()
        thread.join()
        codes.append(outcome.code.value)
        if outcome.code is ExecCode.CANCELED and stamp.get("set", returned) <= returned:
            latencies.append(returned - stamp["set"])
            phases["planning" if "planning" in outcome.message else "motion"] += 1
            if "stop_sim_s" in outcome.details:
                stop_sim.append(outcome.details["stop_sim_s"])
                speeds.append(outcome.details["joint_speed_at_cancel"])
    executor.close()
    print(f"1. SimExecutor.execute(pick(tape)): {codes.count('CANCELED')}/{runs} CANCELED "
          f"({phases['motion']} during motion, {phases['planning']} while planning; others: "
          f"{sorted(c for c in codes if c != 'CANCELED') or 'none'})")
    print(f"   cancel.set() -> execute() returned: {ms(latencies)}")
    print(f"   arm at rest (< 0.02 rad/s) after, simulated: {ms(stop_sim)}; fastest joint at the cancel: "
          f"median {statistics.median(speeds) if speeds else float('nan'):.3f} rad/s")


class StartLog:
    """An executor wrapper that notes when each primitive started (everything else is delegated)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.starts = inner, []

    def execute(self, call, cancel=None):
        self.starts.append(time.perf_counter())
        return self.inner.execute(call, cancel)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def expert_client(library: Any, instruction: str, goal: tuple) -> Any:
    """The real LLMClient calling the scripted expert (NOT an LLM) in process."""
    from step_planner.bench.expert import ScriptedExpert
    from step_planner.llm.client import LLMClient
    from step_planner.llm.config import LLMConfig

    expert = ScriptedExpert(library, seed=0)
    expert.register(instruction, goal)
    return LLMClient(LLMConfig(model="scripted-expert"), handler=expert)


def bench_run_goal(library: Any, config: Any, runs: int, rng: random.Random) -> None:
    from step_planner.bench.tasks import load_suite
    from step_planner.execution.sim.executor import SimExecutor
    from step_planner.planner.runner import run_goal

    task = next(t for t in load_suite("table3") if t.id == TASK_ID)
    sim = SimExecutor(library, task.fresh_world(), seed=1)
    t0 = time.perf_counter()
    full = run_goal(task.instruction, library=library, executor=sim,
                    llm=expert_client(library, task.instruction, task.goal), config=config)
    duration = time.perf_counter() - t0
    print(f"\n'{task.instruction}' on MuJoCo uncanceled: {full.error.value}, {len(full.executed)} primitives "
          f"in {duration:.2f} s wall")
    if not full.executed:
        print("2. run_goal on MuJoCo: skipped (the uncanceled goal executed nothing)")
        sim.close()
        return
    latencies, late_starts, codes = [], 0, []
    for _ in range(runs):
        sim.reset(task.fresh_world())
        executor = StartLog(sim)
        cancel, stamp = threading.Event(), {}
        k = rng.randint(1, len(full.executed))  # cancel during the k-th primitive
        trigger = MidMotion(sim, rng.uniform(0.0, 0.3), armed=lambda k=k, ex=executor: len(ex.starts) == k)
        sim.step_hooks[:] = [trigger]
        thread = press_when(trigger.ready, cancel, stamp)
        result = run_goal(task.instruction, library=library, executor=executor,
                          llm=expert_client(library, task.instruction, task.goal), config=config, cancel=cancel)
        trigger.ready.set()
        returned = time.perf_counter()
        thread.join()
        codes.append(result.error.value)
        if result.error.value == "CANCELED" and "set" in stamp:
            latencies.append(returned - stamp["set"])
            late_starts += sum(1 for s in executor.starts if s > stamp["set"])
    sim.close()
    print(f"2. run_goal on MuJoCo: {codes.count('CANCELED')}/{runs} CANCELED; primitives started after the "
          f"cancel: {late_starts}")
    print(f"   cancel.set() -> run_goal returned: {ms(latencies)}")


def bench_llm_in_flight(library: Any, config: Any, runs: int, hold_s: float) -> None:
    from step_planner.bench.expert import ScriptedExpert
    from step_planner.bench.goals import parse_goal
    from step_planner.domain.scene import load_scene
    from step_planner.execution.symbolic import SymbolicExecutor
    from step_planner.llm.client import LLMClient
    from step_planner.llm.config import LLMConfig
    from step_planner.llm.loopback import LoopbackServer
    from step_planner.planner.runner import run_goal

    arrived = threading.Event()
    expert = ScriptedExpert(library, seed=0)
    expert.register(LLM_INSTRUCTION, parse_goal(list(LLM_GOAL)))

    def slow(request: dict) -> str:
        arrived.set()
        time.sleep(hold_s)
        return expert(request)

    print(f"\n3. run_goal canceled 0.2 s into an LLM request (the endpoint answers after {hold_s:g} s):")
    with LoopbackServer(slow) as server:
        settings = LLMConfig(base_url=server.base_url, model="scripted-expert", timeout_s=hold_s + 10,
                             max_retries=0)
        for wired in (True, False):
            latencies, codes = [], []
            for _ in range(runs if wired else max(1, runs // 2)):
                arrived.clear()
                cancel, stamp = threading.Event(), {}
                client = LLMClient(settings, cancel=cancel if wired else None)
                waiter = threading.Thread(target=lambda c=cancel, s=stamp: arrived.wait(30) and (
                    time.sleep(0.2), s.update(set=time.perf_counter()), c.set()), daemon=True)
                waiter.start()
                result = run_goal(LLM_INSTRUCTION, library=library, executor=SymbolicExecutor(
                    library, load_scene(SCENE)), llm=client, config=config, cancel=cancel)
                returned = time.perf_counter()
                waiter.join()
                client.close()
                codes.append(result.error.value)
                if "set" in stamp:
                    latencies.append(returned - stamp["set"])
            label = "cancel wired into LLMClient (node)" if wired else "client without cancel           "
            print(f"   {label}: {codes.count('CANCELED')}/{len(codes)} CANCELED; cancel.set() -> run_goal "
                  f"returned: {ms(latencies)}")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="benchmarks/cancel_latency.py", description=__doc__.split("\n")[0])
    p.add_argument("--profile", default="grounded", help="planner profile (config/profiles.yaml)")
    p.add_argument("--planner-config", default="config/planner.yaml",
                   help="budgets (the profile comes from --profile)")
    p.add_argument("--runs", type=int, default=10, help="cancels in parts 1 and 2")
    p.add_argument("--llm-runs", type=int, default=6, help="cancels in part 3 (half as many without the wiring)")
    p.add_argument("--hold", type=float, default=3.0, help="seconds the loopback LLM takes to answer")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--skip-sim", action="store_true", help="only part 3 (no MuJoCo)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from step_planner.domain.primitives import PrimitiveLibrary
    from step_planner.planner.config import PlannerConfig

    path = Path(args.planner_config)
    config = PlannerConfig.from_yaml(path if path.is_absolute() else ROOT / path).with_changes(profile=args.profile)
    print(f"planner: profile {config.resolved_profile_name}, budgets {args.planner_config}; answers: the scripted "
          "expert (NOT an LLM)")
    rng = random.Random(args.seed)
    library = PrimitiveLibrary.load(CONFIG / "primitives.yaml")
    if not args.skip_sim:
        bench_execute(library, args.runs, rng)
        bench_run_goal(library, config, args.runs, rng)
    bench_llm_in_flight(library, config, args.llm_runs, args.hold)
    return 0


if __name__ == "__main__":
    sys.exit(main())
