"""Planner data <-> step_planner_interfaces messages.

The planner speaks plain dicts (``SubgoalTree.snapshot()``, schema ``step_planner/tree/v2``) and
:class:`GoalResult`; these functions translate them to messages and back, and touch no node, so they
are tested without a ROS graph. Messages are filled from snapshots (not from the live tree) so that
what goes on the wire is exactly what was consistent at one revision.
"""

from __future__ import annotations

from typing import Any

from builtin_interfaces.msg import Time

from step_planner.msg_fields import NO_ID, call_text, condition_fields, fact_words, node_fields, tree_fields
from step_planner.planner.result import GoalError, GoalResult
from step_planner.planner.tree import SCHEMA_ID, render_condition, render_reading, upgrade
from step_planner_interfaces.action import ExecuteTask
from step_planner_interfaces.msg import Condition, SubgoalNode, SubgoalTree

ERROR_CODES: dict[GoalError, int] = {e: getattr(ExecuteTask.Result, e.name) for e in GoalError}
ERROR_NAMES: dict[int, str] = {code: e.name for e, code in ERROR_CODES.items()}


def _node(fields: dict[str, Any]) -> SubgoalNode:
    return SubgoalNode(**{**fields, "conditions": [Condition(**c) for c in fields.get("conditions", [])]})


def node_to_msg(node: dict[str, Any], active: int | None) -> SubgoalNode:
    return _node(node_fields(node, active))


def msg_to_condition(msg: Condition) -> dict[str, Any]:
    return {"text": msg.text, "holds": bool(msg.holds), "judged_from": msg.judged_from,
            "met_after_step": None if msg.met_after_step < 0 else int(msg.met_after_step)}


def msg_to_waiting(msg: SubgoalTree) -> dict[str, Any] | None:
    """The tree's ``waiting_for`` (None when the goal waits for nobody)."""
    return {"kind": msg.waiting_for, "text": msg.waiting_text} if msg.waiting_for else None


def tree_to_msg(snapshot: dict[str, Any], *, changed: bool = True, stamp: Time | None = None) -> SubgoalTree:
    fields = tree_fields(snapshot, changed=changed)
    msg = SubgoalTree(**{k: v for k, v in fields.items() if k != "nodes"})
    msg.nodes = [_node(n) for n in fields["nodes"]]
    if stamp is not None:
        msg.stamp = stamp
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
        "waiting_for": msg_to_waiting(msg), "dialogue": [], "nodes": nodes,
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
    fb.goal = [str(c.get("text", "")) for c in goal]
    waiting = snapshot.get("waiting_for") or {}
    if waiting.get("kind") == "goal_confirmation":  # the words the person is shown (in/on as the scene has it)
        fb.goal_words = [str(w) for w in waiting.get("words") or []]
    else:
        fb.goal_words = [fact_words(t) for t in fb.goal]
    fb.goal_from = str(root.get("conditions_from") or "")
    fb.readings = [render_reading(r) for r in snapshot.get("readings") or []]
    fb.waiting_for = str(waiting.get("kind", ""))
    fb.question = str(waiting.get("text", "")) if waiting.get("kind") == "question" else ""
    return fb


def result_msg(result: GoalResult, stamp: Time | None = None) -> ExecuteTask.Result:
    msg = ExecuteTask.Result()
    msg.success = bool(result.success)
    msg.error_code = ERROR_CODES[result.error]
    # nav2's convention (nav2_msgs actions: error_code, error_msg): the message is for errors only; on success
    # error_code is NONE, error_msg is empty, and what was achieved is in `conditions` (each fact, its truth).
    msg.error_msg = "" if result.success else result.message
    msg.verified = bool(result.verified)
    msg.conditions = [Condition(**condition_fields(c)) for c in result.conditions]
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
    waiting = snapshot.get("waiting_for") or {}
    if waiting.get("kind"):
        what = "the goal to be confirmed (~/confirm_goal)" if waiting["kind"] == "goal_confirmation" else \
            "an answer (~/answer_question)"
        text = "; ".join(str(waiting.get("text", "")).splitlines())
        lines.append(f"waiting for {what}: {text}")
    return "\n".join(lines)
