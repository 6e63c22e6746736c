"""Executor faults become outcomes the planner re-plans from, or a clean end — never a crash."""

from __future__ import annotations

import pytest
from conftest import ScriptedLLM, children_so_far, shipped_config

from step_planner.execution.base import ExecCode, Outcome
from step_planner.execution.reflex import RobotStopped
from step_planner.execution.symbolic import SymbolicExecutor
from step_planner.planner.result import GoalError
from step_planner.planner.runner import run_goal


class FaultyExecutor(SymbolicExecutor):
    def __init__(self, *a, raise_on=(), observe_fails_after=None, **kw):
        super().__init__(*a, **kw)
        self.raise_on = set(raise_on)
        self.observe_fails_after = observe_fails_after
        self.observations = 0

    def execute(self, call, cancel=None):
        if str(call) in self.raise_on:
            self.raise_on.discard(str(call))
            raise RuntimeError("controller crashed: joint 4 communication constraints violated")
        return super().execute(call, cancel)

    def observe(self):
        self.observations += 1
        if self.observe_fails_after is not None and self.observations > self.observe_fails_after:
            raise ConnectionError("perception is down")
        return super().observe()


TASK, GOAL = "put the tape in the tray", ["in(tape, tray)"]


def retrying(steps):
    """Propose the next step that has not succeeded yet (so a failed step is proposed again)."""

    def answer(purpose, user):
        done = [c for c in children_so_far(user) if c.endswith("succeeded")]
        if len(done) >= len(steps):
            return {"goal": GOAL, "done": True}
        step = steps[len(done)]
        return {"goal": GOAL, "done": False, "next": {"subgoal": step, "call": step, "success_when": []}}

    return answer


def test_backend_exception_is_an_outcome_and_the_planner_recovers(library, drawer_world):
    ex = FaultyExecutor(library, drawer_world, raise_on={"pick(object=tape)"})
    result = run_goal(TASK, library=library, executor=ex, llm=ScriptedLLM(retrying(
        ["pick(tape)", "place(tape, tray)"])), config=shipped_config())
    assert result.success, result.message
    codes = [o.code for _, o in result.executed]
    assert codes == [ExecCode.BACKEND_ERROR, ExecCode.SUCCESS, ExecCode.SUCCESS]
    assert "controller crashed" in result.executed[0][1].message
    failed = [n for n in result.tree["nodes"] if n["status"] == "failed"]
    assert failed and failed[0]["outcome"]["code"] == "BACKEND_ERROR"


def test_repeated_execution_failures_end_the_goal_with_execution_failed(library, drawer_world):
    failures = {"pick(object=tape)": ExecCode.GRASP_FAILED}

    class AlwaysSlips(SymbolicExecutor):
        def execute(self, call, cancel=None):
            if str(call) in failures:
                return Outcome(ExecCode.GRASP_FAILED, "fingers closed on nothing")
            return super().execute(call, cancel)

    result = run_goal(TASK, library=library, executor=AlwaysSlips(library, drawer_world),
                      llm=ScriptedLLM(retrying(["pick(tape)"])), config=shipped_config(max_replans_per_node=2))
    assert result.error is GoalError.EXECUTION_FAILED and "GRASP_FAILED" in result.message
    assert len(result.executed) == 3


def test_observation_failure_ends_cleanly(library, drawer_world):
    ex = FaultyExecutor(library, drawer_world, observe_fails_after=1)
    result = run_goal(TASK, library=library, executor=ex, llm=ScriptedLLM(retrying(
        ["pick(tape)", "place(tape, tray)"])), config=shipped_config())
    assert result.error is GoalError.EXECUTION_FAILED and "perception is down" in result.message
    assert {n["status"] for n in result.tree["nodes"]} <= {"succeeded", "failed", "abandoned"}
    assert result.message.startswith("the executor could not observe the world: perception is down")


@pytest.mark.parametrize("after", [0, 1])
def test_a_robot_stopped_by_a_reflex_ends_the_goal_in_its_own_words(library, drawer_world, after):
    """A reflex is not the executor failing to observe: the goal's message is the stop's own, as the README shows."""
    stop = "the FR3 stopped: cartesian_reflex (reflex); the controllers are inactive (fr3_arm_controller)"

    class Stopped(FaultyExecutor):
        def observe(self):
            self.observations += 1
            if self.observations > after:
                raise RobotStopped(f"{stop}; recover with `step-planner recover`")
            return SymbolicExecutor.observe(self)

    result = run_goal(TASK, library=library, executor=Stopped(library, drawer_world), llm=ScriptedLLM(retrying(
        ["pick(tape)", "place(tape, tray)"])), config=shipped_config())
    assert result.error is GoalError.EXECUTION_FAILED and result.message.startswith(stop), result.message


def test_a_failing_observer_does_not_stop_the_goal(library, drawer_world, caplog):
    class Broken:
        def on_tree_event(self, event, tree):
            raise ValueError("viewer bug")

    def bad_step(call, outcome, world):
        raise KeyError("recorder bug")

    result = run_goal(TASK, library=library, executor=SymbolicExecutor(library, drawer_world),
                      llm=ScriptedLLM(retrying(["pick(tape)", "place(tape, tray)"])), config=shipped_config(),
                      listeners=[Broken()], on_step=bad_step)
    assert result.success
    assert "viewer bug" in caplog.text and "recorder bug" in caplog.text
