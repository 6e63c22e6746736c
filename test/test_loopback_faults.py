"""Endpoint faults injected by the loopback server: bounded, observable retries, then a clear error."""

from __future__ import annotations

import json
import threading
import time

import openai
import pytest

from step_planner.llm.client import LLMClient, retry_delay
from step_planner.llm.config import LLMConfig
from step_planner.llm.errors import LLMInvalidAnswer, LLMUnavailable
from step_planner.llm.loopback import Fault, FaultSchedule, LoopbackServer
from step_planner.llm.schemas import TerminationAnswer

FAKE_KEY = "sk-test-FAKE-71aa03c5e2"
MESSAGES = [{"role": "user", "content": "Subgoal: open the drawer."}]
VALID = json.dumps({"verdict": "execute", "call": "open_drawer(drawer=drawer)"})
SHORT_TIMEOUT = 0.5  # only where a stall must time out; elsewhere 2 s keeps a loaded machine from flaking
TRANSPORT_FAULTS = ["timeout", "http_429", "http_500", "http_503", "disconnect", "truncated", "malformed"]


@pytest.fixture(autouse=True)
def fake_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)


def valid(_request: dict) -> str:
    return VALID


def make_client(server: LoopbackServer, **overrides) -> LLMClient:
    settings = dict(base_url=server.base_url, model="loopback-model", timeout_s=2.0, max_retries=2,
                    backoff_s=0.01, backoff_cap_s=0.05)
    settings.update(overrides)
    return LLMClient(LLMConfig(**settings))


@pytest.mark.parametrize("kind", TRANSPORT_FAULTS)
def test_persistent_fault_gives_bounded_retries_then_unavailable(kind):
    with LoopbackServer(FaultSchedule(valid, [kind] * 10), stall_s=2.0) as server:
        client = make_client(server, timeout_s=SHORT_TIMEOUT if kind == "timeout" else 2.0)
        started = time.monotonic()
        with pytest.raises(LLMUnavailable) as info:
            client.complete(MESSAGES, TerminationAnswer, "terminate")
        elapsed = time.monotonic() - started
    assert len(server.requests) == 3  # 1 attempt + max_retries=2
    assert elapsed < 6.0  # ~1.5 s expected (3 x 0.5 s timeout + backoff); generous for a loaded machine
    message = str(info.value)
    assert "after 3 attempt(s)" in message and server.base_url in message and "terminate" in message
    assert FAKE_KEY not in message
    records = client.usage.records
    assert [r.attempt for r in records] == [1, 2, 3] and not any(r.ok for r in records)
    assert all(r.error for r in records) and all(r.prompt_tokens == 0 for r in records)


@pytest.mark.parametrize("kind", TRANSPORT_FAULTS)
def test_single_fault_is_recovered_by_a_retry(kind):
    with LoopbackServer(FaultSchedule(valid, [kind]), stall_s=2.0) as server:
        client = make_client(server, timeout_s=SHORT_TIMEOUT if kind == "timeout" else 2.0)
        exchanges = []
        client.add_listener(exchanges.append)
        answer = client.complete(MESSAGES, TerminationAnswer, "terminate")
    assert answer.call == "open_drawer(drawer=drawer)"
    assert len(server.requests) == 2
    assert [(r.attempt, r.ok) for r in client.usage.records] == [(1, False), (2, True)]
    assert exchanges[0]["error"] and exchanges[0]["answer_text"] is None and exchanges[1]["error"] is None


def test_timeout_error_says_timed_out():
    server = LoopbackServer(FaultSchedule(valid, ["timeout"] * 3), stall_s=2.0)
    with server, pytest.raises(LLMUnavailable, match="timed out after 0.5s"):
        make_client(server, timeout_s=SHORT_TIMEOUT).complete(MESSAGES, TerminationAnswer, "t")


def test_connection_refused_is_unavailable_quickly():
    with LoopbackServer(valid) as server:
        url = server.base_url
    client = LLMClient(LLMConfig(base_url=url, timeout_s=0.5, max_retries=1, backoff_s=0.01))
    started = time.monotonic()
    with pytest.raises(LLMUnavailable, match="connection failed"):
        client.complete(MESSAGES, TerminationAnswer, "t")
    assert time.monotonic() - started < 4.0 and len(client.usage.records) == 2


def test_huge_answer_is_rejected_unparsed_and_not_echoed_in_full():
    with LoopbackServer(FaultSchedule(valid, ["huge", "huge"]), huge_chars=3_000_000) as server:
        client = make_client(server, timeout_s=10.0)
        with pytest.raises(LLMInvalidAnswer, match="over the limit of 20000"):
            client.complete(MESSAGES, TerminationAnswer, "t")
    assert len(server.requests) == 2
    echoed = server.requests[1]["body"]["messages"][-2]
    assert echoed["role"] == "assistant" and len(echoed["content"]) < 2100


def test_retry_after_is_honoured():
    with LoopbackServer(FaultSchedule(valid, [Fault("http_429", retry_after=0.6)])) as server:
        client = make_client(server, backoff_s=0.01)
        started = time.monotonic()
        client.complete(MESSAGES, TerminationAnswer, "t")
        elapsed = time.monotonic() - started
    assert 0.6 <= elapsed < 3.0
    first, second = server.requests
    assert second["t"] - first["t"] >= 0.6  # the wait happened between the two requests


def test_retry_after_is_capped():
    with LoopbackServer(FaultSchedule(valid, [Fault("http_429", retry_after=30)])) as server:
        client = make_client(server, retry_after_cap_s=0.2)
        started = time.monotonic()
        client.complete(MESSAGES, TerminationAnswer, "t")
        elapsed = time.monotonic() - started
    assert 0.2 <= elapsed < 5.0  # far below the 30 s asked for


def test_retry_delay_schedule():
    config = LLMConfig(backoff_s=0.5, backoff_cap_s=3.0, retry_after_cap_s=10.0)
    assert [retry_delay(config, n, None) for n in range(1, 6)] == [0.5, 1.0, 2.0, 3.0, 3.0]
    assert retry_delay(config, 1, 4.0) == 4.0 and retry_delay(config, 1, 60.0) == 10.0
    assert retry_delay(config, 3, -5.0) == 0.0


def test_backoff_is_exponential_and_capped():
    with LoopbackServer(FaultSchedule(valid, ["http_500"] * 3)) as server:
        client = make_client(server, max_retries=3, backoff_s=0.1, backoff_cap_s=0.15)
        started = time.monotonic()
        client.complete(MESSAGES, TerminationAnswer, "t")
        elapsed = time.monotonic() - started
    assert 0.1 + 0.15 + 0.15 <= elapsed < 3.0  # 0.1, then 0.2 and 0.4 capped at 0.15
    assert len(server.requests) == 4


@pytest.mark.parametrize("status", [400, 404, 422])
def test_client_errors_are_not_retried(status):
    server = LoopbackServer(FaultSchedule(valid, [Fault("http_error", status=status, message="bad model")]))
    with server, pytest.raises(LLMUnavailable, match=f"HTTP {status}: bad model"):
        make_client(server).complete(MESSAGES, TerminationAnswer, "t")
    assert len(server.requests) == 1


def test_auth_failure_names_the_variable_not_the_key():
    fault = Fault("http_error", status=401, message="Incorrect API key provided")
    server = LoopbackServer(FaultSchedule(valid, [fault]))
    with server, pytest.raises(LLMUnavailable, match=r"\$OPENAI_API_KEY") as info:
        make_client(server).complete(MESSAGES, TerminationAnswer, "t")
    assert FAKE_KEY not in str(info.value)


def test_models_endpoint_and_streaming_with_the_openai_client():
    with LoopbackServer(valid, model_ids=["loop-a", "loop-b"]) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0, timeout=2)
        assert [m.id for m in client.models.list()] == ["loop-a", "loop-b"]
        stream = client.chat.completions.create(model="loop-a", messages=MESSAGES, stream=True,
                                                stream_options={"include_usage": True})
        chunks = list(stream)
        client.close()
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == VALID
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens > 0
    assert [r["method"] for r in server.requests] == ["GET", "POST"]


def test_close_joins_a_stalled_request_quickly():
    server = LoopbackServer(FaultSchedule(valid, ["timeout"]), stall_s=20.0).start()
    client = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0, timeout=30)
    outcome = []

    def call():
        try:
            client.chat.completions.create(model="m", messages=MESSAGES)
        except openai.APIConnectionError as exc:
            outcome.append(exc)

    caller = threading.Thread(target=call)
    caller.start()
    while not server.requests:
        time.sleep(0.01)
    started = time.monotonic()
    server.close()
    assert time.monotonic() - started < 5.0  # the stall was 20 s
    caller.join(timeout=5)
    assert not caller.is_alive() and len(outcome) == 1
    client.close()


def test_unknown_fault_kind_is_refused():
    with pytest.raises(ValueError, match="unknown fault kind"):
        Fault("slow_loris")
