"""End to end through the real ``openai`` client over HTTP: shipped answers and bad answers.

The answers come from a loopback OpenAI-compatible server: recorded answers of the scripted
expert (config/replay) or the expert live with chosen mistakes. No client object is patched.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import CONFIG

from step_planner.bench.expert import ScriptedExpert
from step_planner.bench.goals import parse_goal
from step_planner.domain.validation import check_call
from step_planner.execution.symbolic import SymbolicExecutor
from step_planner.llm.client import LLMClient
from step_planner.llm.config import LLMConfig
from step_planner.llm.loopback import LoopbackServer
from step_planner.llm.replay import ReplayHandler
from step_planner.planner.config import PlannerConfig
from step_planner.planner.result import GoalError
from step_planner.planner.runner import run_goal

DRAWER_TASK = "put the tape and the screwdriver in the drawer"


class CheckingExecutor(SymbolicExecutor):
    invalid: list = []

    def execute(self, call, cancel=None):
        if check_call(call, self.library, self.world.observed()):
            self.invalid = [*self.invalid, call]
        return super().execute(call, cancel)


def plan(library, world, handler, instruction=DRAWER_TASK, **config):
    executor = CheckingExecutor(library, world)
    with LoopbackServer(handler) as server:
        llm = LLMClient(LLMConfig(model="gpt-4o-mini", base_url=server.base_url, max_retries=1, backoff_s=0.01))
        result = run_goal(instruction, library=library, executor=executor, llm=llm,
                          config=PlannerConfig.from_dict(config))
    assert executor.invalid == [], "an invalid call reached the executor"
    return result, executor


def test_drawer_task_from_shipped_answers(library, drawer_world):
    result, executor = plan(library, drawer_world, ReplayHandler(CONFIG / "replay"))
    assert result.success, result.message
    calls = [c.name for c, _ in result.executed]
    assert len(calls) >= 6 and calls[0] == "open_drawer" and calls[-1] == "close_drawer"
    assert calls.count("pick") == 2 and calls.count("place") == 2
    assert max(n["depth"] for n in result.tree["nodes"]) >= 2
    world = executor.observe()
    assert {world.objects["tape"].location, world.objects["screwdriver"].location} == {"drawer"}
    assert result.usage["prompt_tokens"] > 0 and result.usage["llm_calls"] >= 6


def test_unrecorded_instruction_fails_loudly(library, drawer_world):
    result, executor = plan(library, drawer_world, ReplayHandler(CONFIG / "replay"),
                            instruction="juggle the cup")
    assert result.error is GoalError.LLM_UNAVAILABLE
    assert "no recording" in result.message and "juggle the cup" in result.message
    assert executor.executed == []


def test_shipped_answers_are_reviewable_and_hold_no_secrets():
    files = list((CONFIG / "replay").glob("*.json"))
    assert files
    for f in files:
        record = json.loads(f.read_text())
        assert {"key", "request", "answer"} <= set(record) and Path(f).stem == record["key"]
        assert "authorization" not in f.read_text().lower()


class FirstAnswersBad:
    """Serve the expert, but replace the first answers of a kind with a chosen bad answer."""

    def __init__(self, expert, purpose_marker, bad_answers):
        self.expert, self.marker, self.bad = expert, purpose_marker, list(bad_answers)

    def __call__(self, request):
        system = request["messages"][0]["content"]
        if self.bad and self.marker in system:
            return self.bad.pop(0)
        return self.expert(request)


def expert_for(library, instruction=DRAWER_TASK, goal=("in(tape, drawer)", "in(screwdriver, drawer)",
                                                       "closed(drawer)")):
    expert = ScriptedExpert(library, seed=0, mistake_rate=0.0)
    expert.register(instruction, parse_goal(list(goal)))
    return expert


DECOMPOSITION = "task decomposition model"
TERMINATION = "leaf-termination checker"


@pytest.mark.parametrize(
    "marker, bad, reason_part",
    [
        (DECOMPOSITION, ['{"done": false, "subgoal": "open the drawer"'] * 2, "invalid"),
        (DECOMPOSITION, ['{"done": false, "subgoal": "pick(banana)"}'], "no 'banana'"),
        (DECOMPOSITION, ['{"done": false, "subgoal": "teleport(tape, drawer)"}'], "not a primitive"),
        (TERMINATION, ['{"verdict": "execute", "call": {"name": "levitate", "args": {"object": "tape"}}}'],
         "not a primitive"),
        (TERMINATION, ['{"verdict": "execute", "call": {"name": "pick", "args": {"object": "hammer"}}}'],
         "no 'hammer'"),
    ],
)
def test_bad_answers_are_rejected_with_a_reason_and_the_planner_recovers(library, drawer_world, marker, bad,
                                                                         reason_part):
    handler = FirstAnswersBad(expert_for(library), marker, bad)
    result, _ = plan(library, drawer_world, handler)
    reasons = [v["reason"] for n in result.tree["nodes"] for v in n["verdicts"] if v["verdict"] in
               ("replan", "rejected")]
    assert any(reason_part in r for r in reasons), reasons
    assert result.success, result.message


def test_picking_while_holding_is_rejected(library, drawer_world):
    class PickTwice(FirstAnswersBad):
        def __call__(self, request):
            user = request["messages"][-1]["content"]
            system = request["messages"][0]["content"]
            if self.bad and DECOMPOSITION in system and "-> succeeded" in user and "pick(" in user.split(
                    "## Re-plan feedback")[0].split("## Children")[1] and "place" not in user.split(
                    "## Re-plan feedback")[0].split("## Children")[1]:
                return self.bad.pop(0)
            return self.expert(request)

    handler = PickTwice(expert_for(library), DECOMPOSITION, ['{"done": false, "subgoal": "pick(cup)"}'])
    result, _ = plan(library, drawer_world, handler)
    assert not handler.bad, "the bad answer was served"
    rejected = [n for n in result.tree["nodes"] if n["text"] == "pick(cup)"]
    assert rejected and rejected[0]["status"] == "abandoned"
    assert "one arm can hold one object" in rejected[0]["verdicts"][0]["reason"]
    assert result.success


def test_endless_bad_answers_end_the_goal_with_a_clear_reason(library, drawer_world):
    handler = FirstAnswersBad(expert_for(library), DECOMPOSITION, ["not json at all"] * 100)
    result, executor = plan(library, drawer_world, handler, max_replans_per_node=2)
    assert result.error is GoalError.PLANNING_FAILED
    assert "gave up after 3 rejected proposals" in result.message and "invalid" in result.message
    assert executor.executed == []
