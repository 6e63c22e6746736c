"""Gates in front of the executor: approval (refusal, timeout, cancel while waiting) and a gate that raises.
Plain threading, no ROS: the service side of approval is tested in test_ros_perception_approval.py."""

from __future__ import annotations

import threading
import time

from conftest import DRAWER_GOAL, DRAWER_TASK, GROUNDED_PLANS, ScriptedLLM, grounded_plan, shipped_config

from step_planner.domain.primitives import PrimitiveCall
from step_planner.execution.base import ExecCode
from step_planner.execution.symbolic import SymbolicExecutor
from step_planner.planner.result import GoalError
from step_planner.planner.runner import run_goal
from step_planner.ros.approval import ApprovalGate

PICK = PrimitiveCall.make("pick", {"object": "tape"})


def _answer_when_pending(gate: ApprovalGate, approve: bool, reason: str = "") -> threading.Thread:
    def answer():
        deadline = time.monotonic() + 5
        while gate.pending is None and time.monotonic() < deadline:
            time.sleep(0.005)
        gate.answer(approve, reason)

    thread = threading.Thread(target=answer)
    thread.start()
    return thread


def test_an_approved_step_passes_and_a_refused_one_is_rejected_with_the_reason():
    shown = []
    gate = ApprovalGate(lambda: 5.0, on_pending=shown.append)
    thread = _answer_when_pending(gate, True)
    assert gate.check(PICK, None) is None
    thread.join()
    thread = _answer_when_pending(gate, False, "the tape is taped down")
    refusal = gate.check(PICK, None)
    thread.join()
    assert refusal.code is ExecCode.REJECTED and "the tape is taped down" in refusal.message
    assert shown == ["pick(object=tape)", "", "pick(object=tape)", ""]  # the pending step is shown, then cleared
    assert gate.answer(True, "") == (False, "")  # nothing waits now


def test_no_answer_within_the_timeout_refuses_the_step():
    gate = ApprovalGate(lambda: 0.2)
    t0 = time.monotonic()
    refusal = gate.check(PICK, None)
    assert refusal.code is ExecCode.REJECTED and "no approval within 0.2 s" in refusal.message
    assert 0.15 < time.monotonic() - t0 < 2.0 and gate.pending is None


def test_a_cancel_while_waiting_for_approval_ends_the_wait_canceled():
    gate = ApprovalGate(lambda: 30.0)
    cancel = threading.Event()
    threading.Timer(0.1, cancel.set).start()
    t0 = time.monotonic()
    outcome = gate.check(PICK, cancel)
    assert outcome.code is ExecCode.CANCELED and time.monotonic() - t0 < 2.0


def test_a_goal_canceled_while_its_step_waits_for_approval_runs_nothing(library, drawer_world):
    gate = ApprovalGate(lambda: 30.0)
    cancel = threading.Event()
    executor = SymbolicExecutor(library, drawer_world)
    box = {}
    worker = threading.Thread(target=lambda: box.setdefault("r", run_goal(
        DRAWER_TASK, library=library, executor=executor, llm=ScriptedLLM(grounded_plan(GROUNDED_PLANS, DRAWER_GOAL)),
        config=shipped_config(), cancel=cancel, gate=lambda call: gate.check(call, cancel))))
    worker.start()
    deadline = time.monotonic() + 5
    while gate.pending is None:
        assert time.monotonic() < deadline
        time.sleep(0.005)
    cancel.set()
    worker.join(5)
    result = box["r"]
    assert result.error is GoalError.CANCELED and executor.executed == []


def test_a_gate_that_raises_refuses_the_call_and_the_arm_never_moves(library, drawer_world):
    executor = SymbolicExecutor(library, drawer_world)

    def broken_gate(call):
        raise RuntimeError("workspace map unavailable")

    result = run_goal(DRAWER_TASK, library=library, executor=executor,
                      llm=ScriptedLLM(grounded_plan(GROUNDED_PLANS, DRAWER_GOAL)),
                      config=shipped_config(max_replans_per_node=1), gate=broken_gate)
    assert executor.executed == [] and not result.success
    assert result.error is GoalError.SAFETY_VIOLATION
    refused = [o for _, o in result.executed]
    assert refused and all(o.code is ExecCode.SAFETY_VIOLATION for o in refused)
    assert "the safety gate could not check the call: workspace map unavailable" in refused[0].message
