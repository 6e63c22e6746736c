"""The person behind the instruction: confirms the goal the model read into it, and answers its questions.

Two person-in-the-loop moments, both before the arm moves:

- **goal confirmation** (``confirm_goal``): the interpreted goal (facts, and the same facts in words) is
  shown; the person accepts it, corrects it (new facts, checked like a goal a client states) or refuses it;
- **a clarifying question**: the model answers an ambiguous instruction with a question instead of a plan;
  the person's answer goes back into the prompt.

The planner only sees the :class:`Person` protocol (one blocking ``ask``). Where the person is depends on
the caller: :class:`Desk` parks a request until another thread answers it (the node's services, tests),
the CLI asks on the terminal (``step_planner.console``), :class:`ReplayPerson` repeats recorded replies
(the overlap feature's shadow planner, re-planning an episode). With nobody to ask, the planner ends the
goal naming the question: a guess is never presented as what the person meant. Plain threading, no ROS.

:class:`Questions` is the planner's side: it asks (the model's question, or the planner's own "which do you
mean" naming the candidates), never the same thing twice, and records the dialogue in the tree.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, Protocol

from step_planner.domain.world import GRIPPER, WorldState
from step_planner.planner.budget import Canceled
from step_planner.planner.result import GoalError

if TYPE_CHECKING:
    from step_planner.planner.budget import Budget
    from step_planner.planner.tree import SubgoalTree

MAX_ANSWER_CHARS = 500


class AskKind(str, Enum):
    GOAL = "goal_confirmation"  # accept / correct / refuse the interpreted goal
    QUESTION = "question"  # answer the model's question


class ReplyKind(str, Enum):
    ACCEPT = "accept"
    CORRECT = "correct"  # ``facts`` replace the goal
    REFUSE = "refuse"  # ``text``: why
    ANSWER = "answer"  # ``text``: the answer to a question
    NO_ANSWER = "no_answer"  # nobody answered (timeout, nobody listening); ``text`` says which
    CANCELED = "canceled"  # the goal was canceled while it waited


@dataclass(frozen=True)
class Ask:
    """What the person is asked. For a goal: ``facts`` and ``words`` (each fact for a reader)."""

    kind: AskKind
    text: str  # the question, or the goal in words (one line per fact)
    instruction: str = ""
    goal_id: str = ""
    facts: tuple[str, ...] = ()
    words: tuple[str, ...] = ()
    check: Callable[[list[str]], list[str]] | None = field(default=None, compare=False, repr=False)

    def problems(self, facts: list[str]) -> list[str]:
        """Why a corrected goal cannot be used (empty: it can). Checked like a goal a client states."""
        if not facts:
            return ["a corrected goal needs at least one fact, e.g. in(tape, drawer)"]
        return list(self.check(facts)) if self.check is not None else []

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "text": self.text, "facts": list(self.facts), "words": list(self.words)}


@dataclass(frozen=True)
class Reply:
    kind: ReplyKind
    text: str = ""
    facts: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "text": self.text, "facts": list(self.facts)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Reply:
        return cls(ReplyKind(data["kind"]), str(data.get("text", "")), tuple(data.get("facts") or ()))


class Person(Protocol):
    def ask(self, request: Ask, cancel: threading.Event) -> Reply:
        """Block until the person replies, nobody will (NO_ANSWER) or ``cancel`` is set (CANCELED)."""
        ...


def answer_problem(text: object) -> str | None:
    """Why a text cannot be an answer to a question (None when it can)."""
    if not isinstance(text, str) or not text.strip():
        return "the answer is empty"
    if len(text) > MAX_ANSWER_CHARS:
        return f"the answer is longer than {MAX_ANSWER_CHARS} characters"
    if any(ord(ch) < 32 and ch not in "\t" for ch in text):
        return "the answer contains control characters (one line, please)"
    return None


class Desk:
    """A request parked until another thread replies: the node's services, or a test.

    One request at a time (a goal asks one thing, then waits). ``timeout_s`` is read when a request
    is parked; ``on_pending`` is told the request (and ``None`` when it is answered or given up), so it
    can be published. A corrected goal that fails its check is refused at the reply, with the reason,
    and the request keeps waiting: the person can try again. ``unheard`` says why nobody can see a
    request (None when someone can): then, after ``grace_s`` for a listener to appear, it is not parked
    for the whole timeout but given up at once.
    """

    def __init__(self, timeout_s: Callable[[], float], on_pending: Callable[[Ask | None], None] = lambda a: None,
                 poll_s: float = 0.05, unheard: Callable[[Ask], str | None] = lambda a: None,
                 grace_s: float = 2.0) -> None:
        self._timeout_s = timeout_s
        self._on_pending = on_pending
        self._poll_s = poll_s
        self._unheard = unheard
        self._grace_s = grace_s
        self._cond = threading.Condition()
        self._pending: Ask | None = None
        self._reply: Reply | None = None
        self.asked = 0  # requests parked so far (tells two identical requests apart)

    @property
    def pending(self) -> Ask | None:
        return self._pending

    def ask(self, request: Ask, cancel: threading.Event) -> Reply:
        grace = time.monotonic() + self._grace_s
        while (why := self._unheard(request)) is not None:
            if cancel.is_set():
                return Reply(ReplyKind.CANCELED, "canceled while waiting for the person")
            if time.monotonic() > grace:
                return Reply(ReplyKind.NO_ANSWER, why)
            time.sleep(self._poll_s)
        timeout = float(self._timeout_s())
        deadline = threading.Event()
        timer = threading.Timer(timeout, deadline.set)
        timer.daemon = True
        with self._cond:
            self._pending, self._reply = request, None
            self.asked += 1
        self._on_pending(request)
        timer.start()
        try:
            with self._cond:
                while self._reply is None:
                    if cancel.is_set():
                        return Reply(ReplyKind.CANCELED, "canceled while waiting for the person")
                    if deadline.is_set():
                        return Reply(ReplyKind.NO_ANSWER, f"no answer within {timeout:g} s")
                    self._cond.wait(self._poll_s)
                return self._reply
        finally:
            timer.cancel()
            with self._cond:
                self._pending = None
            self._on_pending(None)

    def reply(self, kind: AskKind, reply: Reply) -> tuple[bool, str]:
        """Answer the parked request of ``kind``: (accepted, message)."""
        with self._cond:
            pending = self._pending
            if pending is None or self._reply is not None:
                return False, f"nothing is waiting for {'a goal confirmation' if kind is AskKind.GOAL else 'an answer'}"
            if pending.kind is not kind:
                waiting = "a goal confirmation" if pending.kind is AskKind.GOAL else "an answer to a question"
                return False, f"the goal is waiting for {waiting}, not this"
            problem = _reply_problem(pending, reply)
            if problem:
                return False, problem
            self._reply = reply
            self._cond.notify_all()
        return True, _receipt(pending, reply)


def _reply_problem(request: Ask, reply: Reply) -> str | None:
    if request.kind is AskKind.QUESTION:
        if reply.kind is not ReplyKind.ANSWER:
            return "a question takes an answer"
        return answer_problem(reply.text)
    if reply.kind is ReplyKind.CORRECT:
        problems = request.problems(list(reply.facts))
        return "the corrected goal is not usable: " + "; ".join(problems) if problems else None
    if reply.kind not in (ReplyKind.ACCEPT, ReplyKind.REFUSE):
        return "a goal is accepted, corrected or refused"
    return None


def _receipt(request: Ask, reply: Reply) -> str:
    if reply.kind is ReplyKind.ACCEPT:
        return "goal accepted: " + ", ".join(request.facts)
    if reply.kind is ReplyKind.CORRECT:
        return "goal corrected: " + ", ".join(reply.facts)
    if reply.kind is ReplyKind.REFUSE:
        return "goal refused" + (f": {reply.text}" if reply.text else "")
    return f"answer sent for: {request.text}"


class ReplayPerson:
    """Replies recorded earlier, in order (a shadow planner, re-planning an episode); NO_ANSWER past the end."""

    def __init__(self, replies: Iterable[Reply]) -> None:
        self._replies = list(replies)

    def ask(self, request: Ask, cancel: threading.Event) -> Reply:
        if cancel.is_set():
            return Reply(ReplyKind.CANCELED)
        if not self._replies:
            return Reply(ReplyKind.NO_ANSWER, "no recorded reply")
        return self._replies.pop(0)


# ---- the planner's questions -------------------------------------------------------------------------
MAX_QUESTIONS = 3  # questions one goal may ask the person


class PersonStop(Exception):
    """The person refused the goal, or nobody answered: the goal ends with ``error``."""

    def __init__(self, error: GoalError, message: str) -> None:
        super().__init__(message)
        self.error = error


def question_words(text: str) -> set[str]:
    return set(re.sub(r"[^a-z0-9_ ]", " ", text.lower()).split()) - {"the", "a", "an", "do", "you", "i", "which",
                                                                     "is", "it", "should", "or", "of", "to"}


def same_question(a: str, b: str) -> bool:
    """Two questions that ask the same thing (the same words, give or take a few)."""
    wa, wb = question_words(a), question_words(b)
    return bool(wa and wb) and len(wa & wb) / len(wa | wb) >= 0.7


def describe_candidate(name: str, world: WorldState) -> str:
    """One candidate as a person tells it apart: ``tape (tape roll, on the table)``, ``drawer (closed)``."""
    obj = world.objects.get(name)
    if obj is not None:
        loc = obj.location or ""
        where = ("in the gripper" if loc == GRIPPER else
                 f"{world.preposition(loc)} the {loc.replace('_', ' ')}" if loc else "where it was last seen")
        return f"{name} ({obj.category or 'object'}, {where})"
    place = world.places.get(name)
    state = ("open" if place.is_open else "closed") if place is not None and place.openable else ""
    return f"{name} ({state})" if state else name


class Questions:
    """The goal's conversation with the person: every request goes through here and into the tree's dialogue.

    A question is offered to the model while the goal has questions left (``enabled``: the profile's
    ``questions`` feature); the same question is never asked twice; an answer that is not usable counts as
    none. Waiting for the person is not planning time (the budget is paused); a cancel while waiting ends
    the goal. With nobody to answer, the goal ends CLARIFICATION_NEEDED (:class:`PersonStop`) naming the
    question: a guess is never presented as what the person meant.
    """

    def __init__(self, person: Person | None, tree: SubgoalTree, budget: Budget, *, enabled: bool) -> None:
        self.person = person
        self.tree = tree
        self.budget = budget
        self.enabled = enabled
        self.replies: list[Reply] = []  # the person's replies, in order (what a shadow planner replays)

    def ask(self, request: Ask) -> Reply:
        """Ask the person (the tree shows what the goal waits for); the wait is not planning time."""
        if self.person is None:
            reply = Reply(ReplyKind.NO_ANSWER, "no person is connected to answer")
        else:
            self.tree.set_waiting(request.to_dict())
            started = time.monotonic()
            try:
                reply = self.person.ask(request, self.budget.cancel)
            finally:
                self.budget.pause(time.monotonic() - started)
                self.tree.set_waiting(None)
        if reply.kind is ReplyKind.ANSWER and (problem := answer_problem(reply.text)):
            reply = Reply(ReplyKind.NO_ANSWER, f"the answer was not usable: {problem}")
        self.replies.append(reply)
        self.tree.add_dialogue(request.to_dict(), reply.to_dict())
        if reply.kind is ReplyKind.CANCELED or self.budget.cancel.is_set():
            raise Canceled()
        return reply

    def asked(self) -> list[str]:
        return [d["text"] for d in self.tree.dialogue if d["kind"] == AskKind.QUESTION.value]

    def may_ask(self) -> bool:
        """A question is offered at any node (the world may show the ambiguity: a drawer opened on two
        candidates) while the goal has questions left."""
        return self.enabled and len(self.asked()) < MAX_QUESTIONS

    def clarify(self, question: str, who: str = "the model") -> str | None:
        """Ask the person; the answer reaches every later prompt (None: answered). A question asked before is
        not asked again: what to tell the model instead is returned."""
        answered = dict(self.tree.clarifications)
        for earlier in self.asked():
            if same_question(earlier, question):
                said = f"they answered '{answered[earlier]}'" if earlier in answered else "nobody answered"
                return (f"you asked the person '{question}', which was asked already ('{earlier}': {said}); a "
                        "person is not asked the same thing twice: go on with their answer")
        reply = self.ask(Ask(AskKind.QUESTION, question, self.tree.instruction, self.tree.goal_id))
        if reply.kind is not ReplyKind.ANSWER:
            done = self.budget.primitives
            ran = "nothing was executed" if not done else f"{done} primitive{'s' * (done > 1)} had been executed"
            raise PersonStop(GoalError.CLARIFICATION_NEEDED, f"the instruction is ambiguous: {who} asked "
                             f"\"{question}\" and {reply.text or 'nobody answered'}; {ran}")
        return None

    def ask_doubt(self, question: str) -> str | None:
        """A doubt the words leave that only the person can settle (a thing an unknown word may spare, moved):
        ask it as said (with questions off, the goal ends CLARIFICATION_NEEDED naming it)."""
        if not self.enabled:
            raise PersonStop(GoalError.CLARIFICATION_NEEDED, f"the instruction is unclear: {question} (questions "
                             "to the person are off in this profile)")
        return self.clarify(question, who="the planner")

    def ask_which(self, said: str, candidates: Iterable[str], world: WorldState) -> str | None:
        """A reference only the person can settle: ask them, naming the candidates so they can be told apart
        (with nobody to ask, or questions off, the goal ends CLARIFICATION_NEEDED naming them)."""
        kind = said.split()[-1]
        question = (f"Which {kind} do you mean by '{said}': "
                    + "; ".join(describe_candidate(n, world) for n in candidates) + "?")
        if not self.enabled:
            raise PersonStop(GoalError.CLARIFICATION_NEEDED, f"the instruction is ambiguous: {question} "
                             "(questions to the person are off in this profile)")
        return self.clarify(question, who="the planner")
