"""Benchmark goals: conjunctions of facts in the domain's condition grammar, judged on the TRUE world.

A goal is a list of facts that must all hold — ``in(tape, drawer)``, ``on(o, table)``,
``at(o, tray)``, ``holding(o)``, ``gripper_empty``, ``open(d)``, ``closed(d)``, ``not …`` — parsed
by :func:`step_planner.domain.conditions.parse_fact`, the same grammar the planner's
``success_when`` uses. The benchmark judges them on the world a simulator knows (a tape put in a
drawer that is then closed still counts), never on the planner's belief or claim.
"""

from __future__ import annotations

from collections.abc import Iterable

from step_planner.domain.conditions import Condition, ConditionError, check_fact, holds, parse_fact
from step_planner.domain.world import WorldState

Atom = Condition  # a goal atom is a domain fact


class TaskGoalError(ValueError):
    """A task's goal atom is malformed or names something that is not in the scene."""


def parse_atom(text: str) -> Atom:
    try:
        return parse_fact(text)
    except ConditionError as exc:
        raise TaskGoalError(str(exc)) from None


def parse_goal(items: list[str] | str) -> tuple[Atom, ...]:
    if isinstance(items, str):
        items = [items]
    if not isinstance(items, list) or not items:
        raise TaskGoalError("a goal is a non-empty list of atoms")
    return tuple(parse_atom(t) for t in items)


def check_atom_names(atom: Atom, world: WorldState) -> str | None:
    """Why ``atom`` cannot be about ``world`` (unknown or wrongly typed names), or None."""
    return check_fact(atom, world) or None


def atom_holds(atom: Atom, world: WorldState) -> bool:
    return holds(atom, {}, world)


def satisfied(goal: tuple[Atom, ...] | list[Atom], world: WorldState) -> bool:
    return all(atom_holds(atom, world) for atom in goal)


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


def same_goal(facts: Iterable[str | Atom], goal: Iterable[Atom]) -> bool:
    """Whether stated facts are the formal goal (in/on/at of an object in a place are the same fact)."""
    def norm(fact: str | Atom) -> str:
        try:
            atom = parse_atom(str(fact))
        except ValueError:
            return f"?{fact}"
        if atom.predicate in ("in", "on"):
            atom = Atom("at", atom.args, atom.negated)
        return str(atom)

    return {norm(f) for f in facts} == {norm(a) for a in goal}
