"""The primitives' transition model: whether a call may run in a world (check_call) and the world it leaves
(apply_call), both read from the primitive specs' preconditions and effects.

check_call is the gate between an (untrusted) LLM answer and the arm: a call that fails any check
here is never executed. Each problem carries a category the termination checker and the
benchmark's error taxonomy use.
"""

from __future__ import annotations

from dataclasses import dataclass

from step_planner.domain.conditions import explain_failure, holds
from step_planner.domain.primitives import DIRECTIONS, PrimitiveCall, PrimitiveLibrary
from step_planner.domain.world import WorldState

# Problem categories
UNKNOWN_PRIMITIVE = "unknown_primitive"
BAD_ARGUMENTS = "bad_arguments"
UNKNOWN_ENTITY = "unknown_entity"
WRONG_TYPE = "wrong_type"
AFFORDANCE = "affordance"
PRECONDITION = "precondition"

_AFFORDANCE_PREDICATES = {"gripper_empty", "holding", "graspable", "reachable", "pushable"}


@dataclass(frozen=True)
class Problem:
    category: str
    message: str

    def __str__(self) -> str:
        return f"{self.category}: {self.message}"


def check_call(call: PrimitiveCall, library: PrimitiveLibrary, world: WorldState) -> list[Problem]:
    """Every reason ``call`` must not run in ``world`` (an observed view); empty means it may."""
    spec = library.get(call.name)
    if spec is None:
        known = ", ".join(library.primitives)
        return [Problem(UNKNOWN_PRIMITIVE, f"'{call.name}' is not a primitive of this robot ({known})")]
    given = call.kwargs
    expected = {a.name for a in spec.args}
    problems: list[Problem] = []
    missing = sorted(expected - given.keys())
    extra = sorted(given.keys() - expected)
    if missing or extra:
        detail = "; ".join(
            p for p in (missing and f"missing {missing}", extra and f"unexpected {extra}") if p
        )
        return [Problem(BAD_ARGUMENTS, f"{spec.signature()}: {detail}")]
    for arg in spec.args:
        value = given[arg.name]
        if not isinstance(value, str) or not value:
            problems.append(Problem(BAD_ARGUMENTS, f"{arg.name} must be a non-empty name"))
            continue
        if arg.type == "direction":
            if value not in DIRECTIONS:
                problems.append(
                    Problem(WRONG_TYPE, f"{arg.name}={value!r} is not one of {', '.join(DIRECTIONS)}")
                )
            continue
        types = world.entity_type(value)
        if not types:
            problems.append(Problem(UNKNOWN_ENTITY, f"there is no '{value}' in the observed scene"))
        elif arg.type not in types:
            problems.append(
                Problem(WRONG_TYPE, f"{arg.name}={value} is a {'/'.join(sorted(types))}, not a {arg.type}")
            )
    if problems:
        return problems
    for cond in spec.preconditions:
        if not holds(cond, given, world):
            category = AFFORDANCE if cond.predicate in _AFFORDANCE_PREDICATES else PRECONDITION
            problems.append(Problem(category, explain_failure(cond, given, world)))
    return problems


def apply_call(call: PrimitiveCall, library: PrimitiveLibrary, world: WorldState) -> None:
    """Apply a (checked) call's effects to ``world`` in place."""
    spec = library.primitives[call.name]
    binding = call.kwargs
    for effect in spec.effects:
        world.apply(effect.predicate, effect.bind(binding))
