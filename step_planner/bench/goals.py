"""A small goal language for benchmark tasks, evaluated against a :class:`WorldState`.

A goal is a list of atoms that must all hold (conjunction). Atoms:

- ``at(o, p)``      object ``o`` is on/in place ``p`` (any kind of place)
- ``in(o, c)``      object ``o`` is inside container ``c`` (``c`` must not be a surface)
- ``on(o, s)``      object ``o`` is on surface ``s`` (``s`` must be a surface)
- ``holding(o)``    the gripper holds ``o``
- ``gripper_empty`` the gripper holds nothing
- ``open(d)`` / ``closed(d)``  drawer ``d`` is open / closed
- ``not <atom>``    negation of any of the above

Goals are judged on the TRUE world (what a simulator knows), not the observed view: a tape put
in a drawer that is then closed still counts as ``in(tape, drawer)``. Why a separate language
from the primitive preconditions: benchmark goals must be checkable without any planner code,
and must reject names that are not in the scene when the task file is loaded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from step_planner.domain.world import GRIPPER, WorldState

ARITY = {"at": 2, "in": 2, "on": 2, "holding": 1, "gripper_empty": 0, "open": 1, "closed": 1}
_ATOM_RE = re.compile(r"^\s*(not\s+)?([a-z_]+)\s*(?:\(([^()]*)\))?\s*$")


class GoalError(ValueError):
    """A goal atom is malformed or names something that is not in the scene."""


@dataclass(frozen=True)
class Atom:
    predicate: str
    args: tuple[str, ...] = ()
    negated: bool = False

    def __str__(self) -> str:
        body = self.predicate + (f"({', '.join(self.args)})" if self.args else "")
        return f"not {body}" if self.negated else body

    @property
    def objects(self) -> tuple[str, ...]:
        """The object names this atom is about (the first argument of object predicates)."""
        return self.args[:1] if self.predicate in ("at", "in", "on", "holding") else ()

    def holds(self, world: WorldState) -> bool:
        return _holds(self, world) != self.negated


def parse_atom(text: str) -> Atom:
    m = _ATOM_RE.match(str(text))
    if not m:
        raise GoalError(f"cannot parse goal atom {text!r}; expected e.g. in(tape, drawer)")
    negated, pred, inner = bool(m.group(1)), m.group(2), m.group(3)
    if pred not in ARITY:
        raise GoalError(f"unknown goal predicate {pred!r} in {text!r}; known: {', '.join(ARITY)}")
    args = tuple(a.strip() for a in inner.split(",")) if inner and inner.strip() else ()
    if len(args) != ARITY[pred] or not all(args):
        raise GoalError(f"{pred} takes {ARITY[pred]} arguments, got {text!r}")
    return Atom(pred, args, negated)


def parse_goal(items: list[str] | str) -> tuple[Atom, ...]:
    if isinstance(items, str):
        items = [items]
    if not isinstance(items, list) or not items:
        raise GoalError("a goal is a non-empty list of atoms")
    return tuple(parse_atom(t) for t in items)


def check_atom_names(atom: Atom, world: WorldState) -> str | None:
    """Why ``atom`` cannot be about ``world`` (unknown or wrongly typed names), or None."""
    a = atom.args
    p = atom.predicate
    if p in ("at", "in", "on", "holding") and a[0] not in world.objects:
        return f"{atom}: '{a[0]}' is not an object of the scene"
    if p in ("at", "in", "on"):
        place = world.places.get(a[1])
        if place is None:
            return f"{atom}: '{a[1]}' is not a place of the scene"
        if p == "in" and not place.is_container:
            return f"{atom}: '{a[1]}' is a surface; use on() or at()"
        if p == "on" and place.is_container:
            return f"{atom}: '{a[1]}' is a container; use in() or at()"
    if p in ("open", "closed"):
        place = world.places.get(a[0])
        if place is None or not place.openable:
            return f"{atom}: '{a[0]}' is not a drawer of the scene"
    return None


def _holds(atom: Atom, world: WorldState) -> bool:
    p, a = atom.predicate, atom.args
    if p in ("at", "in", "on"):
        obj = world.objects.get(a[0])
        return bool(obj and obj.location == a[1])
    if p == "holding":
        return world.held == a[0] and world.objects.get(a[0]) is not None \
            and world.objects[a[0]].location == GRIPPER
    if p == "gripper_empty":
        return world.held is None
    if p in ("open", "closed"):
        place = world.places.get(a[0])
        return bool(place and place.openable and place.is_open == (p == "open"))
    raise GoalError(f"unknown goal predicate {p}")  # parse_atom prevents this


def satisfied(goal: tuple[Atom, ...] | list[Atom], world: WorldState) -> bool:
    return all(atom.holds(world) for atom in goal)


def unsatisfied(goal: tuple[Atom, ...] | list[Atom], world: WorldState) -> list[Atom]:
    return [atom for atom in goal if not atom.holds(world)]


def milestones_reached(milestones: list[tuple[Atom, ...]], states: list[WorldState]) -> int:
    """How many ordered milestones the trajectory ``states`` reached (subgoal success).

    Milestone k counts when it holds in some state at or after the state where milestone k-1
    was first reached; the count stops at the first milestone never reached.
    """
    start = 0
    reached = 0
    for milestone in milestones:
        for i in range(start, len(states)):
            if satisfied(milestone, states[i]):
                start = i
                reached += 1
                break
        else:
            break
    return reached
