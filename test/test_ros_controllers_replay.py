"""A goal run through the node on the controllers backend, against the MuJoCo robot in another process (real DDS),
is recorded with the robot's joint states as the backend received them and the world it perceived at the start, and
``step-planner replay EPISODE --controllers --scene-service /mujoco_robot/load_scene`` sends that motion back to the
robot and reaches the recorded final world (issue 30, item 7: before, the episode had 0 joint states and no
initial world, and the replay answered "the episode has no initial world")."""

from __future__ import annotations

import json

import pytest
from robot_support import RobotProcess
from ros_support import DRAWER_PRIMITIVES, PLANS, TASK, RosHarness, ScriptedPlans, wait_for

pytestmark = [pytest.mark.ros, pytest.mark.sim, pytest.mark.timeout(600)]


def test_a_goal_on_the_controllers_backend_replays_through_the_controllers_to_its_final_world(tmp_path, capsys):
    from step_planner.cli import main
    from step_planner.domain.scene import load_scene
    from step_planner.episodes.controllers_replay import events_of, final_world
    from step_planner.episodes.episode import load_episode
    from step_planner.resources import config_path

    with RobotProcess(scene="drawer_desk"):
        folder = tmp_path / "episodes"  # kept after the node is gone (the harness's own folder is not)
        ros = RosHarness(ScriptedPlans(PLANS), backend="controllers", scene="drawer_desk",
                         **{"episodes.folder": str(folder)})
        try:
            result = wait_for(ros.send(TASK).get_result_async(), 300.0).result
            assert result.success, result.error_msg  # scripted plans (NOT an LLM), on the MuJoCo robot
            assert [p.rsplit(" -> ", 1)[0] for p in result.executed_primitives] == DRAWER_PRIMITIVES
            received = ros.node._persistent_executor.connection  # the backend's own connection
            assert received.joint_tap.source == "controllers backend"
        finally:
            ros.close()
        (path,) = [p for p in folder.iterdir() if (p / "summary.json").exists()]
        episode = load_episode(path)
        summary = json.loads((path / "summary.json").read_text())

        # what was recorded: the robot's joint states as received, the world it perceived, the scene it came from
        assert episode.joints_received and episode.joint_source["topic"] == "/joint_states"
        assert summary["records"]["joint_states"] == len(episode.joint_states) > 1000  # 100 Hz of robot time
        assert {"panda_joint1", "panda_finger_joint1"} <= set(episode.joint_states[0].names)
        stamps = [r.stamp_ns for r in episode.joint_states]
        assert stamps[0] > 0 and stamps == sorted(stamps)  # the robot's clock (sim time), as it stamped them
        assert episode.goal["scene"] == "drawer_desk" and episode.goal["world_source"] == "perceived"
        start, scene = episode.initial_world, load_scene(config_path("scenes", "drawer_desk.yaml"))
        assert {n: o.location for n, o in start.objects.items()} == {n: o.location for n, o in scene.objects.items()}
        assert "position" in start.objects["tape"].geometry  # perceived: where the robot saw it
        recorded_final = final_world(episode)
        assert recorded_final.objects["tape"].location == "drawer" and not recorded_final.places["drawer"].is_open
        grips = [e for e in events_of(episode) if not hasattr(e, "t")]
        assert sum(e.grasp for e in grips) == 4  # the handle twice, the tape, the screwdriver

        # the robot is left in the goal's final world: the replay first loads the recorded initial world
        report_file = tmp_path / "replay.json"
        code = main(["replay", str(path), "--controllers", "--scene-service", "/mujoco_robot/load_scene",
                     "--json", str(report_file)])
        out = capsys.readouterr().out
        report = json.loads(report_file.read_text())
        assert code == 0, (out[-2000:], report["stopped"], report["differences"])
        assert report["reached"] and report["compared"] and not report["differences"]
        assert "the robot's perceived world is the recorded final world" in out
        arm = [s for s in report["segments"] if s["kind"] == "arm"]
        assert arm and all(s["status"] == "succeeded" and s["end_error"] < 0.01 for s in arm)  # rad
