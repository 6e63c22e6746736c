"""Planner-core speed and the contextual gap (issue 2), with a zero-latency scripted model.

    python benchmarks/core_perf.py

Prints three figures, each measured in this run:
1. planner overhead per decision (excluding LLM and executor time) on a tree of ~200 nodes;
2. tree snapshot -> JSON time for a 500-node tree;
3. the contextual gap on a 30-primitive task: largest decomposition prompt (tokens) in the last
   fifth of the run vs the first fifth.
The model is scripted (answers from a fixed plan), so these figures measure the planner, not an LLM.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "test"))

from conftest import ScriptedLLM, table_plan  # noqa: E402

from step_planner.domain.primitives import PrimitiveLibrary  # noqa: E402
from step_planner.domain.scene import scene_from_dict  # noqa: E402
from step_planner.execution.symbolic import SymbolicExecutor  # noqa: E402
from step_planner.planner.config import PlannerConfig  # noqa: E402
from step_planner.planner.runner import run_goal  # noqa: E402
from step_planner.planner.tree import NodeStatus, SubgoalTree  # noqa: E402

try:
    from step_planner.llm.tokens import count_tokens  # noqa: E402

    TOKENIZER = "all-MiniLM-L6-v2 WordPiece (offline)"
except ImportError:  # pragma: no cover
    def count_tokens(text: str) -> int:
        return len(text) // 4 + 1

    TOKENIZER = "chars/4 estimate"


def blocks_scene(n: int) -> dict:
    return {
        "places": [{"name": "table"}, {"name": "tray", "kind": "tray"}],
        "objects": [{"name": f"block_{i}", "category": "block", "at": "table"} for i in range(n)],
    }


def hierarchical_plan(task: str, groups: int, per_group: int) -> dict[str, list[str]]:
    plans: dict[str, list[str]] = {task: []}
    for g in range(groups):
        group = f"put blocks {g * per_group} to {g * per_group + per_group - 1} on the tray"
        plans[task].append(group)
        plans[group] = []
        for i in range(g * per_group, (g + 1) * per_group):
            item = f"put block_{i} on the tray"
            plans[group].append(item)
            plans[item] = [f"pick(block_{i})", f"place(block_{i}, tray)"]
    return plans


class Timed:
    """Wraps the model and the executor to time what is *not* the planner."""

    def __init__(self) -> None:
        self.marks: list[tuple[float, float]] = []  # (start, end) of every external call

    def wrap_llm(self, llm):
        outer = self

        class _LLM:
            def complete(self, messages, schema, purpose):
                t0 = time.perf_counter()
                try:
                    return llm.complete(messages, schema, purpose)
                finally:
                    outer.marks.append((t0, time.perf_counter()))

        return _LLM()

    def wrap_executor(self, ex):
        outer = self

        class _Ex:
            def execute(self, call, cancel=None):
                t0 = time.perf_counter()
                try:
                    return ex.execute(call, cancel)
                finally:
                    outer.marks.append((t0, time.perf_counter()))

            def observe(self):
                t0 = time.perf_counter()
                try:
                    return ex.observe()
                finally:
                    outer.marks.append((t0, time.perf_counter()))

            def reset(self, world):
                ex.reset(world)

        return _Ex()

    def planner_gaps(self) -> list[float]:
        return [b[0] - a[1] for a, b in zip(self.marks, self.marks[1:], strict=False)]


def overhead_per_decision(library: PrimitiveLibrary) -> tuple[int, float, float, int]:
    task = "put all the blocks on the tray"
    plans = hierarchical_plan(task, groups=8, per_group=8)  # 1 + 8 + 64 + 128 = 201 nodes
    timer = Timed()
    world = scene_from_dict(blocks_scene(64))
    config = PlannerConfig.from_dict({"max_children": 10, "max_llm_calls": 1000, "max_primitives": 200})
    result = run_goal(task, library=library, executor=timer.wrap_executor(SymbolicExecutor(library, world)),
                      llm=timer.wrap_llm(ScriptedLLM(table_plan(plans))), config=config)
    assert result.success, result.message
    gaps = timer.planner_gaps()
    return len(result.tree["nodes"]), statistics.median(gaps) * 1e3, max(gaps) * 1e3, len(gaps)


def snapshot_time(n: int = 500) -> float:
    tree = SubgoalTree("a long task")
    parents = [tree.root]
    while len(tree.nodes) < n:
        node = tree.add_node(f"subgoal number {len(tree.nodes)} with some words", parents[len(tree.nodes) // 8])
        tree.add_verdict(node.id, "decompose", "needs more than one action", "llm")
        tree.set_status(node.id, NodeStatus.SUCCEEDED)
        parents.append(node.id)
    runs = []
    for _ in range(30):
        t0 = time.perf_counter()
        json.dumps(tree.snapshot())
        runs.append(time.perf_counter() - t0)
    return statistics.median(runs) * 1e3


def contextual_gap(library: PrimitiveLibrary) -> tuple[int, int, int, float]:
    task = "put all the blocks on the tray"
    plans = hierarchical_plan(task, groups=3, per_group=5)  # 15 pick/place pairs = 30 primitives
    llm = ScriptedLLM(table_plan(plans))
    world = scene_from_dict(blocks_scene(15))
    result = run_goal(task, library=library, executor=SymbolicExecutor(library, world), llm=llm,
                      config=PlannerConfig.from_dict({"max_llm_calls": 200, "max_primitives": 60}))
    assert result.success and len(result.executed) == 30
    sizes = [count_tokens(u) for p, u in llm.prompts if p == "decomposition"]
    fifth = max(1, len(sizes) // 5)
    start, end = max(sizes[:fifth]), max(sizes[-fifth:])
    return len(result.executed), start, end, end / start


def main() -> None:
    library = PrimitiveLibrary.load(ROOT / "config" / "primitives.yaml")
    nodes, median_ms, max_ms, samples = overhead_per_decision(library)
    print(f"planner overhead per decision ({nodes}-node tree, {samples} decisions): "
          f"median {median_ms:.3f} ms, max {max_ms:.3f} ms   [target: median < 2 ms]")
    print(f"snapshot -> JSON, 500-node tree: median {snapshot_time():.3f} ms   [target: < 10 ms]")
    prims, start, end, ratio = contextual_gap(library)
    print(f"contextual gap, {prims} primitives: largest decomposition prompt (user message) first fifth "
          f"{start} tokens, last fifth {end} tokens, ratio {ratio:.2f}   [target: <= 1.3]  (tokens: {TOKENIZER})")


if __name__ == "__main__":
    main()
