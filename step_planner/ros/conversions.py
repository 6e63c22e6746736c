"""Planner data <-> step_planner_interfaces messages.

The planner speaks plain dicts (``SubgoalTree.snapshot()``, schema ``step_planner/tree/v2``) and
:class:`GoalResult`; these functions translate them to messages and back, and touch no node, so they
are tested without a ROS graph. Messages are filled from snapshots (not from the live tree) so that
what goes on the wire is exactly what was consistent at one revision.
"""

from __future__ import annotations

from typing import Any

from builtin_interfaces.msg import Time

from step_planner.planner.result import GoalError, GoalResult
from step_planner.planner.tree import SCHEMA_ID, render_condition, upgrade
from step_planner_interfaces.action import ExecuteTask
from step_planner_interfaces.msg import Condition, SubgoalNode, SubgoalTree

NO_ID = -1
ERROR_CODES: dict[GoalError, int] = {e: getattr(ExecuteTask.Result, e.name) for e in GoalError}
ERROR_NAMES: dict[int, str] = {code: e.name for e, code in ERROR_CODES.items()}


def call_text(call: dict[str, Any] | None) -> str:
    """``{"name": "pick", "args": {"object": "tape"}}`` -> ``pick(object=tape)`` (as ``str(PrimitiveCall)``)."""
    if not call:
        return ""
    args = ", ".join(f"{k}={v}" for k, v in (call.get("args") or {}).items())
    return f"{call['name']}({args})"


def condition_to_msg(cond: dict[str, Any]) -> Condition:
    msg = Condition()
    msg.text = str(cond.get("text", ""))
    msg.holds = bool(cond.get("holds"))
    msg.judged_from = str(cond.get("judged_from", "unknown"))
    met = cond.get("met_after_step")
    msg.met_after_step = -1 if met is None else int(met)
    return msg


def msg_to_condition(msg: Condition) -> dict[str, Any]:
    return {"text": msg.text, "holds": bool(msg.holds), "judged_from": msg.judged_from,
            "met_after_step": None if msg.met_after_step < 0 else int(msg.met_after_step)}


def node_to_msg(node: dict[str, Any], active: int | None) -> SubgoalNode:
    msg = SubgoalNode()
    msg.id = int(node["id"])
    msg.parent_id = NO_ID if node.get("parent") is None else int(node["parent"])
    msg.child_ids = [int(c) for c in node.get("children", [])]
    msg.depth = int(node.get("depth", 0))
    msg.text = str(node.get("text", ""))
    msg.status = str(node.get("status", ""))
    msg.control = str(node.get("control") or "sequence")
    msg.is_active = active is not None and msg.id == active
    verdicts = node.get("verdicts") or []
    if verdicts:
        last = verdicts[-1]
        msg.verdict = str(last.get("verdict", ""))
        msg.verdict_reason = str(last.get("reason", ""))
        msg.verdict_source = str(last.get("source", ""))
    msg.primitive = call_text(node.get("call"))
    outcome = node.get("outcome") or {}
    msg.outcome_code = str(outcome.get("code", ""))
    msg.outcome_message = str(outcome.get("message", ""))
    msg.conditions = [condition_to_msg(c) for c in node.get("conditions") or []]
    msg.conditions_from = str(node.get("conditions_from") or "")
    msg.prepared = bool(node.get("prepared"))
    return msg


def tree_to_msg(snapshot: dict[str, Any], *, changed: bool = True, stamp: Time | None = None) -> SubgoalTree:
    msg = SubgoalTree()
    if stamp is not None:
        msg.stamp = stamp
    msg.goal_id = str(snapshot.get("goal_id", ""))
    msg.instruction = str(snapshot.get("instruction", ""))
    msg.revision = int(snapshot.get("revision", 0))
    msg.changed = changed
    msg.root_id = int(snapshot.get("root") or 0)
    active = snapshot.get("active")
    msg.active_id = NO_ID if active is None else int(active)
    msg.nodes = [node_to_msg(n, active) for n in snapshot.get("nodes", [])]
    return msg


def msg_to_tree(msg: SubgoalTree) -> dict[str, Any]:
    """Back to the snapshot shape (verdict history reduced to the latest one), for viewers."""
    nodes = []
    for n in msg.nodes:
        verdicts = [{"verdict": n.verdict, "reason": n.verdict_reason, "source": n.verdict_source}] if n.verdict else []
        outcome = {"code": n.outcome_code, "message": n.outcome_message} if n.outcome_code else None
        nodes.append({
            "id": n.id, "parent": None if n.parent_id < 0 else n.parent_id, "children": list(n.child_ids),
            "depth": n.depth, "text": n.text, "status": n.status, "control": n.control,
            "call": n.primitive or None, "verdicts": verdicts, "outcome": outcome,
            "conditions": [msg_to_condition(c) for c in n.conditions], "conditions_from": n.conditions_from,
            "prepared": bool(n.prepared), "summary": None,
        })
    return {
        "schema": SCHEMA_ID, "goal_id": msg.goal_id, "instruction": msg.instruction,
        "revision": msg.revision, "root": msg.root_id, "active": None if msg.active_id < 0 else msg.active_id,
        "nodes": nodes,
    }


def feedback_msg(snapshot: dict[str, Any], *, last_primitive: str, last_outcome: str, leaves_done: int,
                 elapsed_s: float, llm_calls: int) -> ExecuteTask.Feedback:
    fb = ExecuteTask.Feedback()
    nodes = {n["id"]: n for n in snapshot.get("nodes", [])}
    active = snapshot.get("active")
    fb.active_node_id = NO_ID if active is None else int(active)
    if active is not None and active in nodes:
        node = nodes[active]
        fb.active_node_text = str(node.get("text", ""))
        fb.active_node_depth = int(node.get("depth", 0))
        fb.active_node_status = str(node.get("status", ""))
    fb.tree_revision = int(snapshot.get("revision", 0))
    fb.node_count = len(nodes)
    fb.leaves_done = leaves_done
    fb.last_primitive = last_primitive
    fb.last_outcome = last_outcome
    fb.elapsed_s = float(elapsed_s)
    fb.llm_calls = llm_calls
    root = nodes.get(snapshot.get("root", 0)) or {}
    goal = root.get("conditions") or []
    fb.conditions_total = len(goal)
    fb.conditions_met = sum(1 for c in goal if c.get("holds"))
    return fb


def result_msg(result: GoalResult, stamp: Time | None = None) -> ExecuteTask.Result:
    msg = ExecuteTask.Result()
    msg.success = bool(result.success)
    msg.error_code = ERROR_CODES[result.error]
    msg.error_msg = result.message
    msg.verified = bool(result.verified)
    msg.conditions = [condition_to_msg(c) for c in result.conditions]
    msg.executed_primitives = [f"{call} -> {outcome.code.value}" for call, outcome in result.executed]
    if result.tree:
        msg.final_tree = tree_to_msg(result.tree, changed=True, stamp=stamp)
    return msg


def error_result(error: GoalError, message: str) -> ExecuteTask.Result:
    """A result for a goal that never started planning (invalid, busy, canceled while queued)."""
    return result_msg(GoalResult(False, error, message))


def render_tree(snapshot: dict[str, Any]) -> str:
    """An indented text view of a snapshot (for ``send`` and ``watch``)."""
    marks = {"pending": " ", "expanding": "~", "executing": ">", "succeeded": "+", "failed": "x", "abandoned": "-"}
    nodes = {n["id"]: n for n in upgrade(snapshot).get("nodes", [])}
    lines: list[str] = []

    def walk(node_id: int, seen: set[int]) -> None:
        if node_id not in nodes or node_id in seen:
            return
        seen.add(node_id)
        node = nodes[node_id]
        call = node.get("call")
        call = call if isinstance(call, str) else call_text(call)
        extra = f"  -> {call}" if call and call != node["text"] else ""
        if node.get("outcome") and node["outcome"].get("code") not in (None, "", "SUCCESS"):
            extra += f"  [{node['outcome']['code']}]"
        active = " *" if snapshot.get("active") == node_id else ""
        prepared = "  (prepared during motion)" if node.get("prepared") else ""
        pad = "  " * node.get("depth", 0)
        lines.append(f"{pad}[{marks.get(node['status'], '?')}] {node['text']}{extra}{prepared}{active}")
        if node.get("conditions") and node.get("conditions_from") != "effects":
            label = "goal" if node.get("parent") is None else "when"
            lines.append(f"{pad}    {label}: " + "; ".join(render_condition(c) for c in node["conditions"]))
        for child in node.get("children", []):
            walk(child, seen)

    if nodes:
        walk(snapshot.get("root") or 0, set())
    return "\n".join(lines)
