"""A short soak of the action server: 30 consecutive goals (the Table III tasks, scripted expert behind a
loopback OpenAI server, symbolic backend, episode recording on): every goal gets a result and the thread
count does not grow. The 200-goal version with memory figures is ``benchmarks/soak_action_server.py``.

Thread bound: after two warm-up goals the MultiThreadedExecutor's pool (4 threads) exists; 30 more goals
may leave at most ``SLACK`` more threads alive (an HTTP request thread still finishing), never one per goal.
"""

from __future__ import annotations

import threading
import time

import pytest

pytest.importorskip("step_planner_interfaces", reason="build the interfaces first: make interfaces")

from ros_support import RosHarness, wait_for  # noqa: E402

from step_planner.bench.expert import ScriptedExpert  # noqa: E402
from step_planner.bench.tasks import load_suite  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.timeout(240)]
GOALS = 30
SLACK = 2


def test_thirty_goals_all_answered_and_threads_do_not_grow(library):
    tasks = load_suite("table3")
    expert = ScriptedExpert(library, seed=0, mistake_rate=0.0)
    for task in tasks:
        expert.register(task.instruction, task.goal, task.stated_goal)
    ros = RosHarness(expert)
    try:
        for task in tasks[:2]:  # warm-up: the executor's thread pool fills up
            assert wait_for(ros.send(task.instruction, scene=task.scene).get_result_async()).result.success
        time.sleep(0.2)
        warm = threading.active_count()
        answered, succeeded = 0, 0
        for i in range(GOALS):
            task = tasks[i % len(tasks)]
            result = wait_for(ros.send(task.instruction, scene=task.scene).get_result_async(), timeout=60).result
            answered += 1
            succeeded += result.success
        time.sleep(0.2)
        after = threading.active_count()
    finally:
        ros.close()
    assert answered == GOALS
    assert succeeded == GOALS, "the scripted expert makes no mistakes: every goal should succeed"
    assert after <= warm + SLACK, f"threads grew from {warm} to {after} over {GOALS} goals"
