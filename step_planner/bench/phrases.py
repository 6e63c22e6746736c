"""The scripted expert's language: reading prompts and writing/reading subgoal phrases.

The expert only sees what an LLM sees — the prompt text. This module turns that text back into
structure: ``## `` sections, the observation lines of ``WorldState.describe()`` into a
:class:`WorldState`, sibling lines into (text, outcome), and natural-language subgoals ("put the
tape in the drawer", "open the top drawer", ``pick(tape)``) into goal atoms (their *intent*).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from step_planner.bench.goals import Atom
from step_planner.domain.primitives import DomainError, PrimitiveCall, PrimitiveLibrary
from step_planner.domain.world import GRIPPER, ObjectState, Place, WorldState

_SECTION_RE = re.compile(r"^## (.+?)\s*$", re.M)
_PLACE_RE = re.compile(
    r"^([a-z0-9_]+) \[(\w+)\]( \((open|closed, contents not visible)\))?(?:: (contains|has on it) (.*))?$"
)
_OBJECT_RE = re.compile(r"^object ([a-z0-9_]+) \[(.*?)\]: (in the gripper|(?:at|in|on) ([a-z0-9_]+))"
                        r"( \(out of reach\))?( \(not visible now[^)]*\))?$")
_SIBLING_RE = re.compile(r"^\d+\. (.*?) -> (succeeded|executed, failed|failed|rejected|pending|expanding|executing"
                         r"|abandoned)\b(.*)$")
_CALL_NOTE_RE = re.compile(r"^(.*) \[([a-z_]+\(.*\))\]$")
_FACT_LINE_RE = re.compile(r"^- (.+?): (holds|not yet)")
_SCHEMA_RE = re.compile(r"matching this schema:\n(\{.*\})\s*$", re.S)


def sections(text: str) -> dict[str, str]:
    """``## Title`` sections of a prompt, title -> body (stripped)."""
    parts = _SECTION_RE.split(text)
    return {parts[i].strip(): parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}


def section(secs: dict[str, str], prefix: str) -> str:
    """The body of the first section whose title starts with ``prefix`` ('' when absent)."""
    return next((body for title, body in secs.items() if title.startswith(prefix)), "")


def parse_observation(text: str) -> WorldState:
    """Rebuild the observed world from ``WorldState.describe()`` text. Unknown lines are ignored."""
    world = WorldState(locations=["home"])
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("gripper:"):
            rest = line.split(":", 1)[1].strip()
            world.held = rest[len("holding "):].strip() if rest.startswith("holding ") else None
        elif m := _OBJECT_RE.match(line):
            loc = GRIPPER if m.group(3) == "in the gripper" else m.group(4)
            world.objects[m.group(1)] = ObjectState(m.group(1), m.group(2), loc, reachable=not m.group(5))
        elif m := _PLACE_RE.match(line):
            is_open = not (m.group(4) or "").startswith("closed")
            world.places[m.group(1)] = Place(m.group(1), m.group(2), is_open=is_open)
    return world


def siblings(body: str) -> list[tuple[str, str]]:
    """Sibling lines ``1. text [call] -> succeeded`` as (text or its call, outcome word)."""
    out = []
    for line in body.splitlines():
        if m := _SIBLING_RE.match(line.strip()):
            text = m.group(1).strip()
            if c := _CALL_NOTE_RE.match(text):
                text = c.group(2)  # the call the child ran: its intent is exact
            out.append((text, "failed" if m.group(2) == "executed, failed" else m.group(2)))
    return out


def achieved_when(parent_section: str) -> tuple[str, ...]:
    """The fact texts listed under ``Achieved when:`` in a subgoal section (empty when none)."""
    lines = parent_section.split("Achieved when:", 1)[1].splitlines() if "Achieved when:" in parent_section else []
    return tuple(m.group(1) for line in lines if (m := _FACT_LINE_RE.match(line.strip())))


def answer_schema(system: str) -> dict:
    """The answer's JSON schema, as the system prompt prints it ({} when absent)."""
    import json

    m = _SCHEMA_RE.search(system)
    try:
        return json.loads(m.group(1)) if m else {}
    except ValueError:
        return {}


# ---- subgoal phrases -----------------------------------------------------------------------
def spoken(name: str) -> str:
    return name.replace("_", " ")


def _preposition(world: WorldState, place: str) -> str:
    spec = world.places.get(place)
    return "on" if spec is not None and not spec.is_container else "in"


PUT_TEMPLATES = ("put the {o} {prep} the {p}", "move the {o} to the {p}", "get the {o} {prep}to the {p}")


def segment(plan: list[PrimitiveCall]) -> list[list[PrimitiveCall]]:
    """Group a primitive plan into subgoals: a pick followed by its place is one 'put' subgoal."""
    groups: list[list[PrimitiveCall]] = []
    i = 0
    while i < len(plan):
        call = plan[i]
        nxt = plan[i + 1] if i + 1 < len(plan) else None
        if call.name == "pick" and nxt is not None and nxt.name == "place" \
                and nxt.kwargs.get("object") == call.kwargs.get("object"):
            groups.append([call, nxt])
            i += 2
        else:
            groups.append([call])
            i += 1
    return groups


def call_phrase(call: PrimitiveCall, world: WorldState) -> str:
    """A short natural phrase for one primitive call."""
    a = call.kwargs
    if call.name == "pick":
        return f"pick up the {spoken(a['object'])}"
    if call.name == "place":
        return f"place the {spoken(a['object'])} {_preposition(world, a['target'])} the {spoken(a['target'])}"
    if call.name == "open_drawer":
        return f"open the {spoken(a['drawer'])}"
    if call.name == "close_drawer":
        return f"close the {spoken(a['drawer'])}"
    if call.name == "home":
        return "move the arm home"
    if call.name == "move_to":
        return f"move the gripper to the {spoken(a['target'])}"
    return str(call)


def group_phrase(group: list[PrimitiveCall], world: WorldState, variant: int = 0) -> str:
    """The subgoal text for a segment; ``variant`` picks one of several phrasings."""
    if len(group) == 2:
        obj, target = group[1].kwargs["object"], group[1].kwargs["target"]
        template = PUT_TEMPLATES[variant % len(PUT_TEMPLATES)]
        prep = _preposition(world, target)
        return template.format(o=spoken(obj), p=spoken(target), prep=prep)
    return call_phrase(group[0], world)


def short_call(call: PrimitiveCall) -> str:
    """``pick(tape)``: the call form an LLM typically writes (positional arguments)."""
    return f"{call.name}({', '.join(call.kwargs.values())})"


_NAME = r"(?:the )?([a-z0-9_ ]+?)"
_INTENTS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(rf"^(?:put|move|bring|take|carry|transfer|store|drop|set|get|place|lay|throw|stash) {_NAME} "
                rf"(?:into|onto|inside|in|on|to) {_NAME}$"), "at"),
    (re.compile(rf"^(?:pick up|grasp|grab|pick|lift) {_NAME}$"), "holding"),
    (re.compile(rf"^(?:open|pull open) {_NAME}$"), "open"),
    (re.compile(rf"^(?:close|shut|push closed) {_NAME}$"), "closed"),
)
_HOME_RE = re.compile(r"^(?:move the arm home|go home|return home|move home|return to the ready pose)$")
_MOVE_RE = re.compile(rf"^move (?:the gripper |the arm )?(?:to|above) {_NAME}$")


@dataclass(frozen=True)
class Intent:
    """What a subgoal asks for: goal atoms, or (for motions without a world effect) one call."""

    atoms: tuple[Atom, ...] = ()
    call: PrimitiveCall | None = None


def _entity(text: str) -> str:
    return re.sub(r"\s+", "_", text.strip())


def parse_intent(text: str, library: PrimitiveLibrary) -> Intent | None:
    """The intent of a subgoal (a call like ``place(tape, drawer)`` or a phrase), None if unreadable."""
    try:
        call = library.parse_call_text(text)
    except DomainError:
        return None
    if call is not None:
        a = call.kwargs
        try:
            if call.name == "pick":
                return Intent((Atom("holding", (a["object"],)),))
            if call.name == "place":
                return Intent((Atom("at", (a["object"], a["target"])),))
            if call.name == "open_drawer":
                return Intent((Atom("open", (a["drawer"],)),))
            if call.name == "close_drawer":
                return Intent((Atom("closed", (a["drawer"],)),))
        except KeyError:
            return None
        return Intent(call=call)
    phrase = re.sub(r"[.!]+$", "", " ".join(text.lower().split()))
    if _HOME_RE.match(phrase):
        return Intent(call=PrimitiveCall.make("home"))
    if m := _MOVE_RE.match(phrase):
        return Intent(call=PrimitiveCall.make("move_to", {"target": _entity(m.group(1))}))
    for pattern, predicate in _INTENTS:
        if m := pattern.match(phrase):
            return Intent((Atom(predicate, tuple(_entity(g) for g in m.groups())),))
    return None
