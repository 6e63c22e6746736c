"""Episodes: record a run as MCAP, read it back, replay it, and fail clearly on damaged files."""

from __future__ import annotations

import os
import time

import pytest
from conftest import ScriptedLLM, shipped_config, table_plan

from step_planner.episodes.bag import EpisodeError
from step_planner.episodes.episode import load_episode, replay_episode
from step_planner.episodes.recorder import EpisodeRecorder, Retention, prune
from step_planner.execution.base import ExecCode
from step_planner.execution.symbolic import SymbolicExecutor
from step_planner.planner.runner import run_goal

TASK = "put the tape in the drawer"
PLANS = {TASK: ["open_drawer(drawer)", "pick(tape)", "place(tape, drawer)", "close_drawer(drawer)"]}
FAKE_KEY = "sk-test-THIS-IS-A-FAKE-KEY-1234567890"
TEXT_STYLE = shipped_config(profile="step-verify_done", require_verified_success=False)


class ExchangeLLM(ScriptedLLM):
    """Reports exchanges like the real client's listener does (with the key in a place it must not leak)."""

    def __init__(self, answer, sink):
        super().__init__(answer)
        self.sink = sink

    def complete(self, messages, schema, purpose):
        answer = super().complete(messages, schema, purpose)
        self.sink({"purpose": purpose, "request": {"messages": messages}, "answer_text": answer.model_dump_json(),
                   "note": f"Bearer {os.environ.get('OPENAI_API_KEY', '')}"})
        return answer


def record(tmp_path, library, world, failures=None):
    recorder = EpisodeRecorder(tmp_path, "goal-1", instruction=TASK, scene="drawer_desk", backend="symbolic",
                               world=world)
    executor = SymbolicExecutor(library, world, failures=failures)
    result = run_goal(TASK, library=library, executor=executor, llm=ExchangeLLM(table_plan(PLANS),
                      recorder.on_exchange), config=TEXT_STYLE, listeners=[recorder], on_step=recorder.on_step)
    return recorder.finish(result), result


def test_record_then_replay_matches(tmp_path, library, drawer_world, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    path, result = record(tmp_path, library, drawer_world, failures={"pick(object=tape)": ExecCode.GRASP_FAILED})
    episode = load_episode(path)
    assert episode.goal["instruction"] == TASK and episode.result["success"] == result.success
    assert [s["outcome"]["code"] for s in episode.steps] == [o.code.value for _, o in result.executed]
    assert episode.steps[1]["outcome"]["code"] == "GRASP_FAILED"
    assert episode.exchanges and episode.final_tree["nodes"] == result.tree["nodes"]
    assert episode.steps[0]["world_after"]["places"]["drawer"]["is_open"] is True
    # replay on a fresh executor with the same injected failure reproduces every outcome
    replay = replay_episode(episode, SymbolicExecutor(library, failures={"pick(object=tape)": ExecCode.GRASP_FAILED}))
    assert [c.matches for c in replay] == [True] * len(result.executed)
    # without the failure the divergence is reported, not hidden
    diverged = replay_episode(episode, SymbolicExecutor(library))
    assert not diverged[1].matches and diverged[1].replayed == "SUCCESS"


def test_api_key_never_recorded(tmp_path, library, drawer_world, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    path, _ = record(tmp_path, library, drawer_world)
    for f in path.rglob("*"):
        if f.is_file():
            assert FAKE_KEY.encode() not in f.read_bytes(), f
    assert any("REDACTED" in e["note"] for e in load_episode(path).exchanges)


def test_truncated_and_corrupted_episodes_fail_clearly(tmp_path, library, drawer_world):
    path, _ = record(tmp_path, library, drawer_world)
    mcap = next((path / "bag").glob("*.mcap"))
    data = mcap.read_bytes()
    mcap.write_bytes(data[: len(data) // 3])
    with pytest.raises(EpisodeError, match="cannot read episode bag|no result record|no goal record"):
        load_episode(path)
    assert mcap.read_bytes() == data[: len(data) // 3], "loading must not change the file"
    mcap.write_bytes(b"\x00garbage" * 100)
    with pytest.raises(EpisodeError):
        load_episode(path)
    (path / "bag" / "metadata.yaml").unlink()
    with pytest.raises(EpisodeError, match="not a rosbag2 folder"):
        load_episode(path)
    with pytest.raises(EpisodeError, match="no episode"):
        load_episode(tmp_path / "nope")


def test_prune_keeps_the_folder_bounded(tmp_path, library, drawer_world):
    paths = [record(tmp_path, library, drawer_world)[0] for _ in range(4)]
    old = time.time() - 100 * 86400
    os.utime(paths[0], (old, old))
    removed = prune(tmp_path, Retention(max_episodes=2, max_age_days=30))
    assert paths[0] in removed and len([p for p in tmp_path.iterdir()]) == 2
