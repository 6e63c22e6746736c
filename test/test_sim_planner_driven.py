"""The planner drives the MuJoCo Panda: offline answers through the real openai client, the final
world read from the physics, and real failures re-planned instead of crashing."""

from __future__ import annotations

import pytest
from conftest import CONFIG, shipped_config

from step_planner.bench.expert import ScriptedExpert
from step_planner.bench.goals import parse_goal
from step_planner.domain.safety import SafetyEnvelope
from step_planner.llm.client import LLMClient
from step_planner.llm.config import LLMConfig
from step_planner.llm.loopback import LoopbackServer
from step_planner.llm.replay import ReplayHandler
from step_planner.planner.result import GoalError
from step_planner.planner.runner import run_goal, safety_gate

pytestmark = [pytest.mark.sim, pytest.mark.slow]


def run(library, world, handler, instruction, **config):
    from step_planner.execution.sim.executor import SimExecutor

    executor = SimExecutor(library, world, seed=1)
    try:
        with LoopbackServer(handler) as server:
            llm = LLMClient(LLMConfig(model="gpt-4o-mini", base_url=server.base_url))
            result = run_goal(instruction, library=library, executor=executor, llm=llm,
                              config=shipped_config(**config),
                              gate=safety_gate(SafetyEnvelope.load(CONFIG / "safety.yaml"), library, executor))
        return result, executor.observe()
    finally:
        executor.close()


def test_drawer_task_completes_physically_with_the_planner_driving(library, drawer_world):
    result, world = run(library, drawer_world, ReplayHandler(CONFIG / "replay"),
                        "put the tape and the screwdriver in the drawer")
    assert result.success and result.verified, result.message
    assert [c.name for c, _ in result.executed] == ["open_drawer", "pick", "place", "pick", "place", "close_drawer"]
    assert [c["judged_from"] for c in result.conditions] == ["belief", "belief", "observation"]
    # the final state is what the physics says, not what the calls declared
    assert world.objects["tape"].location == "drawer" and world.objects["screwdriver"].location == "drawer"
    assert not world.places["drawer"].is_open
    assert "tape" not in world.observed().objects  # hidden again once the drawer is closed


def test_unreachable_object_is_reported_and_replanned_not_crashed(library, drawer_world):
    drawer_world.objects["cup"].geometry["position"] = [0.93, 0.3, 0.04]  # inside the safety box, beyond reach
    expert = ScriptedExpert(library, seed=0)
    expert.register("put the cup on the tray", parse_goal(["at(cup, tray)"]))
    result, _ = run(library, drawer_world, expert, "put the cup on the tray", max_replans_per_node=1)
    codes = [o.code.value for _, o in result.executed]
    assert codes and codes[0] in ("NO_IK", "PLAN_FAILED"), codes
    assert not result.success and result.error in (GoalError.EXECUTION_FAILED, GoalError.PLANNING_FAILED)
    failed = [n for n in result.tree["nodes"] if n["outcome"] and n["outcome"]["code"] in ("NO_IK", "PLAN_FAILED")]
    assert failed and failed[0]["status"] == "failed"
    assert len(result.executed) >= 2, "the planner must try again after the motion failure"
