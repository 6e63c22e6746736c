"""A proposed child, and the checks its words and facts pass before anyone judges it.

A child is refused before judgement when it has no words, repeats a subgoal above it, states facts that do
not parse or already hold, restates its parent (the same facts, no more said), or is about things its
parent does not need (a congruence challenge: proposed again unchanged, it is taken). A child with its
parent's facts is still a step when its words say which thing is meant (the parent's "the blue block" ->
blue_block_4) or when they describe the search for a thing not seen yet ("find the wrench and put it on the
work tray", ``search_words`` in ``config/primitives.yaml``), unless the parent already says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from step_planner.domain.conditions import Condition, parse_fact
from step_planner.domain.primitives import PrimitiveLibrary, call_shape
from step_planner.planner.beliefs import Beliefs
from step_planner.planner.grounding import check_subgoal_conditions, named_entities, relevant_entities
from step_planner.planner.tree import SubgoalTree


@dataclass
class ChildSpec:
    """A proposed child: its words, the call it is (if one action) and the facts that end it."""

    text: str
    call_text: str | None = None
    success_when: list[str] = field(default_factory=list)
    planned: bool = False  # taken from a plan, without an LLM call
    prepared: bool = False  # its answer was prepared while the arm was moving (overlap)

    @classmethod
    def from_answer(cls, raw: dict) -> ChildSpec:
        text = " ".join(str(raw.get("subgoal") or "").split())
        call = " ".join(str(raw.get("call") or "").split()) or None
        return cls(text or (call or ""), call, [str(s) for s in raw.get("success_when") or []])

    def line(self) -> str:
        """The child as a plan line: ``pick the tape [pick(object=tape)] (when: holding(tape))``."""
        line = self.text
        if self.call_text and self.call_text != self.text:
            line += f" [{self.call_text}]"
        if self.success_when:
            line += f" (when: {', '.join(self.success_when)})"
        return line

    def is_search(self, library: PrimitiveLibrary) -> bool:
        """A child that only looks: one call of a primitive whose effect is opening something."""
        call = self.call_text or (self.text if call_shape(self.text) else "")
        prim = library.get(call.split("(")[0].strip()) if call else None
        return prim is not None and any(e.predicate == "open" for e in prim.effects)


@dataclass(frozen=True)
class ChildCheck:
    """A child's facts, or why it is refused ('' when it is not) and whether that is a congruence challenge."""

    facts: list[Condition]
    problem: str = ""
    challenge: bool = False


def says_search(text: str, library: PrimitiveLibrary) -> bool:
    """The words describe looking for something ("find", "look for", ``search_words``)."""
    padded = f" {' '.join(re.sub(r'[^a-z ]', ' ', text.lower()).split())} "
    return any(f" {w} " in padded for w in library.search_words)


def check_child(spec: ChildSpec, node_id: int, tree: SubgoalTree, beliefs: Beliefs, library: PrimitiveLibrary,
                *, conditions: bool, challenged: set[str]) -> ChildCheck:
    """Check a proposed child of ``node_id`` (``conditions``: the profile states facts for its subgoals)."""
    node = tree.node(node_id)
    text = spec.text
    if not text:
        return ChildCheck([], "the proposal has no subgoal text")
    lineage = {a.text.lower() for a in tree.ancestors(node_id)} | {node.text.lower()}
    if text.lower() in lineage:
        return ChildCheck([], f"'{text}' repeats the subgoal it should decompose")
    if not conditions or spec.call_text or call_shape(text):
        return ChildCheck([])
    unseen = {o for n in (*tree.ancestors(node_id), node) for c in n.conditions
              for o in parse_fact(c.text).objects if not beliefs.knows(o)}
    checked = check_subgoal_conditions(spec.success_when, text, unseen, beliefs)
    if checked.problems:
        return ChildCheck([], "; ".join(checked.problems))
    parent_facts = [parse_fact(c.text) for c in node.conditions]
    searching = (any(not beliefs.knows(o) for f in checked.facts for o in f.objects)
                 and says_search(text, library) and not says_search(node.text, library))
    if parent_facts and set(parent_facts) <= set(checked.facts) and not searching and not (
            named_entities(text, beliefs.world) - named_entities(node.text, beliefs.world)):
        # a child with its parent's facts is a step only when its words say which thing (the parent's
        # "the blue block" -> blue_block_4) or how to find it; otherwise it restates the parent
        return ChildCheck([], f"'{text}' restates its parent (the same facts); propose a smaller step")
    needed = relevant_entities(parent_facts, node.text, beliefs)
    named = {a for f in checked.facts for a in f.args}
    if named and not named & needed and text not in challenged:
        return ChildCheck([], (f"'{text}' is about {', '.join(sorted(named))}, which '{node.text}' does not need "
                               f"({', '.join(sorted(needed)) or 'nothing it can name'}). If it really is needed, "
                               "propose it again unchanged; otherwise propose a step toward what is still missing"),
                          True)
    return ChildCheck(checked.facts)
