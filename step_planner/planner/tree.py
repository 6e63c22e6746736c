"""The STEP subgoal tree: nodes with stable ids, statuses, verdicts, conditions and change events.

The tree is a plain object; publishers, recorders and printers observe it through
:class:`TreeListener` and never reach into the planner. Every change bumps ``revision``.

Snapshot schema (``SubgoalTree.snapshot()``, schema id ``step_planner/tree/v2``)::

    {"schema": "step_planner/tree/v2", "goal_id": str, "instruction": str,
     "revision": int, "root": int, "active": int | null,
     "waiting_for": {"kind": "goal_confirmation|question", "text": str, "facts": [str], "words": [str]} | null,
     "dialogue": [{"kind": "goal_confirmation|question", "text": str, "facts": [str], "words": [str],
                   "reply": {"kind": "accept|correct|refuse|answer|no_answer|canceled", "text": str,
                             "facts": [str]}}],
     "readings": [{"said": str, "resolved": [str], "candidates": [str], "from": str}],
     "nodes": [{"id": int, "parent": int | null, "children": [int], "depth": int,
                "text": str, "status": "pending|expanding|executing|succeeded|failed|abandoned",
                "control": "sequence|fallback|parallel",
                "call": {"name": str, "args": {str: str}} | null,
                "conditions": [{"text": str, "holds": bool,
                                "judged_from": "observation|belief|unknown",
                                "met_after_step": int | null}],
                "conditions_from": "model|effects|client|" ,
                "verdicts": [{"verdict": "execute|decompose|replan|done|rejected|stopped", "reason": str,
                              "source": "deterministic|conditions|congruence|llm|validation|control_flow|
                                         executor|budget|cancel"}],
                "outcome": {"code": str, "message": str, ...} | null,
                "summary": str | null,
                "prepared": bool}]}

``waiting_for`` is what the goal waits for from the person now (its interpreted goal to be confirmed, or
the model's question to be answered); ``dialogue`` is every such exchange so far, with the person's reply
(answers to questions are part of every later prompt). ``readings`` are the references of the instruction
that several things fit and the goal resolved ("the blue block" -> blue_block_4), with where that came from:
the person's answer, or the model's reading of words that describe it. ``conditions_from`` is ``person`` for a goal the
person corrected. ``conditions`` are the node's ``success_when`` (the instruction's goal on the root) with their
truth when last judged; ``met_after_step`` is the number of primitives executed when a condition
was first seen to hold (0: before any). ``prepared`` marks a node whose proposal was prepared
while the arm was still moving (the overlap feature). Nodes are listed in id order (ids are
creation order and never reused). v1 snapshots (no conditions) and v2 snapshots written before the dialogue
fields are read by :func:`upgrade`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Protocol

from step_planner.domain.primitives import PrimitiveCall
from step_planner.planner.kinds import Control, JudgedFrom, NodeStatus, VerdictKind, VerdictSource

SCHEMA_ID = "step_planner/tree/v2"
_log = logging.getLogger(__name__)

__all__ = ["SCHEMA_ID", "ConditionRecord", "NodeStatus", "SubgoalNode", "SubgoalTree", "TreeEvent",
           "TreeListener", "VerdictRecord", "upgrade"]


@dataclass(frozen=True)
class VerdictRecord:
    verdict: VerdictKind
    reason: str
    source: VerdictSource

    def to_dict(self) -> dict[str, str]:
        return {"verdict": self.verdict.value, "reason": self.reason, "source": self.source.value}


@dataclass(frozen=True)
class ConditionRecord:
    text: str
    holds: bool = False
    judged_from: JudgedFrom = JudgedFrom.UNKNOWN
    met_after_step: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "holds": self.holds, "judged_from": self.judged_from.value,
                "met_after_step": self.met_after_step}


@dataclass
class SubgoalNode:
    id: int
    text: str
    parent: int | None
    depth: int
    status: NodeStatus = NodeStatus.PENDING
    children: list[int] = field(default_factory=list)
    control: Control = Control.SEQUENCE
    call: PrimitiveCall | None = None
    conditions: list[ConditionRecord] = field(default_factory=list)
    conditions_from: str = ""  # model | effects | client | person ('' when the node has none)
    verdicts: list[VerdictRecord] = field(default_factory=list)
    outcome: dict[str, Any] | None = None
    summary: str | None = None
    prepared: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "parent": self.parent,
            "children": list(self.children),
            "depth": self.depth,
            "text": self.text,
            "status": self.status.value,
            "control": self.control.value,
            "call": self.call.to_dict() if self.call else None,
            "conditions": [c.to_dict() for c in self.conditions],
            "conditions_from": self.conditions_from,
            "verdicts": [v.to_dict() for v in self.verdicts],
            "outcome": self.outcome,
            "summary": self.summary,
            "prepared": self.prepared,
        }


@dataclass(frozen=True)
class TreeEvent:
    """What changed: ``kind`` is added | status | verdict | call | conditions | outcome | summary | active."""

    kind: str
    node_id: int
    revision: int


class TreeListener(Protocol):
    def on_tree_event(self, event: TreeEvent, tree: SubgoalTree) -> None: ...


class SubgoalTree:
    def __init__(self, instruction: str, goal_id: str = "") -> None:
        self.goal_id = goal_id
        self.instruction = instruction
        self.revision = 0
        self.active: int | None = None
        self.nodes: dict[int, SubgoalNode] = {}
        self.waiting_for: dict[str, Any] | None = None  # what the goal waits for from the person now
        self.dialogue: list[dict[str, Any]] = []  # every request to the person, with the reply
        self.readings: list[dict[str, Any]] = []  # references the goal resolved, with where from
        self._listeners: list[TreeListener] = []
        self.root = self.add_node(instruction, parent=None).id

    # ---- listeners -------------------------------------------------------------------------
    def add_listener(self, listener: TreeListener) -> None:
        self._listeners.append(listener)

    def _emit(self, kind: str, node_id: int) -> None:
        self.revision += 1
        event = TreeEvent(kind, node_id, self.revision)
        for listener in list(self._listeners):
            try:
                listener.on_tree_event(event, self)
            except Exception:  # an observer's bug must not stop the robot's plan
                _log.exception("tree listener %r failed on %s", listener, event)

    # ---- structure -------------------------------------------------------------------------
    def add_node(self, text: str, parent: int | None) -> SubgoalNode:
        node_id = len(self.nodes)
        depth = 0 if parent is None else self.nodes[parent].depth + 1
        node = SubgoalNode(node_id, text, parent, depth)
        self.nodes[node_id] = node
        if parent is not None:
            self.nodes[parent].children.append(node_id)
        self._emit("added", node_id)
        return node

    def node(self, node_id: int) -> SubgoalNode:
        return self.nodes[node_id]

    def children(self, node_id: int) -> list[SubgoalNode]:
        return [self.nodes[c] for c in self.nodes[node_id].children]

    def ancestors(self, node_id: int) -> list[SubgoalNode]:
        """From the root down to the node's parent."""
        chain: list[SubgoalNode] = []
        parent = self.nodes[node_id].parent
        while parent is not None:
            chain.append(self.nodes[parent])
            parent = self.nodes[parent].parent
        return chain[::-1]

    def descends(self, node_id: int, ancestor: int) -> bool:
        return any(a.id == ancestor for a in self.ancestors(node_id))

    def leaves(self) -> list[SubgoalNode]:
        return [n for n in self.nodes.values() if not n.children and n.call is not None]

    # ---- mutation (each emits one event) ----------------------------------------------------
    def set_status(self, node_id: int, status: NodeStatus) -> None:
        node = self.nodes[node_id]
        if node.status is not status:
            node.status = status
            self._emit("status", node_id)

    def add_verdict(self, node_id: int, verdict: VerdictKind, reason: str, source: VerdictSource) -> None:
        self.nodes[node_id].verdicts.append(VerdictRecord(verdict, reason, source))
        self._emit("verdict", node_id)

    def set_call(self, node_id: int, call: PrimitiveCall) -> None:
        self.nodes[node_id].call = call
        self._emit("call", node_id)

    def set_conditions(self, node_id: int, records: list[ConditionRecord], source: str | None = None) -> None:
        """Replace a node's conditions (their truth re-judged); emits only when something changed."""
        node = self.nodes[node_id]
        changed = records != node.conditions or (source is not None and source != node.conditions_from)
        node.conditions = list(records)
        if source is not None:
            node.conditions_from = source
        if changed:
            self._emit("conditions", node_id)

    def set_outcome(self, node_id: int, outcome: dict[str, Any]) -> None:
        self.nodes[node_id].outcome = outcome
        self._emit("outcome", node_id)

    def set_control(self, node_id: int, control: Control) -> None:
        self.nodes[node_id].control = control

    def set_prepared(self, node_id: int) -> None:
        self.nodes[node_id].prepared = True
        self._emit("prepared", node_id)

    def set_summary(self, node_id: int, summary: str) -> None:
        self.nodes[node_id].summary = summary
        self._emit("summary", node_id)

    def set_active(self, node_id: int | None) -> None:
        if self.active != node_id:
            self.active = node_id
            self._emit("active", -1 if node_id is None else node_id)

    def set_waiting(self, request: dict[str, Any] | None) -> None:
        """The goal now waits for the person (``Ask.to_dict()``), or no longer (None)."""
        if request != self.waiting_for:
            self.waiting_for = request
            self._emit("waiting", self.root)

    def add_dialogue(self, request: dict[str, Any], reply: dict[str, Any]) -> None:
        self.dialogue.append({**request, "reply": reply})
        self._emit("dialogue", self.root)

    def set_readings(self, readings: list[dict[str, Any]]) -> None:
        """How the goal reads the instruction's references several things fit (see the module doc)."""
        if readings != self.readings:
            self.readings = [dict(r) for r in readings]
            self._emit("readings", self.root)

    @property
    def clarifications(self) -> list[tuple[str, str]]:
        """(question, answer) for every question the person answered, in order."""
        return [(d["text"], d["reply"]["text"]) for d in self.dialogue
                if d["kind"] == "question" and d["reply"]["kind"] == "answer"]

    def abandon_open(self, node_id: int) -> None:
        """Mark every unfinished node of a subtree abandoned (a re-plan or a cancel)."""
        stack = [node_id]
        while stack:
            node = self.nodes[stack.pop()]
            if not node.status.finished:
                self.set_status(node.id, NodeStatus.ABANDONED)
            stack.extend(node.children)

    # ---- views -----------------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA_ID,
            "goal_id": self.goal_id,
            "instruction": self.instruction,
            "revision": self.revision,
            "root": self.root,
            "active": self.active,
            "waiting_for": dict(self.waiting_for) if self.waiting_for else None,
            "dialogue": [dict(d) for d in self.dialogue],
            "readings": [dict(r) for r in self.readings],
            "nodes": [n.to_dict() for n in self.nodes.values()],
        }

    def render(self) -> str:
        """An indented text view for terminals."""
        return render_snapshot(self.snapshot())


_MARKS = {"pending": " ", "expanding": "~", "executing": ">", "succeeded": "+", "failed": "x", "abandoned": "-"}


def render_condition(cond: dict[str, Any]) -> str:
    """``in(tape, drawer) ✓ (belief, after step 3)`` — what a person reads about one condition."""
    mark = "met" if cond.get("holds") else "unmet"
    where = cond.get("judged_from", "unknown")
    when = f", after step {cond['met_after_step']}" if cond.get("met_after_step") is not None else ""
    return f"{cond.get('text', '?')} [{mark}: {where}{when}]"


def render_snapshot(snapshot: dict[str, Any]) -> str:
    """The indented text view of a snapshot (the CLI, ``watch`` and episode tools share it)."""
    nodes = {n["id"]: n for n in upgrade(snapshot)["nodes"]}
    lines: list[str] = []

    def walk(node_id: int) -> None:
        node = nodes[node_id]
        call = node.get("call")
        shown = f"{call['name']}({', '.join(f'{k}={v}' for k, v in call['args'].items())})" if call else ""
        suffix = f"  -> {shown}" if shown and shown != node["text"] else ""
        prepared = "  (prepared during motion)" if node.get("prepared") else ""
        pad = "  " * node["depth"]
        lines.append(f"{pad}[{_MARKS.get(node['status'], '?')}] {node['text']}{suffix}{prepared}")
        if node.get("conditions") and node.get("conditions_from") != "effects":
            lines.append(f"{pad}    when: " + "; ".join(render_condition(c) for c in node["conditions"]))
        for child in node["children"]:
            walk(child)

    if snapshot.get("nodes"):
        walk(snapshot.get("root", 0))
    lines += [f"    reading: {render_reading(r)}" for r in snapshot.get("readings") or []]
    return "\n".join(lines)


def render_reading(reading: dict[str, Any]) -> str:
    """``'the blue block' -> blue_block_4, from your answer 'the one on the red tray'``."""
    return f"'{reading.get('said', '?')}' -> {', '.join(reading.get('resolved') or [])}, {reading.get('from', '')}"


def upgrade(snapshot: dict[str, Any]) -> dict[str, Any]:
    """A v1 snapshot (no conditions, no prepared flag) read as v2; a v2 snapshot from before the dialogue
    fields gets them empty; a complete v2 snapshot is returned unchanged."""
    if snapshot.get("schema") == SCHEMA_ID and "dialogue" in snapshot:
        return snapshot
    nodes = [{"conditions": [], "conditions_from": "", "prepared": False, **n} for n in snapshot.get("nodes", [])]
    return {"waiting_for": None, "dialogue": [], **snapshot, "schema": SCHEMA_ID, "nodes": nodes}
