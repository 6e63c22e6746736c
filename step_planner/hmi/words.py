"""The goal's progress and outcome in sentences for the person at the robot (plain Python, no rclpy).

WHY a module of its own: the page shows what these functions say and nothing of the action's field names; the
engineer's detail (error codes, messages with hashes and paths) goes below, collapsed. Everything here reads the
plain dicts ``HmiState`` holds (the action's feedback and result, the ``~/tree`` message, the scene snapshot),
so it is tested without ROS or a browser.
"""

from __future__ import annotations

import re
from typing import Any

from step_planner.domain.conditions import ConditionError, parse_fact

IN_PLACE_KINDS = ("drawer",)  # things go *in* these; in containers named like a bin or box too
IN_NAMES = re.compile(r"(bin|box|drawer|basket|crate|cabinet|bowl)", re.I)
CALL = re.compile(r"^\s*([A-Za-z_]\w*)\s*\((.*)\)\s*$")


def the(name: str) -> str:
    """``red_block`` -> ``the red block``."""
    return f"the {name.replace('_', ' ').strip()}"


def listed(items: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} and {items[-1]}"


def parse_call(text: str) -> tuple[str, dict[str, str]] | None:
    """``pick(object=tape)`` -> (``pick``, {object: tape}); positional arguments are numbered ``0``, ``1``."""
    match = CALL.match(text or "")
    if not match:
        return None
    args: dict[str, str] = {}
    for k, part in enumerate(p.strip() for p in match.group(2).split(",") if p.strip()):
        key, _, value = part.partition("=")
        if value:
            args[key.strip()] = value.strip()
        else:
            args[str(k)] = key.strip()
    return match.group(1), args


def preposition(place: str, scene: dict[str, Any] | None = None) -> str:
    kinds = {p["name"]: p.get("kind") for p in (scene or {}).get("places", [])}
    return "in" if kinds.get(place) in IN_PLACE_KINDS or IN_NAMES.search(place) else "on"


def doing(call: str, scene: dict[str, Any] | None = None) -> str:
    """What a primitive call does, as a gerund phrase: ``pick(object=tape)`` -> ``picking up the tape``."""
    parsed = parse_call(call)
    if parsed is None:
        return f"running {call}" if call else ""
    name, args = parsed
    obj = args.get("object", args.get("0", ""))
    if name == "pick" and obj:
        return f"picking up {the(obj)}"
    if name == "place" and obj:
        target = args.get("target", args.get("1", ""))
        if not target:
            return f"putting down {the(obj)}"
        return f"putting {the(obj)} {preposition(target, scene)} {the(target)}"
    if name in ("open_drawer", "close_drawer"):
        drawer = args.get("drawer", args.get("0", "drawer"))
        return f"{'opening' if name == 'open_drawer' else 'closing'} {the(drawer)}"
    if name == "push" and obj:
        direction = args.get("direction", args.get("1", ""))
        return f"pushing {the(obj)}" + (f" {direction}" if direction else "")
    if name == "move_to":
        return f"moving to {the(args.get('target', args.get('0', 'target')))}"
    if name == "home":
        return "going back to the ready pose"
    return f"running {name.replace('_', ' ')}"


def _planned_steps(tree: dict[str, Any] | None) -> int:
    """Primitives the tree holds now (the plan grows as subgoals expand: an estimate, hence "about")."""
    nodes = (tree or {}).get("nodes") or []
    return sum(1 for n in nodes if n.get("primitive") and n.get("status") not in ("abandoned", "failed"))


def _active_primitive(tree: dict[str, Any] | None) -> str:
    nodes = (tree or {}).get("nodes") or []
    active = [n for n in nodes if n.get("is_active") and n.get("primitive")]
    executing = [n for n in nodes if n.get("status") == "executing" and n.get("primitive")]
    chosen = (active or executing or [None])[-1]
    return chosen.get("primitive", "") if chosen else ""


def progress(feedback: dict[str, Any], tree: dict[str, Any] | None = None, waiting: dict[str, str] | None = None,
             scene: dict[str, Any] | None = None, running: bool = True) -> list[str]:
    """The goal's progress in sentences, most important first: what it waits for from the person, what the arm is
    doing ("picking up the tape, step 3 of about 6"), the goal's facts met, and what was read into the words."""
    lines: list[str] = []
    waiting = waiting or {}
    waits = feedback.get("waiting_for") or ""
    if waiting.get("question") or waits == "question":
        question = waiting.get("question") or feedback.get("question") or ""
        lines.append(f"Waiting for your answer: {question}" if question else "Waiting for your answer.")
    elif waiting.get("goal_confirmation") or waits == "goal_confirmation":
        lines.append("Waiting for you to confirm the goal. Nothing moves until you do.")
    done = int(feedback.get("leaves_done") or 0)
    planned = max(_planned_steps(tree), done)
    current = _active_primitive(tree) if running else ""
    if current:
        step = done + 1
        lines.append(f"{doing(current, scene).capitalize()}, step {step} of about {max(planned, step)}.")
    elif running and feedback.get("active_node_text"):
        lines.append(f"Working on: {feedback['active_node_text']}.")
    elif running and not lines and feedback:
        lines.append("Thinking about the next step.")
    if done and not current:
        lines.append(f"{done} step{'s' if done != 1 else ''} done.")
    total = int(feedback.get("conditions_total") or 0)
    if total:
        lines.append(f"{int(feedback.get('conditions_met') or 0)} of {total} goal facts hold now.")
    for reading in feedback.get("readings") or []:
        lines.append(f"Read as: {reading_words(reading)}")
    return lines


def reading_words(reading: str) -> str:
    """``'the tools' -> screwdriver, chisel`` as the node words it, with the names said as things."""
    head, arrow, rest = reading.partition("->")
    if not arrow:
        return reading
    names, sep, source = rest.partition(", from ")
    shown = ", ".join(n.strip().replace("_", " ") for n in names.split(",") if n.strip())
    return f"{head.strip()} \u2192 {shown}" + (f" (from {source.strip()})" if sep else "")


def goal_sentence(conditions: list[dict[str, Any]], scene: dict[str, Any] | None = None) -> str:
    """The goal's facts as one sentence: ``the tape and the screwdriver are in the drawer, which is closed``."""
    into: dict[tuple[str, str], list[str]] = {}  # (preposition, place) -> objects
    states: dict[str, list[str]] = {}  # thing -> open/closed
    others: list[str] = []
    for cond in conditions:
        text = str(cond.get("text", ""))
        try:
            fact = parse_fact(text)
        except ConditionError:
            others.append(str(cond.get("words") or text))
            continue
        if not fact.negated and fact.predicate in ("in", "on") and len(fact.args) == 2:
            into.setdefault((fact.predicate, fact.args[1]), []).append(the(fact.args[0]))
        elif not fact.negated and fact.predicate in ("open", "closed") and len(fact.args) == 1:
            states.setdefault(fact.args[0], []).append(fact.predicate)
        else:
            others.append(str(cond.get("words") or text))
    parts = []
    for (prep, place), objects in into.items():
        verb = "are" if len(objects) > 1 else "is"
        part = f"{listed(objects)} {verb} {prep} {the(place)}"
        if place in states:
            part += f", which is {listed(states.pop(place))}"
        parts.append(part)
    for thing, words in states.items():
        parts.append(f"{the(thing)} is {listed(words)}")
    return "; ".join([*parts, *others])


LOST_WORDS = {
    "INVALID_GOAL": "the instruction was not accepted",
    "BUSY": "the robot is busy with another goal",
    "PLANNING_FAILED": "I could not find a plan",
    "BUDGET_EXCEEDED": "this took more steps or time than allowed",
    "EXECUTION_FAILED": "the arm could not do a step",
    "SAFETY_VIOLATION": "a step was refused for safety",
    "GOAL_NOT_CONFIRMED": "the goal was not confirmed",
    "CLARIFICATION_NEEDED": "I asked a question nobody answered",
    "NOT_SENT": "the planner node did not take the goal",
    "LOST": "the planner node went away",
}


def outcome(result: dict[str, Any] | None, scene: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """The outcome for a person: ``headline`` (one line: "Done: ...", "Stopped: ..."), ``tone`` (done | stopped),
    and ``detail`` (the engineer's lines: status, error, message; shown collapsed)."""
    if not result:
        return None
    status, error = str(result.get("status", "")), str(result.get("error", ""))
    message = str(result.get("error_msg", ""))
    conditions = list(result.get("conditions") or [])
    held = [c for c in conditions if c.get("holds")]
    if result.get("success"):
        said = goal_sentence(conditions, scene)
        checked = "" if result.get("verified") else " (not checked in the world)"
        headline, tone = (f"Done: {said}{checked}" if said else f"Done{checked}."), "done"
    elif error == "NOTHING_TO_DO":
        said = goal_sentence(held, scene)
        headline, tone = f"Nothing to do: {said} already" if said else "Nothing to do: the goal already holds", "done"
    elif status == "CANCELED" or error == "CANCELED":
        headline, tone = "Stopped: the goal was cancelled", "stopped"
        if "client" in message or "cancel" in message.lower():
            headline = "Stopped: you cancelled the goal"
    elif error == "LLM_UNAVAILABLE":
        if "offline answers cover only" in message or "no recording" in message:
            headline = "Stopped: I have no offline answer for this instruction (only the demo instructions have one)"
        else:
            headline = "Stopped: I could not reach the endpoint"
        tone = "stopped"
    else:
        why = LOST_WORDS.get(error) or LOST_WORDS.get(status.replace(" ", "_")) or "the goal did not finish"
        failed = [p for p in result.get("executed_primitives") or [] if "-> SUCCESS" not in p]
        if error == "EXECUTION_FAILED" and failed:
            step = failed[-1].split(" -> ")[0]
            why = f"the arm could not finish {doing(step, scene)}"
        headline, tone = f"Stopped: {why}", "stopped"
        if status in ("NOT SENT", "LOST"):
            headline = f"{'Not started' if status == 'NOT SENT' else 'Lost'}: {why}"
    if tone == "stopped" and held:
        headline += f". Still true: {goal_sentence(held, scene)}"
    detail = [f"status {status}, error {error}" + ("" if result.get("verified") else ", not verified")]
    if message:
        detail.append(message)
    return {"headline": headline, "tone": tone, "detail": detail}
