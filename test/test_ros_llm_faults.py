"""LLM endpoint faults seen through the ROS node: each ends the goal with a clear code and message in
bounded time, and the node serves the next goal normally.

Real rclpy on loopback DDS, the real openai client over HTTP to ``LoopbackServer``. Goals whose
instruction starts with "fault:" get that fault on every request; other goals are planned normally.
Transport faults (timeout, 429, 5xx, refused connection, broken body) end LLM_UNAVAILABLE after the
bounded retries; an enormous answer is a *bad answer*, not an outage: it is rejected unparsed, the
planner re-plans, and the goal ends PLANNING_FAILED.
"""

from __future__ import annotations

import socket
import time

import pytest

pytest.importorskip("step_planner_interfaces", reason="build the interfaces first: make interfaces")

from rclpy.parameter import Parameter  # noqa: E402
from ros_support import PLANS, TASK, RosHarness, ScriptedPlans, section, wait_for, wait_until  # noqa: E402

from step_planner.llm.loopback import Fault  # noqa: E402
from step_planner_interfaces.action import ExecuteTask  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.timeout(60)]
R = ExecuteTask.Result
LLM_TIMEOUT_S = 1.0  # the node's llm.timeout_s (the parameter's lower bound)
BOUND_S = 15.0  # every faulty goal must be answered well within this


class FaultyEndpoint(ScriptedPlans):
    """ScriptedPlans, except that a goal "fault:<kind>" gets ``FAULTS[kind]`` on every request."""

    FAULTS = {
        "timeout": Fault("timeout", delay_s=4 * LLM_TIMEOUT_S),
        "http_429": Fault("http_429", retry_after=0.2),
        "http_500": Fault("http_500"),
        "http_503": Fault("http_503"),
        "disconnect": Fault("disconnect"),
        "truncated": Fault("truncated"),
        "malformed": Fault("malformed"),
        "huge": Fault("huge"),
    }

    def __call__(self, request: dict):
        task = next((section(m["content"], "Task") for m in request["messages"]
                     if m["role"] == "user" and "## Task" in m["content"]), "")
        if task.startswith("fault:"):
            self.prompts.append(task)
            return self.FAULTS[task.split(":", 1)[1]]
        return super().__call__(request)


@pytest.fixture(scope="module")
def handler():
    return FaultyEndpoint(PLANS)


@pytest.fixture(scope="module")
def ros(handler):
    harness = RosHarness(handler, **{"llm.timeout_s": LLM_TIMEOUT_S, "llm.max_retries": 1,
                                     "planner.max_replans_per_node": 1})
    yield harness
    harness.close()


def run(ros, instruction: str) -> tuple[ExecuteTask.Result, float]:
    started = time.monotonic()
    result = wait_for(ros.send(instruction).get_result_async(), timeout=BOUND_S + 5).result
    return result, time.monotonic() - started


def assert_serves_next_goal(ros) -> None:
    ok, _ = run(ros, TASK)
    assert ok.success, f"the node did not recover: {ok.error_msg}"
    assert len(ok.executed_primitives) == 6


TRANSPORT = {  # fault -> what the error message must name
    "timeout": f"timed out after {LLM_TIMEOUT_S:g}s",
    "http_429": "HTTP 429",
    "http_500": "HTTP 500",
    "http_503": "HTTP 503",
    "disconnect": "connection failed",
    "truncated": "invalid response body",
    "malformed": "invalid response body",
}


@pytest.mark.parametrize("kind", sorted(TRANSPORT))
def test_transport_fault_ends_llm_unavailable_then_next_goal_succeeds(ros, handler, kind):
    before = len(handler.prompts)
    result, elapsed = run(ros, f"fault:{kind}")
    assert not result.success and result.error_code == R.LLM_UNAVAILABLE, (kind, result.error_msg)
    assert result.error_msg.startswith("LLM endpoint unavailable"), result.error_msg
    assert TRANSPORT[kind] in result.error_msg and "after 2 attempt(s)" in result.error_msg, result.error_msg
    assert result.executed_primitives == []
    assert len(handler.prompts) - before == 2, "one attempt plus llm.max_retries=1 retry, no more"
    assert elapsed < BOUND_S
    assert_serves_next_goal(ros)


def test_connection_refused_ends_llm_unavailable_then_next_goal_succeeds(ros):
    with socket.socket() as probe:  # a port that was just free: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    good_url = ros.node.get_parameter("llm.base_url").value
    ros.node.set_parameters([Parameter("llm.base_url", value=f"http://127.0.0.1:{port}/v1")])
    try:
        result, elapsed = run(ros, TASK)
    finally:
        ros.node.set_parameters([Parameter("llm.base_url", value=good_url)])
    assert result.error_code == R.LLM_UNAVAILABLE, result.error_msg
    assert f"127.0.0.1:{port}" in result.error_msg and "connection failed" in result.error_msg, result.error_msg
    assert result.executed_primitives == []
    assert elapsed < BOUND_S
    assert_serves_next_goal(ros)


def test_enormous_answer_is_rejected_unparsed_and_ends_planning_failed(ros, handler):
    before = len(handler.prompts)
    result, elapsed = run(ros, "fault:huge")
    assert result.error_code == R.PLANNING_FAILED, result.error_msg
    assert "your answer was invalid" in result.error_msg and "over the limit" in result.error_msg, result.error_msg
    assert "characters long, over the limit of 20000" in result.error_msg, result.error_msg
    assert len(result.error_msg) < 2000, "the megabytes of the answer must not reach the result"
    assert all(len(n.verdict_reason) < 2000 for n in result.final_tree.nodes)
    assert result.executed_primitives == []
    # max_replans_per_node=1: two decompositions, each with its one corrective retry
    assert len(handler.prompts) - before == 4
    assert elapsed < BOUND_S
    assert_serves_next_goal(ros)


def test_cancel_during_an_llm_call_ends_the_goal_without_waiting_for_the_answer(ros, handler):
    handler.hold()  # the endpoint keeps every answer back until released
    try:
        handle = ros.send(TASK)
        wait_until(handler.waiting.is_set)
        cancel = wait_for(handle.cancel_goal_async())
        assert len(cancel.goals_canceling) == 1
        response = wait_for(handle.get_result_async(), timeout=BOUND_S)
        assert handler.waiting.is_set() and not handler._open.is_set(), "the answer was still held back"
    finally:
        handler.release()
        handler.waiting.clear()
    assert response.status == 5  # action_msgs/GoalStatus.STATUS_CANCELED
    assert response.result.error_code == R.CANCELED and response.result.executed_primitives == []
    assert "canceled by the client" in response.result.error_msg
    assert_serves_next_goal(ros)


def test_a_careless_endpoint_never_makes_a_goal_succeed_and_the_node_serves_the_next():
    """Schema-valid answers with arbitrary content, through the action server (the full count of 50 goals
    is benchmarks/careless_endpoint.py): nothing succeeds, nothing invalid runs, every goal is answered."""
    from step_planner.bench.careless import STYLES, CarelessModel

    class Rotating:
        def __init__(self):
            self.model = CarelessModel()

        def __call__(self, request):
            return self.model(request)

    endpoint = Rotating()
    harness = RosHarness(endpoint, **{"llm.max_retries": 0})
    try:
        instructions = [TASK, "put the cup on the tray", "put the red block on the tray", "close the drawer",
                        "put the tape in the drawer", "open the drawer"]
        for i, instruction in enumerate(instructions):
            endpoint.model = CarelessModel(seed=i, style=STYLES[i % 2])
            result = wait_for(harness.send(instruction).get_result_async(), timeout=60).result
            assert not result.success, (instruction, result.error_msg)
            assert not any(p.endswith("PRECONDITION_FAILED") for p in result.executed_primitives)
        endpoint.model = ScriptedPlans(PLANS)  # the same node serves the next goal with sane answers
        assert wait_for(harness.send(TASK).get_result_async()).result.success
    finally:
        harness.close()
