"""A careless endpoint (valid JSON of the schema, arbitrary content) never makes a goal SUCCEEDED.

The same endpoint makes the previous default (profile step, the model's word accepted) report
success with nothing done — so the endpoint is able to fool a planner, and the check is not vacuous.
The full count (200 CLI goals, 50 through the action server) is ``benchmarks/careless_endpoint.py``.
"""

from __future__ import annotations

import json

import pytest
from conftest import CONFIG, expert_client, shipped_config

from step_planner.bench.careless import STYLES, CarelessModel
from step_planner.bench.goals import satisfied
from step_planner.bench.tasks import load_suite
from step_planner.cli import main
from step_planner.execution.symbolic import SymbolicExecutor
from step_planner.llm.loopback import LoopbackServer
from step_planner.planner.runner import run_goal


@pytest.fixture(scope="module")
def tasks():
    return load_suite("table3")


def test_the_careless_model_answers_in_the_requested_shape():
    from step_planner.llm.schemas import decomposition_schema, strict_json_schema

    schema = decomposition_schema(grounded=True, goal=True, plan_ahead=True, control=False)
    request = {"messages": [{"role": "system", "content": "- pick(object=<object>): grasp"},
                            {"role": "user", "content": "## Current observation\nobject tape [tape]: at table"}],
               "response_format": {"type": "json_schema", "json_schema": {"schema": strict_json_schema(schema)}}}
    for seed in range(20):
        answer = json.loads(CarelessModel(seed)(request))
        schema.model_validate(answer)  # always the schema's shape...
    assert CarelessModel(3)(request) == CarelessModel(3)(request)  # ...and reproducible


@pytest.mark.parametrize("style", STYLES)
def test_no_goal_succeeds_through_the_cli(tmp_path, tasks, style):
    with LoopbackServer(CarelessModel(seed=7, style=style)) as server:
        for task in tasks[::4]:
            out = tmp_path / "r.json"
            code = main(["plan", task.instruction, "--scene", str(CONFIG / "scenes" / task.scene), "--base-url",
                         server.base_url, "--model", "careless", "--no-record", "--json", str(out)])
            result = json.loads(out.read_text())
            assert code == 1 and not result["success"], (task.id, result["message"])
            assert all(e["outcome"]["code"] != "PRECONDITION_FAILED" for e in result["executed"])


def test_the_same_endpoint_fools_a_planner_that_takes_the_models_word(library, tasks):
    fooled = 0
    for task in tasks[:12]:
        executor = SymbolicExecutor(library, task.world)
        for profile, trusting in (("step", True), ("grounded", False)):
            result = run_goal(task.instruction, library=library, executor=executor,
                              llm=expert_client(CarelessModel(seed=1)),
                              config=shipped_config(profile=profile, require_verified_success=not trusting))
            if trusting:
                fooled += result.success and not satisfied(task.goal, executor.world)
            else:
                assert not result.success, (task.id, result.message)
    assert fooled >= 3  # the model's word alone: SUCCEEDED with the task not done
