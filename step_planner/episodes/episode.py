"""Load a recorded episode (either format, see ``bag.py``), and replay its primitive calls on any executor
without an LLM."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from step_planner.domain.primitives import PrimitiveCall
from step_planner.domain.world import WorldState
from step_planner.episodes.bag import PREFIX, STRING, EpisodeError, read_bag
from step_planner.execution.base import Executor


@dataclass(frozen=True)
class JointRecord:
    stamp_ns: int  # of the message header
    names: tuple[str, ...]
    position: tuple[float, ...]
    velocity: tuple[float, ...]
    effort: tuple[float, ...]
    received_ns: int = 0  # log time: when the recorder had it (the same as stamp_ns for sampled joint states)


@dataclass
class Episode:
    path: Path
    goal: dict[str, Any]
    steps: list[dict[str, Any]] = field(default_factory=list)
    exchanges: list[dict[str, Any]] = field(default_factory=list)
    trees: list[dict[str, Any]] = field(default_factory=list)
    tree_stamps_ns: list[int] = field(default_factory=list)  # log time of each of ``trees``
    result: dict[str, Any] | None = None
    format: int = 1  # 1: std_msgs/String JSON only; 2: typed (SubgoalTree, PrimitiveStep, joint states)
    typed_trees: int = 0  # SubgoalTree records (format 2)
    joint_states: list[JointRecord] = field(default_factory=list)  # backend sim, format 2; robot backends since
    # episodes record what their connection receives: then ``joint_source`` says from where (empty: sampled)
    joint_source: dict[str, Any] = field(default_factory=dict)
    robot_description: str = ""

    @property
    def joints_received(self) -> bool:
        """The joint states are the robot's own messages as they arrived (not samples at ``joint_rate_hz``)."""
        return bool(self.joint_source.get("received"))

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
    from step_planner.episodes.messages import step_document

    goal = None
    episode = Episode(root, {})
    for record in read_bag(root / "bag"):
        topic, string = record.topic, record.msgtype == STRING
        if topic == PREFIX + "goal":
            goal = record.document()
        elif topic == PREFIX + "primitive":
            episode.steps.append(record.document() if string else step_document(record.message))
        elif topic == PREFIX + "llm_exchange":
            episode.exchanges.append(record.document())
        elif topic == PREFIX + "tree" and string:  # format 1: the snapshot as JSON
            episode.trees.append(record.document())
            episode.tree_stamps_ns.append(record.stamp_ns)
        elif topic == PREFIX + "tree":
            episode.format, episode.typed_trees = 2, episode.typed_trees + 1
        elif topic == PREFIX + "tree_json":
            episode.trees.append(record.document())
            episode.tree_stamps_ns.append(record.stamp_ns)
        elif topic == PREFIX + "result":
            episode.result = record.document()
        elif topic == "/joint_states":
            m = record.message
            stamp = int(m.header.stamp.sec) * 1_000_000_000 + int(m.header.stamp.nanosec)
            episode.joint_states.append(JointRecord(stamp, tuple(m.name), tuple(map(float, m.position)),
                                                    tuple(map(float, m.velocity)), tuple(map(float, m.effort)),
                                                    record.stamp_ns))
        elif topic == PREFIX + "joint_states_source":
            episode.joint_source = record.document()
        elif topic == "/robot_description":
            episode.robot_description = record.message.data
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
