"""rviz:=true in the launch files, and /tf in backend:=sim, loaded as ``ros2 launch`` loads them (fake_launch: the
``launch`` packages are not installable here, and neither is rviz2 nor robot_state_publisher)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_launch import LOGGED, fake_launch, load_launch_file, run

ROOT = Path(__file__).resolve().parents[1]
MAIN = ROOT / "launch" / "step_planner.launch.py"


def start(tmp_path: Path, installed: set[str], arguments: dict[str, str]):
    with fake_launch(tmp_path, installed=installed):
        started, error = run(load_launch_file(MAIN).generate_launch_description(), arguments)
        logged = list(LOGGED)
    assert error is None, error
    return started, logged


@pytest.mark.parametrize("backend", ["symbolic", "sim"])
def test_rviz_true_starts_rviz2_with_the_packages_config(tmp_path: Path, backend: str):
    started, logged = start(tmp_path, {"rviz2", "robot_state_publisher"}, {"rviz": "true", "backend": backend})
    assert not logged
    rviz = started[-1]
    assert (rviz.package, rviz.executable) == ("rviz2", "rviz2")
    d = rviz.kwargs["arguments"]
    assert d[0] == "-d" and Path(d[1]).resolve() == (ROOT / "config" / "step_planner.rviz").resolve()
    assert [n.executable for n in started[:-1]][-1] == "step_planner_node"


def test_rviz_true_without_rviz2_says_so_in_one_line_and_runs_the_rest(tmp_path: Path):
    started, logged = start(tmp_path, set(), {"rviz": "true"})
    assert [n.executable for n in started] == ["step_planner_node"]
    (line,) = [m for level, _, m in logged if level in ("warning", "warn")]
    assert "\n" not in line and "rviz2 is not installed" in line and "sudo apt install ros-jazzy-rviz2" in line


def test_rviz_is_off_by_default(tmp_path: Path):
    started, logged = start(tmp_path, {"rviz2"}, {})
    assert [n.executable for n in started] == ["step_planner_node"] and not logged


@pytest.mark.parametrize("with_rsp", [True, False])
def test_sim_puts_the_objects_on_tf_and_the_links_when_no_robot_state_publisher_does(tmp_path: Path, with_rsp: bool):
    started, _ = start(tmp_path, {"robot_state_publisher"} if with_rsp else set(), {"backend": "sim"})
    robot = started[0]
    assert robot.executable == "mujoco_robot"
    assert robot.parameters[0]["tf"] is True and robot.parameters[0]["tf_links"] is (not with_rsp)
    assert ("robot_state_publisher" in [n.executable for n in started]) is with_rsp


def test_franka_rviz_uses_the_robots_base_frame():
    source = (ROOT / "launch" / "franka.launch.py").read_text()
    assert 'rviz(context, fixed_frame=f"{robot}_link0")' in source and '{"markers.frame": f"{robot}_link0"}' in source
