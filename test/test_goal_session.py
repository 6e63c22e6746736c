"""The goal session (no ROS): builds the LLM client, executor, gates, recording and memory; releases all.

The LLM is the real client over HTTP: either the loopback server of the shipped answers (llm.offline)
or a scripted loopback handler.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
import yaml
from conftest import CONFIG, DRAWER_PLANS, DRAWER_TASK

from step_planner.domain.safety import SafetyEnvelope
from step_planner.execution.symbolic import SymbolicExecutor
from step_planner.llm.loopback import LoopbackServer
from step_planner.planner.result import GoalError
from step_planner.ros import parameters as params
from step_planner.ros.goal_session import EpisodicMemories, GoalRequest, GoalSession, SessionError

DEMO = yaml.safe_load((CONFIG / "demo_tasks.yaml").read_text())[0]["instruction"]


def bag_of_words(texts):
    """A deterministic stand-in embedder: unit vectors of hashed words (similar words, similar vectors)."""
    out = np.zeros((len(texts), 64))
    for i, text in enumerate(texts):
        for word in text.lower().split():
            out[i, hash(word) % 64] += 1.0
    return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


class Released:
    def __init__(self):
        self.calls: list[str] = []


def session(tmp_path, library, world, released: Released, **values):
    settings = {s.name: s.default for s in params.PARAMETERS}
    settings.update({"episodes.folder": str(tmp_path / "episodes"), **values})
    warnings: list[str] = []

    def lease():
        return SymbolicExecutor(library, world), lambda: released.calls.append("executor")

    s = GoalSession(GoalRequest(DEMO if values.get("llm.offline") else DRAWER_TASK, "g1", world=world), settings,
                    library=library, envelope=SafetyEnvelope.load(CONFIG / "safety.yaml"), cancel=threading.Event(),
                    lease=lease, backend="symbolic", memories=EpisodicMemories(lambda: bag_of_words),
                    attachments=[lambda inner: (lambda: released.calls.append(f"detach {type(inner).__name__}"))],
                    info=lambda m: None, warn=warnings.append)
    return s, warnings


def test_offline_serves_the_shipped_answers_and_says_they_are_scripted(tmp_path, library, drawer_world):
    released = Released()
    s, warnings = session(tmp_path, library, drawer_world, released, **{"llm.offline": True, "llm.model": "other",
                                                                        "llm.base_url": "http://127.0.0.1:9/v1"})
    s.open()
    result = None
    try:
        result = s.run()
    finally:
        path = s.close(result)
    assert result.success, result.message
    assert s.llm_calls() > 0 and path is not None and (path / "summary.json").is_file()
    assert any("scripted expert, not an LLM" in w and "SCRIPTED" in w for w in warnings)
    assert any("llm.model 'other' -> 'gpt-4o-mini'" in w for w in warnings), warnings  # pinned to the recording
    assert released.calls == ["detach SymbolicExecutor", "executor"], "released in reverse order of building"


def test_an_unrecorded_instruction_offline_fails_loudly(tmp_path, library, drawer_world):
    s, _ = session(tmp_path, library, drawer_world, Released(), **{"llm.offline": True})
    s.request = GoalRequest("juggle the screwdriver", "g2", world=drawer_world)
    s.open()
    try:
        result = s.run()
    finally:
        s.close(result)
    assert not result.success and result.error is GoalError.LLM_UNAVAILABLE
    assert "no recording" in result.message and "juggle the screwdriver" in result.message
    assert result.executed == []


def test_episodic_memory_is_used_and_grows(tmp_path, library, drawer_world):
    from ros_support import ScriptedPlans

    handler = ScriptedPlans(DRAWER_PLANS)
    store = tmp_path / "episodic.jsonl"
    with LoopbackServer(handler) as server:
        values = {"llm.base_url": server.base_url, "llm.max_retries": 0, "episodic.store": str(store),
                  "planner.features": ["episodic_memory"], "episodes.record": False}
        s, _ = session(tmp_path, library, drawer_world, Released(), **values)
        s.open()
        try:
            result = s.run()
        finally:
            s.close(result)
    assert result.success, result.message
    assert s.episodic is not None and s.episodic.store == store
    assert "put the tape in the drawer" in store.read_text()  # successful subtrees were stored
    assert any("## Examples of similar subgoals solved before" in p for p in handler.prompts)


def test_a_bad_configuration_releases_what_was_built(tmp_path, library, drawer_world):
    released = Released()
    s, _ = session(tmp_path, library, drawer_world, released, **{"planner.features": ["telepathy"]})
    with pytest.raises(SessionError) as info:
        s.open()
    assert info.value.error is GoalError.INVALID_GOAL and "telepathy" in info.value.message
    assert released.calls == []  # failed before the executor was leased


def test_the_session_needs_no_ros():
    import subprocess
    import sys

    code = "import sys, step_planner.ros.goal_session; print(sorted(m for m in sys.modules if m.startswith('rclpy')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
