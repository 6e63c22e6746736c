"""The leaf-termination checker (STEP Sec. III-B): EXECUTE(call) | DECOMPOSE | REPLAN(reason).

Mappability: the subgoal maps to exactly one primitive call whose arguments name things that
exist. Consistency: affordance (one gripper), congruence with the parent and the previous
siblings, and the environment (the primitive's preconditions hold in the observed world).

Deterministic checks decide wherever they can: a subgoal written as a call (``pick(tape)``) is
mapped without the LLM, and every call — whoever proposed it — passes ``check_call`` before it
may run. The LLM is asked only to map natural language to a call and to judge whether a
natural-language subgoal is one action or several.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol

from pydantic import BaseModel

from step_planner.domain.primitives import DomainError, PrimitiveCall, PrimitiveLibrary
from step_planner.domain.validation import (
    BAD_ARGUMENTS,
    UNKNOWN_ENTITY,
    UNKNOWN_PRIMITIVE,
    WRONG_TYPE,
    check_call,
)
from step_planner.domain.world import WorldState
from step_planner.llm.errors import LLMInvalidAnswer
from step_planner.llm.schemas import TerminationAnswer
from step_planner.planner.prompts import PromptBook
from step_planner.planner.tree import SubgoalTree

EXECUTE = "execute"
DECOMPOSE = "decompose"
REPLAN = "replan"

_MAPPING_PROBLEMS = {UNKNOWN_PRIMITIVE, BAD_ARGUMENTS, UNKNOWN_ENTITY, WRONG_TYPE}
_CALL_SHAPE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*\(.*\)\s*\.?\s*$")


class CompletionLLM(Protocol):
    def complete(self, messages: list[dict[str, str]], schema: type[BaseModel], purpose: str) -> BaseModel: ...


@dataclass(frozen=True)
class Verdict:
    kind: str
    reason: str
    source: str  # deterministic | llm | validation
    call: PrimitiveCall | None = None
    categories: tuple[str, ...] = field(default=())


def named_entities(text: str, world: WorldState) -> set[str]:
    """Entity names (``red_block`` or ``red block``) that a subgoal text mentions."""
    lowered = f" {re.sub(r'[^a-z0-9_ ]', ' ', text.lower())} "
    found = set()
    for name in (*world.objects, *world.places):
        if f" {name} " in lowered or f" {name.replace('_', ' ')} " in lowered:
            found.add(name)
    return found


class TerminationChecker:
    def __init__(self, library: PrimitiveLibrary, prompts: PromptBook, llm: CompletionLLM) -> None:
        self.library = library
        self.prompts = prompts
        self.llm = llm

    def judge(self, tree: SubgoalTree, node_id: int, world: WorldState) -> Verdict:
        """Judge a new node against the observed ``world``. Raises LLMUnavailable only."""
        text = tree.node(node_id).text
        try:
            call = self.library.parse_call_text(text)
        except DomainError as exc:
            return Verdict(REPLAN, str(exc), "deterministic", categories=("bad_arguments",))
        if call is None and (m := _CALL_SHAPE.match(text)):
            known = ", ".join(self.library.primitives)
            return Verdict(
                REPLAN,
                f"'{m.group(1)}' is not a primitive of this robot ({known})",
                "deterministic",
                categories=("unknown_primitive",),
            )
        source = "deterministic"
        if call is None:
            verdict = self._ask_llm(tree, node_id, world)
            if verdict.kind != EXECUTE:
                return verdict
            call, source = verdict.call, "llm"
            assert call is not None
        problems = check_call(call, self.library, world)
        # a call that names no such primitive or thing is wrong whatever the subgoal means
        malformed = [p for p in problems if p.category in _MAPPING_PROBLEMS]
        if malformed:
            return self._replan(call, malformed)
        if source == "llm" and (uncovered := self._uncovered(text, call, world)):
            return Verdict(
                DECOMPOSE,
                f"{call} does not cover {', '.join(sorted(uncovered))} named in the subgoal; "
                "it needs more than one action",
                "deterministic",
            )
        if problems:
            return self._replan(call, problems)
        return Verdict(EXECUTE, f"maps to {call}; preconditions hold", source, call=call)

    @staticmethod
    def _replan(call: PrimitiveCall, problems: list) -> Verdict:
        return Verdict(
            REPLAN,
            f"{call} cannot run now: " + "; ".join(p.message for p in problems),
            "deterministic",
            call=call,
            categories=tuple(sorted({p.category for p in problems})),
        )

    def _uncovered(self, text: str, call: PrimitiveCall, world: WorldState) -> set[str]:
        """Entities the subgoal names that ``call`` does not act on — a sign of a compound subgoal.

        "pick up the tape from the table" is one pick: the tape's own location may be named, unless
        the text also uses another primitive's verb ("put the tape on the table" is not a pick).
        """
        mentioned = named_entities(text, world) - set(call.kwargs.values())
        padded = f" {' '.join(re.sub(r'[^a-z ]', ' ', text.lower()).split())} "
        other_verbs = any(
            f" {phrase} " in padded
            for spec in self.library.primitives.values() if spec.name != call.name
            for phrase in spec.phrases
            if not (self.library.get(call.name) and phrase in self.library.primitives[call.name].phrases)
        )
        if not other_verbs:
            locations = {world.objects[v].location for v in call.kwargs.values() if v in world.objects}
            mentioned -= locations
        return mentioned

    def _ask_llm(self, tree: SubgoalTree, node_id: int, world: WorldState) -> Verdict:
        messages = self.prompts.termination(tree, node_id, world.describe())
        try:
            answer = self.llm.complete(messages, TerminationAnswer, "termination")
        except LLMInvalidAnswer as exc:
            return Verdict(REPLAN, f"the termination answer was invalid: {exc.error}", "validation",
                           categories=("grammar",))
        assert isinstance(answer, TerminationAnswer)
        reason = answer.reason or answer.reasoning or answer.verdict
        if answer.verdict == EXECUTE:
            if answer.call is None:
                return Verdict(REPLAN, "the checker said execute but gave no primitive call", "validation",
                               categories=("grammar",))
            return Verdict(EXECUTE, reason, "llm", call=PrimitiveCall.make(answer.call.name, answer.call.args))
        return Verdict(answer.verdict, reason, "llm")
