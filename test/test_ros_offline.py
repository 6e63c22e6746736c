"""``llm.offline``: the node serves the shipped answers (a scripted expert, not an LLM) from a loopback
server of its own, so a goal succeeds with no endpoint; an unrecorded instruction fails clearly and the
node serves the next goal. Real rclpy on loopback DDS, the real openai client over HTTP."""

from __future__ import annotations

import pytest
import yaml

pytest.importorskip("step_planner_interfaces", reason="build the interfaces first: make interfaces")

from conftest import CONFIG  # noqa: E402
from ros_support import RosHarness, wait_for  # noqa: E402

from step_planner_interfaces.action import ExecuteTask  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.timeout(120)]
DEMO = yaml.safe_load((CONFIG / "demo_tasks.yaml").read_text())[0]["instruction"]


class MustNotBeAsked:
    """The configured endpoint: an offline node must never call it."""

    def __init__(self):
        self.requests = []

    def __call__(self, request):
        self.requests.append(request)
        return '{"done": true}'


@pytest.fixture
def endpoint():
    return MustNotBeAsked()


@pytest.fixture
def ros(endpoint):
    harness = RosHarness(endpoint, **{"llm.offline": True, "llm.model": "some-real-model"})
    yield harness
    harness.close()


def test_offline_parameter_is_declared_off_by_default(ros):
    descriptor = ros.node.describe_parameter("llm.offline")
    assert ros.node.get_parameter("llm.offline").value is True
    assert "scripted expert" in descriptor.description and "NOT an LLM" in descriptor.description
    from step_planner.ros.parameters import SPECS

    assert SPECS["llm.offline"].default is False


def test_the_demo_goal_succeeds_offline_and_the_endpoint_is_never_asked(ros, endpoint):
    result = wait_for(ros.send(DEMO).get_result_async(), timeout=60).result
    assert result.success, result.error_msg
    assert result.error_code == ExecuteTask.Result.NONE and result.executed_primitives
    assert endpoint.requests == []


def test_an_unrecorded_instruction_fails_clearly_and_the_node_serves_the_next(ros, endpoint):
    missed = wait_for(ros.send("juggle the screwdriver").get_result_async(), timeout=60).result
    assert missed.error_code == ExecuteTask.Result.LLM_UNAVAILABLE
    assert "no recording" in missed.error_msg and missed.executed_primitives == []
    assert f"offline answers cover only the instructions in {CONFIG / 'demo_tasks.yaml'};" in missed.error_msg
    ok = wait_for(ros.send(DEMO).get_result_async(), timeout=60).result
    assert ok.success, ok.error_msg
    assert endpoint.requests == []
