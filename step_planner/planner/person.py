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
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol

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
