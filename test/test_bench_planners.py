"""The benchmark's planners are profiles on run_goal: same client and executor; each behaves as its design says."""

from __future__ import annotations

import pytest
from conftest import bench_config, expert_client

from step_planner.bench.expert import ScriptedExpert
from step_planner.bench.goals import satisfied
from step_planner.bench.planners import is_known, planner_names, run_planner
from step_planner.bench.tasks import load_suite
from step_planner.execution.base import ExecCode
from step_planner.execution.symbolic import SymbolicExecutor
from step_planner.planner.profiles import ProfileError


@pytest.fixture(scope="module")
def suite():
    return {t.id: t for t in load_suite("table3")}


def _run(name, task, library, noise=0.0, seed=0, config=None, handler=None):
    expert = ScriptedExpert(library, seed=seed, mistake_rate=noise)
    expert.register(task.instruction, task.goal, task.stated_goal)
    llm = expert_client(handler or expert)
    executor = SymbolicExecutor(library, task.world)
    result = run_planner(name, task.instruction, library=library, executor=executor, llm=llm,
                         config=config or bench_config())
    return result, executor, llm


def test_the_planners_are_the_shipped_profiles():
    assert {"grounded", "step", "paper", "step_no_tree", "step_no_subgoal", "react", "oneshot"} <= set(planner_names())


@pytest.mark.parametrize("name", ["grounded", "step", "paper", "step_no_tree", "step_no_subgoal", "react", "oneshot"])
def test_every_planner_solves_a_visible_long_task_optimally(suite, library, name):
    task = suite["ls06_office_tidy"]
    result, executor, _ = _run(name, task, library)
    assert result.success and satisfied(task.goal, executor.world)
    assert len(result.executed) == task.optimal
    assert result.verified == (name == "grounded")  # only the grounded profile checks the world


def test_oneshot_cannot_recover_from_a_wrong_guess_about_a_hidden_object(suite, library):
    task = suite["sc02_find_screwdriver"]  # guessed in the top drawer; it is in the bottom one
    result, executor, llm = _run("oneshot", task, library)
    assert not result.success and not satisfied(task.goal, executor.world)
    assert len(llm.usage.records) == 1
    closed_loop, executor2, _ = _run("react", task, library)
    assert closed_loop.success and satisfied(task.goal, executor2.world)


def test_react_prompt_grows_with_history_and_the_tree_prompt_does_not(suite, library):
    task = suite["lc09_empty_and_refill"]
    _, _, react = _run("react", task, library)
    sizes = [r.prompt_tokens for r in react.usage.records]
    assert sizes == sorted(sizes) and sizes[-1] > sizes[0] + 50
    _, _, step = _run("step", task, library)
    assert max(r.prompt_tokens for r in step.usage.records) < sizes[-1]


def test_no_tree_ablation_shows_all_executed_leaves(suite, library):
    task = suite["ls01_put_tools_away"]
    seen = []
    expert = ScriptedExpert(library)
    expert.register(task.instruction, task.goal, task.stated_goal)

    def handler(request):
        if "decomposition model" in request["messages"][0]["content"]:
            seen.append(request["messages"][-1]["content"])
        return expert.handle(request)

    result, _, _ = _run("step_no_tree", task, library, handler=handler)
    assert result.success
    last = seen[-1]
    assert "Actions executed so far (whole task):" in last
    assert "open_drawer(drawer=drawer) -> succeeded" in last and "place(object=screwdriver" in last


def test_no_subgoal_ablation_is_one_level(suite, library):
    task = suite["ls01_put_tools_away"]
    result, _, _ = _run("step_no_subgoal", task, library)
    assert result.success
    assert max(n["depth"] for n in result.tree["nodes"]) == 1


@pytest.mark.parametrize("name", ["grounded", "step", "paper", "react", "oneshot"])
def test_noisy_answers_never_reach_the_executor_unchecked(suite, library, name):
    for task_id in ("lc04_swap_pen_tape", "ss08_pen_left_drawer", "sc10_pen_tray_search"):
        for seed in range(3):
            result, executor, _ = _run(name, suite[task_id], library, noise=0.4, seed=seed)
            assert all(o.code is not ExecCode.PRECONDITION_FAILED for _, o in result.executed), (name, task_id)
            if name == "grounded" and result.success:  # a grounded success is a true success
                assert satisfied(suite[task_id].goal, executor.world), (task_id, seed)


def test_budgets_bind_every_planner(suite, library):
    task = suite["lc09_empty_and_refill"]
    tight = bench_config(max_llm_calls=3, llm_calls_per_condition=0)
    for name in ("react", "step", "step_no_tree", "grounded-plan_ahead"):
        result, _, llm = _run(name, task, library, config=tight)
        assert result.error.value == "BUDGET_EXCEEDED", (name, result.message)
        assert len(llm.usage.records) <= 3
    with pytest.raises(ProfileError, match="unknown planner profile"):
        run_planner("magic", "x", library=library, executor=None, llm=None, config=tight)


def test_feature_variants(suite, library):
    task = suite["lc09_empty_and_refill"]
    plain, _, plain_llm = _run("step", task, library)
    ahead, executor, ahead_llm = _run("step+plan_ahead", task, library)
    assert ahead.success and satisfied(task.goal, executor.world) and len(ahead.executed) == task.optimal
    assert len(ahead_llm.usage.records) < len(plain_llm.usage.records)  # planned calls skip the LLM
    assert is_known("step+plan_ahead+summaries") and is_known("grounded-plan_ahead")
    assert not is_known("step+telepathy") and not is_known("magic")
