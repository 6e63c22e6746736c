"""Switchable planner features from the other papers, as plug-ins of the STEP loop.

A feature contributes prompt sections for a node and reacts to what happens (an observation, a
finished child); the loop itself only asks ``planner.has(name)`` where a feature changes a
decision (plan-ahead's planned children, control flow, the completion check).

| feature         | from     | what it does                                                        |
|-----------------|----------|---------------------------------------------------------------------|
| control_flow    | ReAcTree | children combine as sequence, fallback or parallel                  |
| working_memory  | ReAcTree | object -> where it was last seen, shown in prompts                  |
| episodic_memory | ReAcTree | similar solved subgoals retrieved (all-MiniLM-L6-v2) as examples    |
| self_revision   | TDP      | what a finished child changed is written into the pending plan      |
| plan_ahead      | ReCAP    | the remaining children are planned; a planned child runs without a  |
|                 |          | further LLM call when the previous one succeeded                    |
| summaries       | HiAgent  | finished subtrees become one-line summaries; rejected proposals of  |
|                 |          | resolved rounds are folded into a count                             |
| verify_done     | ours     | profiles without conditions: the LLM double-checks a 'done' claim   |
| overlap         | ours     | the next request is sent while the arm moves (planner/overlap.py)   |
| questions       | ours     | an ambiguous instruction may be answered with a question for the    |
|                 |          | person (planner/person.py); the answer goes into every later prompt |
"""

from __future__ import annotations

from dataclasses import dataclass, field

from step_planner.domain.world import WorldState
from step_planner.planner.memory import EpisodicMemory, WorkingMemory
from step_planner.planner.tree import SubgoalTree
from step_planner.planner.world_changes import summarize, world_facts

KNOWN_FEATURES = frozenset({"control_flow", "episodic_memory", "working_memory", "self_revision", "plan_ahead",
                            "summaries", "verify_done", "overlap", "questions"})


@dataclass
class ChildFinished:
    """What a feature is told when a child of ``parent`` ends."""

    tree: SubgoalTree
    parent: int
    child: int
    ok: bool
    reason: str
    before: WorldState  # the believed world before the child ran
    after: WorldState
    actions: int  # primitives executed inside the child's subtree


class Feature:
    name = ""

    def sections(self, tree: SubgoalTree, node_id: int, world: WorldState) -> list[str]:
        return []

    def on_observe(self, world: WorldState) -> None:
        pass

    def after_child(self, event: ChildFinished) -> None:
        pass


class WorkingMemoryFeature(Feature):
    name = "working_memory"

    def __init__(self) -> None:
        self.memory = WorkingMemory()

    def on_observe(self, world: WorldState) -> None:
        self.memory.update(world)

    def sections(self, tree: SubgoalTree, node_id: int, world: WorldState) -> list[str]:
        text = self.memory.render(world)
        return [f"## Working memory (where objects were last seen)\n{text}"] if text else []


class EpisodicMemoryFeature(Feature):
    name = "episodic_memory"

    def __init__(self, memory: EpisodicMemory) -> None:
        self.memory = memory
        self._examples: dict[int, str] = {}

    def sections(self, tree: SubgoalTree, node_id: int, world: WorldState) -> list[str]:
        if node_id not in self._examples:
            found = self.memory.retrieve(tree.node(node_id).text)
            self._examples[node_id] = "\n".join(e.render() for e in found)
        text = self._examples[node_id]
        return [f"## Examples of similar subgoals solved before\n{text}"] if text else []


@dataclass
class SelfRevisionFeature(Feature):
    name = "self_revision"
    learned: dict[int, list[str]] = field(default_factory=dict)

    def after_child(self, event: ChildFinished) -> None:
        if facts := world_facts(event.before, event.after):
            self.learned.setdefault(event.parent, []).extend(facts)

    def sections(self, tree: SubgoalTree, node_id: int, world: WorldState) -> list[str]:
        facts = self.learned.get(node_id)
        return ["## Learned from finished children\n" + "\n".join(f"- {f}" for f in facts)] if facts else []


class SummariesFeature(Feature):
    name = "summaries"

    def after_child(self, event: ChildFinished) -> None:
        if event.tree.node(event.child).children:
            facts = world_facts(event.before, event.after)
            event.tree.set_summary(event.child, summarize(event.ok, facts, event.actions, event.reason))


def make_features(names: frozenset[str], episodic: EpisodicMemory | None) -> list[Feature]:
    """The plug-ins for the switched-on features (flags without a plug-in are read by the loop)."""
    out: list[Feature] = []
    if "working_memory" in names:
        out.append(WorkingMemoryFeature())
    if "episodic_memory" in names and episodic is not None:
        out.append(EpisodicMemoryFeature(episodic))
    if "self_revision" in names:
        out.append(SelfRevisionFeature())
    if "summaries" in names:
        out.append(SummariesFeature())
    return out
