"""The STEP subgoal tree: nodes with stable ids, statuses, verdicts, and change events.

The tree is a plain object; publishers, recorders and printers observe it through
:class:`TreeListener` and never reach into the planner. Every change bumps ``revision``.

Snapshot schema (``SubgoalTree.snapshot()``, schema id ``step_planner/tree/v1``)::

    {"schema": "step_planner/tree/v1", "goal_id": str, "instruction": str,
     "revision": int, "root": int, "active": int | null,
     "nodes": [{"id": int, "parent": int | null, "children": [int], "depth": int,
                "text": str, "status": "pending|expanding|executing|succeeded|failed|abandoned",
                "control": "sequence|fallback|parallel",
                "call": {"name": str, "args": {str: str}} | null,
                "verdicts": [{"verdict": "execute|decompose|replan|done|rejected", "reason": str,
                              "source": "deterministic|llm|validation|executor|budget"}],
                "outcome": {"code": str, "message": str, ...} | null,
                "summary": str | null}]}

Nodes are listed in id order (ids are creation order and never reused).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol

from step_planner.domain.primitives import PrimitiveCall

SCHEMA_ID = "step_planner/tree/v1"
_log = logging.getLogger(__name__)


class NodeStatus(str, Enum):
    PENDING = "pending"
    EXPANDING = "expanding"
    EXECUTING = "executing"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    ABANDONED = "abandoned"  # rejected by the checker or dropped by a re-plan

    @property
    def finished(self) -> bool:
        return self in (NodeStatus.SUCCEEDED, NodeStatus.FAILED, NodeStatus.ABANDONED)


@dataclass(frozen=True)
class VerdictRecord:
    verdict: str
    reason: str
    source: str

    def to_dict(self) -> dict[str, str]:
        return {"verdict": self.verdict, "reason": self.reason, "source": self.source}


@dataclass
class SubgoalNode:
    id: int
    text: str
    parent: int | None
    depth: int
    status: NodeStatus = NodeStatus.PENDING
    children: list[int] = field(default_factory=list)
    control: str = "sequence"
    call: PrimitiveCall | None = None
    verdicts: list[VerdictRecord] = field(default_factory=list)
    outcome: dict[str, Any] | None = None
    summary: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "parent": self.parent,
            "children": list(self.children),
            "depth": self.depth,
            "text": self.text,
            "status": self.status.value,
            "control": self.control,
            "call": self.call.to_dict() if self.call else None,
            "verdicts": [v.to_dict() for v in self.verdicts],
            "outcome": self.outcome,
            "summary": self.summary,
        }


@dataclass(frozen=True)
class TreeEvent:
    """What changed: ``kind`` is added | status | verdict | call | outcome | summary | active."""

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

    def leaves(self) -> list[SubgoalNode]:
        return [n for n in self.nodes.values() if not n.children and n.call is not None]

    # ---- mutation (each emits one event) ----------------------------------------------------
    def set_status(self, node_id: int, status: NodeStatus) -> None:
        node = self.nodes[node_id]
        if node.status is not status:
            node.status = status
            self._emit("status", node_id)

    def add_verdict(self, node_id: int, verdict: str, reason: str, source: str) -> None:
        self.nodes[node_id].verdicts.append(VerdictRecord(verdict, reason, source))
        self._emit("verdict", node_id)

    def set_call(self, node_id: int, call: PrimitiveCall) -> None:
        self.nodes[node_id].call = call
        self._emit("call", node_id)

    def set_outcome(self, node_id: int, outcome: dict[str, Any]) -> None:
        self.nodes[node_id].outcome = outcome
        self._emit("outcome", node_id)

    def set_control(self, node_id: int, control: str) -> None:
        self.nodes[node_id].control = control

    def set_summary(self, node_id: int, summary: str) -> None:
        self.nodes[node_id].summary = summary
        self._emit("summary", node_id)

    def set_active(self, node_id: int | None) -> None:
        if self.active != node_id:
            self.active = node_id
            self._emit("active", -1 if node_id is None else node_id)

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
            "nodes": [n.to_dict() for n in self.nodes.values()],
        }

    def render(self) -> str:
        """An indented text view for terminals."""
        marks = {
            NodeStatus.PENDING: " ",
            NodeStatus.EXPANDING: "~",
            NodeStatus.EXECUTING: ">",
            NodeStatus.SUCCEEDED: "+",
            NodeStatus.FAILED: "x",
            NodeStatus.ABANDONED: "-",
        }
        lines: list[str] = []

        def walk(node_id: int) -> None:
            node = self.nodes[node_id]
            call = f"  -> {node.call}" if node.call and str(node.call) != node.text else ""
            lines.append(f"{'  ' * node.depth}[{marks[node.status]}] {node.text}{call}")
            for child in node.children:
                walk(child)

        walk(self.root)
        return "\n".join(lines)
