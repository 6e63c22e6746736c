"""Benchmark metrics on a hand-checked example, the runner's judging, and the bench CLI end to end."""

from __future__ import annotations

import json

import pytest
from conftest import bench_config, expert_client

from step_planner.bench.cli import main_bench
from step_planner.bench.expert import ScriptedExpert
from step_planner.bench.goals import milestones_reached, parse_goal
from step_planner.bench.metrics import aggregate, prompt_tokens_by_call, summarize
from step_planner.bench.runner import RunRecord, failure_type, run_one
from step_planner.bench.tasks import load_suite
from step_planner.execution.symbolic import SymbolicExecutor


def _rec(**kw) -> RunRecord:
    base = dict(task_id="t", category="short_simple", planner="step", noise=0.0, seed=0, success=True,
                claimed_success=True, verified=True, error="NONE", message="", subgoals_reached=2, subgoals_total=2,
                primitives=2, primitives_ok=2, optimal=2, llm_calls=4, prompt_tokens=400, completion_tokens=40,
                max_prompt_tokens=120, prompt_tokens_per_call=[100, 100, 80, 120], planner_time_s=0.01)
    base.update(kw)
    return RunRecord(**base)


def test_summary_of_a_hand_checked_example():
    runs = [
        _rec(),
        _rec(task_id="u", success=False, claimed_success=True, subgoals_reached=1, subgoals_total=4, primitives=5,
             optimal=3, llm_calls=6, prompt_tokens=900, max_prompt_tokens=200, planner_time_s=0.03,
             failure_type="false_done", injections=["missing_step", "empty_answer"],
             prompt_tokens_per_call=[100, 200, 150, 150, 150, 150]),
        _rec(task_id="v", success=False, claimed_success=False, error="PLANNING_FAILED", subgoals_reached=0,
             subgoals_total=1, primitives=0, optimal=1, llm_calls=2, prompt_tokens=200, max_prompt_tokens=110,
             planner_time_s=0.02, failure_type="planning_failed", injections=["malformed_json"],
             prompt_tokens_per_call=[90, 110]),
    ]
    s = summarize(runs)
    assert s["runs"] == 3
    assert s["success_rate"] == pytest.approx(1 / 3)
    assert s["subgoal_success_rate"] == pytest.approx((1 + 0.25 + 0) / 3)
    assert s["claimed_success_rate"] == pytest.approx(2 / 3)
    assert s["primitives_mean"] == pytest.approx(7 / 3)
    assert s["excess_primitives_mean"] == pytest.approx((0 + 2 - 1) / 3)
    assert s["excess_primitives_successful"] == 0
    assert s["llm_calls_mean"] == 4
    assert s["prompt_tokens_mean"] == 500
    assert s["max_prompt_tokens_max"] == 200
    assert s["max_prompt_tokens_mean"] == pytest.approx(430 / 3)
    assert s["planner_time_ms_mean"] == pytest.approx(20.0)
    assert s["failure_types"] == {"false_done": 1, "planning_failed": 1}
    assert s["mistakes_in_failed_runs"] == {"missing_step": 1, "empty_answer": 1, "malformed_json": 1}
    assert s["llm_calls_per_primitive"] == pytest.approx(12 / 7)
    assert s["prompt_tokens_per_primitive"] == pytest.approx(1500 / 7)
    assert s["false_done_rate"] == pytest.approx(1 / 3) and s["verified_rate"] == 1.0
    # growth: run 1 120/100 (4 calls, quarters of 1), run 2 150/100 (6 calls), run 3 too short
    assert s["prompt_growth"] == pytest.approx((1.2 + 1.5) / 2)
    assert prompt_tokens_by_call(runs)["step"][:3] == [pytest.approx(290 / 3), pytest.approx(410 / 3), 115]
    assert prompt_tokens_by_call(runs)["step"][5] == 150
    rows = aggregate(runs + [_rec(planner="react", category="long_simple")])
    keys = {(r["planner"], r["category"]) for r in rows}
    assert keys == {("step", "short_simple"), ("step", "all"), ("react", "long_simple"), ("react", "all")}


def test_failure_types():
    assert failure_type(True, True, "NONE") == "none"
    assert failure_type(False, True, "NONE") == "false_done"
    assert failure_type(False, False, "BUDGET_EXCEEDED") == "budget_exceeded"


def test_ordered_milestones(drawer_world):
    a, b = drawer_world.copy(), drawer_world.copy()
    b.places["drawer"].is_open = True
    c = b.copy()
    c.objects["tape"].location = "drawer"
    ms = [parse_goal(["open(drawer)"]), parse_goal(["in(tape, drawer)"]), parse_goal(["closed(drawer)"])]
    assert milestones_reached(ms, [a, b, c]) == 2
    d = a.copy()
    d.objects["tape"].location = "drawer"  # in the closed drawer from the start
    assert milestones_reached(ms, [d, b]) == 1  # the tape is in the drawer only BEFORE it was opened
    assert milestones_reached(ms[1:], [d, b]) == 2
    assert milestones_reached(ms, [a]) == 0


def test_runner_judges_by_goal_atoms_not_by_the_planner_claim(library):
    task = next(t for t in load_suite("table3") if t.id == "ss02_open_drawer")

    def liar(task_, noise, seed):  # one step left ("open the drawer"): a missing step claims done
        expert = ScriptedExpert(library, seed=seed, mistake_rate=1.0, mistakes=("missing_step",))
        expert.register(task_.instruction, task_.goal)
        return expert_client(expert), expert

    record = run_one(task, "paper", 0.5, 0, library=library, config=bench_config(), make_llm=liar,
                     make_executor=lambda lib, w: SymbolicExecutor(lib, w))
    assert record.claimed_success and not record.success
    assert record.failure_type == "false_done"
    assert "missing_step" in record.injections
    assert record.subgoals_reached < record.subgoals_total
    assert record.llm_calls == len(record.prompt_tokens_per_call) > 0
    grounded = run_one(task, "grounded", 0.5, 0, library=library, config=bench_config(), make_llm=liar,
                       make_executor=lambda lib, w: SymbolicExecutor(lib, w))
    assert not grounded.claimed_success and grounded.failure_type != "false_done"  # done is checked, not asked


def test_bench_cli_writes_report(tmp_path):
    out = tmp_path / "res"
    rc = main_bench(["--suite", "table3", "--tasks", "ss03_tape_in_drawer,lc05_tape_right_to_left",
                     "--planners", "grounded,react,oneshot", "--noise", "0,0.5", "--seeds", "2", "--out", str(out),
                     "--record", str(tmp_path / "rec"), "--quiet"])
    assert rc == 0
    data = json.loads((out / "results.json").read_text())
    assert len(data["runs"]) == 2 * 3 * 2 * 2
    assert "NOT an LLM" in data["meta"]["answer_source"]
    zero = [r for r in data["runs"] if r["noise"] == 0]
    assert all(r["success"] and r["primitives"] == r["optimal"] for r in zero)
    assert any(r["injections"] for r in data["runs"] if r["noise"] == 0.5)
    assert "NOT an LLM" in (out / "summary.md").read_text()
    assert (out / "success_vs_noise.png").stat().st_size > 1000
    assert (out / "prompt_tokens_vs_step.png").stat().st_size > 1000
    recorded = list((tmp_path / "rec" / "grounded").glob("*.jsonl"))
    assert len(recorded) == 2 * 2 * 2 and recorded[0].read_text().strip()


def test_bench_cli_rejects_bad_arguments(capsys):
    with pytest.raises(SystemExit):
        main_bench(["--planners", "grounded,magic"])
    assert main_bench(["--base-url", "http://127.0.0.1:9/v1", "--noise", "0.1", "--quiet"]) == 2
    assert main_bench(["--check", "--tasks", "short_simple"]) == 0
    assert "tasks valid" in capsys.readouterr().out
    assert main_bench(["--backend", "moveit", "--tasks", "ss01_red_block_tray", "--quiet"]) == 2  # no MoveIt here
    assert "backend 'moveit' unavailable" in capsys.readouterr().err


def test_bench_cli_against_an_endpoint(tmp_path, library):
    """--base-url path: the real client against an OpenAI-compatible server (here the expert, hosted)."""
    from step_planner.llm.loopback import LoopbackServer

    tasks = [t for t in load_suite("table3") if t.id in ("ss01_red_block_tray", "sc06_tape_table")]
    hosted = ScriptedExpert(library, seed=0)
    for task in tasks:
        hosted.register(task.instruction, task.goal, task.stated_goal)
    out = tmp_path / "endpoint"
    with LoopbackServer(hosted) as server:
        rc = main_bench(["--tasks", ",".join(t.id for t in tasks), "--planners", "grounded,oneshot",
                         "--base-url", server.base_url, "--model", "hosted-expert", "--out", str(out), "--quiet"])
    assert rc == 0
    data = json.loads((out / "results.json").read_text())
    assert data["meta"]["answer_source"] == f"the model 'hosted-expert' at {server.base_url}"
    assert len(data["runs"]) == 4 and all(r["success"] and not r["injections"] for r in data["runs"])
    assert all(r["prompt_tokens"] > 0 for r in data["runs"])


def test_a_crashing_answer_source_is_recorded_not_fatal(library):
    task = next(t for t in load_suite("table3") if t.id == "ss01_red_block_tray")

    def broken(task_, noise, seed):
        def handler(request):
            raise RuntimeError("boom")
        return expert_client(handler), None

    record = run_one(task, "react", 0.0, 0, library=library, config=bench_config(), make_llm=broken,
                     make_executor=lambda lib, w: SymbolicExecutor(lib, w))
    assert not record.success and record.error == "LLM_UNAVAILABLE" and "boom" in record.message


def test_recorded_http_run_replays_identically(tmp_path):
    """--via-http --record writes replay files; a replay server answers the same run at --base-url."""
    from step_planner.llm.loopback import LoopbackServer
    from step_planner.llm.replay import ReplayHandler

    common = ["--tasks", "sc01_tape_to_tray,ls11_store_and_close", "--planners", "grounded,react", "--quiet"]
    rec = tmp_path / "answers"
    assert main_bench([*common, "--via-http", "--record", str(rec), "--out", str(tmp_path / "a")]) == 0
    assert len(list(rec.glob("*.json"))) > 6
    with LoopbackServer(ReplayHandler(rec)) as server:
        assert main_bench([*common, "--base-url", server.base_url, "--model", "scripted-expert",
                           "--out", str(tmp_path / "b")]) == 0
    first, again = (json.loads((tmp_path / d / "results.json").read_text())["runs"] for d in ("a", "b"))
    assert [r["executed"] for r in first] == [r["executed"] for r in again]
    assert all(r["success"] for r in again)
