"""Per-primitive success rates of the simulated Panda over seeded runs, as a markdown table.

    python benchmarks/sim_primitives.py --runs 10

Primitive calls are run directly on the executor: no planner and no LLM answers anything here.

Each run builds the scene with a different seed (object poses jittered by up to 4 mm / 2 deg),
runs the case's set-up calls, then the measured call. A run whose set-up fails counts as a
failure of the measured call too (it never got to run), and is listed in the notes. After the
table: the whole drawer task per seed, and how fast the arm stops when canceled mid-motion.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from step_planner.bench.record_video import DRAWER_CALLS
from step_planner.domain.primitives import PrimitiveLibrary
from step_planner.domain.scene import load_scene
from step_planner.resources import config_path


@dataclass
class Case:
    call: str
    setup: tuple[str, ...] = ()
    drawer_open: bool = False
    scene: str | None = None  # a scene of config/scenes instead of --scene
    note: str = ""


CASES = (
    Case("move_to(tray)"),
    Case("pick(tape)"),
    Case("pick(screwdriver)"),
    Case("pick(red_block)"),
    Case("pick(cup)"),
    Case("place(tape, table)", ("pick(tape)",)),
    Case("place(tape, tray)", ("pick(tape)",)),
    Case("place(tape, drawer)", ("pick(tape)",), drawer_open=True),
    Case("place(screwdriver, drawer)", ("pick(screwdriver)",), drawer_open=True),
    Case("open_drawer(drawer)"),
    Case("close_drawer(drawer)", drawer_open=True),
    Case("push(tape, forward)"),
    Case("push(red_block, left)"),
    Case("home()", ("move_to(tray)",)),
    # stacked drawers (two_drawers): the lower one served while the upper one is open
    Case("open_drawer(bottom_drawer)", ("open_drawer(top_drawer)",), scene="two_drawers", note="top drawer open"),
    Case("pick(screwdriver)", ("open_drawer(top_drawer)", "open_drawer(bottom_drawer)"), scene="two_drawers",
         note="from the bottom drawer, top drawer open"),
    Case("close_drawer(bottom_drawer)", ("open_drawer(top_drawer)", "open_drawer(bottom_drawer)"),
         scene="two_drawers", note="top drawer open"),
)


@dataclass
class CaseResult:
    case: Case
    codes: list[str] = field(default_factory=list)
    planning: list[float] = field(default_factory=list)
    sim: list[float] = field(default_factory=list)
    wall: list[float] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def successes(self) -> int:
        return self.codes.count("SUCCESS")


def run_case(case: Case, library: PrimitiveLibrary, scene_path: Path, runs: int) -> CaseResult:
    from step_planner.execution.sim.executor import SimExecutor

    result = CaseResult(case)
    if case.scene:
        scene_path = Path(config_path("scenes", f"{case.scene}.yaml"))
    for k in range(runs):
        world = load_scene(scene_path)
        if case.drawer_open:
            for place in world.places.values():
                if place.kind == "drawer":
                    place.is_open = True
        executor = SimExecutor(library, world, seed=k + 1)
        failed_setup = None
        for text in case.setup:
            outcome = executor.execute(library.parse_call_text(text))
            if not outcome.success:
                failed_setup = f"seed {k + 1}: set-up {text} -> {outcome.code.value}: {outcome.message}"
                break
        if failed_setup:
            result.codes.append("SETUP_FAILED")
            result.notes.append(failed_setup)
            continue
        outcome = executor.execute(library.parse_call_text(case.call))
        result.codes.append(outcome.code.value)
        if not outcome.success:
            result.notes.append(f"seed {k + 1}: {outcome.code.value}: {outcome.message}")
        result.planning.append(outcome.details.get("planning_s", 0.0))
        result.sim.append(outcome.details.get("sim_s", 0.0))
        result.wall.append(outcome.details.get("wall_s", outcome.duration_s))
        executor.close()
    return result


def measure_cancel(library: PrimitiveLibrary, scene_path: Path, runs: int) -> str:
    """Cancel pick(tape) at staggered simulated moments; how fast does the arm come to rest?

    The event is set from the physics loop at 0.5 s + k * 0.3 s of simulated time after the call
    starts (so it lands during motion at different speeds); the time to stop is simulated time
    until every arm joint is below 0.02 rad/s.
    """
    import threading

    from step_planner.execution.sim.executor import SimExecutor

    stop_sim, speeds, coast, codes = [], [], [], []
    for k in range(runs):
        executor = SimExecutor(library, load_scene(scene_path), seed=k + 1)
        cancel = threading.Event()
        start = executor.data.time

        def press(data, cancel=cancel, at=start + 0.5 + 0.3 * k):
            if data.time >= at:
                cancel.set()

        executor.step_hooks.append(press)
        outcome = executor.execute(library.parse_call_text("pick(tape)"), cancel)
        codes.append(outcome.code.value)
        if "stop_sim_s" in outcome.details:
            stop_sim.append(outcome.details["stop_sim_s"])
            speeds.append(outcome.details["joint_speed_at_cancel"])
            coast.append(outcome.details["coast_rad"])
    return (
        f"Cancel during pick(tape): {codes.count('CANCELED')}/{runs} CANCELED; joint speed at cancel "
        f"median {_median(speeds)} rad/s (max {max(speeds, default=float('nan')):.3f}); arm at rest "
        f"(< 0.02 rad/s) after median {_median(stop_sim)} s, max {max(stop_sim, default=float('nan')):.3f} s "
        f"simulated ({_median([s / 0.002 for s in stop_sim])} control steps of 2 ms); joints moved at most "
        f"{max(coast, default=float('nan')):.4f} rad after the cancel (median {_median(coast)})."
    )




def measure_drawer_task(library: PrimitiveLibrary, scene_path: Path, runs: int) -> str:
    """The whole drawer task per seed; success = every call SUCCESS and observe() shows both
    objects in the closed drawer (hidden from the observed view)."""
    from step_planner.execution.sim.executor import SimExecutor

    done, sim, wall, notes = 0, [], [], []
    for k in range(runs):
        executor = SimExecutor(library, load_scene(scene_path), seed=k + 1)
        t0, failed = time.perf_counter(), None
        for text in DRAWER_CALLS:
            outcome = executor.execute(library.parse_call_text(text))
            if not outcome.success:
                failed = f"seed {k + 1}: {text} -> {outcome.code.value}: {outcome.message}"
                break
        world = executor.observe()
        hidden = {"tape", "screwdriver"}.isdisjoint(world.observed().objects)
        ok = (
            failed is None
            and hidden
            and not world.places["drawer"].is_open
            and world.objects["tape"].location == world.objects["screwdriver"].location == "drawer"
        )
        done += ok
        if ok:
            sim.append(executor.data.time)
            wall.append(time.perf_counter() - t0)
        else:
            notes.append(failed or f"seed {k + 1}: final state wrong: {world.describe()}")
    lines = [
        f"Drawer task ({', '.join(DRAWER_CALLS)}): {done}/{runs} complete with tape and screwdriver "
        f"observed in the closed drawer; median {_median(sim)} s simulated, {_median(wall)} s wall."
    ]
    return "\n".join(lines + [f"- {n}" for n in notes])


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):.3f}" if values else "-"


def markdown(results: list[CaseResult], runs: int) -> str:
    lines = [
        "| primitive call | success | median planning (s) | median sim time (s) | median wall time (s) |",
        "|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| `{r.case.call}`{f' ({r.case.note})' if r.case.note else ''} | {r.successes}/{runs} "
            f"| {_median(r.planning)} | {_median(r.sim)} | {_median(r.wall)} |"
        )
    notes = [f"- `{r.case.call}` {n}" for r in results for n in r.notes]
    if notes:
        lines += ["", "Failures:", *notes]
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="seeded runs per call")
    parser.add_argument("--scene", default=str(config_path("scenes", "drawer_desk.yaml")))
    parser.add_argument("--primitives", default=str(config_path("primitives.yaml")))
    parser.add_argument("--only", default="", help="run only cases whose call contains this text")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    library = PrimitiveLibrary.load(args.primitives)
    print("No planner and no answers: each primitive call runs directly on the MuJoCo Panda (NOT an LLM).\n")
    t0 = time.perf_counter()
    results = []
    for case in CASES:
        if args.only and args.only not in case.call:
            continue
        results.append(run_case(case, library, Path(args.scene), args.runs))
        print(f"{case.call}: {results[-1].successes}/{args.runs}", file=sys.stderr, flush=True)
    print(markdown(results, args.runs))
    if not args.only:
        print("\n" + measure_drawer_task(library, Path(args.scene), args.runs))
        print("\n" + measure_cancel(library, Path(args.scene), args.runs))
    print(f"\n{args.runs} seeded runs per call, total wall time {time.perf_counter() - t0:.0f} s")
    return 0 if all(r.successes >= 0.9 * args.runs for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
