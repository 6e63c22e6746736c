"""A cancel reaches an LLM call in flight: the client abandons the request (or its retry backoff) and the
goal ends CANCELED without waiting for the endpoint's answer.

Real openai client over HTTP to ``LoopbackServer``; the server holds its answer until the test releases
it, so "the call returned before the answer existed" is shown without any timing assertion.
"""

from __future__ import annotations

import json
import threading

import pytest

from step_planner.execution.symbolic import SymbolicExecutor
from step_planner.llm.client import LLMClient
from step_planner.llm.config import LLMConfig
from step_planner.llm.errors import LLMCanceled
from step_planner.llm.loopback import Fault, LoopbackServer
from step_planner.llm.schemas import TerminationAnswer
from step_planner.planner.config import PlannerConfig
from step_planner.planner.result import GoalError
from step_planner.planner.runner import run_goal

MESSAGES = [{"role": "user", "content": "Subgoal: open the drawer."}]
VALID = json.dumps({"verdict": "execute", "call": "open_drawer(drawer=drawer)"})
HOLD_S = 20.0  # the held answer would come this late; every test ends far sooner


class HeldAnswer:
    """Answers only after ``released`` (or HOLD_S); ``arrived``: a request is held; ``answered``: it got
    its answer."""

    def __init__(self, reply=VALID) -> None:
        self.reply = reply
        self.arrived = threading.Event()
        self.released = threading.Event()
        self.answered = threading.Event()

    def __call__(self, request: dict):
        self.arrived.set()
        self.released.wait(HOLD_S)
        self.answered.set()
        return self.reply


def client_for(server: LoopbackServer, cancel: threading.Event, **overrides) -> LLMClient:
    settings = dict(base_url=server.base_url, model="loopback", timeout_s=HOLD_S + 5, max_retries=2)
    settings.update(overrides)
    return LLMClient(LLMConfig(**settings), cancel=cancel)


def cancel_when(event: threading.Event, cancel: threading.Event) -> threading.Thread:
    thread = threading.Thread(target=lambda: event.wait(HOLD_S) and cancel.set(), daemon=True)
    thread.start()
    return thread


def test_cancel_abandons_a_request_in_flight():
    handler = HeldAnswer()
    cancel = threading.Event()
    with LoopbackServer(handler) as server:
        client = client_for(server, cancel)
        cancel_when(handler.arrived, cancel)
        try:
            with pytest.raises(LLMCanceled, match="canceled while waiting for the terminate answer"):
                client.complete(MESSAGES, TerminationAnswer, "terminate")
            assert not handler.answered.is_set(), "the call must not have waited for the answer"
            (record,) = client.usage.records
            assert not record.ok and "canceled" in record.error
        finally:
            handler.released.set()
            client.close()


def test_cancel_interrupts_the_retry_backoff():
    """A 429 asking to come back in 25 s: the cancel ends the wait, no second request is sent."""
    cancel = threading.Event()
    arrived = threading.Event()

    def rate_limited(_request):
        arrived.set()
        return Fault("http_429", retry_after=25)

    with LoopbackServer(rate_limited) as server:
        client = client_for(server, cancel)
        cancel_when(arrived, cancel)
        with pytest.raises(LLMCanceled, match="waiting to retry"):
            client.complete(MESSAGES, TerminationAnswer, "terminate")
        client.close()
    assert len(server.requests) == 1


def test_a_canceled_client_sends_nothing():
    cancel = threading.Event()
    cancel.set()
    with LoopbackServer(HeldAnswer()) as server:
        client = client_for(server, cancel)
        with pytest.raises(LLMCanceled):
            client.complete(MESSAGES, TerminationAnswer, "terminate")
        client.close()
    assert server.requests == []


def test_without_cancel_event_the_client_answers_as_before():
    handler = HeldAnswer()
    handler.released.set()
    with LoopbackServer(handler) as server:
        client = LLMClient(LLMConfig(base_url=server.base_url, model="loopback", timeout_s=5.0))
        answer = client.complete(MESSAGES, TerminationAnswer, "terminate")
        client.close()
    assert answer.verdict == "execute"


def test_run_goal_canceled_during_an_llm_call_ends_canceled_without_the_answer(library, drawer_world):
    handler = HeldAnswer(reply=json.dumps({"goal": ["in(tape, drawer)"], "done": False, "next": {
        "subgoal": "open the drawer", "call": "open_drawer(drawer=drawer)", "success_when": []}}))
    cancel = threading.Event()
    executor = SymbolicExecutor(library, drawer_world)
    with LoopbackServer(handler) as server:
        client = client_for(server, cancel)
        cancel_when(handler.arrived, cancel)
        try:
            result = run_goal("put the tape in the drawer", library=library, executor=executor, llm=client,
                              config=PlannerConfig(), cancel=cancel)
            assert not handler.answered.is_set(), "the goal must not have waited for the answer"
        finally:
            handler.released.set()
            client.close()
    assert result.error is GoalError.CANCELED, result.message
    assert result.executed == []
    assert executor.observe().objects["tape"].location == drawer_world.objects["tape"].location
