"""The command line: plan offline with a recorded episode, replay it, replan it."""

from __future__ import annotations

import json

import pytest

from step_planner.cli import main

TASK = "put the tape and the screwdriver in the drawer"


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    for var in ("OPENAI_API_KEY", "STEP_PLANNER_BASE_URL", "STEP_PLANNER_MODEL"):
        monkeypatch.delenv(var, raising=False)


def test_plan_record_replay_replan(tmp_path, capsys):
    episodes = tmp_path / "episodes"
    code = main(["plan", TASK, "--scene", "drawer_desk", "--record", str(episodes), "--json", str(tmp_path / "r.json")])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "scripted expert, not an LLM" in out and "outcome: SUCCESS" in out
    assert "⚙ open_drawer(drawer=drawer): SUCCESS" in out
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["success"] and len(result["executed"]) == 6
    (episode,) = list(episodes.iterdir())
    assert (episode / "summary.json").exists() and list((episode / "bag").glob("*.mcap"))

    assert main(["replay", str(episode), "--backend", "symbolic"]) == 0
    assert "6/6 steps match the recording" in capsys.readouterr().out

    assert main(["replan", str(episode)]) == 0
    assert "reproduced: same" in capsys.readouterr().out


def test_replan_reports_a_prompt_change(tmp_path, capsys):
    from step_planner.resources import config_dir

    episodes = tmp_path / "episodes"
    assert main(["plan", TASK, "--record", str(episodes)]) == 0
    (episode,) = list(episodes.iterdir())
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    for f in (config_dir() / "prompts").iterdir():
        (prompts / f.name).write_text(f.read_text().replace("## Current observation", "## What the robot sees"))
    capsys.readouterr()
    assert main(["replan", str(episode), "--prompts-dir", str(prompts)]) == 1
    out = capsys.readouterr().out
    assert "diverged at LLM exchange 0" in out and "+## What the robot sees" in out


def test_bad_inputs_give_clear_errors(tmp_path, capsys):
    bad_scene = tmp_path / "bad.yaml"
    bad_scene.write_text("places: [{name: Table}]\n")
    assert main(["plan", TASK, "--scene", str(bad_scene), "--no-record"]) == 2
    assert "lowercase identifier" in capsys.readouterr().err
    assert main(["replay", str(tmp_path / "missing")]) == 2
    assert "no episode" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["plan", TASK, "--scene", "no_such_scene", "--no-record"])
    assert main(["plan", TASK, "--features", "telepathy", "--no-record"]) == 2
    assert "unknown feature 'telepathy'" in capsys.readouterr().err


def test_scene_geometry_the_simulator_cannot_build_is_a_clear_error(tmp_path, capsys):
    pytest.importorskip("mujoco")
    scene = tmp_path / "bad_geometry.yaml"
    scene.write_text("places: [{name: table}]\nobjects: [{name: cube, at: table, geometry: {shape: blob}}]\n")
    code = main(["plan", TASK, "--scene", str(scene), "--backend", "sim", "--no-record"])
    err = capsys.readouterr().err
    assert code == 2 and "step-planner:" in err and "Traceback" not in err
