"""The node records every goal that runs as an episode (on by default), prunes by the retention
parameters, and records nothing when ``episodes.record`` is false. Real rclpy on loopback DDS."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("step_planner_interfaces", reason="build the interfaces first: make interfaces")

from rclpy.parameter import Parameter  # noqa: E402
from ros_support import DRAWER_PRIMITIVES, PLANS, TASK, RosHarness, ScriptedPlans, wait_for  # noqa: E402

from step_planner.episodes.episode import load_episode  # noqa: E402
from step_planner.ros import parameters as params  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.timeout(120)]


@pytest.fixture
def ros():
    harness = RosHarness(ScriptedPlans(PLANS, unavailable=("fetch the unicorn",)))
    yield harness
    harness.close()


def episodes(folder: str) -> list[Path]:
    """Recorded episodes, oldest first (names start with a one-second stamp: order by finish time)."""
    done = [p for p in Path(folder).iterdir() if (p / "summary.json").exists()]
    return sorted(done, key=lambda p: (p / "summary.json").stat().st_mtime_ns)


def test_recording_is_on_by_default():
    assert params.SPECS["episodes.record"].default is True


def test_each_goal_is_recorded_with_tree_exchanges_primitives_and_result(ros):
    ok = wait_for(ros.send(TASK).get_result_async()).result
    failed = wait_for(ros.send("fetch the unicorn").get_result_async()).result
    assert ok.success and not failed.success
    first, second = episodes(ros.episodes_dir)
    summary = json.loads((first / "summary.json").read_text())
    assert summary["instruction"] == TASK and summary["success"] and summary["primitives"] == 6
    episode = load_episode(first)
    assert [str(s["call"]["name"]) for s in episode.steps] == [p.split("(")[0] for p in DRAWER_PRIMITIVES]
    assert episode.exchanges and all("request" in x for x in episode.exchanges)
    assert episode.final_tree["nodes"][0]["status"] == "succeeded"
    assert json.loads((second / "summary.json").read_text())["error"] == "LLM_UNAVAILABLE"


def test_retention_prunes_the_oldest_and_recording_can_be_switched_off(ros):
    ros.node.set_parameters([Parameter("episodes.max_episodes", value=2)])
    for _ in range(3):
        assert wait_for(ros.send(TASK).get_result_async()).result.success
    assert len(episodes(ros.episodes_dir)) == 2
    ros.node.set_parameters([Parameter("episodes.record", value=False)])
    assert wait_for(ros.send(TASK).get_result_async()).result.success
    assert len(episodes(ros.episodes_dir)) == 2


def test_an_unwritable_folder_does_not_fail_the_goal(ros, tmp_path):
    blocker = tmp_path / "not_a_folder"
    blocker.write_text("a file where the episode folder should be")
    ros.node.set_parameters([Parameter("episodes.folder", value=str(blocker))])
    result = wait_for(ros.send(TASK).get_result_async()).result
    assert result.success, result.error_msg
