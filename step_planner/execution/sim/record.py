"""Record an MP4 (and keyframe PNGs) of primitive calls executed in the simulation.

    MUJOCO_GL=egl python -m step_planner.execution.sim.record --out episodes/drawer_task.mp4

Without ``--call`` it runs the drawer task of ``drawer_desk``. Each call's outcome is printed;
the recording stops at the first failure.
"""

from __future__ import annotations

import argparse
import sys

from step_planner.domain.primitives import PrimitiveLibrary
from step_planner.domain.scene import load_scene
from step_planner.resources import config_path

DRAWER_TASK = (
    "open_drawer(drawer)",
    "pick(tape)",
    "place(tape, drawer)",
    "pick(screwdriver)",
    "place(screwdriver, drawer)",
    "close_drawer(drawer)",
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scene", default=str(config_path("scenes", "drawer_desk.yaml")))
    parser.add_argument("--primitives", default=str(config_path("primitives.yaml")))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--call", action="append", help="a call such as 'pick(tape)' (repeatable)")
    parser.add_argument("--out", default="episodes/sim_episode.mp4")
    args = parser.parse_args(argv)

    from step_planner.execution.sim.executor import SimExecutor

    library = PrimitiveLibrary.load(args.primitives)
    executor = SimExecutor(library, load_scene(args.scene), seed=args.seed, video_path=args.out, render=True)
    ok = True
    try:
        for text in args.call or DRAWER_TASK:
            call = library.parse_call_text(text)
            if call is None:
                print(f"not a primitive call: {text!r}", file=sys.stderr)
                ok = False
                break
            outcome = executor.execute(call)
            print(f"{call}: {outcome.code.value} {outcome.message}")
            if not outcome.success:
                ok = False
                break
        print(executor.observe().observed().describe())
    finally:
        executor.close()
    print(f"video: {args.out}  keyframes: {executor.keyframe_dir}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
