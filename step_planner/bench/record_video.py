"""Record an MP4 (and keyframe PNGs) of primitive calls executed in the simulation.

    MUJOCO_GL=egl python -m step_planner.bench.record_video --out episodes/drawer_task.mp4

Without ``--call`` it runs the drawer task of ``drawer_desk``. Each call's outcome is printed;
the recording stops at the first failure. With ``--task SUITE:ID`` the STEP planner runs that
benchmark task on the simulated Panda, answered by the scripted expert (not an LLM), and
``--strip`` writes a grid of keyframes as one PNG:

    MUJOCO_GL=egl python -m step_planner.bench.record_video --task long_horizon:lh12_put_everything_away \\
        --planner grounded --planner-config config/bench.yaml --out episodes/long.mp4 --strip strip.png
"""

from __future__ import annotations

import argparse
import sys

from step_planner.domain.primitives import PrimitiveLibrary
from step_planner.domain.scene import load_scene
from step_planner.resources import config_path

DRAWER_CALLS = (
    "open_drawer(drawer)",
    "pick(tape)",
    "place(tape, drawer)",
    "pick(screwdriver)",
    "place(screwdriver, drawer)",
    "close_drawer(drawer)",
)


def _run_calls(args: argparse.Namespace, library: PrimitiveLibrary):
    from step_planner.execution.sim.executor import SimExecutor

    executor = SimExecutor(library, load_scene(args.scene), seed=args.seed, video_path=args.out, render=True)
    ok = True
    try:
        for text in args.call or DRAWER_CALLS:
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
    return ok, executor, [str(c) for c in (args.call or DRAWER_CALLS)]


def _run_task(args: argparse.Namespace, library: PrimitiveLibrary):
    """The STEP planner on a suite task, the scripted expert answering, the sim executing."""
    from step_planner.bench.runner import in_process_expert, run_one
    from step_planner.bench.tasks import load_suite
    from step_planner.execution.sim.executor import SimExecutor
    from step_planner.planner.config import PlannerConfig

    suite, _, task_id = args.task.partition(":")
    task = next((t for t in load_suite(suite) if t.id == task_id), None)
    if task is None:
        raise SystemExit(f"no task {task_id!r} in the suite {suite!r}")
    made: list[SimExecutor] = []

    def make_executor(lib, world):
        made.append(SimExecutor(lib, world, seed=args.seed, video_path=args.out, render=True))
        return made[-1]

    config = PlannerConfig.from_yaml(args.planner_config)
    record = run_one(
        task,
        args.planner,
        0.0,
        args.seed,
        library=library,
        config=config,
        make_llm=in_process_expert(library),
        make_executor=make_executor,
    )
    print(
        f"{task.id} ({task.optimal} primitives optimal), planner {args.planner}, answers from the scripted expert "
        f"(not an LLM): success={record.success}, {record.primitives} primitives, {record.llm_calls} LLM calls, "
        f"{record.wall_s:.0f} s wall; {record.message}"
    )
    return record.success, made[-1], record.executed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scene", default=str(config_path("scenes", "drawer_desk.yaml")))
    parser.add_argument("--primitives", default=str(config_path("primitives.yaml")))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--call", action="append", help="a call such as 'pick(tape)' (repeatable)")
    parser.add_argument("--task", help="SUITE:TASK_ID, e.g. long_horizon:lh12_put_everything_away (runs the planner)")
    parser.add_argument("--planner", default="grounded",
                        help="with --task: the planner profile (config/profiles.yaml, as in step-planner bench)")
    parser.add_argument("--planner-config", default=str(config_path("planner.yaml")))
    parser.add_argument("--strip", help="also write a PNG grid of keyframes here")
    parser.add_argument("--strip-frames", type=int, default=12, help="keyframes in the strip")
    parser.add_argument("--out", default="episodes/sim_episode.mp4")
    args = parser.parse_args(argv)

    library = PrimitiveLibrary.load(args.primitives)
    ok, executor, calls = _run_task(args, library) if args.task else _run_calls(args, library)
    print(f"video: {args.out}  keyframes: {executor.keyframe_dir}")
    if args.strip and executor.keyframes:
        from step_planner.execution.sim.render import keyframe_strip

        frames = executor.keyframes
        n = min(args.strip_frames, len(frames))
        chosen = sorted({round(i * (len(frames) - 1) / max(1, n - 1)) for i in range(n)})
        named = len(calls) == len(frames)  # a refused call leaves no keyframe: then use the file names
        captions = [f"{i + 1}/{len(frames)}  {calls[i] if named else frames[i].stem}" for i in chosen]
        print(f"strip: {keyframe_strip([frames[i] for i in chosen], captions, args.strip)}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
