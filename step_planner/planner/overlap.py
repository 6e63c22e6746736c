"""Hide the model's latency behind the arm's motion: ask the next question while a primitive runs.

While a primitive executes, the planner's next LLM request is predicted and sent ahead, assuming
the primitive succeeds: the world it predicts is the one before the call with the call's effects
applied. The prediction is not a guess at the planner's behaviour: a *shadow* planner — the same
code, a fresh instance, no listeners — is replayed through the goal so far (every answer the real
planner got, every step report it was sent) and then sent the predicted report; the first request
it makes that has no recorded answer is the next request, byte for byte. If the shadow needs no
answer before its next call, that call is predicted to succeed too, and so on (up to
``MAX_LOOKAHEAD`` calls). Once a prepared answer arrives, the shadow is replayed again with it, and
the request after it is prepared as well — as long as no further motion would start first (profiles
that ask twice per primitive, decomposition then termination, get both answers during one motion).

When the real planner asks, the prepared answer is used only if its request is identical; otherwise
every prepared answer is discarded (wasted) and the planner asks as usual. A discarded answer never
reaches the planner, the tree, the topics or an episode: speculative exchanges go through a forked
client and are booked on the real client (ledger and exchange listeners) only when used. Prepared
calls are charged to the goal's LLM budget when they are sent; a cancel abandons them at once (the
fork shares the goal's cancel event).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from step_planner.domain.primitives import PrimitiveCall, PrimitiveLibrary
from step_planner.domain.transitions import apply_call
from step_planner.domain.world import WorldState
from step_planner.execution.base import ExecCode, Outcome
from step_planner.llm.errors import LLMCanceled, LLMInvalidAnswer
from step_planner.planner.result import StepReport

MAX_LOOKAHEAD = 6  # primitives predicted to succeed before the next request
PREPARED_LIMIT = 4  # requests kept prepared at once


def answer_key(messages: list[dict[str, str]], schema: type[BaseModel], purpose: str) -> str:
    """The planner's own question (its messages, answer type and purpose): what a shadow replays by."""
    return json.dumps([messages, schema.__name__, purpose], sort_keys=True)


class _NeedsAnswer(Exception):
    def __init__(self, messages: list[dict[str, str]], schema: type[BaseModel], purpose: str) -> None:
        super().__init__(purpose)
        self.request = (messages, schema, purpose)


class _Diverged(Exception):
    pass


@dataclass
class AnswerLog:
    """Every answer (or invalid-answer error) the real planner got, in the order it asked."""

    ordered: list[Any] = field(default_factory=list)

    def record(self, key: str, outcome: Any) -> None:
        self.ordered.append(outcome)


class _Replay:
    """The shadow planner's model and prompts: the k-th question gets the real planner's k-th answer.

    The planner is deterministic given its answers and step reports, so the shadow asks the same
    questions in the same order; questions already answered are not even rendered (a stub stands in
    for their prompt — rendering them is most of a replay's cost). The first unanswered question is
    rendered by the real prompt book: that request is the one to prepare. Should the shadow ever not
    reproduce the real run, its request differs from the real one and is simply never used.
    """

    def __init__(self, answers: list[Any], prompts: Any) -> None:
        self.answers = answers
        self.asked = 0
        self.prompts = _ReplayPrompts(self, prompts)

    @property
    def answered(self) -> bool:
        return self.asked < len(self.answers)

    def complete(self, messages: list[dict[str, str]], schema: type[BaseModel], purpose: str) -> BaseModel:
        if not self.answered:
            raise _NeedsAnswer(messages, schema, purpose)
        outcome = self.answers[self.asked]
        self.asked += 1
        if isinstance(outcome, Exception):
            raise outcome
        return outcome


class _ReplayPrompts:
    """A prompt book that renders only questions the shadow has no answer for."""

    def __init__(self, replay: _Replay, book: Any) -> None:
        self._replay, self._book = replay, book

    def __getattr__(self, name: str) -> Any:
        real = getattr(self._book, name)
        if name not in ("decomposition", "termination", "verification"):
            return real

        def render(*args: Any, **kwargs: Any) -> list[dict[str, str]]:
            if self._replay.answered:
                return [{"role": "user", "content": f"(answered question {self._replay.asked})"}]
            return real(*args, **kwargs)

        return render


def predicted_world(before: WorldState, call: PrimitiveCall, library: PrimitiveLibrary) -> WorldState:
    """The world after ``call`` if it does what its effects declare."""
    after = before.copy()
    apply_call(call, library, after)
    return after


Request = tuple[list[dict[str, str]], type[BaseModel], str]


def next_request(make_shadow: Callable[[Any, Any], Any], initial: WorldState,
                 history: list[tuple[PrimitiveCall, Any]], pending: PrimitiveCall, answers: list[Any],
                 prompts: Any, library: PrimitiveLibrary, last_world: WorldState,
                 stop: Callable[[], bool] = lambda: False) -> tuple[Request, int] | None:
    """The request the planner will make next if ``pending`` (and what follows it without a question)
    succeeds as predicted, and how many calls after ``pending`` it comes; None when it will make none,
    or the replay does not reproduce the goal. ``make_shadow(llm, prompts)`` builds the shadow."""
    replay = _Replay(list(answers), prompts)
    shadow = make_shadow(replay, replay.prompts)
    plan = shadow.run(initial)
    world = last_world
    ahead = -1
    try:
        call = next(plan)
        for done, report in history:
            if call != done or stop():
                raise _Diverged()
            call = plan.send(report)
        for _ in range(MAX_LOOKAHEAD):
            if call != pending:
                raise _Diverged()
            world = predicted_world(world, call, library)
            ahead += 1
            call = plan.send(StepReport(Outcome(ExecCode.SUCCESS, "predicted"), world))
            pending = call  # a following call the planner makes without asking: assume it succeeds too
    except _NeedsAnswer as need:
        return need.request, ahead
    except (StopIteration, _Diverged, Exception):  # noqa: BLE001 - a prediction that fails predicts nothing
        return None
    finally:
        plan.close()
    return None


@dataclass
class _Prepared:
    key: str
    done: threading.Event = field(default_factory=threading.Event)
    outcome: Any = None  # the answer, or the exception the real call would raise
    client: Any = None  # the forked client (its ledger and captured exchanges)
    exchanges: list[dict] = field(default_factory=list)


@dataclass
class OverlapStats:
    made: int = 0  # speculative requests sent
    used: int = 0
    wasted: int = 0
    llm_wait_s: float = 0.0  # time the planner waited for answers (the critical path)

    def to_dict(self) -> dict[str, Any]:
        return {"speculative_made": self.made, "speculative_used": self.used, "speculative_wasted": self.wasted,
                "llm_wait_s": round(self.llm_wait_s, 4)}


class Prefetcher:
    """Prepared answers: started during motion, handed to the planner only for an identical request."""

    def __init__(self, llm: Any, charge: Callable[[], bool]) -> None:
        self.llm = llm
        self.charge = charge  # books one LLM call on the goal's budget; False when it is used up
        self.stats = OverlapStats()
        self._lock = threading.Lock()
        self._prepared: dict[str, _Prepared] = {}
        self._generation = 0  # a search of an older generation was overtaken by the planner: it registers nothing
        self.closed = False

    @property
    def can_fork(self) -> bool:
        return callable(getattr(self.llm, "fork", None)) and callable(getattr(self.llm, "adopt", None))

    def start(self, find_request: Callable[[list[Any], Callable[[], bool]], tuple[Request, int] | None]) -> None:
        """Find the next request (the shadow replay, given answers prepared so far) and send it, then the
        one after it while no motion would start in between — on a background thread. A search the
        planner overtakes (it asks before the search is done) is abandoned and prepares nothing."""
        if not self.can_fork:
            return
        with self._lock:
            generation = self._generation
        threading.Thread(target=self._prepare, args=(find_request, generation), name="llm-prefetch",
                         daemon=True).start()

    def _stale(self, generation: int) -> bool:
        return self.closed or generation != self._generation

    def _prepare(self, find_request: Callable[[list[Any], Callable[[], bool]], tuple[Request, int] | None],
                 generation: int) -> None:
        prepared: list[Any] = []
        first = True
        while True:
            found = find_request(prepared, lambda: self._stale(generation))
            with self._lock:
                chained = found is not None and (first or found[1] == 0) and not self._stale(generation)
                entry = self._register(found[0]) if chained else None
            if entry is None:
                return
            messages, schema, purpose = found[0]
            try:
                entry.outcome = entry.client.complete(messages, schema, purpose)
            except Exception as exc:  # the same error the real call would have met
                entry.outcome = exc
            finally:
                entry.client.close()
                more = isinstance(entry.outcome, (BaseModel, LLMInvalidAnswer))
                if more:
                    prepared.append(entry.outcome)
                entry.done.set()
            if not more:
                return
            first = False

    def _register(self, request: tuple) -> _Prepared | None:
        """Book a request to send (under the lock); None when it is prepared already or not allowed."""
        key = answer_key(*request)
        if key in self._prepared or len(self._prepared) >= PREPARED_LIMIT or not self.charge():
            return None
        entry = _Prepared(key, client=self.llm.fork())
        entry.client.add_listener(entry.exchanges.append)
        self._prepared[key] = entry
        self.stats.made += 1
        return entry

    def take(self, messages: list[dict[str, str]], schema: type[BaseModel], purpose: str) -> tuple[bool, Any]:
        """(True, answer or exception) for a prepared identical request (waiting for it if in flight);
        (False, None) otherwise — and then every prepared answer is discarded, and a search still under
        way is abandoned (the planner never waits for a prediction: it asks itself)."""
        key = answer_key(messages, schema, purpose)
        with self._lock:
            entry = self._prepared.pop(key, None)
            if entry is None:
                self.stats.wasted += len(self._prepared)
                self._prepared.clear()
                self._generation += 1
                return False, None
        started = time.monotonic()
        entry.done.wait()
        self.stats.llm_wait_s += time.monotonic() - started
        if isinstance(entry.outcome, LLMCanceled):  # abandoned by the goal's cancel: nothing was used
            self.stats.wasted += 1
            return True, entry.outcome
        self.stats.used += 1
        self.llm.adopt(entry.client.usage.records, entry.exchanges)
        return True, entry.outcome

    def close(self) -> None:
        with self._lock:
            self.closed = True
            self.stats.wasted += len(self._prepared)
            self._prepared.clear()
