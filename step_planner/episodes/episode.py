"""Load a recorded episode, and replay its primitive calls on any executor without an LLM."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from step_planner.domain.primitives import PrimitiveCall
from step_planner.domain.world import WorldState
from step_planner.episodes.bag import EpisodeError, read_bag
from step_planner.execution.base import Executor


@dataclass
class Episode:
    path: Path
    goal: dict[str, Any]
    steps: list[dict[str, Any]] = field(default_factory=list)
    exchanges: list[dict[str, Any]] = field(default_factory=list)
    trees: list[dict[str, Any]] = field(default_factory=list)
    result: dict[str, Any] | None = None

    @property
    def initial_world(self) -> WorldState | None:
        return WorldState.from_dict(self.goal["world"]) if self.goal.get("world") else None

    @property
    def final_tree(self) -> dict[str, Any] | None:
        return self.trees[-1] if self.trees else None


def load_episode(path: str | Path) -> Episode:
    """Read an episode folder (or its ``bag`` subfolder); EpisodeError says what is wrong."""
    root = Path(path)
    if root.name == "bag":
        root = root.parent
    if not root.exists():
        raise EpisodeError(f"no episode at {root}")
    goal = None
    episode = Episode(root, {})
    for topic, _, doc in read_bag(root / "bag"):
        if topic == "goal":
            goal = doc
        elif topic == "primitive":
            episode.steps.append(doc)
        elif topic == "llm_exchange":
            episode.exchanges.append(doc)
        elif topic == "tree":
            episode.trees.append(doc)
        elif topic == "result":
            episode.result = doc
    if goal is None:
        raise EpisodeError(f"{root}: the episode has no goal record (truncated?)")
    episode.goal = goal
    if episode.result is None:
        summary = root / "summary.json"
        note = "" if summary.exists() else " and no summary.json"
        raise EpisodeError(f"{root}: the episode has no result record{note}: it was cut off while recording")
    for i, step in enumerate(episode.steps):
        if not isinstance(step.get("call"), dict) or "name" not in step["call"]:
            raise EpisodeError(f"{root}: primitive record {i} has no call")
    return episode


@dataclass
class StepComparison:
    index: int
    call: str
    recorded: str
    replayed: str
    message: str

    @property
    def matches(self) -> bool:
        return self.recorded == self.replayed


def replay_episode(episode: Episode, executor: Executor, cancel: threading.Event | None = None,
                   reset: bool = True) -> list[StepComparison]:
    """Re-execute the recorded calls in order; compare each outcome code with the recording."""
    if reset and episode.initial_world is not None:
        executor.reset(episode.initial_world)
    comparisons = []
    for i, step in enumerate(episode.steps):
        call = PrimitiveCall.make(step["call"]["name"], step["call"].get("args") or {})
        try:
            outcome = executor.execute(call, cancel)
            code, message = outcome.code.value, outcome.message
        except Exception as exc:  # report, don't crash: a replay is a diagnosis tool
            code, message = "BACKEND_ERROR", f"{type(exc).__name__}: {exc}"
        comparisons.append(StepComparison(i, str(call), step["outcome"]["code"], code, message))
        if cancel is not None and cancel.is_set():
            break
    return comparisons


def comparison_table(comparisons: list[StepComparison]) -> str:
    lines = ["| # | call | recorded | replayed | match |", "|---|---|---|---|---|"]
    for c in comparisons:
        lines.append(f"| {c.index} | {c.call} | {c.recorded} | {c.replayed} | {'yes' if c.matches else 'NO'} |")
    return "\n".join(lines)


def summary_of(path: str | Path) -> dict[str, Any]:
    try:
        return json.loads((Path(path) / "summary.json").read_text())
    except (OSError, ValueError) as exc:
        raise EpisodeError(f"{path}: no readable summary.json: {exc}") from exc
