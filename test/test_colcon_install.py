"""The README's ROS path from a colcon install: the node runs from ``install/`` (not this source tree),
finds its data through the ament index, and completes the demo goal offline through the action server.

The workspace is the one ``make colcon-ws`` builds (``$STEP_PLANNER_COLCON_WS``, set by ``make test``);
without it the test builds one with the same script (about 30-60 s). Either way it is docs/install.md's
``colcon build --base-paths src/step_planner src/step_planner/step_planner_interfaces``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import workspace_from_make

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.ros, pytest.mark.slow, pytest.mark.timeout(600)]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    given = workspace_from_make("STEP_PLANNER_COLCON_WS")
    if given:
        ws = given
        assert (ws / "install" / "setup.bash").is_file(), f"STEP_PLANNER_COLCON_WS={given} holds no built install"
        return ws
    ws = tmp_path_factory.mktemp("colcon") / "ws"
    venv = Path(sys.executable).parents[1]
    done = subprocess.run([str(ROOT / "scripts" / "colcon_workspace.sh"), str(venv), str(ws)], capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    return ws


def files_under(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def test_the_install_holds_every_config_file_and_the_executables(workspace):
    share = workspace / "install" / "step_planner" / "share" / "step_planner"
    source = files_under(ROOT / "config")
    assert files_under(share / "config") == source
    assert {p.name for p in (share / "launch").glob("*.launch.py")} == {p.name for p in (ROOT / "launch").glob(
        "*.launch.py")}
    for exe in ("step_planner_node", "step-planner", "hmi"):  # hmi: `ros2 run step_planner hmi`
        assert os.access(workspace / "install" / "step_planner" / "lib" / "step_planner" / exe, os.X_OK), exe
    # the `step-planner hmi` page is package data, installed beside its server (not in share/)
    (site,) = (workspace / "install" / "step_planner" / "lib").glob("python3*/site-packages/step_planner")
    assert sorted(p.name for p in (site / "hmi" / "page").iterdir()) == ["hmi.css", "hmi.js", "index.html"]
    interfaces = workspace / "install" / "step_planner_interfaces" / "share" / "step_planner_interfaces"
    assert (interfaces / "action" / "ExecuteTask.action").is_file()
    # the test-only control_msgs / franka_msgs of test/interfaces are never built into the product workspace
    assert sorted(p.name for p in (workspace / "install").iterdir() if p.is_dir()) == [
        "step_planner", "step_planner_interfaces"]


def test_the_node_from_the_install_completes_the_demo_goal_offline(workspace, tmp_path):
    """scripts/demo_ros.sh (= make demo-ros) with the install's executables after `source install/setup.bash`."""
    install = workspace / "install"
    params = install / "step_planner" / "share" / "step_planner" / "config" / "step_planner.yaml"
    script = (f"source {install}/setup.bash && export PATH={install}/step_planner/lib/step_planner:$PATH && "
              f"command -v step_planner_node && {ROOT}/scripts/demo_ros.sh")
    env = {**os.environ, "STEP_PLANNER_PARAMS": str(params), "STEP_PLANNER_EPISODES": str(tmp_path / "episodes"),
           "HOME": str(tmp_path)}  # nothing of the run lands in the real home
    env.pop("STEP_PLANNER_SHARE", None)
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                          env=env, stdin=subprocess.DEVNULL)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-4000:]
    assert done.stdout.splitlines()[0] == f"{install}/step_planner/lib/step_planner/step_planner_node"
    # the running node's code and data came from the install, not from this source tree
    (where,) = re.findall(r"\(step_planner from (\S+), data from (\S+)\)", out)
    assert where[0].startswith(f"{install}/step_planner/lib/python3")
    assert where[0].endswith("site-packages/step_planner")
    assert where[1] == f"{install}/step_planner/share/step_planner/config"
    assert "scripted expert, not an LLM" in out
    assert "outcome: SUCCESS" in done.stdout and "demo-ros: node stopped (exit 0)" in done.stdout
    assert "[+] put the tape and the screwdriver in the drawer" in done.stdout.split("as a late viewer sees it:")[1]
    assert list((tmp_path / "episodes").glob("*/summary.json")), "the goal was not recorded"
