"""``step-planner bench``: compare planners on a task suite with identical answers and noise.

    step-planner bench --suite table3 --planners step,react,oneshot --noise 0,0.1,0.2 --seeds 3 \
        --backend symbolic --out results/

Without ``--base-url`` the answers come from the scripted expert (in process; ``--via-http``
serves it on a loopback OpenAI-compatible server to the real ``openai`` client). With
``--base-url/--model`` a real endpoint answers and ``--noise`` must be 0 (mistakes are injected
by the expert only). ``--record DIR`` keeps every exchange: over HTTP as one replayable JSON file
per exchange (``step_planner.llm.replay`` format, servable by ``ReplayHandler``), in process as
one JSONL file per run.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from step_planner.bench.planners import is_known, planner_names
from step_planner.execution.factory import BACKENDS
from step_planner.resources import config_path


def _floats(text: str) -> list[float]:
    try:
        values = [float(x) for x in text.split(",") if x.strip()]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"--noise takes comma-separated numbers: {exc}") from exc
    if not values or any(not 0 <= v <= 1 for v in values):
        raise argparse.ArgumentTypeError("--noise values must lie in [0, 1]")
    return values


def _planners(text: str) -> list[str]:
    names = [x.strip() for x in text.split(",") if x.strip()]
    if bad := [n for n in names if not is_known(n)]:
        raise argparse.ArgumentTypeError(f"unknown planners {bad}; known: {', '.join(planner_names())} "
                                         "(profiles in config/profiles.yaml), each optionally +FEATURE / -FEATURE")
    return names


def _mistakes(text: str) -> tuple[str, ...]:
    from step_planner.bench.mistakes import ALL_KINDS, MEANING_KINDS, MISTAKE_KINDS

    groups = {"step": MISTAKE_KINDS, "meaning": MEANING_KINDS, "all": ALL_KINDS}
    kinds: list[str] = []
    for word in (w.strip() for w in text.split(",") if w.strip()):
        if word not in groups and word not in ALL_KINDS:
            raise argparse.ArgumentTypeError(f"unknown mistake kind {word!r}; kinds: {', '.join(ALL_KINDS)}, "
                                             "or the groups step, meaning, all")
        kinds += groups.get(word, (word,))
    if not kinds:
        raise argparse.ArgumentTypeError("--mistakes needs at least one kind")
    return tuple(dict.fromkeys(kinds))


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="step-planner bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--suite", default="table3", help="suite name in config/tasks or a YAML path")
    p.add_argument("--planners", type=_planners, default=["grounded", "paper", "react"],
                   help="planner profiles (config/profiles.yaml), each optionally with +FEATURE / -FEATURE, "
                        "e.g. grounded,paper,grounded+summaries")
    p.add_argument("--noise", type=_floats, default=[0.0], help="injected-mistake rates, e.g. 0,0.1,0.2")
    p.add_argument("--mistakes", type=_mistakes, default=None,
                   help="which mistakes the expert injects at rate --noise: kinds of step_planner/bench/mistakes.py, "
                        "or the groups step (the default: STEP's error types and condition mistakes), meaning "
                        "(wrong readings held for a whole run: a group read narrowly, the wrong one of several, an "
                        "unseen thing named after its adjective, an object the words never refer to moved too "
                        "(extra_object) or instead of the named one (swapped_object)), all")
    p.add_argument("--seeds", type=int, default=1, help="seeds per (task, planner, noise)")
    p.add_argument("--tasks", help="only these task ids, categories, wording styles or phenomena (comma-separated)")
    p.add_argument("--backend", default="symbolic", choices=BACKENDS,
                   help="executor backend; controllers: a running MuJoCo robot (step-planner mujoco-robot), put into "
                        "each task's world through --scene-service")
    p.add_argument("--scene-service", default="/mujoco_robot/load_scene",
                   help="backend controllers: the robot's LoadScene service")
    p.add_argument("--out", default="results", help="output folder")
    p.add_argument("--base-url", help="a real OpenAI-compatible endpoint instead of the scripted expert")
    p.add_argument("--model", help="model name at --base-url")
    p.add_argument("--llm-config", default=str(config_path("llm.yaml")))
    p.add_argument("--via-http", action="store_true",
                   help="serve the scripted expert over a loopback HTTP server to the real openai client")
    p.add_argument("--call-style", default="mixed", choices=["call", "phrase", "mixed"],
                   help="how the expert writes primitive children")
    p.add_argument("--planner-config", default=str(config_path("bench.yaml")),
                   help="budgets (the profile comes from --planners); default config/bench.yaml")
    p.add_argument("--record", help="write every LLM exchange as JSONL under this folder")
    p.add_argument("--no-person", action="store_true",
                   help="nobody answers the model's questions (a question ends the goal CLARIFICATION_NEEDED); "
                        "default: the task's person answers from the task data (its `answer`)")
    p.add_argument("--confirm-goal", action="store_true",
                   help="the task's person confirms the goal the model states before motion: it accepts the task's "
                        "formal goal and corrects any other to it")
    p.add_argument("--check", action="store_true", help="validate the suite (and its optimal counts) and exit")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def _select(tasks: list, wanted: str | None) -> list:
    if not wanted:
        return tasks
    keys = {w.strip() for w in wanted.split(",") if w.strip()}
    chosen = [t for t in tasks if t.id in keys or t.category in keys or t.style in keys
              or getattr(t, "phenomenon", "") in keys]
    if not chosen:
        raise SystemExit(f"step-planner bench: no task matches {sorted(keys)}")
    return chosen


def _llm_settings(args: argparse.Namespace) -> dict[str, Any]:
    from step_planner.llm.config import load_llm_file

    data = load_llm_file(args.llm_config) if args.llm_config else {}
    if args.base_url:
        data["base_url"] = args.base_url
    if args.model:
        data["model"] = args.model
    return data


def _llm_factory(args: argparse.Namespace, library: Any, stack: ExitStack):
    """(factory, description of the answer source, tokenizer note)."""
    from step_planner.bench.expert import ScriptedExpert
    from step_planner.bench.mistakes import MISTAKE_KINDS
    from step_planner.bench.report import EXPERT_SOURCE
    from step_planner.bench.runner import in_process_expert, new_expert
    from step_planner.llm.client import LLMClient
    from step_planner.llm.config import LLMConfig
    from step_planner.llm.tokens import tokenizer_kind

    if args.base_url or args.via_http:
        try:
            from step_planner.llm.loopback import LoopbackServer
            from step_planner.llm.replay import RecordingHandler
        except ImportError as exc:
            raise SystemExit(f"step-planner bench: the LLM client is not available here ({exc})") from exc
        settings = _llm_settings(args)
        mistakes = args.mistakes or MISTAKE_KINDS
        current: dict[str, ScriptedExpert] = {}
        if args.base_url:
            upstream = args.base_url
            source = f"the model {settings.get('model')!r} at {args.base_url}"
        else:
            server = stack.enter_context(LoopbackServer(lambda request: current["expert"].handle(request)))
            upstream = server.base_url
            settings = {**settings, "model": "scripted-expert"}
            source = EXPERT_SOURCE + ", served over loopback HTTP to the openai client"
        settings["base_url"] = upstream
        if args.record:  # one replayable JSON file per exchange (step_planner.llm.replay format)
            # the proxy's upstream calls get the client's timeout; retries stay the client's (max_retries)
            recorder = RecordingHandler.for_config(upstream, Path(args.record), LLMConfig.from_dict(settings))
            stack.callback(recorder.close)
            settings["base_url"] = stack.enter_context(LoopbackServer(recorder)).base_url

        def over_http(task, noise, seed):
            expert = None
            if not args.base_url:
                expert = current["expert"] = new_expert(library, task, noise, seed, args.call_style, mistakes)
            return LLMClient(LLMConfig.from_dict(settings)), expert  # run_one closes it

        return over_http, source, "reported by the server (counted locally when it reports none)"

    in_process = in_process_expert(library, args.call_style, args.mistakes or MISTAKE_KINDS)
    return in_process, EXPERT_SOURCE + ", called in process", f"counted locally ({tokenizer_kind()})"


def main_bench(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from step_planner.bench.tasks import TaskError, check_optimal, load_suite
    from step_planner.domain.primitives import PrimitiveLibrary
    from step_planner.planner.config import ConfigError, PlannerConfig

    library = PrimitiveLibrary.load(config_path("primitives.yaml"))
    try:
        tasks = _select(load_suite(args.suite), args.tasks)
        config = PlannerConfig.from_yaml(args.planner_config)
    except (TaskError, ConfigError) as exc:
        print(f"step-planner bench: {exc}", file=sys.stderr)
        return 2
    if args.check:
        problems = check_optimal(tasks, library)
        print("\n".join(problems) if problems else f"{len(tasks)} tasks valid; optimal counts match the planner")
        return 1 if problems else 0
    if args.base_url and any(n > 0 for n in args.noise):
        print("step-planner bench: --noise > 0 needs the scripted expert (mistakes are injected by it)",
              file=sys.stderr)
        return 2
    if args.seeds < 1:
        print("step-planner bench: --seeds must be at least 1", file=sys.stderr)
        return 2
    stack = ExitStack()
    options = _backend_options(args, stack)
    if options is None:
        return 2
    with stack:
        return _sweep(args, argv, library, tasks, config, options)


def _backend_options(args: argparse.Namespace, stack: ExitStack) -> dict[str, Any] | None:
    """What make_executor needs besides the world: for controllers, one robot connection for the whole sweep."""
    if args.backend != "controllers":
        return {}
    from step_planner.execution.controllers.config import BoundaryConfig
    from step_planner.execution.controllers.connection import RobotConnection, RobotUnavailable

    config = BoundaryConfig.load(config_path("robot_boundary.yaml"))
    connection = RobotConnection(config, node_name="step_planner_bench")
    stack.callback(connection.close)
    try:
        connection.wait_ready()
    except RobotUnavailable as exc:
        print(f"step-planner bench: backend 'controllers' unavailable: {exc}", file=sys.stderr)
        return None
    return {"connection": connection, "load_scene": args.scene_service}


def _sweep(args: argparse.Namespace, argv: list[str] | None, library: Any, tasks: list, config: Any,
           options: dict[str, Any]) -> int:
    from step_planner.bench.report import write_report
    from step_planner.bench.runner import episodes, run_one
    from step_planner.execution.errors import BackendUnavailable
    from step_planner.execution.factory import make_executor

    usable: dict[str, str | None] = {}  # scene -> why the backend cannot build it (None: it can)
    for task in tasks:  # fail before the sweep, with the backend's own reason, when it cannot run
        if task.scene in usable:
            continue
        try:
            probe = make_executor(args.backend, library, task.fresh_world(), **options)
            if callable(close := getattr(probe, "close", None)):
                close()
            usable[task.scene] = None
        except BackendUnavailable as exc:
            print(f"step-planner bench: backend {args.backend!r} unavailable: {exc}", file=sys.stderr)
            return 2
        except Exception as exc:  # e.g. a scene without the geometry a simulator needs
            usable[task.scene] = f"{type(exc).__name__}: {exc}"
    if skipped := {s: why for s, why in usable.items() if why}:
        for scene, why in skipped.items():
            print(f"step-planner bench: skipping tasks in {scene} on {args.backend}: {why}", file=sys.stderr)
        tasks = [t for t in tasks if t.scene not in skipped]
        if not tasks:
            return 2
    from tqdm import tqdm

    out = Path(args.out)
    # in process: one JSONL per run; over HTTP the recording proxy writes replay files instead
    record = Path(args.record) if args.record and not (args.base_url or args.via_http) else None
    combos = list(episodes(tasks, args.planners, args.noise, args.seeds))
    started = time.perf_counter()
    records = []
    with ExitStack() as stack:
        make_llm, source, tokenizer = _llm_factory(args, library, stack)
        executor_factory = lambda lib, world: make_executor(args.backend, lib, world, **options)  # noqa: E731
        for task, planner, noise, seed in tqdm(combos, desc="bench", unit="run", disable=args.quiet, file=sys.stderr):
            records.append(run_one(task, planner, noise, seed, library=library, config=config,
                                   make_llm=make_llm, make_executor=executor_factory, record_dir=record,
                                   person=not args.no_person, confirm_goal=args.confirm_goal))
    meta = {
        "suite": args.suite, "tasks": len(tasks), "planners": args.planners, "noise": args.noise,
        "seeds": args.seeds, "backend": args.backend, "answer_source": source, "tokenizer": tokenizer,
        "runs": len(records), "wall_s": time.perf_counter() - started,
        "person": "none" if args.no_person else "the task's person (answers from the task data, not a person)",
        "confirm_goal": args.confirm_goal,
        "mistakes": list(args.mistakes) if args.mistakes else "step (the default kinds)",
        "command": "step-planner bench " + shlex.join(argv if argv is not None else sys.argv[1:]),
        "planner_config": config.to_dict(),
    }
    files = write_report(records, meta, out)
    print(Path(files["summary"]).read_text())
    print("wrote " + ", ".join(str(p) for p in files.values()))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main_bench())
