"""``step-planner replan EPISODE``: re-run planning against the recorded LLM answers.

The planner runs again, for real, through the ``openai`` client and a loopback server that plays
the recorded answers back in order. Each request is compared with the recorded one: after a
prompt or planner change the first differing request is reported (with a diff), and the new tree
is compared with the recorded tree node by node. Primitive outcomes come from the recording
(:class:`RecordedOutcomes`), so no robot, simulator or LLM is involved.
"""

from __future__ import annotations

import argparse
import difflib
import sys
import threading
from dataclasses import dataclass, field
from typing import Any

from step_planner.domain.primitives import PrimitiveCall, PrimitiveLibrary
from step_planner.domain.world import WorldState
from step_planner.episodes.bag import EpisodeError
from step_planner.episodes.episode import Episode, load_episode
from step_planner.execution.base import ExecCode, Outcome
from step_planner.execution.symbolic import SymbolicExecutor
from step_planner.planner.config import PlannerConfig
from step_planner.planner.result import GoalResult


@dataclass
class Divergence:
    index: int
    purpose: str
    diff: str


@dataclass
class PlaybackHandler:
    """Loopback-server handler: answers the i-th request with the i-th recorded answer."""

    exchanges: list[dict[str, Any]]
    divergences: list[Divergence] = field(default_factory=list)
    served: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, request: dict[str, Any]) -> str:
        with self._lock:
            i = self.served
            self.served += 1
        if i >= len(self.exchanges):
            self.divergences.append(Divergence(i, "?", "the new run asked more questions than were recorded"))
            return '{"done": true, "verdict": "replan", "reason": "no recorded answer"}'
        recorded = self.exchanges[i]
        old = _transcript(recorded.get("request", {}).get("messages", []))
        new = _transcript(request.get("messages", []))
        if old != new:
            diff = "\n".join(difflib.unified_diff(old.splitlines(), new.splitlines(), "recorded", "now", lineterm="",
                                                  n=1))
            self.divergences.append(Divergence(i, str(recorded.get("purpose", "?")), diff))
        return str(recorded.get("answer_text") or "")


def _transcript(messages: list[dict[str, Any]]) -> str:
    # the first request of a retry carries the corrective messages too; compare everything
    return "\n".join(f"[{m.get('role')}] {m.get('content')}" for m in messages)


class RecordedOutcomes(SymbolicExecutor):
    """Executes on the symbolic world but reports the recorded outcome for the recorded call."""

    def __init__(self, library: PrimitiveLibrary, episode: Episode) -> None:
        super().__init__(library, episode.initial_world or WorldState())
        self.steps = episode.steps
        self.index = 0
        self.mismatches: list[str] = []

    def execute(self, call: PrimitiveCall, cancel: threading.Event | None = None) -> Outcome:
        if self.index < len(self.steps):
            step = self.steps[self.index]
            self.index += 1
            recorded = PrimitiveCall.make(step["call"]["name"], step["call"].get("args") or {})
            if recorded == call:
                code = ExecCode(step["outcome"]["code"])
                if step.get("world_after"):
                    self.world = WorldState.from_dict(step["world_after"])
                elif code is ExecCode.SUCCESS:
                    return super().execute(call, cancel)
                return Outcome(code, step["outcome"].get("message", ""))
            self.mismatches.append(f"step {self.index - 1}: recorded {recorded}, now {call}")
        else:
            self.mismatches.append(f"step {self.index}: {call} was not in the recording")
        return super().execute(call, cancel)


def compare_trees(old: dict[str, Any] | None, new: dict[str, Any]) -> list[str]:
    """Node-by-node differences (text, status, call) between two tree snapshots."""
    if not old:
        return ["the recording has no tree to compare with"]
    differences = []
    old_nodes, new_nodes = old.get("nodes", []), new.get("nodes", [])
    for a, b in zip(old_nodes, new_nodes, strict=False):
        for key in ("parent", "text", "status", "call"):
            if a.get(key) != b.get(key):
                differences.append(f"node {a['id']}: {key} was {a.get(key)!r}, now {b.get(key)!r}")
    if len(old_nodes) != len(new_nodes):
        differences.append(f"the recorded tree has {len(old_nodes)} nodes, the new one {len(new_nodes)}")
    return differences


@dataclass
class ReplanReport:
    result: GoalResult
    divergences: list[Divergence]
    tree_differences: list[str]
    outcome_mismatches: list[str]

    @property
    def reproduced(self) -> bool:
        return not (self.divergences or self.tree_differences or self.outcome_mismatches)


def replan(episode: Episode, library: PrimitiveLibrary, config: PlannerConfig, llm_settings: dict[str, Any]
           ) -> ReplanReport:
    from step_planner.llm.client import LLMClient
    from step_planner.llm.config import LLMConfig
    from step_planner.llm.loopback import LoopbackServer
    from step_planner.planner.person import ReplayPerson, Reply
    from step_planner.planner.runner import run_goal

    answered = [e for e in episode.exchanges if e.get("answer_text") is not None and not e.get("error")]
    handler = PlaybackHandler(answered)
    executor = RecordedOutcomes(library, episode)
    dialogue = (episode.final_tree or {}).get("dialogue") or []  # the person's replies, replayed in order
    person = ReplayPerson(Reply.from_dict(d["reply"]) for d in dialogue)
    confirm = any(d.get("kind") == "goal_confirmation" for d in dialogue)
    with LoopbackServer(handler) as server:
        llm = LLMClient(LLMConfig.from_dict({**llm_settings, "base_url": server.base_url, "max_retries": 0}))
        result = run_goal(episode.goal["instruction"], library=library, executor=executor, llm=llm, config=config,
                          goal_id=str(episode.goal.get("goal_id", "")), person=person, confirm_goal=confirm)
    return ReplanReport(result, handler.divergences, compare_trees(episode.final_tree, result.tree),
                        executor.mismatches)


def main_replan(argv: list[str]) -> int:
    from step_planner.resources import config_dir

    parser = argparse.ArgumentParser(prog="step-planner replan", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("episode")
    parser.add_argument("--prompts-dir", help="prompt templates to try (default: the recorded run's)")
    args = parser.parse_args(argv)
    try:
        episode = load_episode(args.episode)
    except EpisodeError as exc:
        print(f"step-planner: {exc}", file=sys.stderr)
        return 2
    library = PrimitiveLibrary.load(config_dir() / "primitives.yaml")
    recorded = dict(episode.goal.get("config") or {})
    if args.prompts_dir:
        recorded["prompts_dir"] = args.prompts_dir
    config = PlannerConfig.from_dict(recorded)
    model = next((e.get("request", {}).get("model") for e in episode.exchanges if e.get("request")), None)
    report = replan(episode, library, config, {"model": model or "recorded"})
    for d in report.divergences[:1]:
        print(f"diverged at LLM exchange {d.index} ({d.purpose}):\n{d.diff}\n")
    for line in report.outcome_mismatches[:5]:
        print(f"primitive mismatch: {line}")
    for line in report.tree_differences[:20]:
        print(f"tree: {line}")
    if report.reproduced:
        print(f"reproduced: same {len(report.result.tree['nodes'])}-node tree, same "
              f"{len(report.result.executed)} primitives, {len(episode.exchanges)} recorded answers replayed")
        return 0
    print(f"\nNOT reproduced: {len(report.divergences)} differing requests, {len(report.tree_differences)} tree "
          f"differences, {len(report.outcome_mismatches)} primitive mismatches")
    return 1
