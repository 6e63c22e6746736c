"""Preconditions and effects as small predicate terms: ``holding(object)``, ``not open(d)``.

They are data in ``config/primitives.yaml``; this module parses them and evaluates them against a
:class:`~step_planner.domain.world.WorldState` with the call's arguments bound.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from step_planner.domain.world import WorldState

CONSTANTS = frozenset({"home"})

PREDICATES = {
    # name: arity
    "gripper_empty": 0,
    "holding": 1,
    "visible": 1,
    "graspable": 1,
    "reachable": 1,
    "pushable": 1,
    "open": 1,
    "closed": 1,
    "on": 2,
    "in": 2,
    "has_room": 1,
    # effect-only terms
    "released": 1,
    "put": 2,
    "at": 1,
    "pushed": 2,
}

_TERM_RE = re.compile(r"^(not\s+)?([a-z_]+)\s*(?:\(([^()]*)\))?$")


@dataclass(frozen=True)
class Condition:
    predicate: str
    args: tuple[str, ...] = ()
    negated: bool = False

    def is_constant(self, value: str) -> bool:
        return value in CONSTANTS

    def bind(self, binding: dict[str, str]) -> tuple[str, ...]:
        return tuple(binding.get(a, a) for a in self.args)

    def render(self, binding: dict[str, str] | None = None) -> str:
        args = self.bind(binding or {})
        body = self.predicate + (f"({', '.join(args)})" if args else "")
        return f"not {body}" if self.negated else body

    def __str__(self) -> str:
        return self.render()


def parse_condition(text: str) -> Condition:
    m = _TERM_RE.match(str(text).strip())
    if not m:
        raise ValueError(f"cannot parse condition {text!r}")
    negated, pred, inner = bool(m.group(1)), m.group(2), m.group(3)
    if pred not in PREDICATES:
        raise ValueError(f"unknown predicate {pred!r} in {text!r}; known: {', '.join(PREDICATES)}")
    args = tuple(a.strip() for a in inner.split(",")) if inner and inner.strip() else ()
    if len(args) != PREDICATES[pred]:
        raise ValueError(f"{pred} takes {PREDICATES[pred]} arguments, got {len(args)} in {text!r}")
    return Condition(pred, args, negated)


def holds(cond: Condition, binding: dict[str, str], world: WorldState) -> bool:
    """Evaluate a precondition against the (observed) world."""
    a = cond.bind(binding)
    p = cond.predicate
    if p == "gripper_empty":
        value = world.held is None
    elif p == "holding":
        value = world.held == a[0]
    elif p == "visible":
        value = world.is_visible(a[0])
    elif p == "graspable":
        obj = world.objects.get(a[0])
        value = bool(obj and obj.graspable)
    elif p == "pushable":
        obj = world.objects.get(a[0])
        value = bool(obj and obj.pushable and obj.location != "gripper")
    elif p == "reachable":
        value = world.is_reachable(a[0])
    elif p in ("open", "closed"):
        place = world.places.get(a[0])
        value = bool(place and place.openable and place.is_open == (p == "open"))
    elif p in ("on", "in"):
        obj = world.objects.get(a[0])
        value = bool(obj and obj.location == a[1])
    elif p == "has_room":
        value = world.has_room(a[0])
    else:  # effect-only predicates are not preconditions
        raise ValueError(f"{p} cannot be used as a precondition")
    return value != cond.negated


def explain_failure(cond: Condition, binding: dict[str, str], world: WorldState) -> str:
    """A sentence saying why a precondition does not hold — this is what the LLM is told."""
    a = cond.bind(binding)
    p = cond.predicate
    if cond.negated:
        return f"'{cond.render(binding)}' is required but {cond.render(binding)[4:]} holds"
    if p == "gripper_empty":
        return f"the gripper is already holding {world.held}; one arm can hold one object at a time"
    if p == "holding":
        held = world.held or "nothing"
        return f"the gripper must be holding {a[0]} but holds {held}"
    if p == "visible":
        if a[0] in world.objects or a[0] in world.places:
            return f"{a[0]} is not visible now (it may be inside a closed container)"
        return f"there is no '{a[0]}' in the observed scene"
    if p == "graspable":
        return f"{a[0]} cannot be grasped"
    if p == "pushable":
        return f"{a[0]} cannot be pushed"
    if p == "reachable":
        return f"{a[0]} is out of the arm's reach"
    if p == "open":
        return f"{a[0]} is closed" if a[0] in world.places else f"{a[0]} cannot be opened"
    if p == "closed":
        return f"{a[0]} is already open" if a[0] in world.places else f"{a[0]} cannot be closed"
    if p == "has_room":
        place = world.places.get(a[0])
        if place and place.openable and not place.is_open:
            return f"{a[0]} is closed; open it first"
        return f"{a[0]} has no room for another object"
    return f"{cond.render(binding)} does not hold"
