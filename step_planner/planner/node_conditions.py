"""Each node's facts, judged on the believed world: what holds, since which step, and what is still missing.

The root's facts are the instruction's goal (set by ``planner/goal_intake.py``); a child's are its
``success_when`` or, for a call, the call's observable effects. Every judgement of a node goes through
:meth:`NodeConditions.judge`, so the tree always shows the same verdict the planner acts on.
"""

from __future__ import annotations

from step_planner.domain.conditions import Condition, explain_failure, parse_fact
from step_planner.domain.primitives import PrimitiveCall, PrimitiveLibrary
from step_planner.planner.beliefs import Beliefs
from step_planner.planner.budget import Budget
from step_planner.planner.kinds import JudgedFrom
from step_planner.planner.tree import ConditionRecord, SubgoalTree

# effect term -> the fact it leaves behind (effects without an observable fact are not checked)
_EFFECT_FACTS = {"holding": "holding({0})", "released": "not holding({0})", "put": "at({0}, {1})",
                 "open": "open({0})", "closed": "closed({0})"}


def effect_facts(library: PrimitiveLibrary, call: PrimitiveCall) -> list[Condition]:
    """The observable facts a call's effects leave behind: what a call's node is judged by."""
    spec = library.get(call.name)
    if spec is None:
        return []
    return [parse_fact(template.format(*effect.bind(call.kwargs))) for effect in spec.effects
            if (template := _EFFECT_FACTS.get(effect.predicate)) is not None]


class NodeConditions:
    def __init__(self, tree: SubgoalTree, beliefs: Beliefs, budget: Budget) -> None:
        self.tree = tree
        self.beliefs = beliefs
        self.budget = budget
        self.picked_by: dict[str, int] = {}  # object -> the leaf that picked it up last

    def set(self, node_id: int, facts: list[Condition], source: str) -> None:
        """A child's facts (the root's are the goal's: ``GoalIntake.set_goal``)."""
        self.tree.set_conditions(node_id, [ConditionRecord(str(f)) for f in facts], source)
        self.judge(node_id)

    def facts(self, node_id: int) -> list[Condition]:
        return [parse_fact(c.text) for c in self.tree.node(node_id).conditions]

    def judge(self, node_id: int) -> bool:
        """Re-judge a node's conditions on the believed world; True when all hold."""
        node = self.tree.node(node_id)
        records = []
        for old in node.conditions:
            value, source = self.beliefs.judge(parse_fact(old.text))
            met = (old.met_after_step if old.met_after_step is not None else self.budget.primitives) if value else None
            records.append(ConditionRecord(old.text, value, source, met))
        self.tree.set_conditions(node_id, records)
        return bool(records) and all(r.holds for r in records)

    def judge_open_path(self, node_id: int) -> None:
        """After a primitive: re-judge the conditions of every open node on the active path."""
        for node in [*self.tree.ancestors(node_id), self.tree.node(node_id)]:
            if node.conditions and not node.status.finished:
                self.judge(node.id)

    def line(self, node_id: int) -> str:
        """``in(tape, drawer) (observation), closed(drawer) (belief)``: a node's facts and what judged them."""
        return ", ".join(f"{c.text} ({c.judged_from.value})" for c in self.tree.node(node_id).conditions)

    def unmet_text(self, node_id: int) -> str:
        parts = []
        for record in self.tree.node(node_id).conditions:
            if record.holds:
                continue
            fact = parse_fact(record.text)
            if record.judged_from is JudgedFrom.UNKNOWN:
                unseen = f"the inside of {fact.args[0]}" if fact.predicate == "empty" else ", ".join(fact.objects)
                parts.append(f"{record.text} ({unseen} not seen yet)")
            else:
                parts.append(f"{record.text} ({explain_failure(fact, {}, self.beliefs.world)})")
        if unfinished := self.half_done(node_id):
            parts.append(unfinished)
        return "; ".join(parts)

    def half_done(self, node_id: int) -> str:
        """What a subgoal leaves half-done although its facts may hold: an object picked up inside it
        still in the gripper, when none of its facts asks to hold it ('' when nothing)."""
        held = self.beliefs.world.held
        picker = self.picked_by.get(held or "")
        if held is None or picker is None or not (picker == node_id or self.tree.descends(picker, node_id)):
            return ""
        if any(f.predicate == "holding" and not f.negated and f.args[0] == held for f in self.facts(node_id)):
            return ""
        return f"the gripper still holds {held}, picked up for this subgoal: put it where it belongs"
