"""Record the answers that ship with the project, from the scripted expert (not an LLM).

    step-planner record-answers [--out config/replay] [--backend symbolic]

Runs each instruction of ``config/demo_tasks.yaml`` through the real planner and the real
``openai`` client, against a loopback server whose RecordingHandler forwards to a second loopback
server that hosts the scripted expert. Every exchange is stored as one reviewable JSON file keyed
by the request hash, which is what ``ReplayHandler`` serves to ``step-planner plan`` offline.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pydantic import Field, RootModel

from step_planner.bench.expert import ScriptedExpert
from step_planner.bench.goals import parse_goal
from step_planner.config_schema import ConfigModel, read_yaml, validate
from step_planner.domain.primitives import PrimitiveLibrary
from step_planner.domain.scene import load_scene
from step_planner.execution.factory import make_executor
from step_planner.llm.client import LLMClient
from step_planner.llm.config import LLMConfig
from step_planner.llm.loopback import LoopbackServer
from step_planner.llm.replay import RecordingHandler
from step_planner.planner.config import PlannerConfig
from step_planner.planner.result import GoalResult
from step_planner.planner.runner import run_goal

OFFLINE_MODEL = "gpt-4o-mini"  # the model name the offline answers are keyed under (config/llm.yaml default)


class DemoTask(ConfigModel):
    """An instruction whose answers ship with the project (config/replay/)."""

    instruction: str = Field(min_length=1, description="What `make demo` / `step-planner plan` is asked.")
    scene: str = Field(min_length=1, description="A file of config/scenes/.")
    goal: list[str] = Field(min_length=1, description="The scripted expert's goal: atoms of bench/goals.py.")


class DemoTasks(RootModel[list[DemoTask]]):
    """``config/demo_tasks.yaml``: the instructions `step-planner record-answers` records answers for."""


def load_demo_tasks(path: str | Path) -> list[DemoTask]:
    return validate(DemoTasks, read_yaml(path), str(path)).root


def record_answers(config_dir: Path, out: Path, backend: str = "symbolic") -> list[tuple[str, GoalResult, int]]:
    library = PrimitiveLibrary.load(config_dir / "primitives.yaml")
    planner_config = PlannerConfig.from_yaml(config_dir / "planner.yaml")
    tasks = load_demo_tasks(config_dir / "demo_tasks.yaml")
    expert = ScriptedExpert(library, seed=0, mistake_rate=0.0)
    results = []
    with LoopbackServer(expert) as upstream:
        recorder = RecordingHandler(upstream.base_url, out)
        with LoopbackServer(recorder) as front:
            llm = LLMClient(LLMConfig(model=OFFLINE_MODEL, base_url=front.base_url))
            for task in tasks:
                world = load_scene(config_dir / "scenes" / task.scene)
                expert.register(task.instruction, parse_goal(task.goal))
                before = len(recorder.recorded)
                executor = make_executor(backend, library, world)
                result = run_goal(task.instruction, library=library, executor=executor, llm=llm,
                                  config=planner_config)
                if hasattr(executor, "close"):
                    executor.close()
                results.append((task.instruction, result, len(recorder.recorded) - before))
        recorder.close()
    return results


def main(argv: list[str]) -> int:
    from step_planner.resources import config_dir

    parser = argparse.ArgumentParser(prog="step-planner record-answers", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(config_dir() / "replay"))
    parser.add_argument("--backend", default="symbolic", choices=["symbolic", "sim"])
    args = parser.parse_args(argv)
    ok = True
    for instruction, result, recorded in record_answers(config_dir(), Path(args.out), args.backend):
        status = "ok" if result.success else f"FAILED {result.error.value}: {result.message}"
        print(f"{instruction!r}: {status}; {len(result.executed)} primitives; {recorded} exchanges recorded")
        ok &= result.success
    print(f"answers (scripted expert, not an LLM) in {args.out}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
