"""Planner data as the fields of step_planner_interfaces messages, in plain dicts.

WHY without any message class: the node builds rclpy messages from these (``ros/conversions.py``) and the
episode recorder builds rosbags messages from the same dicts (``episodes/messages.py``), so a tree looks
the same on ``~/tree`` and in a recording. Fields a message has and these dicts do not name keep their
defaults.
"""

from __future__ import annotations

from typing import Any

NO_ID = -1


def call_text(call: dict[str, Any] | str | None) -> str:
    """``{"name": "pick", "args": {"object": "tape"}}`` -> ``pick(object=tape)`` (as ``str(PrimitiveCall)``)."""
    if not call:
        return ""
    if isinstance(call, str):
        return call
    args = ", ".join(f"{k}={v}" for k, v in (call.get("args") or {}).items())
    return f"{call['name']}({args})"


def node_fields(node: dict[str, Any], active: int | None) -> dict[str, Any]:
    """SubgoalNode fields of one node of a tree snapshot (schema step_planner/tree/v2; v1 reads the same)."""
    node_id = int(node["id"])
    out: dict[str, Any] = {
        "id": node_id,
        "parent_id": NO_ID if node.get("parent") is None else int(node["parent"]),
        "child_ids": [int(c) for c in node.get("children", [])],
        "depth": int(node.get("depth", 0)),
        "text": str(node.get("text", "")),
        "status": str(node.get("status", "")),
        "control": str(node.get("control") or "sequence"),
        "is_active": active is not None and node_id == active,
        "verdict": "", "verdict_reason": "", "verdict_source": "",
        "primitive": call_text(node.get("call")),
    }
    verdicts = node.get("verdicts") or []
    if verdicts:
        last = verdicts[-1]
        out.update(verdict=str(last.get("verdict", "")), verdict_reason=str(last.get("reason", "")),
                   verdict_source=str(last.get("source", "")))
    outcome = node.get("outcome") or {}
    out.update(outcome_code=str(outcome.get("code", "")), outcome_message=str(outcome.get("message", "")))
    out.update(conditions=[condition_fields(c) for c in node.get("conditions") or []],
               conditions_from=str(node.get("conditions_from") or ""), prepared=bool(node.get("prepared")))
    return out


def condition_fields(cond: dict[str, Any]) -> dict[str, Any]:
    """Condition fields of one condition record (``met_after_step`` -1: not met)."""
    met = cond.get("met_after_step")
    return {"text": str(cond.get("text", "")), "holds": bool(cond.get("holds")),
            "judged_from": str(cond.get("judged_from", "unknown")), "met_after_step": -1 if met is None else int(met),
            "words": fact_words(str(cond.get("text", "")))}


def fact_words(text: str) -> str:
    """A fact in words (``in(tape, drawer)`` -> "the tape is in the drawer"); the text itself if it does not parse."""
    from step_planner.domain.conditions import ConditionError, describe_fact, parse_fact

    try:
        return describe_fact(parse_fact(text))
    except ConditionError:
        return text


def tree_fields(snapshot: dict[str, Any], *, changed: bool = True) -> dict[str, Any]:
    """SubgoalTree fields (without ``stamp``); ``nodes`` is a list of :func:`node_fields` dicts."""
    active = snapshot.get("active")
    return {
        "goal_id": str(snapshot.get("goal_id", "")),
        "instruction": str(snapshot.get("instruction", "")),
        "revision": int(snapshot.get("revision", 0)),
        "changed": changed,
        "root_id": int(snapshot.get("root") or 0),
        "active_id": NO_ID if active is None else int(active),
        "nodes": [node_fields(n, active) for n in snapshot.get("nodes", [])],
        **waiting_fields(snapshot),
    }


def waiting_fields(snapshot: dict[str, Any]) -> dict[str, str]:
    """What the goal waits for from a person: ``waiting_for`` (goal_confirmation | question | "") and its text."""
    waiting = snapshot.get("waiting_for") or {}
    return {"waiting_for": str(waiting.get("kind", "")), "waiting_text": str(waiting.get("text", ""))}
