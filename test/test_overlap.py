"""The overlap feature: the next request is prepared while the arm moves, byte-identical to the serial one.

Identical trees, calls and outcomes with overlap on and off; a prediction that does not come true is
discarded unseen (no node, no exchange); a cancel during a speculative request or during motion ends
CANCELED with no further primitive. The timing benefit is measured by benchmarks/overlap_latency.py.
"""

from __future__ import annotations

import json
import threading
import time

import pytest
from conftest import DRAWER_GOAL, DRAWER_TASK, bench_config, expert_client, shipped_config

from step_planner.bench.expert import ScriptedExpert
from step_planner.bench.goals import parse_goal
from step_planner.bench.tasks import load_suite
from step_planner.execution.base import ExecCode, Outcome
from step_planner.execution.symbolic import SymbolicExecutor
from step_planner.llm.client import LLMClient
from step_planner.llm.config import LLMConfig
from step_planner.llm.loopback import LoopbackServer
from step_planner.planner.result import GoalError
from step_planner.planner.runner import run_goal


def _same(tree):
    """A tree without what may differ between two equal runs (durations, the prepared marks)."""
    return [{k: ({**v, "duration_s": 0} if k == "outcome" and v else v) for k, v in n.items() if k != "prepared"}
            for n in tree["nodes"]]


class _Moving(SymbolicExecutor):
    """Symbolic effects after ``seconds`` of 'motion': time for a prediction to be prepared."""

    def __init__(self, *a, seconds=0.03, **kw):
        super().__init__(*a, **kw)
        self.seconds = seconds

    def execute(self, call, cancel=None):
        time.sleep(self.seconds)
        return super().execute(call, cancel)


def _run(task, library, profile, noise=0.0):
    expert = ScriptedExpert(library, seed=2, mistake_rate=noise)
    expert.register(task.instruction, task.goal, task.stated_goal)
    llm = expert_client(expert)
    exchanges = []
    llm.add_listener(exchanges.append)
    result = run_goal(task.instruction, library=library, executor=_Moving(library, task.world), llm=llm,
                      config=bench_config(profile=profile, overlap_min_motion_s=0.0))
    return result, exchanges


@pytest.mark.parametrize("profile", ["grounded", "grounded-plan_ahead", "paper"])
@pytest.mark.parametrize("noise", [0.0, 0.3])
def test_overlap_on_and_off_give_identical_runs(library, profile, noise):
    used = 0
    for task in load_suite("table3")[::5]:
        serial, serial_exchanges = _run(task, library, profile + "-overlap", noise)
        overlapped, exchanges = _run(task, library, profile + "+overlap", noise)
        assert [str(c) for c, _ in overlapped.executed] == [str(c) for c, _ in serial.executed], task.id
        assert _same(overlapped.tree) == _same(serial.tree), task.id
        assert (overlapped.error, overlapped.message) == (serial.error, serial.message)
        # the requests the planner used are the serial ones, in order: recordings cannot tell the difference
        assert [e["request"]["messages"] for e in exchanges] == [e["request"]["messages"] for e in serial_exchanges]
        usage = overlapped.usage
        assert usage["speculative_used"] + usage["speculative_wasted"] == usage["speculative_made"]
        assert usage["speculative_wasted"] == 0  # symbolic: every prediction comes true
        used += usage["speculative_used"]
    assert used > 0  # answers were prepared during the motions, and the runs are the same anyway


def test_prepared_steps_are_marked_in_the_tree(library):
    task = next(t for t in load_suite("table3") if t.id == "ls01_put_tools_away")
    result, _ = _run(task, library, "grounded-plan_ahead+overlap")
    assert result.usage["speculative_used"] > 0
    assert any(n["prepared"] for n in result.tree["nodes"])


class _Slipping(_Moving):
    """The first pick of the tape fails: the world after it is not the predicted one."""

    def execute(self, call, cancel=None):
        time.sleep(self.seconds)
        if str(call) == "pick(object=tape)" and not getattr(self, "slipped", False):
            self.slipped = True
            return Outcome(ExecCode.GRASP_FAILED, "it slipped")
        return super().execute(call, cancel)


def test_a_prediction_that_does_not_come_true_is_discarded_unseen(library, drawer_world):
    expert = ScriptedExpert(library, seed=0)
    expert.register(DRAWER_TASK, parse_goal(DRAWER_GOAL))
    runs = {}
    for profile in ("grounded-plan_ahead-overlap", "grounded-plan_ahead+overlap"):
        llm = expert_client(expert)
        exchanges = []
        llm.add_listener(exchanges.append)
        runs[profile] = run_goal(DRAWER_TASK, library=library, executor=_Slipping(library, drawer_world), llm=llm,
                                 config=shipped_config(profile=profile, overlap_min_motion_s=0.0)), exchanges
    (serial, serial_ex), (overlapped, ex) = runs.values()
    assert overlapped.usage["speculative_wasted"] >= 1  # prepared for a successful pick, which failed
    assert _same(overlapped.tree) == _same(serial.tree)  # the wasted answer reached no node...
    assert [e["request"]["messages"] for e in ex] == [e["request"]["messages"] for e in serial_ex]  # ...no recorder
    assert overlapped.usage["llm_calls"] == serial.usage["llm_calls"] + overlapped.usage["speculative_wasted"]
    assert overlapped.success and serial.success


class _HeldExpert:
    """The scripted expert behind a loopback server; requests after the first ``free`` wait for release."""

    def __init__(self, expert, free: int) -> None:
        self.expert, self.free = expert, free
        self.count = 0
        self.arrived, self.released, self.answered = threading.Event(), threading.Event(), threading.Event()

    def __call__(self, request):
        self.count += 1
        if self.count > self.free:
            self.arrived.set()
            self.released.wait(10.0)
            self.answered.set()
        return self.expert(request)


class _SlowExecutor(SymbolicExecutor):
    """Each primitive takes ``seconds`` of 'motion' and stops at a cancel."""

    def __init__(self, *a, seconds=0.3, **kw):
        super().__init__(*a, **kw)
        self.seconds = seconds
        self.started: list[str] = []

    def execute(self, call, cancel=None):
        self.started.append(str(call))
        if cancel is not None and cancel.wait(self.seconds):
            return Outcome(ExecCode.CANCELED, "canceled during motion")
        return super().execute(call, cancel)


@pytest.mark.parametrize("when", ["speculative_request", "motion"])
def test_cancel_during_a_speculative_request_or_during_motion(library, drawer_world, when):
    expert = ScriptedExpert(library, seed=0)
    expert.register(DRAWER_TASK, parse_goal(DRAWER_GOAL))
    handler = _HeldExpert(expert, free=1)  # the root's first answer, then every request is held
    cancel = threading.Event()
    executor = _SlowExecutor(library, drawer_world, seconds=5.0 if when == "motion" else 0.05)
    with LoopbackServer(handler) as server:
        llm = LLMClient(LLMConfig(model="gpt-4o-mini", base_url=server.base_url, timeout_s=10.0), cancel=cancel)
        box = {}
        worker = threading.Thread(target=lambda: box.setdefault("r", run_goal(
            DRAWER_TASK, library=library, executor=executor, llm=llm, cancel=cancel,
            config=shipped_config(profile="grounded-plan_ahead+overlap", overlap_min_motion_s=0.0))))
        worker.start()
        assert handler.arrived.wait(10.0), "the speculative request was never sent"
        if when == "motion":
            assert executor.started  # the arm is moving while the request waits
        else:  # the motion is over and the planner waits for the prepared answer
            deadline = time.monotonic() + 5.0
            while "open_drawer(drawer=drawer)" not in [str(c) for c in executor.executed]:
                assert time.monotonic() < deadline
                time.sleep(0.01)
            time.sleep(0.3)
        t0 = time.monotonic()
        cancel.set()
        worker.join(10.0)
        handler.released.set()
        llm.close()
    result = box["r"]
    assert result.error is GoalError.CANCELED, result.message
    assert time.monotonic() - t0 < 2.0 and not worker.is_alive()
    assert len(executor.started) == 1  # no primitive after the cancel
    assert result.usage["speculative_made"] == 1 and result.usage["speculative_used"] == 0
    assert result.usage["speculative_wasted"] == 1
    texts = json.dumps(result.tree)
    assert "pick up the tape" not in texts and "pick(object=tape)" not in texts  # no stray answer in the tree
