"""Realistic LLM mistakes the scripted expert injects, after STEP's error taxonomy.

Each function turns the expert's correct answer into a wrong one of one kind. Kinds (STEP /
Embodied Agent Interface names in brackets):

- ``hallucinated_object``   names an object that is not in the scene [missing state / grammar]
- ``wrong_order``           proposes the step after next first [trajectory: wrong order]
- ``missing_step``          skips the next step; with one step left, claims done [missing step]
- ``extra_step``            inserts an unneeded but executable action [additional step]
- ``affordance_violation``  grasps while holding, or places what it does not hold [affordance]
- ``too_abstract_executable`` termination says "execute" with one call for a compound subgoal
- ``malformed_json``        truncated JSON [grammar]
- ``empty_answer``          an empty completion [grammar]
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from step_planner.bench.phrases import call_phrase, short_call, spoken
from step_planner.domain.primitives import PrimitiveCall
from step_planner.domain.world import WorldState
from step_planner.llm.schemas import DecompositionAnswer, ProposedCall, TerminationAnswer

MISTAKE_KINDS = (
    "hallucinated_object",
    "wrong_order",
    "missing_step",
    "extra_step",
    "affordance_violation",
    "too_abstract_executable",
    "malformed_json",
    "empty_answer",
)
PHANTOMS = ("banana", "blue_mug", "scissors", "stapler", "green_bottle")


@dataclass
class AnswerContext:
    """What the expert worked out for one request; the mistakes are derived from it."""

    purpose: str
    world: WorldState  # the believed world (observation + beliefs)
    plan: list[PrimitiveCall] = field(default_factory=list)  # remaining primitives
    children: list[str] = field(default_factory=list)  # remaining children at this level
    primitive_level: bool = True
    plan_ahead: bool = False
    verdict: str = ""  # termination: the correct verdict


def _phantom(world: WorldState, rng: random.Random) -> str:
    return rng.choice([p for p in PHANTOMS if p not in world.objects and p not in world.places])


def _text(call: PrimitiveCall, ctx: AnswerContext) -> str:
    return short_call(call) if ctx.primitive_level else call_phrase(call, ctx.world)


def applicable(ctx: AnswerContext, kinds: tuple[str, ...]) -> list[str]:
    """The mistake kinds that make sense for this request (a wrong order needs two steps...)."""
    ok = {"malformed_json", "empty_answer", "hallucinated_object"}
    if ctx.purpose == "decomposition":
        if len(ctx.children) >= 2:
            ok.add("wrong_order")
        if ctx.children:
            ok |= {"missing_step", "extra_step", "affordance_violation"}
    elif ctx.verdict == "decompose" and ctx.plan:
        ok.add("too_abstract_executable")
    return [k for k in kinds if k in ok]


def _with_children(ctx: AnswerContext, children: list[str], reasoning: str) -> str:
    plan = children[:16] if ctx.plan_ahead else []
    return DecompositionAnswer(reasoning=reasoning, done=False, subgoal=children[0], plan=plan).model_dump_json()


def decomposition_mistake(kind: str, ctx: AnswerContext, correct: str, rng: random.Random) -> tuple[str, str]:
    """(answer text, detail) for a decomposition request."""
    world, kids = ctx.world, ctx.children
    if kind == "malformed_json":
        return correct[: max(1, len(correct) // 2)], "truncated JSON"
    if kind == "empty_answer":
        return "", "empty completion"
    if kind == "hallucinated_object":
        ghost = _phantom(world, rng)
        target = next((p for p in world.places), "table")
        text = f"pick({ghost})" if ctx.primitive_level else f"put the {spoken(ghost)} in the {spoken(target)}"
        return _with_children(ctx, [text, *kids], "the object is right there"), text
    if kind == "wrong_order":
        swapped = [kids[1], kids[0], *kids[2:]]
        return _with_children(ctx, swapped, "do this first"), kids[1]
    if kind == "missing_step":
        if len(kids) == 1:
            answer = DecompositionAnswer(reasoning="everything is done", done=True).model_dump_json()
            return answer, f"claimed done before {kids[0]}"
        return _with_children(ctx, kids[1:], "next step"), f"skipped {kids[0]}"
    if kind == "extra_step":
        options = [PrimitiveCall.make("home")]
        options += [PrimitiveCall.make("move_to", {"target": p}) for p in world.places]
        extra = _text(rng.choice(options), ctx)
        return _with_children(ctx, [extra, *kids], "get into position first"), extra
    if kind == "affordance_violation":
        if world.held:
            others = [o for o in world.objects if o != world.held and world.is_visible(o)]
            if others:
                call = PrimitiveCall.make("pick", {"object": rng.choice(others)})
                return _with_children(ctx, [_text(call, ctx), *kids], "grab it too"), str(call)
        obj = next((c.kwargs["object"] for c in ctx.plan if "object" in c.kwargs), None) or \
            next(iter(world.objects), "tape")
        target = next((c.kwargs["target"] for c in ctx.plan if c.name == "place"), None) or \
            next(iter(world.places), "table")
        call = PrimitiveCall.make("place", {"object": obj, "target": target})
        return _with_children(ctx, [_text(call, ctx), *kids], "place it"), f"{call} while not holding {obj}"
    raise ValueError(f"{kind} does not apply to a decomposition")


def termination_mistake(kind: str, ctx: AnswerContext, correct: str, rng: random.Random) -> tuple[str, str]:
    """(answer text, detail) for a termination request."""
    if kind == "malformed_json":
        return correct[: max(1, len(correct) // 2)], "truncated JSON"
    if kind == "empty_answer":
        return "", "empty completion"
    if kind == "hallucinated_object":
        ghost = _phantom(ctx.world, rng)
        call = ProposedCall(name="pick", args={"object": ghost})
        return TerminationAnswer(verdict="execute", call=call, reason="one grasp").model_dump_json(), f"pick({ghost})"
    if kind == "too_abstract_executable":
        first = ctx.plan[0]
        call = ProposedCall(name=first.name, args=first.kwargs)
        answer = TerminationAnswer(verdict="execute", call=call, reason="a single action does it")
        return answer.model_dump_json(), f"compound subgoal mapped to {first}"
    raise ValueError(f"{kind} does not apply to a termination")
