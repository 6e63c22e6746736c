"""What the joint speed cap costs in motion time (config/robot_boundary.yaml ``stop_within_s``).

    python benchmarks/speed_cap_cost.py --seeds 5

The in-process MuJoCo backend runs the drawer task's primitives (open the drawer, put the tape and the
screwdriver in, close it; no planner, no LLM) once with the motion stack's limits alone and once with the
boundary's cap, per scene seed (objects displaced by a few mm). Printed: simulated time in motion per run and in
total, capped / uncapped, side by side in one run. Motion time, not wall time: planning and the gripper are the
same on both sides, so this is the cap's whole cost.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CALLS = ("open_drawer(drawer)", "pick(tape)", "place(tape, drawer)", "pick(screwdriver)",
         "place(screwdriver, drawer)", "close_drawer(drawer)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5, help="scene seeds 0..N-1")
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
    cap = boundary.velocity_cap
    print(f"No planner and no answers (NOT an LLM): the drawer task's {len(CALLS)} primitives on the in-process "
          f"MuJoCo backend, seeds 0-{args.seeds - 1}; cap = stop_within_s {boundary.stop_within_s} s x "
          f"stop_deceleration = {list(cap) if cap else 'none'} rad/s.\n")
    totals = [0.0, 0.0]
    for seed in range(args.seeds):
        free, ok_free = motion_time(library, world, seed, None)
        capped, ok_capped = motion_time(library, world, seed, cap)
        totals[0] += free
        totals[1] += capped
        print(f"seed {seed}: in motion {free:.2f} s uncapped ({'all succeeded' if ok_free else 'a primitive FAILED'}), "
              f"{capped:.2f} s capped ({'all succeeded' if ok_capped else 'a primitive FAILED'}): "
              f"{capped / free:.3f}")
    print(f"\ntotal in motion: uncapped {totals[0]:.1f} s, capped {totals[1]:.1f} s, capped / uncapped = "
          f"{totals[1] / totals[0]:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
