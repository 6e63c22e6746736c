"""Record real exchanges through a recorder endpoint, replay them by request key, fail loudly on a miss."""

from __future__ import annotations

import json

import pytest

from step_planner.llm.client import LLMClient
from step_planner.llm.config import LLMConfig
from step_planner.llm.errors import LLMReplayMiss, LLMUnavailable
from step_planner.llm.loopback import FaultSchedule, LoopbackServer
from step_planner.llm.replay import RecordingHandler, ReplayHandler, request_key
from step_planner.llm.schemas import decomposition_schema

DecompositionAnswer = decomposition_schema(grounded=False, goal=False, plan_ahead=False, control=False)

FAKE_KEY = "sk-test-FAKE-5e83bb1290"
MESSAGES = [
    {"role": "system", "content": "Decompose subgoals for a Franka arm."},
    {"role": "user", "content": "Subgoal: put the tape in the drawer\nChildren so far: none"},
]


@pytest.fixture(autouse=True)
def fake_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)


def scripted_expert(request: dict) -> str:
    """Stands in for a real upstream LLM: answers depend on the last user message."""
    last = request["messages"][-1]["content"]
    subgoal = "open_drawer(drawer)" if "drawer" in last else "home()"
    return json.dumps({"reasoning": "scripted", "done": False, "next": {"subgoal": subgoal}})


def make_client(base_url: str, **overrides) -> LLMClient:
    settings = dict(base_url=base_url, model="upstream-model", timeout_s=5.0, max_retries=1, backoff_s=0.01)
    settings.update(overrides)
    return LLMClient(LLMConfig(**settings))


def record(tmp_path, messages=MESSAGES):
    """Run one call through a recorder in front of a scripted upstream; return (answer, upstream)."""
    upstream = LoopbackServer(scripted_expert)
    with upstream, LoopbackServer(RecordingHandler(upstream.base_url, tmp_path)) as recorder:
        answer = make_client(recorder.base_url).complete(messages, DecompositionAnswer, "decompose")
    return answer, upstream


def test_request_key_covers_exactly_the_answer_shaping_fields():
    base = {"model": "m", "messages": MESSAGES, "temperature": 0.0, "max_tokens": 800,
            "response_format": {"type": "json_object"}}
    reordered = dict(reversed(list(base.items())))
    assert request_key(base) == request_key(reordered)
    assert request_key(base) == request_key({**base, "stream": False, "user": "someone"})
    for field, value in [("model", "n"), ("temperature", 0.5), ("max_tokens", 100),
                         ("response_format", {"type": "text"}),
                         ("messages", MESSAGES[:1] + [{"role": "user", "content": "other"}])]:
        assert request_key({**base, field: value}) != request_key(base), field
    assert len(request_key(base)) == 64


def test_record_then_replay_round_trip(tmp_path):
    answer, upstream = record(tmp_path)
    assert answer.next.subgoal == "open_drawer(drawer)"
    files = list(tmp_path.glob("*.json"))
    assert len(files) == 1
    stored = json.loads(files[0].read_text())
    assert stored["key"] == files[0].stem == request_key(upstream.requests[0]["body"])
    assert stored["request"]["messages"] == MESSAGES and stored["request"]["model"] == "upstream-model"
    assert json.loads(stored["answer"])["next"]["subgoal"] == "open_drawer(drawer)"
    assert stored["usage"]["prompt_tokens"] > 0

    replay = ReplayHandler(tmp_path)
    with LoopbackServer(replay) as server:
        client = make_client(server.base_url)
        again = client.complete(MESSAGES, DecompositionAnswer, "decompose")
    assert again == answer
    assert replay.hits == [stored["key"]] and replay.misses == []
    assert len(upstream.requests) == 1  # the replay never reached the upstream
    assert client.usage.records[0].prompt_tokens == stored["usage"]["prompt_tokens"]


def test_replay_miss_is_loud_and_names_the_key(tmp_path):
    record(tmp_path)
    changed = [MESSAGES[0], {"role": "user", "content": "Subgoal: put the cup on the tray\nmore lines"}]
    replay = ReplayHandler(tmp_path)
    with LoopbackServer(replay) as server:
        with pytest.raises(LLMReplayMiss) as info:
            make_client(server.base_url).complete(changed, DecompositionAnswer, "decompose")
        expected_key = request_key(server.requests[0]["body"])
    assert len(server.requests) == 1  # a miss is not retried
    assert info.value.key == expected_key and replay.misses == [expected_key]
    message = str(info.value)
    assert expected_key in message and "put the cup on the tray" in message and "more lines" not in message
    assert isinstance(info.value, LLMUnavailable)


def test_edited_recording_is_refused(tmp_path):
    record(tmp_path)
    (path,) = tmp_path.glob("*.json")
    stored = json.loads(path.read_text())
    stored["request"]["messages"][1]["content"] += " (edited)"
    path.write_text(json.dumps(stored))
    with LoopbackServer(ReplayHandler(tmp_path)) as server, pytest.raises(LLMUnavailable, match="was edited"):
        make_client(server.base_url).complete(MESSAGES, DecompositionAnswer, "decompose")


def test_upstream_faults_pass_through_and_are_not_recorded(tmp_path):
    upstream = LoopbackServer(FaultSchedule(scripted_expert, ["http_503"] * 5))
    with upstream, LoopbackServer(RecordingHandler(upstream.base_url, tmp_path)) as recorder:
        client = make_client(recorder.base_url, max_retries=1)
        with pytest.raises(LLMUnavailable, match="HTTP 503"):
            client.complete(MESSAGES, DecompositionAnswer, "decompose")
    assert len(upstream.requests) == 2 and list(tmp_path.glob("*.json")) == []


def test_api_key_never_written_to_recordings(tmp_path):
    record(tmp_path)
    record(tmp_path, [MESSAGES[0], {"role": "user", "content": "Subgoal: go home"}])
    files = list(tmp_path.glob("*.json"))
    assert len(files) == 2
    for path in files:
        assert FAKE_KEY not in path.read_text()


def test_miss_description_skips_markdown_headers():
    from step_planner.llm.replay import last_user_line

    request = {"messages": [{"role": "user", "content": "## Task\n\nput the tape in the drawer\n## World\n..."}]}
    assert last_user_line(request) == "put the tape in the drawer"
    assert last_user_line({"messages": [{"role": "user", "content": "## Only a header"}]}) == "## Only a header"
    assert last_user_line({"messages": []}) == ""
