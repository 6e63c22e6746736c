"""`bench --record` honours llm.timeout_s and max_retries for its upstream calls (issue 31).

The recording proxy sits between the planner's client and the model. It used to call upstream with a fixed 60 s
timeout: a slow local model that ``llm.timeout_s`` allows was cut off, and an answer the client had already
given up on was still recorded. Here the upstream is the scripted expert behind a loopback server that answers
``DELAY_S`` late; nothing in the client is patched.
"""

from __future__ import annotations

import json
import time

import pytest
import yaml

from step_planner.bench.cli import main_bench
from step_planner.bench.expert import ScriptedExpert
from step_planner.bench.tasks import load_suite
from step_planner.llm.loopback import LoopbackServer

TASK = "ss01_red_block_tray"
DELAY_S = 1.2


@pytest.fixture
def slow_upstream(library):
    """The expert, hosted, answering every request DELAY_S late (a slow local model)."""
    task = next(t for t in load_suite("table3") if t.id == TASK)
    expert = ScriptedExpert(library, seed=0)
    expert.register(task.instruction, task.goal, task.stated_goal)

    def late(request: dict):
        time.sleep(DELAY_S)
        return expert(request)

    with LoopbackServer(late) as server:
        yield server


def bench(tmp_path, upstream: LoopbackServer, **llm) -> dict:
    config = tmp_path / "llm.yaml"
    config.write_text(yaml.safe_dump({"llm": {"api_key_env": "STEP_PLANNER_TEST_NO_KEY", "backoff_s": 0.01, **llm}}))
    out = tmp_path / "out"
    rc = main_bench(["--tasks", TASK, "--planners", "grounded", "--base-url", upstream.base_url, "--model", "slow",
                     "--llm-config", str(config), "--record", str(tmp_path / "rec"), "--out", str(out), "--quiet"])
    assert rc == 0
    [run] = json.loads((out / "results.json").read_text())["runs"]
    return run


def recordings(tmp_path) -> list:
    return sorted((tmp_path / "rec").glob("*.json"))


def test_a_model_slower_than_the_default_but_within_timeout_s_is_recorded(tmp_path, slow_upstream):
    run = bench(tmp_path, slow_upstream, timeout_s=DELAY_S * 4, max_retries=0)
    assert run["success"], run
    assert len(recordings(tmp_path)) == len(slow_upstream.requests) == run["llm_calls"] > 0


def test_past_timeout_s_the_proxy_gives_up_with_the_client_and_records_nothing(tmp_path, slow_upstream):
    run = bench(tmp_path, slow_upstream, timeout_s=DELAY_S / 3, max_retries=1)
    assert not run["success"] and run["error"] == "LLM_UNAVAILABLE", run
    time.sleep(DELAY_S)  # an upstream call the proxy had not given up on would be answered and recorded by now
    assert len(slow_upstream.requests) == 2  # the first attempt and max_retries=1 retry, one upstream call each
    assert recordings(tmp_path) == []  # with a fixed 60 s the proxy recorded the late answer
