"""STEP Algorithm 1 as a generator: decomposition, checking and execution interleave depth first.

``StepPlanner.run(world)`` yields the next :class:`PrimitiveCall` and is sent back a
:class:`StepReport` (the outcome and the new world). The caller owns execution, which is why the
ROS action server, the CLI and the benchmark all drive this same code (``runner.run_goal``).

With conditions (the ``grounded`` profile) the world decides, not the model's word: the root
carries the instruction's goal facts, every child its ``success_when`` (or, for a call, the
call's effects); after each child the parent's facts are judged on the believed world, and a
subgoal whose facts hold is done without asking anyone. A model's "done" whose facts do not hold
becomes feedback naming them.

The person (``planner/person.py``): at any node the model may answer with a question instead of a child
(feature ``questions``: when the words leave open which thing is meant, or the world shows it, e.g. a drawer
opened on two candidates); the answer goes into every later prompt, and with nobody to answer the goal ends
CLARIFICATION_NEEDED, naming the question. The person's answer is final: the model's resolution of a
reference after it is never refused as a guess, and it is shown with where it came from (``readings``). A
goal refusal only the person can settle (which of several things is meant) is not sent back to the model:
the planner asks the person itself, naming the candidates. Nobody is asked the same thing twice, and every
refusal rule has a bound. With ``confirm_goal`` the goal the model states is shown to the person before
anything moves: accepted, corrected (checked like a goal a client states) or refused.

Names for things not seen yet: a goal may name a hidden object provisionally (``old_sponge``); once looking
inside has shown what is there, the model restates the goal with the names it sees, checked against the
words of the provisional name or settled by the person, before anything is judged. An instruction about
"the thing in the drawer" may leave its goal for later, as long as nothing but opening is done until then.

Re-planning (STEP): an inconsistent child, a failed execution or a failed subtree sends the
reason back to the parent, which proposes a different next child with that reason as feedback.
Finished siblings stay finished. After ``max_replans_per_node`` rejections in one round the
parent itself fails and its own parent re-plans.
"""

from __future__ import annotations

import re
import threading
import time
from collections import Counter
from collections.abc import Generator, Iterable
from dataclasses import dataclass, field

from pydantic import BaseModel

from step_planner.domain.conditions import Condition, describe_fact, explain_failure, parse_fact
from step_planner.domain.primitives import PrimitiveCall, PrimitiveLibrary
from step_planner.domain.world import GRIPPER, WorldState
from step_planner.execution.base import ExecCode, Outcome
from step_planner.llm.errors import LLMCanceled, LLMInvalidAnswer, LLMUnavailable
from step_planner.llm.schemas import CompletionAnswer, decomposition_schema
from step_planner.planner.beliefs import Beliefs
from step_planner.planner.budget import Budget, BudgetExceeded, Canceled
from step_planner.planner.config import PlannerConfig
from step_planner.planner.control_flow import ControlFlow, Next, control_flow
from step_planner.planner.features import ChildFinished, make_features
from step_planner.planner.grounding import (
    RULE_PROVISIONAL,
    CheckedConditions,
    Reference,
    check_goal,
    check_subgoal_conditions,
    kind_mentions,
    named_entities,
    relevant_entities,
)
from step_planner.planner.kinds import Control, JudgedFrom, NodeStatus, VerdictKind, VerdictSource
from step_planner.planner.memory import EpisodicMemory
from step_planner.planner.overlap import AnswerLog, Prefetcher, answer_key
from step_planner.planner.person import Ask, AskKind, Person, Reply, ReplyKind, answer_problem
from step_planner.planner.prompts import PromptBook
from step_planner.planner.result import GoalError, GoalResult, StepReport
from step_planner.planner.termination import Candidate, CompletionLLM, TerminationChecker
from step_planner.planner.tree import ConditionRecord, SubgoalTree, TreeListener, render_reading
from step_planner.planner.world_changes import revise_pending

__all__ = ["BudgetExceeded", "Canceled", "CompletionLLM", "StepPlanner", "StepReport"]


@dataclass
class ChildSpec:
    """A proposed child: its words, the call it is (if one action) and the facts that end it."""

    text: str
    call_text: str | None = None
    success_when: list[str] = field(default_factory=list)
    planned: bool = False  # taken from a plan, without an LLM call
    prepared: bool = False  # its answer was prepared while the arm was moving (overlap)


@dataclass
class _Round:
    """One node's expansion: the feedback of the current child position and what is planned."""

    node_id: int
    flow: ControlFlow
    feedback: list[str] = field(default_factory=list)
    rejections: int = 0
    pending: list[ChildSpec] = field(default_factory=list)  # plan-ahead: head first
    challenged: set[str] = field(default_factory=set)
    asked: int = 0


class _DoneClaim:
    def __init__(self, reasoning: str) -> None:
        self.reasoning = reasoning


class _NothingToDo(Exception):
    pass


class _ClientGoalError(ValueError):
    """A goal stated by the client (the action goal, ``--goal``) names unknown things or does not parse."""


class _PersonStop(Exception):
    """The person refused the goal, or nobody answered: the goal ends with ``error``."""

    def __init__(self, error: GoalError, message: str) -> None:
        super().__init__(message)
        self.error = error


MAX_QUESTIONS = 3  # questions one goal may ask the person
GOAL_REFUSALS_PER_RULE = 3  # goals one rule may refuse in a goal (a repeated refusal text counts twice)


class _RefusalLoop(Exception):
    """The model keeps stating goals one rule refuses: re-reading is not fixing it."""


def _question_words(text: str) -> set[str]:
    return set(re.sub(r"[^a-z0-9_ ]", " ", text.lower()).split()) - {"the", "a", "an", "do", "you", "i", "which",
                                                                     "is", "it", "should", "or", "of", "to"}


def _same_question(a: str, b: str) -> bool:
    """Two questions that ask the same thing (the same words, give or take a few)."""
    wa, wb = _question_words(a), _question_words(b)
    return bool(wa and wb) and len(wa & wb) / len(wa | wb) >= 0.7


_RECHECK = object()  # the goal was just stated: judge it before proposing anything
_CALL_SHAPE = re.compile(r"^\s*[A-Za-z_][A-Za-z0-9_]*\s*\(.*\)\s*\.?\s*$")

Plan = Generator[PrimitiveCall, StepReport, GoalResult]
Expansion = Generator[PrimitiveCall, StepReport, tuple[bool, str]]

# effect term -> the fact it leaves behind (effects without an observable fact are not checked)
_EFFECT_FACTS = {"holding": "holding({0})", "released": "not holding({0})", "put": "at({0}, {1})",
                 "open": "open({0})", "closed": "closed({0})"}


class StepPlanner:
    def __init__(
        self,
        instruction: str,
        *,
        library: PrimitiveLibrary,
        llm: CompletionLLM,
        config: PlannerConfig,
        goal_id: str = "",
        listeners: Iterable[TreeListener] = (),
        prompts: PromptBook | None = None,
        cancel: threading.Event | None = None,
        episodic: EpisodicMemory | None = None,
        goal: list[str] | None = None,
        person: Person | None = None,
        confirm_goal: bool = False,
    ) -> None:
        self.library = library
        self.config = config
        self.profile = config.planner_profile
        self.llm = llm
        self.budget = Budget(config, cancel)
        self.cancel = self.budget.cancel
        self.tree = SubgoalTree(instruction, goal_id)
        for listener in listeners:
            self.tree.add_listener(listener)
        self.prompts = prompts or PromptBook.load(library, config.prompts_dir, self.profile.history)
        self.checker = TerminationChecker(library, self.prompts, self, self.profile.termination)
        self.beliefs = Beliefs()
        self.episodic = episodic if self.has("episodic_memory") else None
        self.plugins = make_features(self.profile.features, self.episodic)
        self.client_goal = list(goal or [])
        self.planned_skips = 0  # LLM calls saved by plan-ahead
        self._failure = GoalError.PLANNING_FAILED
        self._goal_at_start: dict[str, bool] = {}  # the instruction's facts as first judged
        self._moved: set[str] = set()  # objects the robot held or whose place changed across its actions
        self.answers = AnswerLog()  # every answer by request: what a shadow planner replays (overlap)
        self.prefetcher: Prefetcher | None = None  # set by run_goal when the overlap feature is on
        self.llm_wait_s = 0.0  # time spent waiting for answers (the LLM on the critical path)
        self._answer_was_prepared = False
        self.person = person
        self.confirm_goal = confirm_goal
        self.replies: list[Reply] = []  # the person's replies, in order (what a shadow planner replays)
        self.goal_rejections: list[dict] = []  # goals the model stated that grounding refused, with why
        self._picked_by: dict[str, int] = {}  # object -> the leaf that picked it up last
        self._refusals: Counter[str] = Counter()  # goal refusals by rule (bounded: GOAL_REFUSALS_PER_RULE)
        self._refusal_texts: set[str] = set()
        self._seen_at_start: set[str] = set()  # objects in view when the goal started
        self._looked_when_stated: set[str] = set()  # places seen inside when the goal was last stated
        self._waiting_goal = False  # the goal waits for a look inside (nothing but opening until then)

    def has(self, feature: str) -> bool:
        return feature in self.profile.features

    @property
    def llm_calls(self) -> int:
        return self.budget.llm_calls

    @property
    def primitives(self) -> int:
        return self.budget.primitives

    @property
    def world(self) -> WorldState:
        return self.beliefs.world

    # ---- the LLM, with the budget in front of it ---------------------------------------------
    def complete(self, messages: list[dict[str, str]], schema: type[BaseModel], purpose: str) -> BaseModel:
        key = answer_key(messages, schema, purpose)
        self._answer_was_prepared = False
        if self.prefetcher is not None:
            self.budget.check()
            prepared, outcome = self.prefetcher.take(messages, schema, purpose)
            if prepared:  # charged when it was sent
                self._answer_was_prepared = True
                return self._settle(key, outcome)
        self.budget.charge_llm()
        started = time.monotonic()
        try:
            answer = self.llm.complete(messages, schema, purpose)
        except LLMInvalidAnswer as exc:
            self.answers.record(key, exc)
            raise
        except LLMCanceled:  # the client gave up waiting because of our own cancel event
            raise Canceled() from None
        finally:
            self.llm_wait_s += time.monotonic() - started
        self.answers.record(key, answer)
        return answer

    def _settle(self, key: str, outcome: object) -> BaseModel:
        """A prepared outcome, as the call itself would have ended."""
        if isinstance(outcome, LLMCanceled):
            raise Canceled()
        if isinstance(outcome, LLMInvalidAnswer):
            self.answers.record(key, outcome)
        if isinstance(outcome, Exception):
            raise outcome
        assert isinstance(outcome, BaseModel)
        self.answers.record(key, outcome)
        return outcome

    def _observe(self, world: WorldState) -> None:
        self.beliefs.update(world.observed())
        for plugin in self.plugins:
            plugin.on_observe(self.beliefs.observed)

    # ---- Algorithm 1 -------------------------------------------------------------------------
    def run(self, world: WorldState) -> Plan:
        self._observe(world)
        self._seen_at_start = set(self.beliefs.world.objects)
        root = self.tree.root
        self.budget.scale(self._task_size())
        if self.confirm_goal and not self.profile.conditions and not self.client_goal:
            return self._end(GoalError.INVALID_GOAL, f"confirm_goal needs a profile that states the goal as facts "
                             f"(profile {self.profile.name} states none); nothing was executed", None)
        try:
            if self.client_goal:
                self._set_client_goal()
            ok, reason = yield from self._expand(root)
        except _ClientGoalError as exc:
            return self._end(GoalError.INVALID_GOAL, f"the goal's conditions are not usable: {exc}", None)
        except _PersonStop as exc:
            return self._end(exc.error, str(exc), VerdictSource.PERSON)
        except _RefusalLoop as exc:
            return self._end(GoalError.PLANNING_FAILED, str(exc), VerdictSource.VALIDATION)
        except _NothingToDo:
            return self._end(GoalError.NOTHING_TO_DO, "nothing to do: the instruction's conditions already hold "
                             f"({self._conditions_line()}); nothing was executed", None)
        except BudgetExceeded as exc:
            return self._end(GoalError.BUDGET_EXCEEDED, str(exc), VerdictSource.BUDGET)
        except LLMUnavailable as exc:
            return self._end(GoalError.LLM_UNAVAILABLE, f"LLM endpoint unavailable: {exc}", VerdictSource.LLM)
        except Canceled:
            return self._end(GoalError.CANCELED, "goal canceled", VerdictSource.CANCEL)
        if not ok:
            return self._end(self._failure, reason, None)
        if not self.tree.node(root).conditions and self.config.require_verified_success:
            return self._end(GoalError.PLANNING_FAILED, "the model says the instruction is achieved, but no condition "
                             f"was checked (profile {self.profile.name} states none); set "
                             "require_verified_success to false to accept the model's word", VerdictSource.CONDITIONS)
        if self.tree.node(root).conditions and not any(self._robot_made(f) for f in self._facts(root)):
            return self._end(GoalError.NOTHING_TO_DO, "the instruction's conditions hold, but the robot brought none "
                             f"of them about ({self._conditions_line()}): they held all along",
                             VerdictSource.CONDITIONS)
        self.tree.set_active(None)
        message = "the instruction is achieved"
        message += f": {self._conditions_line()}" if self.tree.node(root).conditions else " (the model's word)"
        return self._result(True, GoalError.NONE, message)

    def _robot_made(self, fact: Condition) -> bool:
        """Did the robot bring this goal fact about? (false at the start; an object it names was moved)"""
        if self._goal_at_start.get(str(fact), False):
            return False
        return not fact.objects or any(o in self._moved for o in fact.objects)

    def _task_size(self) -> int:
        """Before the goal's facts are known (or for profiles that state none): the objects the
        instruction mentions, by name or by kind ("every block")."""
        world = self.beliefs.world
        text = self.instruction_text
        mentioned = named_entities(text, world) | kind_mentions(text, world)
        drawers = {n for n in mentioned if n in world.places and world.places[n].openable}  # hidden things
        return len({n for n in mentioned if n in world.objects}) + len(drawers)

    def abort(self, error: GoalError, message: str) -> GoalResult:
        """End the goal from outside the loop (the executor failed): close every open node."""
        if self.tree.active is not None:
            self.tree.set_status(self.tree.active, NodeStatus.FAILED)
        return self._end(error, message, VerdictSource.EXECUTOR)

    def _end(self, error: GoalError, message: str, source: VerdictSource | None) -> GoalResult:
        if source is not None and self.tree.active is not None:
            self.tree.add_verdict(self.tree.active, VerdictKind.STOPPED, message, source)
        interrupted = self.tree.active
        self.tree.abandon_open(self.tree.root)
        if interrupted is not None and error is GoalError.CANCELED:
            self.tree.set_status(interrupted, NodeStatus.FAILED)
        self.tree.set_active(None)
        return self._result(False, error, message)

    def _result(self, success: bool, error: GoalError, message: str) -> GoalResult:
        root = self.tree.node(self.tree.root)
        if root.conditions:
            self._judge(root.id)
        return GoalResult(success, error, message, tree=self.tree.snapshot(), verified=bool(root.conditions),
                          conditions=[c.to_dict() for c in self.tree.node(self.tree.root).conditions],
                          goal_rejections=list(self.goal_rejections))

    @property
    def instruction_text(self) -> str:
        """The instruction with the person's answers to the model's questions: what the goal is about."""
        answers = [a for _, a in self.tree.clarifications]
        return " ".join([self.tree.instruction, *answers])

    def _conditions_line(self) -> str:
        return ", ".join(f"{c.text} ({c.judged_from.value})" for c in self.tree.node(self.tree.root).conditions)

    # ---- conditions --------------------------------------------------------------------------
    def _set_conditions(self, node_id: int, facts: list[Condition], source: str) -> None:
        records = [ConditionRecord(str(f)) for f in facts]
        restated = node_id == self.tree.root and bool(self._goal_at_start)
        self.tree.set_conditions(node_id, records, source)
        self._judge(node_id)
        if node_id == self.tree.root:
            before = self._goal_at_start
            self._goal_at_start = {}
            for c, fact in zip(self.tree.node(node_id).conditions, facts, strict=True):
                if restated and (c.text in before or not set(fact.objects) <= self._seen_at_start):
                    # a restated goal: a fact kept keeps its start; one about a thing hidden at the start did
                    # not hold then (the robot may have made it hold before the name was known)
                    self._goal_at_start[c.text] = before.get(c.text, False)
                else:
                    self._goal_at_start[c.text] = c.holds
            self._looked_when_stated = set(self.beliefs.seen_inside)

    def _set_client_goal(self) -> None:
        checked = check_goal(self.client_goal, self.instruction_text, self.beliefs, self.library,
                             about_instruction=False)
        if not checked.ok:
            raise _ClientGoalError("; ".join(checked.problems) or "the goal states no fact")
        self._set_conditions(self.tree.root, checked.facts, "client")
        self.budget.scale(len(checked.facts))

    def _facts(self, node_id: int) -> list[Condition]:
        return [parse_fact(c.text) for c in self.tree.node(node_id).conditions]

    def _judge(self, node_id: int) -> bool:
        """Re-judge a node's conditions on the believed world; True when all hold."""
        node = self.tree.node(node_id)
        records = []
        for old in node.conditions:
            value, source = self.beliefs.judge(parse_fact(old.text))
            met = (old.met_after_step if old.met_after_step is not None else self.budget.primitives) if value else None
            records.append(ConditionRecord(old.text, value, source, met))
        self.tree.set_conditions(node_id, records)
        return bool(records) and all(r.holds for r in records)

    def _judge_open_path(self, node_id: int) -> None:
        """After a primitive: re-judge the conditions of every open node on the active path."""
        for node in [*self.tree.ancestors(node_id), self.tree.node(node_id)]:
            if node.conditions and not node.status.finished:
                self._judge(node.id)

    def _unmet_text(self, node_id: int) -> str:
        parts = []
        for record in self.tree.node(node_id).conditions:
            if record.holds:
                continue
            fact = parse_fact(record.text)
            if record.judged_from is JudgedFrom.UNKNOWN:
                unseen = f"the inside of {fact.args[0]}" if fact.predicate == "empty" else ", ".join(fact.objects)
                parts.append(f"{record.text} ({unseen} not seen yet)")
            else:
                parts.append(f"{record.text} ({explain_failure(fact, {}, self.beliefs.world)})")
        if unfinished := self._half_done(node_id):
            parts.append(unfinished)
        return "; ".join(parts)

    def _half_done(self, node_id: int) -> str:
        """What a subgoal leaves half-done although its facts may hold: an object picked up inside it
        still in the gripper, when none of its facts asks to hold it ('' when nothing)."""
        held = self.beliefs.world.held
        picker = self._picked_by.get(held or "")
        if held is None or picker is None or not (picker == node_id or self.tree.descends(picker, node_id)):
            return ""
        if any(f.predicate == "holding" and not f.negated and f.args[0] == held for f in self._facts(node_id)):
            return ""
        return f"the gripper still holds {held}, picked up for this subgoal: put it where it belongs"

    # ---- the person ----------------------------------------------------------------------------
    def _ask_person(self, request: Ask) -> Reply:
        """Ask the person (the tree shows what the goal waits for); the wait is not planning time."""
        if self.person is None:
            reply = Reply(ReplyKind.NO_ANSWER, "no person is connected to answer")
        else:
            self.tree.set_waiting(request.to_dict())
            started = time.monotonic()
            try:
                reply = self.person.ask(request, self.cancel)
            finally:
                self.budget.pause(time.monotonic() - started)
                self.tree.set_waiting(None)
        if reply.kind is ReplyKind.ANSWER and (problem := answer_problem(reply.text)):
            reply = Reply(ReplyKind.NO_ANSWER, f"the answer was not usable: {problem}")
        self.replies.append(reply)
        self.tree.add_dialogue(request.to_dict(), reply.to_dict())
        if reply.kind is ReplyKind.CANCELED or self.cancel.is_set():
            raise Canceled()
        return reply

    def _questions_asked(self) -> list[str]:
        return [d["text"] for d in self.tree.dialogue if d["kind"] == AskKind.QUESTION.value]

    def _may_ask(self, rnd: _Round) -> bool:
        """A question is offered at any node (the world may show the ambiguity: a drawer opened on two
        candidates) while the goal has questions left."""
        return self.has("questions") and len(self._questions_asked()) < MAX_QUESTIONS

    def _clarify(self, question: str, who: str = "the model") -> object:
        """Ask the person; the answer reaches every later prompt. A question asked before is not asked again."""
        answered = dict(self.tree.clarifications)
        for earlier in self._questions_asked():
            if _same_question(earlier, question):
                said = f"they answered '{answered[earlier]}'" if earlier in answered else "nobody answered"
                return (f"you asked the person '{question}', which was asked already ('{earlier}': {said}); a "
                        "person is not asked the same thing twice: go on with their answer")
        reply = self._ask_person(Ask(AskKind.QUESTION, question, self.tree.instruction, self.tree.goal_id))
        if reply.kind is not ReplyKind.ANSWER:
            done = self.budget.primitives
            ran = "nothing was executed" if not done else f"{done} primitive{'s' * (done > 1)} had been executed"
            raise _PersonStop(GoalError.CLARIFICATION_NEEDED, f"the instruction is ambiguous: {who} asked "
                              f"\"{question}\" and {reply.text or 'nobody answered'}; {ran}")
        return _RECHECK

    def _ask_which(self, ref: Reference) -> object:
        """A reference only the person can settle: ask them, naming the candidates so they can be told apart
        (with nobody to ask, or questions off, the goal ends CLARIFICATION_NEEDED naming them)."""
        kind = ref.said.split()[-1]
        question = (f"Which {kind} do you mean by '{ref.said}': "
                    + "; ".join(self._describe_candidate(n) for n in ref.candidates) + "?")
        if not self.has("questions"):
            raise _PersonStop(GoalError.CLARIFICATION_NEEDED, f"the instruction is ambiguous: {question} "
                              "(questions to the person are off in this profile)")
        return self._clarify(question, who="the planner")

    def _describe_candidate(self, name: str) -> str:
        world = self.beliefs.world
        obj = world.objects.get(name)
        if obj is not None:
            loc = obj.location or ""
            where = ("in the gripper" if loc == GRIPPER else
                     f"{world.preposition(loc)} the {loc.replace('_', ' ')}" if loc else "where it was last seen")
            return f"{name} ({obj.category or 'object'}, {where})"
        place = world.places.get(name)
        state = ("open" if place.is_open else "closed") if place is not None and place.openable else ""
        return f"{name} ({state})" if state else name

    def _readings(self, references: list[Reference]) -> list[dict]:
        answers = [a for _, a in self.tree.clarifications]
        source = f"from your answer '{answers[-1]}'" if answers else "the model's reading of the instruction's words"
        return [{"said": r.said, "resolved": list(r.picked), "candidates": list(r.candidates),
                 "from": r.source or source} for r in references]

    def _count_refusal(self, rules: list[str], problems: list[str]) -> None:
        """Every refusal rule has a bound; the same refusal text again counts twice."""
        for rule, text in zip(rules, problems, strict=True):
            self._refusals[rule] += 2 if text in self._refusal_texts else 1
            self._refusal_texts.add(text)
            if self._refusals[rule] > GOAL_REFUSALS_PER_RULE:
                raise _RefusalLoop(f"the goal the model stated was refused {self._refusals[rule]} times by one rule "
                                   f"({rule}) and re-reading did not fix it; last: {text}")

    def _confirm(self, facts: list[Condition]) -> bool:
        """confirm_goal: the person accepts, corrects or refuses the goal. True when it was corrected."""
        shown = tuple(str(f) for f in facts)
        words = tuple(describe_fact(f, self.beliefs.world) for f in facts)
        readings = [f"reading: {render_reading(r)}" for r in self.tree.readings]
        request = Ask(AskKind.GOAL, "\n".join([*words, *readings]), self.tree.instruction, self.tree.goal_id,
                      shown, words, check=self._correction_problems)
        reply = self._ask_person(request)
        if reply.kind is ReplyKind.ACCEPT:
            return False
        if reply.kind is ReplyKind.CORRECT:
            if problems := request.problems(list(reply.facts)):
                raise _ClientGoalError("the corrected goal: " + "; ".join(problems))
            checked = check_goal(list(reply.facts), self.instruction_text, self.beliefs, self.library,
                                 about_instruction=False)
            self._set_conditions(self.tree.root, checked.facts, "person")
            self.budget.scale(len(checked.facts))
            return True
        if reply.kind is ReplyKind.REFUSE:
            raise _PersonStop(GoalError.GOAL_NOT_CONFIRMED, f"the person refused the interpreted goal "
                              f"({', '.join(shown)}): {reply.text or 'no reason given'}; nothing was executed")
        raise _PersonStop(GoalError.GOAL_NOT_CONFIRMED, f"the interpreted goal ({', '.join(shown)}) was not "
                          f"confirmed: {reply.text or 'nobody answered'}; nothing was executed")

    def _correction_problems(self, texts: list[str]) -> list[str]:
        checked = check_goal(list(texts), self.instruction_text, self.beliefs, self.library, about_instruction=False)
        return checked.problems or ([] if checked.facts else ["the goal states no fact"])

    # ---- prompts -----------------------------------------------------------------------------
    def _extra_sections(self, rnd: _Round, goal_wanted: bool, question: bool = False,
                        restate: list[str] | None = None) -> str:
        node = self.tree.node(rnd.node_id)
        parts: list[str] = []
        if goal_wanted and restate:
            inside = sorted(o for o, obj in self.beliefs.world.objects.items()
                            if obj.location in self.beliefs.seen_inside - self._looked_when_stated)
            parts.append(f"## Goal\nThe goal names {', '.join(restate)}, which nothing in view is called, now that "
                         f"looking inside has shown what is there ({', '.join(inside) or 'nothing new'}). State the "
                         "whole goal again in `goal`, with the names you see now, then go on with `next`.")
        elif goal_wanted:
            parts.append("## Goal\nAlso state, in `goal`, the facts that will hold once the whole task is carried "
                         "out. The robot checks them in the world to decide that the task is done. If what the task "
                         "is about is hidden in a closed drawer and cannot be named yet (\"the thing in the drawer\"),"
                         " leave `goal` empty and open the drawer first (nothing else may come first): you are asked "
                         "again once it is open. Words such as thing, item or stuff are never names.")
        if question:
            parts.append("## Ambiguity\nAsk the person only what the words, their answers and the observation do "
                         "not decide: which of several things is meant when nothing in the words singles one out "
                         "(\"the block\" with four blocks in view and no colour, place or other description). A "
                         "reading the words already decide is not a question: \"on the table\" excludes one on the "
                         "tray; \"the one in the red tray\" is the one there; \"all the blocks\" is every block; "
                         "\"hand me the X\" is to pick X up and hold it; a person's \"on the tray\" is the "
                         "observation's \"in tray\". When you do ask, put one short question in `question` that "
                         "names the candidates so the person can tell them apart, set `next` to null and `done` to "
                         "false (and `goal` to [] if asked for); the person's answer comes back in the next prompt "
                         "and is final. Otherwise `question` is null.")
        if node.depth + 1 >= self.config.depth_limit():
            parts.append("## Depth limit\nThis subgoal is at the deepest level allowed: its children must each "
                         "be a single primitive call.")
        if self.has("control_flow") and not node.children:
            parts.append("## Control flow\nSet `control` for the children of this subgoal: \"sequence\" (all, in "
                         "order, stop at a failure), \"fallback\" (alternatives: stop at the first success, e.g. "
                         "look in drawer 1, then drawer 2) or \"parallel\" (all of them, even if one fails).")
        elif node.control is not Control.SEQUENCE:
            parts.append(f"## Control flow\nThe children of this subgoal are combined as: {node.control.value}.")
        for plugin in self.plugins:
            parts.extend(plugin.sections(self.tree, rnd.node_id, self.beliefs.observed))
        if self.has("plan_ahead"):
            if rnd.pending:
                plan = "\n".join(f"{i}. {self._spec_line(s)}" for i, s in enumerate(rnd.pending, 1))
                parts.append(f"## Remaining plan (from your previous answer)\n{plan}\nRefine it with the outcomes "
                             "above: give the next child as `next` and the rest in `then`.")
            else:
                parts.append("## Plan ahead\nGive the next child as `next` and, in `then`, the children planned "
                             "after it, in order.")
        return "\n\n".join(parts)

    @staticmethod
    def _spec_line(spec: ChildSpec) -> str:
        line = spec.text
        if spec.call_text and spec.call_text != spec.text:
            line += f" [{spec.call_text}]"
        if spec.success_when:
            line += f" (when: {', '.join(spec.success_when)})"
        return line

    # ---- expansion ---------------------------------------------------------------------------
    def _expand(self, node_id: int) -> Expansion:
        tree = self.tree
        tree.set_status(node_id, NodeStatus.EXPANDING)
        tree.set_active(node_id)
        rnd = _Round(node_id, control_flow(tree.node(node_id).control))
        while True:
            if tree.node(node_id).conditions and self._judge(node_id) and not self._half_done(node_id):
                if node_id == tree.root and self.budget.primitives == 0:
                    raise _NothingToDo()
                tree.add_verdict(node_id, VerdictKind.DONE, "its conditions hold: " + ", ".join(
                    f"{c.text} ({c.judged_from.value})" for c in tree.node(node_id).conditions),
                    VerdictSource.CONDITIONS)
                tree.set_status(node_id, NodeStatus.SUCCEEDED)
                return True, ""
            proposal = self._propose(rnd)
            if proposal is _RECHECK:
                continue
            if isinstance(proposal, str):
                tree.add_verdict(node_id, VerdictKind.REJECTED, proposal, VerdictSource.VALIDATION)
                reason = proposal
            elif isinstance(proposal, _DoneClaim):
                finished = self._done_claim(rnd, proposal)
                if isinstance(finished, tuple):
                    return finished
                reason = finished
            else:
                assert isinstance(proposal, ChildSpec)
                live = [c for c in tree.children(node_id) if c.status is not NodeStatus.ABANDONED]
                if len(live) >= (limit := self._children_limit(node_id)):
                    raise BudgetExceeded(f"'{tree.node(node_id).text}' would need more than {limit} children")
                before = self.beliefs.world.copy() if self.plugins else self.beliefs.world  # features diff them
                primitives_before = self.budget.primitives
                child, ok, reason, ran = yield from self._handle_child(rnd, proposal)
                tree.set_active(node_id)
                if ran:
                    self._after_child(rnd, child, before, ok, reason, self.budget.primitives - primitives_before)
                decision = rnd.flow.after_child(ok, reason) if ran else Next.REPLAN
                if ok:
                    rnd.feedback, rnd.rejections = [], 0
                    if decision is Next.FINISHED and not tree.node(node_id).conditions:
                        tree.add_verdict(node_id, VerdictKind.DONE, "an alternative succeeded",
                                         VerdictSource.CONTROL_FLOW)
                        tree.set_status(node_id, NodeStatus.SUCCEEDED)
                        return True, ""
                    continue
                if not self.profile.replan:
                    return self._fail(node_id, f"{reason} (this profile does not re-plan)")
                if decision is Next.CONTINUE:
                    rnd.feedback = [rnd.flow.feedback(tree.node(child).text, reason)]
                    continue
            rnd.rejections += 1
            if rnd.rejections > self.config.max_replans_per_node:
                tree.add_verdict(node_id, VerdictKind.REPLAN, f"gave up after {rnd.rejections} rejected proposals; "
                                 f"last: {reason}", VerdictSource.BUDGET)
                return self._fail(node_id, f"gave up after {rnd.rejections} rejected proposals; last: {reason}",
                                  verdict=False)
            rnd.feedback.append(reason)

    def _children_limit(self, node_id: int) -> int:
        """Live children a node may have: per fact it must achieve; for a root without facts, per thing
        the instruction mentions; in a flat profile (every child a primitive), the primitive budget."""
        if self.config.depth_limit() == 1 and node_id == self.tree.root:
            return self.budget.max_primitives
        facts = len(self.tree.node(node_id).conditions)
        if not facts and node_id == self.tree.root:
            facts = self.budget.size
        return self.config.children_limit(facts)

    def _fail(self, node_id: int, reason: str, verdict: bool = True) -> tuple[bool, str]:
        if verdict:
            self.tree.add_verdict(node_id, VerdictKind.REPLAN, reason, VerdictSource.CONTROL_FLOW)
        self.tree.set_status(node_id, NodeStatus.FAILED)
        return False, reason

    def _done_claim(self, rnd: _Round, claim: _DoneClaim) -> tuple[bool, str] | str:
        """The decomposer said done. With conditions it is checked (and here, wrong: they do not
        hold, or the loop would have finished); without, the profile's completion check decides."""
        node_id = rnd.node_id
        tree = self.tree
        if tree.node(node_id).conditions:
            unmet = self._unmet_text(node_id)
            if self.beliefs.unmet(self._facts(node_id)):
                reason = f"you said '{tree.node(node_id).text}' is done, but these facts do not hold: {unmet}"
            else:
                reason = f"you said '{tree.node(node_id).text}' is done, but it is not finished: {unmet}"
            tree.add_verdict(node_id, VerdictKind.REJECTED, reason, VerdictSource.CONDITIONS)
            self._failure = GoalError.PLANNING_FAILED
            return reason
        if missing := self._verify_done(node_id):
            tree.add_verdict(node_id, VerdictKind.REJECTED, missing, VerdictSource.LLM)
            return missing
        ok, why = rnd.flow.when_done()
        if not ok:
            tree.add_verdict(node_id, VerdictKind.DONE, why, VerdictSource.CONTROL_FLOW)
            return self._fail(node_id, why, verdict=False)
        tree.add_verdict(node_id, VerdictKind.DONE, claim.reasoning or "its children achieve it", VerdictSource.LLM)
        tree.set_status(node_id, NodeStatus.SUCCEEDED)
        return True, ""

    def _verify_done(self, node_id: int) -> str:
        """verify_done: the model's second opinion on its own 'done' (profiles without conditions)."""
        if not self.has("verify_done"):
            return ""
        messages = self.prompts.verification(self.tree, node_id, self.beliefs)
        try:
            answer = self.complete(messages, CompletionAnswer, "verification")
        except LLMInvalidAnswer:
            return ""  # an unusable second opinion does not overrule the first
        assert isinstance(answer, CompletionAnswer)
        if answer.achieved:
            return ""
        return f"'{self.tree.node(node_id).text}' is not achieved yet: {answer.reasoning or 'something is missing'}"

    # ---- proposals ---------------------------------------------------------------------------
    def _propose(self, rnd: _Round) -> ChildSpec | _DoneClaim | str | object:
        """The next child (planned or asked for), a done claim, or why the answer was unusable."""
        tree = self.tree
        node = tree.node(rnd.node_id)
        if self.has("plan_ahead") and rnd.pending and not rnd.feedback:
            spec = rnd.pending[0]
            spec.planned = True
            self.planned_skips += 1
            return spec
        if not self.profile.replan and rnd.asked:
            return _DoneClaim("the plan is carried out")
        at_root = self.profile.conditions and rnd.node_id == tree.root
        restate = self._provisional_names() if at_root and node.conditions else []
        goal_wanted = at_root and (not node.conditions or bool(restate))
        question = self._may_ask(rnd)
        schema = decomposition_schema(grounded=self.profile.conditions, goal=goal_wanted,
                                      plan_ahead=self.has("plan_ahead"),
                                      control=self.has("control_flow") and not node.children, question=question)
        messages = self.prompts.decomposition(tree, rnd.node_id, self.beliefs, rnd.feedback, schema=schema,
                                              style=self.profile.answer_style,
                                              extra=self._extra_sections(rnd, goal_wanted, question, restate),
                                              collapse=self.has("summaries"),
                                              unfinished=self._half_done(rnd.node_id) if node.conditions else "")
        try:
            answer = self.complete(messages, schema, "decomposition")
        except LLMInvalidAnswer as exc:
            return f"your answer was invalid: {exc.error}"
        rnd.asked += 1
        data = answer.model_dump()
        if question and (asked := " ".join(str(data.get("question") or "").split())):
            return self._clarify(asked)
        if goal_wanted:
            stated = list(data.get("goal") or [])
            if not stated and not node.conditions and self._goal_may_wait():
                self._waiting_goal = True  # nothing but opening until the goal is stated
            else:
                taken = self._take_goal(stated, restate)
                if taken is _RECHECK:
                    rnd.pending = []  # the answer's children were planned for another goal
                if taken is not None:
                    return taken
        if "control" in data and not node.children:
            tree.set_control(rnd.node_id, Control(data["control"]))
            rnd.flow = control_flow(Control(data["control"]))
        if data.get("done"):
            return _DoneClaim(str(data.get("reasoning", "")))
        if not data.get("next"):
            return "your answer gave no next child and did not say done"
        specs = [self._spec(c) for c in [data["next"], *(data.get("then") or [])]]
        if self._waiting_goal and not tree.node(tree.root).conditions and not self._is_search(specs[0]):
            return ("state the task's goal in `goal` before doing anything else: until it can be stated, only "
                    "opening a closed drawer to look inside may come first")
        specs[0].prepared = self._answer_was_prepared
        if self.has("plan_ahead"):
            rnd.pending = specs
        return specs[0]

    def _take_goal(self, stated: list[str], restate: list[str]) -> object:
        """Check and set the goal the model stated (or restated). None when it was set and planning goes on
        with this answer; ``_RECHECK`` to ask again; a string is the refusal sent back to the model."""
        tree = self.tree
        revealed = self.beliefs.seen_inside - self._looked_when_stated if restate else set()
        checked = check_goal(stated, self.instruction_text, self.beliefs, self.library,
                             answered=bool(tree.clarifications), answers=[a for _, a in tree.clarifications],
                             renaming={o for o, obj in self.beliefs.world.objects.items() if obj.location in revealed})
        renamed = self._renamed(checked, restate) if restate else {}
        if checked.ends:  # nothing in view fits what the words describe: no goal can say what they mean
            raise _PersonStop(GoalError.PLANNING_FAILED, f"{checked.ends}; nothing was executed")
        if not checked.ok:
            self.goal_rejections.append({"goal": [str(g) for g in stated], "problems": list(checked.problems),
                                         "rules": list(checked.rules)})
            guessed = [r for r in checked.references if r.guessed]
            if checked.person_only and guessed:
                return self._ask_which(guessed[0])
            self._count_refusal(checked.rules, checked.problems)
            return "the goal you stated was not accepted: " + ("; ".join(checked.problems) or "it is empty")
        self._set_conditions(tree.root, checked.facts, "model")
        looked = sorted(self.beliefs.seen_inside & {n for n, p in self.beliefs.world.places.items() if p.openable})
        readings = self._readings(checked.references) + [
            {"said": old, "resolved": new, "candidates": [], "from": "named provisionally, renamed once "
             f"{', '.join(looked) or 'the search'} showed what is there"} for old, new in renamed.items()]
        tree.set_readings(readings)
        self.budget.scale(len(checked.facts))
        unsure = [old for old, new in renamed.items() if not any(set(old.split("_")) & set(n.split("_")) for n in new)]
        if (self.confirm_goal or unsure) and self._confirm(checked.facts):
            return _RECHECK
        if self._judge(tree.root):
            return _RECHECK
        return None

    def _renamed(self, checked: CheckedConditions, provisional: list[str]) -> dict[str, list[str]]:
        """How a restated goal re-binds each provisional name (refusing one that keeps it): old -> new names."""
        facts = checked.facts
        names = {o for f in facts for o in f.objects}
        before = {o for f in self._facts(self.tree.root) for o in f.objects}
        out = {}
        for old in provisional:
            if old in names:
                inside = ", ".join(sorted(o for o, obj in self.beliefs.world.objects.items()
                                          if obj.location in self.beliefs.seen_inside)) or "nothing new"
                checked.refuse(RULE_PROVISIONAL, f"{old} is still a name nothing seen carries, now that the "
                               f"search has shown what is there ({inside}): state the goal with a name you see")
                continue
            out[old] = sorted(names - before) or sorted(names)
        return out

    def _provisional_names(self) -> list[str]:
        """Objects the goal names that nothing seen carries, once looking inside has shown what is there
        (a place looked into since the goal was stated holds something with a word of the name, or nowhere
        is left to look): then the goal must be restated with the names seen, before anything is judged."""
        unknown = sorted({o for f in self._facts(self.tree.root) for o in f.objects if not self.beliefs.knows(o)})
        revealed = self.beliefs.seen_inside - self._looked_when_stated
        if not unknown or not revealed:
            return []
        world = self.beliefs.world
        hidden_left = any(p.openable and n not in self.beliefs.seen_inside for n, p in world.places.items())
        inside = {o for o, obj in world.objects.items() if obj.location in revealed}
        if hidden_left and not any(set(u.split("_")) & set(o.split("_")) for u in unknown for o in inside):
            return []  # it may still be in a drawer not looked into
        return unknown

    def _goal_may_wait(self) -> bool:
        """The goal may be stated after a look inside: a closed drawer is still unseen and nothing was moved."""
        world = self.beliefs.world
        return not self._moved and any(p.openable and not p.is_open and n not in self.beliefs.seen_inside
                                       for n, p in world.places.items())

    def _is_search(self, spec: ChildSpec) -> bool:
        """A child that only looks: one call of a primitive whose effect is opening something."""
        call = spec.call_text or (spec.text if _CALL_SHAPE.match(spec.text) else "")
        prim = self.library.get(call.split("(")[0].strip()) if call else None
        return prim is not None and any(e.predicate == "open" for e in prim.effects)

    @staticmethod
    def _spec(raw: dict) -> ChildSpec:
        text = " ".join(str(raw.get("subgoal") or "").split())
        call = " ".join(str(raw.get("call") or "").split()) or None
        return ChildSpec(text or (call or ""), call, [str(s) for s in raw.get("success_when") or []])

    # ---- one child ---------------------------------------------------------------------------
    def _validate(self, rnd: _Round, spec: ChildSpec) -> tuple[list[Condition], str, bool]:
        """(the child's facts, why it is refused ('' when it is not), whether that is a congruence challenge)."""
        tree = self.tree
        node = tree.node(rnd.node_id)
        text = spec.text
        if not text:
            return [], "the proposal has no subgoal text", False
        lineage = {a.text.lower() for a in tree.ancestors(rnd.node_id)} | {node.text.lower()}
        if text.lower() in lineage:
            return [], f"'{text}' repeats the subgoal it should decompose", False
        if not self.profile.conditions or spec.call_text or _CALL_SHAPE.match(text):
            return [], "", False
        unseen = {o for n in (*tree.ancestors(rnd.node_id), node) for c in n.conditions
                  for o in parse_fact(c.text).objects if not self.beliefs.knows(o)}
        checked = check_subgoal_conditions(spec.success_when, text, unseen, self.beliefs)
        if checked.problems:
            return [], "; ".join(checked.problems), False
        parent_facts = self._facts(rnd.node_id)
        if parent_facts and set(parent_facts) <= set(checked.facts) and not (
                named_entities(text, self.beliefs.world) - named_entities(node.text, self.beliefs.world)):
            # a child with its parent's facts is a step only when its words say which thing (the parent's
            # "the blue block" -> blue_block_4); otherwise it restates the parent
            return [], f"'{text}' restates its parent (the same facts); propose a smaller step", False
        needed = relevant_entities(parent_facts, node.text, self.beliefs)
        named = {a for f in checked.facts for a in f.args}
        if named and not named & needed and text not in rnd.challenged:
            return [], (f"'{text}' is about {', '.join(sorted(named))}, which '{node.text}' does not need "
                        f"({', '.join(sorted(needed)) or 'nothing it can name'}). If it really is needed, "
                        "propose it again unchanged; otherwise propose a step toward what is still missing"), True
        return checked.facts, "", False

    def _handle_child(self, rnd: _Round, spec: ChildSpec) -> Generator[PrimitiveCall, StepReport,
                                                                        tuple[int, bool, str, bool]]:
        """Judge a new child and run it. Returns (child id, ok, reason if not, whether it ran)."""
        tree = self.tree
        child = tree.add_node(spec.text, rnd.node_id).id
        if spec.prepared and not spec.planned:
            tree.set_prepared(child)
        facts, problem, challenge = self._validate(rnd, spec)
        if problem:
            if challenge:
                rnd.challenged.add(spec.text)
            source = VerdictSource.CONGRUENCE if challenge else VerdictSource.VALIDATION
            tree.add_verdict(child, VerdictKind.REPLAN, problem, source)
            tree.set_status(child, NodeStatus.ABANDONED)
            self._failure = GoalError.PLANNING_FAILED
            return child, False, f"your proposal '{spec.text}' was not accepted: {problem}", False
        if facts:
            self._set_conditions(child, facts, "model")
        parent = tree.node(rnd.node_id)
        verdict = self.checker.judge(tree, Candidate(
            child, spec.text, spec.call_text, facts, self._facts(rnd.node_id), parent.text,
            at_depth_limit=tree.node(child).depth >= self.config.depth_limit(), challenged=rnd.challenged,
        ), self.beliefs)
        tree.add_verdict(child, verdict.kind, verdict.reason, verdict.source)
        if verdict.kind is VerdictKind.EXECUTE:
            assert verdict.call is not None
            return (child, *(yield from self._run_call(child, verdict.call)), True)
        if verdict.kind is VerdictKind.DECOMPOSE:
            ok, reason = yield from self._expand(child)
            return child, ok, ("" if ok else f"'{spec.text}' could not be completed: {reason}"), True
        if verdict.source is VerdictSource.CONGRUENCE and verdict.call is not None:
            rnd.challenged.add(str(verdict.call))
        tree.set_status(child, NodeStatus.ABANDONED)
        self._failure = GoalError.PLANNING_FAILED
        return child, False, f"your proposal '{spec.text}' was not accepted: {verdict.reason}", False

    def _run_call(self, child: int, call: PrimitiveCall) -> Generator[PrimitiveCall, StepReport, tuple[bool, str]]:
        tree = self.tree
        tree.set_call(child, call)
        effects = self._effect_facts(call)
        if effects:
            self._set_conditions(child, effects, "effects")
        outcome = yield from self._execute(child, call)
        text = tree.node(child).text
        if call.name == "pick" and outcome.success:
            self._picked_by[call.kwargs.get("object", "")] = child
        if not outcome.success:
            tree.set_status(child, NodeStatus.FAILED)
            self._failure = (GoalError.SAFETY_VIOLATION if outcome.code is ExecCode.SAFETY_VIOLATION
                             else GoalError.EXECUTION_FAILED)
            return False, f"'{text}' was executed and failed: {outcome.code.value}: {outcome.message}"
        if effects and not self._judge(child):
            unmet = self._unmet_text(child)
            tree.add_verdict(child, VerdictKind.REJECTED, f"reported success, but {unmet}", VerdictSource.CONDITIONS)
            tree.set_status(child, NodeStatus.FAILED)
            self._failure = GoalError.EXECUTION_FAILED
            return False, f"'{text}' was executed and reported success, but {unmet}"
        tree.set_status(child, NodeStatus.SUCCEEDED)
        return True, ""

    def _effect_facts(self, call: PrimitiveCall) -> list[Condition]:
        spec = self.library.get(call.name)
        if spec is None:
            return []
        binding = call.kwargs
        facts = []
        for effect in spec.effects:
            template = _EFFECT_FACTS.get(effect.predicate)
            if template is not None:
                facts.append(parse_fact(template.format(*effect.bind(binding))))
        return facts

    def _execute(self, node_id: int, call: PrimitiveCall) -> Generator[PrimitiveCall, StepReport, Outcome]:
        self.budget.charge_primitive()
        self.tree.set_status(node_id, NodeStatus.EXECUTING)
        self.tree.set_active(node_id)
        before = self.beliefs.observed
        report = yield call
        self.tree.set_outcome(node_id, report.outcome.to_dict())
        self._observe(report.world)
        after = self.beliefs.observed
        self._moved |= {n for n, o in after.objects.items() if n in before.objects
                        and o.location != before.objects[n].location}
        if after.held:
            self._moved.add(after.held)
        self._judge_open_path(self.tree.node(node_id).parent or self.tree.root)
        if report.outcome.code is ExecCode.CANCELED:
            raise Canceled()
        return report.outcome

    def _after_child(self, rnd: _Round, child: int, before: WorldState, ok: bool, reason: str, actions: int) -> None:
        """Plan-ahead bookkeeping and the feature plug-ins, once a child has run."""
        event = ChildFinished(self.tree, rnd.node_id, child, ok, reason, before, self.beliefs.world, actions)
        for plugin in self.plugins:
            plugin.after_child(event)
        if rnd.pending and (ok or rnd.flow.kind is not Control.SEQUENCE):  # a failed head is re-planned in place
            rest = rnd.pending[1:]
            learned = getattr(next((p for p in self.plugins if p.name == "self_revision"), None), "learned", {})
            if facts := learned.get(rnd.node_id):
                for spec, text in zip(rest, revise_pending([s.text for s in rest], facts), strict=True):
                    spec.text = text
            rnd.pending = rest

