"""What the joint speed cap costs in motion time (config/robot_boundary.yaml ``stop_within_s``).

    python benchmarks/speed_cap_cost.py --seeds 5
    python benchmarks/speed_cap_cost.py --seeds 5 --stop-within-s 0.08 0.05   # several caps side by side

The in-process MuJoCo backend runs the drawer task's primitives (open the drawer, put the tape and the
screwdriver in, close it; no planner, no LLM) once with the motion stack's limits alone and once with the
boundary's cap, per scene seed (objects displaced by a few mm). Printed: simulated time in motion per run and in
total, capped / uncapped, side by side in one run. Motion time, not wall time: planning and the gripper are the
same on both sides, so this is the cap's whole cost.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CALLS = ("open_drawer(drawer)", "pick(tape)", "place(tape, drawer)", "pick(screwdriver)",
         "place(screwdriver, drawer)", "close_drawer(drawer)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5, help="scene seeds 0..N-1")
    parser.add_argument("--stop-within-s", type=float, nargs="+", default=None,
                        help="caps to compare (s; default: robot_boundary.yaml's stop_within_s)")
    return parser


def motion_time(library, world, seed: int, cap) -> tuple[float, bool]:
    from step_planner.execution.sim.executor import SimExecutor

    ex = SimExecutor(library, world, seed=seed, velocity_cap=cap)
    try:
        total, ok = 0.0, True
        for text in CALLS:
            outcome = ex.execute(library.parse_call_text(text))
            ok &= outcome.success
            total += float(outcome.details.get("moving_sim_s", 0.0))
        return total, ok
    finally:
        ex.close()


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from step_planner.domain.primitives import PrimitiveLibrary
    from step_planner.domain.scene import load_scene
    from step_planner.execution.controllers.config import BoundaryConfig
    from step_planner.resources import config_path

    library = PrimitiveLibrary.load(config_path("primitives.yaml"))
    world = load_scene(config_path("scenes", "drawer_desk.yaml"))
    boundary = BoundaryConfig.load(config_path("robot_boundary.yaml"))
    stops = args.stop_within_s or [boundary.stop_within_s]
    caps = [dataclasses.replace(boundary, stop_within_s=s).velocity_cap for s in stops]
    print(f"No planner and no answers (NOT an LLM): the drawer task's {len(CALLS)} primitives on the in-process "
          f"MuJoCo backend, seeds 0-{args.seeds - 1}; cap = stop_within_s x stop_deceleration "
          f"{list(boundary.arm.stop_deceleration)} rad/s^2: "
          + "; ".join(f"{s} s: {[round(v, 3) for v in cap] if cap else 'none'} rad/s" for s, cap in zip(stops, caps,
                                                                                                      strict=True))
          + ".\n")
    totals = [0.0] * (1 + len(caps))
    for seed in range(args.seeds):
        free, ok_free = motion_time(library, world, seed, None)
        totals[0] += free
        parts = []
        for n, (stop, cap) in enumerate(zip(stops, caps, strict=True), start=1):
            capped, ok_capped = motion_time(library, world, seed, cap)
            totals[n] += capped
            parts.append(f"{capped:.2f} s capped at {stop} s ({'all succeeded' if ok_capped else 'a primitive FAILED'})"
                         f": {capped / free:.3f}")
        print(f"seed {seed}: in motion {free:.2f} s uncapped ({'all succeeded' if ok_free else 'a primitive FAILED'}), "
              + ", ".join(parts))
    print(f"\ntotal in motion: uncapped {totals[0]:.1f} s, "
          + ", ".join(f"capped at {stop} s {totals[n]:.1f} s, capped / uncapped = {totals[n] / totals[0]:.3f}"
                      for n, stop in enumerate(stops, start=1)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
