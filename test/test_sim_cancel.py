"""A cancel in the middle of a MuJoCo trajectory, through ``run_goal``: the goal ends CANCELED, the moving
primitive reports CANCELED, and no further primitive is sent to the executor.

Real MuJoCo physics; the LLM is the scripted expert in-process. The cancel is set from the physics loop
during the second primitive's motion so it lands mid-trajectory on every machine. (Time-to-stop is
measured, not asserted: ``benchmarks/cancel_latency.py``.)
"""

from __future__ import annotations

import threading

import pytest
from conftest import expert_client, shipped_config

from step_planner.bench.expert import ScriptedExpert
from step_planner.bench.tasks import load_suite
from step_planner.execution.base import ExecCode
from step_planner.planner.result import GoalError
from step_planner.planner.runner import run_goal

pytestmark = [pytest.mark.timeout(120)]
mujoco = pytest.importorskip("mujoco")


class CountingExecutor:
    """Passes calls to the simulator and remembers every call it was asked to run."""

    def __init__(self, inner) -> None:
        self.inner, self.calls = inner, []

    def execute(self, call, cancel=None):
        self.calls.append(str(call))
        return self.inner.execute(call, cancel)

    def observe(self):
        return self.inner.observe()

    def reset(self, world):
        self.inner.reset(world)


def test_cancel_mid_trajectory_ends_the_goal_and_runs_no_further_primitive(library):
    from step_planner.execution.sim.executor import SimExecutor

    task = next(t for t in load_suite("table3") if t.id == "ss03_tape_in_drawer")
    expert = ScriptedExpert(library, seed=0)
    expert.register(task.instruction, task.goal, task.stated_goal)
    sim = SimExecutor(library, task.fresh_world(), seed=1)
    executor = CountingExecutor(sim)
    cancel = threading.Event()
    moving_at_cancel: list[float] = []

    def press_during_second_primitive(data) -> None:
        arm_speed = float(abs(data.qvel[sim.index.arm_dof]).max())
        if len(executor.calls) == 2 and arm_speed > 0.05 and not cancel.is_set():
            moving_at_cancel.append(arm_speed)
            cancel.set()

    sim.step_hooks.append(press_during_second_primitive)
    try:
        result = run_goal(task.instruction, library=library, executor=executor, llm=expert_client(expert),
                          config=shipped_config(), cancel=cancel)
    finally:
        sim.close()
    assert moving_at_cancel, "the cancel was never pressed during motion"
    assert result.error is GoalError.CANCELED, result.message
    assert len(executor.calls) == 2, f"a primitive ran after the cancel: {executor.calls}"
    (_, first), (second_call, second) = result.executed
    assert first.code is ExecCode.SUCCESS and second_call.name == "pick"
    assert second.code is ExecCode.CANCELED and "canceled during motion" in second.message
    assert second.details["stop_sim_s"] <= 1.0
    world = sim.observe()
    assert world.objects["tape"].location != "drawer"
