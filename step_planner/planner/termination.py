"""The leaf-termination checker (STEP Sec. III-B): EXECUTE(call) | DECOMPOSE | REPLAN(reason).

Mappability: the subgoal maps to exactly one primitive call whose arguments name things that
exist. Consistency: affordance (one gripper), congruence with the parent, and the environment
(the primitive's preconditions hold in the believed world).

Three modes (the profile's ``termination``):

- ``grounded``: the decomposition answer carries the call of a one-action child, so mapping and
  consistency are decided by ``check_call`` without the LLM; a child without a call is mapped
  from its ``success_when`` when exactly one call achieves it, else decomposed.
- ``hybrid``: a child written as a call is mapped deterministically; the LLM maps a
  natural-language child or says it needs several actions.
- ``llm``: STEP as published: the LLM judges every child; its call still passes ``check_call``.
- ``calls``: flat planners (ReAct, one-shot): a child must be a call.

Congruence, in every mode: a call that acts on nothing its parent needs (``pick(cup)`` under "put
the tape in the drawer") is challenged — sent back once with the question; proposed again
unchanged, it is taken as deliberate and runs.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from typing import Protocol

from pydantic import BaseModel

from step_planner.domain.conditions import Condition
from step_planner.domain.primitives import DomainError, PrimitiveCall, PrimitiveLibrary, call_shape
from step_planner.domain.transitions import (
    BAD_ARGUMENTS,
    UNKNOWN_ENTITY,
    UNKNOWN_PRIMITIVE,
    WRONG_TYPE,
    Problem,
    apply_call,
    check_call,
)
from step_planner.llm.errors import LLMInvalidAnswer
from step_planner.llm.schemas import TerminationAnswer
from step_planner.planner.beliefs import Beliefs
from step_planner.planner.grounding import named_entities, relevant_entities
from step_planner.planner.kinds import VerdictKind, VerdictSource
from step_planner.planner.prompts import PromptBook
from step_planner.planner.tree import SubgoalTree

TERMINATION_MODES = ("grounded", "hybrid", "llm", "calls")
_MAPPING_PROBLEMS = {UNKNOWN_PRIMITIVE, BAD_ARGUMENTS, UNKNOWN_ENTITY, WRONG_TYPE}


class CompletionLLM(Protocol):
    def complete(self, messages: list[dict[str, str]], schema: type[BaseModel], purpose: str) -> BaseModel: ...


@dataclass(frozen=True)
class Verdict:
    kind: VerdictKind
    reason: str
    source: VerdictSource
    call: PrimitiveCall | None = None
    categories: tuple[str, ...] = field(default=())


@dataclass
class Candidate:
    """A new child as the checker sees it: its text, the call the model gave, its parent's needs."""

    node_id: int
    text: str
    call_text: str | None
    facts: list[Condition]  # the child's success_when (empty for a call)
    parent_facts: list[Condition]
    parent_text: str
    at_depth_limit: bool = False
    challenged: set[str] = field(default_factory=set)  # calls already challenged in this round


class TerminationChecker:
    def __init__(self, library: PrimitiveLibrary, prompts: PromptBook, llm: CompletionLLM, mode: str) -> None:
        if mode not in TERMINATION_MODES:
            raise ValueError(f"termination mode {mode!r}; known: {', '.join(TERMINATION_MODES)}")
        self.library = library
        self.prompts = prompts
        self.llm = llm
        self.mode = mode

    def judge(self, tree: SubgoalTree, child: Candidate, beliefs: Beliefs) -> Verdict:
        """Judge a new child against the believed world. Raises LLMUnavailable only."""
        call, problem = self._written_call(child)
        if problem is not None:
            return problem
        source = VerdictSource.DETERMINISTIC
        if call is None:
            if self.mode == "calls":
                return Verdict(VerdictKind.REPLAN, f"'{child.text}' is not a primitive call; write one call such as "
                               "pick(object=tape)", VerdictSource.DETERMINISTIC, categories=("not_a_call",))
            if self.mode == "grounded":
                call = self._map_from_conditions(child, beliefs)
                if call is None:
                    return self._decompose(child, "needs several actions")
            else:  # hybrid and llm ask the termination model
                verdict = self._ask_llm(tree, child.node_id, beliefs)
                if verdict.kind is not VerdictKind.EXECUTE:
                    return self._decompose(child, verdict.reason) if verdict.kind is VerdictKind.DECOMPOSE \
                        else verdict
                call, source = verdict.call, VerdictSource.LLM
        elif self.mode == "llm":  # the paper's checker judges calls too; its own call is still checked
            verdict = self._ask_llm(tree, child.node_id, beliefs)
            if verdict.kind is not VerdictKind.EXECUTE:
                return verdict
            call, source = verdict.call or call, VerdictSource.LLM
        assert call is not None
        return self._check(child, call, source, beliefs)

    # ---- the call a child is written as ---------------------------------------------------
    def _written_call(self, child: Candidate) -> tuple[PrimitiveCall | None, Verdict | None]:
        for text in (child.call_text, child.text):
            if not text:
                continue
            try:
                call = self.library.parse_call_text(text)
            except DomainError as exc:
                return None, Verdict(VerdictKind.REPLAN, str(exc), VerdictSource.DETERMINISTIC,
                                     categories=("bad_arguments",))
            if call is not None:
                return call, None
            if shape := call_shape(text):
                known = ", ".join(self.library.primitives)
                return None, Verdict(VerdictKind.REPLAN, f"'{shape[0]}' is not a primitive of this robot ({known})",
                                     VerdictSource.DETERMINISTIC, categories=("unknown_primitive",))
            if text is child.call_text:
                return None, Verdict(VerdictKind.REPLAN, f"call {text!r} is not written as a call such as "
                                     "place(object=tape, target=drawer)", VerdictSource.DETERMINISTIC,
                                     categories=("bad_arguments",))
        return None, None

    def _decompose(self, child: Candidate, reason: str) -> Verdict:
        if child.at_depth_limit:
            return Verdict(VerdictKind.REPLAN, f"'{child.text}' needs decomposing but the depth limit is reached; "
                           "propose a single primitive call", VerdictSource.BUDGET, categories=("depth_limit",))
        return Verdict(VerdictKind.DECOMPOSE, reason, VerdictSource.DETERMINISTIC)

    # ---- consistency ------------------------------------------------------------------------
    def _check(self, child: Candidate, call: PrimitiveCall, source: VerdictSource, beliefs: Beliefs) -> Verdict:
        problems = check_call(call, self.library, beliefs.world)
        malformed = [p for p in problems if p.category in _MAPPING_PROBLEMS]
        if malformed:  # names no such primitive or thing: wrong whatever the subgoal means
            return self._replan(call, malformed)
        if source is VerdictSource.LLM and self.mode == "hybrid" and (uncovered := self._uncovered(child, call,
                                                                                                    beliefs)):
            return self._decompose(child, f"{call} does not cover {', '.join(sorted(uncovered))} named in the "
                                   "subgoal; it needs more than one action")
        if problems:
            return self._replan(call, problems)
        if (challenge := self._congruence(child, call, beliefs)) is not None:
            return challenge
        reason = f"maps to {call}; preconditions hold"
        if str(call) in child.challenged:
            reason += " (proposed again after a congruence challenge)"
        return Verdict(VerdictKind.EXECUTE, reason, source, call=call)

    @staticmethod
    def _replan(call: PrimitiveCall, problems: list[Problem]) -> Verdict:
        return Verdict(VerdictKind.REPLAN, f"{call} cannot run now: " + "; ".join(p.message for p in problems),
                       VerdictSource.DETERMINISTIC, call=call, categories=tuple(sorted({p.category for p in problems})))

    def _congruence(self, child: Candidate, call: PrimitiveCall, beliefs: Beliefs) -> Verdict | None:
        """STEP's task congruence: does the call act on something the parent needs?"""
        if str(call) in child.challenged:
            return None  # confirmed by proposing it again
        if not child.parent_facts and call.name in ("open_drawer", "close_drawer"):
            return None  # without facts a search for a hidden object cannot be told from a detour
        needed = relevant_entities(child.parent_facts, child.parent_text, beliefs)
        if set(call.kwargs.values()) & needed:
            return None
        if not child.parent_facts and not needed - {beliefs.world.held}:
            return None  # a parent that names nothing ("tidy up") gives nothing to judge a step by
        needs = ", ".join(sorted(needed)) or "nothing it can name"
        return Verdict(
            VerdictKind.REPLAN,
            f"{call} acts on nothing '{child.parent_text}' needs ({needs}). If it really is needed, propose it "
            "again unchanged; otherwise propose a step toward what is still missing",
            VerdictSource.CONGRUENCE, call=call, categories=("congruence",))

    def _uncovered(self, child: Candidate, call: PrimitiveCall, beliefs: Beliefs) -> set[str]:
        """Entities a natural-language subgoal names that ``call`` does not act on (a compound subgoal).

        "pick up the tape from the table" is one pick: the tape's own location may be named, unless
        the text also uses another primitive's verb ("put the tape on the table" is not a pick).
        """
        world = beliefs.world
        mentioned = named_entities(child.text, world) - set(call.kwargs.values())
        padded = f" {' '.join(re.sub(r'[^a-z ]', ' ', child.text.lower()).split())} "
        own = set(self.library.primitives[call.name].phrases) if call.name in self.library else set()
        other_verbs = any(f" {phrase} " in padded for spec in self.library.primitives.values()
                          if spec.name != call.name for phrase in spec.phrases if phrase not in own)
        if not other_verbs:
            mentioned -= {world.objects[v].location for v in call.kwargs.values() if v in world.objects}
        return mentioned

    # ---- mapping from conditions (grounded) ----------------------------------------------
    def _map_from_conditions(self, child: Candidate, beliefs: Beliefs) -> PrimitiveCall | None:
        """The one call that makes all of the child's facts true from here, if exactly one does."""
        if not child.facts:
            return None
        world = beliefs.world
        names = sorted({a for f in child.facts for a in f.args} | ({world.held} if world.held else set()))
        found: list[PrimitiveCall] = []
        for spec in self.library.primitives.values():
            if not spec.args:
                continue
            for values in itertools.product(names, repeat=len(spec.args)):
                call = PrimitiveCall.make(spec.name, {a.name: v for a, v in zip(spec.args, values, strict=True)})
                if check_call(call, self.library, world):
                    continue
                after = world.copy()
                apply_call(call, self.library, after)
                if Beliefs(after).unmet(child.facts) == []:
                    found.append(call)
        return found[0] if len(found) == 1 else None

    # ---- the LLM path -----------------------------------------------------------------------
    def _ask_llm(self, tree: SubgoalTree, node_id: int, beliefs: Beliefs) -> Verdict:
        messages = self.prompts.termination(tree, node_id, beliefs)
        try:
            answer = self.llm.complete(messages, TerminationAnswer, "termination")
        except LLMInvalidAnswer as exc:
            return Verdict(VerdictKind.REPLAN, f"the termination answer was invalid: {exc.error}",
                           VerdictSource.VALIDATION, categories=("grammar",))
        assert isinstance(answer, TerminationAnswer)
        reason = answer.reasoning or answer.verdict
        if answer.verdict == "execute":
            try:
                call = self.library.parse_call_text(answer.call or "")
            except DomainError as exc:
                return Verdict(VerdictKind.REPLAN, f"the checker's call is malformed: {exc}", VerdictSource.VALIDATION,
                               categories=("grammar",))
            if call is None:
                return Verdict(VerdictKind.REPLAN, f"the checker said execute but gave no primitive call "
                               f"({answer.call!r})", VerdictSource.VALIDATION, categories=("grammar",))
            return Verdict(VerdictKind.EXECUTE, reason, VerdictSource.LLM, call=call)
        kind = VerdictKind.DECOMPOSE if answer.verdict == "decompose" else VerdictKind.REPLAN
        return Verdict(kind, reason, VerdictSource.LLM)
