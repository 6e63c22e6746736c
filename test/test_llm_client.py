"""LLMClient through the real openai client over HTTP to the loopback server: answers, fallback, retries."""

from __future__ import annotations

import json
import threading

import pytest

from step_planner.llm.client import LLMClient
from step_planner.llm.config import LLMConfig, LLMConfigError
from step_planner.llm.errors import LLMInvalidAnswer, LLMUnavailable
from step_planner.llm.loopback import Answer, Fault, FaultSchedule, LoopbackServer, RejectJsonSchema
from step_planner.llm.schemas import TerminationAnswer, answer_schema, decomposition_schema, strict_json_schema
from step_planner.llm.tokens import WORDPIECE, count_message_tokens, count_tokens, tokenizer_kind

DecompositionAnswer = decomposition_schema(grounded=True, goal=False, plan_ahead=False, control=False)

FAKE_KEY = "sk-test-FAKE-9d2f0c7e1b4a"
MESSAGES = [
    {"role": "system", "content": "You plan robot actions."},
    {"role": "user", "content": "Subgoal: pick up the tape.\nWorld: tape at table."},
]
VALID = json.dumps({"reasoning": "tape is reachable", "verdict": "execute", "call": "pick(object=tape)"})


class Scripted:
    """Answers from a list in order (the last one repeats); thread-safe."""

    def __init__(self, *answers) -> None:
        self.answers = list(answers)
        self.lock = threading.Lock()

    def __call__(self, request: dict):
        with self.lock:
            return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


@pytest.fixture(autouse=True)
def fake_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)


def make_client(server: LoopbackServer, **overrides) -> LLMClient:
    settings = dict(base_url=server.base_url, model="loopback-model", timeout_s=5.0, max_retries=2,
                    backoff_s=0.01, backoff_cap_s=0.05)
    settings.update(overrides)
    return LLMClient(LLMConfig(**settings))


def test_valid_answer_parsed_with_json_schema_and_accounted():
    with LoopbackServer(Scripted(VALID)) as server:
        client = make_client(server)
        exchanges = []
        client.add_listener(exchanges.append)
        answer = client.complete(MESSAGES, TerminationAnswer, "terminate")
    assert isinstance(answer, TerminationAnswer)
    assert answer.verdict == "execute"
    assert answer.call == "pick(object=tape)"
    sent = server.requests[-1]["body"]
    assert sent["response_format"]["type"] == "json_schema"
    assert sent["response_format"]["json_schema"]["name"] == "TerminationAnswer"
    assert sent["response_format"]["json_schema"]["strict"] is True
    assert sent["response_format"]["json_schema"]["schema"] == strict_json_schema(TerminationAnswer)
    assert sent["messages"] == MESSAGES and sent["temperature"] == 0.0 and sent["max_tokens"] == 800
    (record,) = client.usage.records
    assert record.ok and record.attempt == 1 and record.purpose == "terminate" and record.error is None
    assert record.prompt_tokens == count_message_tokens(MESSAGES) > 0  # reported by the server's usage
    assert record.completion_tokens == count_tokens(VALID) > 0
    assert not record.tokens_counted_locally
    totals = client.usage.totals()
    assert totals["calls"] == 1 and totals["max_prompt_tokens"] == record.prompt_tokens
    (exchange,) = exchanges
    assert set(exchange) >= {"purpose", "request", "answer_text", "usage", "latency_s", "error"}
    assert exchange["answer_text"] == VALID and exchange["request"]["model"] == "loopback-model"
    client.usage.reset()
    assert client.usage.totals()["calls"] == 0


def test_fenced_and_embedded_json_are_accepted():
    fenced, chatty = f"```json\n{VALID}\n```", f"Sure, here it is: {VALID} Hope it helps."
    with LoopbackServer(Scripted(fenced, chatty)) as server:
        client = make_client(server)
        assert client.complete(MESSAGES, TerminationAnswer, "t").verdict == "execute"
        assert client.complete(MESSAGES, TerminationAnswer, "t").verdict == "execute"
    assert len(server.requests) == 2


def test_json_schema_rejected_falls_back_to_json_object_and_remembers():
    with LoopbackServer(RejectJsonSchema(Scripted(VALID))) as server:
        client = make_client(server)
        assert client.complete(MESSAGES, TerminationAnswer, "first").verdict == "execute"
        assert client.structured_mode == "json_object"
        assert client.complete(MESSAGES, TerminationAnswer, "second").verdict == "execute"
    kinds = [r["body"]["response_format"]["type"] for r in server.requests]
    # strict refused, then json_schema without strict refused, then JSON mode (and it is remembered)
    assert kinds == ["json_schema", "json_schema", "json_object", "json_object"]
    assert [r["body"]["response_format"].get("json_schema", {}).get("strict") for r in server.requests[:2]] == \
        [True, False]
    system = server.requests[2]["body"]["messages"][0]
    assert system["role"] == "system" and system["content"].startswith("You plan robot actions.")
    # the one schema the prompt shows is the one JSON mode sends (the prompt here does not show it)
    assert json.dumps(answer_schema(TerminationAnswer), separators=(",", ":")) in system["content"]
    assert [r.ok for r in client.usage.records] == [False, False, True, True]


def test_json_object_mode_from_config_never_sends_json_schema():
    with LoopbackServer(Scripted(VALID)) as server:
        client = make_client(server, structured="json_object")
        client.complete(MESSAGES, TerminationAnswer, "t")
    assert server.requests[0]["body"]["response_format"] == {"type": "json_object"}


def test_explicit_json_schema_mode_reports_the_rejection():
    with LoopbackServer(RejectJsonSchema(Scripted(VALID))) as server:
        client = make_client(server, structured="json_schema")
        with pytest.raises(LLMUnavailable, match="json_object"):
            client.complete(MESSAGES, TerminationAnswer, "t")
    assert len(server.requests) == 2  # strict, then without strict


def test_invalid_then_valid_retries_once_with_the_error_fed_back():
    bad = "I think the robot should pick the tape."
    with LoopbackServer(Scripted(bad, VALID)) as server:
        client = make_client(server)
        assert client.complete(MESSAGES, TerminationAnswer, "t").verdict == "execute"
    assert len(server.requests) == 2
    retry = server.requests[1]["body"]["messages"]
    assert retry[: len(MESSAGES)] == MESSAGES
    assert retry[-2] == {"role": "assistant", "content": bad}
    assert retry[-1]["role"] == "user" and "contains no JSON object" in retry[-1]["content"]


def test_schema_violation_error_names_the_field():
    wrong = json.dumps({"verdict": "maybe", "reason": "unsure"})
    with LoopbackServer(Scripted(wrong, VALID)) as server:
        make_client(server).complete(MESSAGES, TerminationAnswer, "t")
    feedback = server.requests[1]["body"]["messages"][-1]["content"]
    assert "verdict" in feedback and "TerminationAnswer" in feedback


def test_invalid_twice_raises_invalid_answer():
    with LoopbackServer(Scripted('{"done": "not a bool at all"}', "still no json")) as server:
        client = make_client(server)
        with pytest.raises(LLMInvalidAnswer) as info:
            client.complete(MESSAGES, DecompositionAnswer, "decompose")
    assert len(server.requests) == 2
    err = info.value
    assert err.purpose == "decompose" and err.raw == "still no json" and "no JSON object" in err.error
    assert "decompose" in str(err)


def test_tokens_are_counted_locally_when_the_server_sends_no_usage():
    with LoopbackServer(Scripted(VALID), report_usage=False) as server:
        client = make_client(server)
        exchanges = []
        client.add_listener(exchanges.append)
        client.complete(MESSAGES, TerminationAnswer, "t")
    (record,) = client.usage.records
    assert record.tokens_counted_locally and exchanges[0]["usage"]["counted_locally"]
    assert record.prompt_tokens == count_message_tokens(MESSAGES) > 0
    assert record.completion_tokens == count_tokens(VALID) > 0


def test_cut_off_answer_error_mentions_max_tokens():
    cut = Answer(VALID[:30], finish_reason="length")
    with LoopbackServer(Scripted(cut, VALID)) as server:
        client = make_client(server, max_tokens=12)
        exchanges = []
        client.add_listener(exchanges.append)
        client.complete(MESSAGES, TerminationAnswer, "t")
    assert exchanges[0]["finish_reason"] == "length"
    assert "cut off at max_tokens=12" in server.requests[1]["body"]["messages"][-1]["content"]


def test_missing_key_uses_placeholder_and_still_works(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    with LoopbackServer(Scripted(VALID)) as server:
        assert make_client(server).complete(MESSAGES, TerminationAnswer, "t").verdict == "execute"


def test_api_key_never_leaks(tmp_path):
    leaky = Fault("http_error", status=401, message=f"Incorrect API key provided: {FAKE_KEY}")
    handler = FaultSchedule(Scripted(f"echo {FAKE_KEY}", f"again {FAKE_KEY}", VALID), [leaky])
    texts = []
    with LoopbackServer(handler) as server:
        client = make_client(server)
        exchanges = []
        client.add_listener(exchanges.append)
        for _ in range(2):
            try:
                client.complete(MESSAGES, TerminationAnswer, "t")
            except (LLMUnavailable, LLMInvalidAnswer) as exc:
                texts.append(str(exc))
                texts.append(repr(exc.__dict__))
        assert len(texts) == 4  # both calls failed: 401, then invalid twice
        texts += [json.dumps(exchanges, default=str), repr(client.usage.records), repr(client),
                  repr(client.config), json.dumps(server.requests)]
    assert "[REDACTED]" in texts[0]  # the server echoed the key; the message scrubbed it
    for text in texts:
        assert FAKE_KEY not in text


def test_config_from_dict_rejects_unknown_keys_and_wrong_types():
    config = LLMConfig.from_dict({"model": "m", "timeout_s": 5, "base_url": "http://x/v1"})
    assert config.timeout_s == 5.0 and config.base_url == "http://x/v1"
    with pytest.raises(LLMConfigError, match="api_key_env"):
        LLMConfig.from_dict({"api_key": FAKE_KEY})
    with pytest.raises(LLMConfigError, match="timeout_s"):
        LLMConfig.from_dict({"timeout_s": "fast"})
    with pytest.raises(LLMConfigError, match="structured"):
        LLMConfig.from_dict({"structured": "yaml"})
    with pytest.raises(LLMConfigError, match="max_retries"):
        LLMConfig.from_dict({"max_retries": True})
    with pytest.raises(LLMConfigError, match="max_retries"):
        LLMConfig.from_dict({"max_retries": -1})
    assert "key" not in json.dumps(LLMConfig().to_dict()).replace("api_key_env", "")


def test_token_counts_are_real_wordpiece_counts():
    assert tokenizer_kind() == WORDPIECE
    short, other = count_tokens("pick(object=tape)"), count_tokens("Put the red block in the top drawer.")
    assert short > 0 and other > 0 and short != other
    long_text = "place the red block inside the open drawer " * 50
    assert count_tokens(long_text) > 300  # not truncated at the model's 128-token window
    assert count_tokens("") == 0


def test_the_in_process_handler_shares_parsing_retry_and_accounting():
    """LLMClient(handler=...) sends the same request dicts to a function instead of over HTTP."""
    seen = []

    def handler(request):
        seen.append(request)
        return "no json here" if len(seen) == 1 else VALID

    client = LLMClient(LLMConfig(model="scripted"), handler=handler)
    assert client.complete(MESSAGES, TerminationAnswer, "t").call == "pick(object=tape)"
    assert len(seen) == 2 and "contains no JSON object" in seen[1]["messages"][-1]["content"]
    assert seen[0]["response_format"]["json_schema"]["schema"] == strict_json_schema(TerminationAnswer)
    assert [r.attempt for r in client.usage.records] == [1, 1] and client.usage.records[0].tokens_counted_locally
    broken = LLMClient(LLMConfig(model="scripted"), handler=lambda r: 1 / 0)
    with pytest.raises(LLMUnavailable, match="the answer handler failed: ZeroDivisionError"):
        broken.complete(MESSAGES, TerminationAnswer, "t")
    assert len(broken.usage.records) == 1  # not retried: a handler's fault is a bug, not a transient


def test_strict_schemas_require_every_field_and_forbid_extras():
    schema = strict_json_schema(decomposition_schema(grounded=True, goal=True, plan_ahead=True, control=True))

    def objects(node):
        if isinstance(node, dict):
            if node.get("type") == "object":
                yield node
            for value in node.values():
                yield from objects(value)
        elif isinstance(node, list):
            for value in node:
                yield from objects(value)

    for obj in objects(schema):
        assert obj["additionalProperties"] is False and sorted(obj["required"]) == sorted(obj["properties"])
    assert "maxLength" not in json.dumps(schema) and '"default"' not in json.dumps(schema)


def test_a_server_that_refuses_strict_gets_the_plain_json_schema():
    def no_strict(request):
        spec = (request.get("response_format") or {}).get("json_schema") or {}
        if spec.get("strict"):
            return Fault("http_error", status=400, message="response_format json_schema: strict is not supported")
        return VALID

    with LoopbackServer(no_strict) as server:
        client = make_client(server)
        assert client.complete(MESSAGES, TerminationAnswer, "a").verdict == "execute"
        assert client.complete(MESSAGES, TerminationAnswer, "b").verdict == "execute"
    strict = [r["body"]["response_format"]["json_schema"]["strict"] for r in server.requests]
    assert strict == [True, False, False] and client.structured_mode == "json_schema"
    plain = server.requests[1]["body"]["response_format"]["json_schema"]["schema"]
    assert plain == answer_schema(TerminationAnswer)  # the same schema the prompt shows, only strict is off


def test_json_mode_does_not_repeat_a_schema_the_prompt_already_shows():
    shown = json.dumps(answer_schema(TerminationAnswer), separators=(",", ":"))
    messages = [{"role": "system", "content": f"Rules.\nAnswer with JSON matching this schema:\n{shown}"},
                MESSAGES[1]]
    with LoopbackServer(Scripted(VALID)) as server:
        client = make_client(server, structured="json_object")
        assert client.complete(messages, TerminationAnswer, "t").verdict == "execute"
    system = server.requests[0]["body"]["messages"][0]["content"]
    assert system.count(shown) == 1 and system.endswith("matching the schema above.")


def test_a_server_reporting_zero_usage_is_counted_locally():
    from step_planner.llm.loopback import Answer

    zeros = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
    with LoopbackServer(lambda request: Answer(VALID, zeros)) as server:
        client = make_client(server)
        client.complete(MESSAGES, TerminationAnswer, "t")
    record = client.usage.records[-1]
    assert record.tokens_counted_locally and record.prompt_tokens == count_message_tokens(MESSAGES) > 0
