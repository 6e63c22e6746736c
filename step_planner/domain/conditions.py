"""The domain's one condition grammar: ``in(tape, drawer)``, ``not open(drawer)``, ``gripper_empty``.

Three uses, one parser:

- **facts** about the world (``FACT`` predicates) — the goal of an instruction, a subgoal's
  ``success_when``, a benchmark task's goal. Written with entity names, judged on a world.
- **preconditions** of a primitive (facts plus ``CAPABILITY`` predicates such as ``reachable``),
  written over the primitive's argument names, judged with a call's arguments bound.
- **effects** of a primitive (``EFFECT`` predicates), applied by :meth:`WorldState.apply`.

A fact's arguments are typed (``in`` takes an object and a container); :func:`check_fact` says
in words what is wrong with a fact that names unknown or wrongly typed things — that text goes
back to the LLM as re-plan feedback, so it is phrased for a reader.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from step_planner.domain.world import WorldState

CONSTANTS = frozenset({"home"})

FACT = "fact"  # a state of the world: goals, success_when, preconditions, effects
CAPABILITY = "capability"  # what the robot can do to a thing now: preconditions only
EFFECT = "effect"  # what a primitive does: effects only


@dataclass(frozen=True)
class PredicateSpec:
    name: str
    arg_types: tuple[str, ...]  # entity types (see WorldState.entity_type) or "direction"
    roles: frozenset[str]


def _spec(name: str, arg_types: tuple[str, ...], *roles: str) -> tuple[str, PredicateSpec]:
    return name, PredicateSpec(name, arg_types, frozenset(roles))


PREDICATES: dict[str, PredicateSpec] = dict([
    _spec("gripper_empty", (), FACT),
    _spec("holding", ("object",), FACT, EFFECT),
    _spec("in", ("object", "container"), FACT),
    _spec("on", ("object", "surface"), FACT),
    _spec("at", ("object", "place"), FACT),
    _spec("empty", ("container",), FACT),
    _spec("open", ("drawer",), FACT, EFFECT),
    _spec("closed", ("drawer",), FACT, EFFECT),
    _spec("visible", ("location",), CAPABILITY),
    _spec("graspable", ("object",), CAPABILITY),
    _spec("reachable", ("location",), CAPABILITY),
    _spec("pushable", ("object",), CAPABILITY),
    _spec("has_room", ("place",), CAPABILITY),
    _spec("released", ("object",), EFFECT),
    _spec("put", ("object", "place"), EFFECT),
    _spec("robot_at", ("location",), EFFECT),
    _spec("pushed", ("object", "direction"), EFFECT),
])
FACT_PREDICATES = tuple(p for p, s in PREDICATES.items() if FACT in s.roles)

# How each fact is written for a reader (the prompts print this list; the parser accepts exactly it).
FACT_SYNTAX = (
    "in(<object>, <container>)", "on(<object>, <surface>)", "at(<object>, <place>)", "holding(<object>)",
    "gripper_empty", "open(<drawer>)", "closed(<drawer>)", "empty(<container>)",
)

_TERM_RE = re.compile(r"^(not\s+)?([a-z_]+)\s*(?:\(([^()]*)\))?$")


class ConditionError(ValueError):
    """A condition text does not parse; the message says how it should be written."""


@dataclass(frozen=True)
class Condition:
    predicate: str
    args: tuple[str, ...] = ()
    negated: bool = False

    @staticmethod
    def is_constant(value: str) -> bool:
        return value in CONSTANTS

    def bind(self, binding: dict[str, str]) -> tuple[str, ...]:
        return tuple(binding.get(a, a) for a in self.args)

    def render(self, binding: dict[str, str] | None = None) -> str:
        args = self.bind(binding or {})
        body = self.predicate + (f"({', '.join(args)})" if args else "")
        return f"not {body}" if self.negated else body

    def ground(self, binding: dict[str, str]) -> Condition:
        return Condition(self.predicate, self.bind(binding), self.negated)

    @property
    def objects(self) -> tuple[str, ...]:
        """The object names this condition is about (arguments typed ``object``)."""
        spec = PREDICATES[self.predicate]
        return tuple(a for a, t in zip(self.args, spec.arg_types, strict=True) if t == "object")

    @property
    def names(self) -> tuple[str, ...]:
        return self.args

    def __str__(self) -> str:
        return self.render()


def parse_condition(text: str, roles: frozenset[str] | set[str] | None = None) -> Condition:
    """Parse one condition; ``roles`` limits the predicates accepted (e.g. ``{FACT}`` for goals)."""
    if not isinstance(text, str):
        raise ConditionError(f"a condition is a string such as 'in(tape, drawer)', got {text!r}")
    m = _TERM_RE.match(" ".join(text.strip().split()))
    if not m:
        raise ConditionError(f"cannot read {text!r}; write a fact such as in(tape, drawer) or not open(drawer)")
    negated, pred, inner = bool(m.group(1)), m.group(2), m.group(3)
    spec = PREDICATES.get(pred)
    allowed = [p for p, s in PREDICATES.items() if roles is None or s.roles & set(roles)]
    if spec is None or pred not in allowed:
        raise ConditionError(f"unknown predicate {pred!r} in {text!r}; use one of {', '.join(allowed)}")
    args = tuple(a.strip() for a in inner.split(",")) if inner is not None and inner.strip() else ()
    if len(args) != len(spec.arg_types) or not all(args):
        shown = f"{pred}({', '.join(f'<{t}>' for t in spec.arg_types)})" if spec.arg_types else pred
        raise ConditionError(f"{text!r}: {pred} is written {shown}")
    if any(not re.fullmatch(r"[A-Za-z0-9_]+", a) for a in args):
        raise ConditionError(f"{text!r}: arguments are plain names such as red_block")
    return Condition(pred, args, negated)


@lru_cache(maxsize=4096)
def parse_fact(text: str) -> Condition:
    """A world fact (goal / success_when): only ``FACT`` predicates. (Cached: facts are re-read on every
    judgement, and a Condition is immutable.)"""
    return parse_condition(text, {FACT})


def holds(cond: Condition, binding: dict[str, str], world: WorldState) -> bool:
    """Evaluate a fact or capability condition with ``binding`` against ``world``."""
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
    elif p in ("on", "in", "at"):
        obj = world.objects.get(a[0])
        value = bool(obj and obj.location == a[1])
    elif p == "empty":
        value = a[0] in world.places and not world.contents(a[0])
    elif p == "has_room":
        value = world.has_room(a[0])
    else:  # effect-only predicates describe changes, not states
        raise ValueError(f"{p} is an effect, not a condition")
    return value != cond.negated


def check_fact(fact: Condition, world: WorldState, unseen_objects: frozenset[str] | set[str] = frozenset()) -> str:
    """Why ``fact`` cannot be about ``world`` ('' when it can): unknown names, wrong types.

    ``unseen_objects`` are object names accepted although the world has no such object yet (an
    object the instruction names that may be hidden in a closed drawer).
    """
    spec = PREDICATES[fact.predicate]
    for name, wanted in zip(fact.args, spec.arg_types, strict=True):
        types = world.entity_type(name)
        if not types:
            if wanted == "object" and name in unseen_objects:
                continue
            return f"{fact}: there is no '{name}' in the scene"
        if wanted not in types:
            hint = ""
            if fact.predicate == "in" and "surface" in types:
                hint = f"; {name} is a surface: use on({fact.args[0]}, {name})"
            elif fact.predicate == "on" and "container" in types:
                hint = f"; {name} is a container: use in({fact.args[0]}, {name})"
            return f"{fact}: {name} is a {'/'.join(sorted(types - {'location'}) or types)}, not a {wanted}{hint}"
    return ""


def explain_failure(cond: Condition, binding: dict[str, str], world: WorldState) -> str:
    """A sentence saying why a condition does not hold — this is what the LLM is told."""
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
        return f"{a[0]} is open" if a[0] in world.places else f"{a[0]} cannot be closed"
    if p == "has_room":
        place = world.places.get(a[0])
        if place and place.openable and not place.is_open:
            return f"{a[0]} is closed; open it first"
        return f"{a[0]} has no room for another object"
    if p == "empty":
        return f"{a[0]} still holds {', '.join(world.contents(a[0]))}"
    if p in ("in", "on", "at"):
        obj = world.objects.get(a[0])
        where = "not seen" if obj is None else ("in the gripper" if obj.location == "gripper" else
                                                f"{world.preposition(obj.location)} {obj.location}")
        return f"{a[0]} is {where}, not {world.preposition(a[1])} {a[1]}"
    return f"{cond.render(binding)} does not hold"


_FACT_WORDS = {
    "in": "{0} is in {1}", "on": "{0} is on {1}", "at": "{0} is {prep} {1}", "holding": "the gripper holds {0}",
    "gripper_empty": "the gripper is empty", "open": "{0} is open", "closed": "{0} is closed",
    "empty": "{0} is empty",
}
_NOT_WORDS = {
    "in": "{0} is not in {1}", "on": "{0} is not on {1}", "at": "{0} is not {prep} {1}",
    "holding": "the gripper does not hold {0}", "gripper_empty": "the gripper holds something",
    "open": "{0} is not open", "closed": "{0} is not closed", "empty": "{0} is not empty",
}


def describe_fact(fact: Condition, world: WorldState | None = None) -> str:
    """A fact in words a person reads: ``in(tape, drawer)`` -> "the tape is in the drawer"."""
    names = [f"the {a.replace('_', ' ')}" for a in fact.args]
    prep = world.preposition(fact.args[1]) if world is not None and len(fact.args) > 1 else "at"
    template = (_NOT_WORDS if fact.negated else _FACT_WORDS).get(fact.predicate)
    if template is None:
        return fact.render()
    return template.format(*names, prep=prep)
