"""Two arms side by side on one ROS domain (issue 45, part 2): two MuJoCo robots and two planners, each pair in a
namespace of its own, run a goal each at the same time, and both end SUCCEEDED.

Each planner runs as ``ros2 launch`` starts it (``--ros-args -r __node:=step_planner -r __ns:=/armN``), each robot
as ``-r __ns:=/armN``; the controllers backend finds its robot's actions, joint states, model poses and gripper
under its own node's namespace (BoundaryConfig.under), as franka_bringup's ``namespace`` puts an arm's every node
under it. The graph is read through rclpy's graph API (what ``ros2 node list`` reads): no full node name twice. All of
it runs on the worker's spare domain (conftest.py): the worker's own domain still holds nodes that earlier tests
created inside the worker process (a ``standin_robot``, a root ``step_planner_controllers``), which a fresh-clone
CI run listed as duplicates. The goals are "put the cup on the tray" (a pick and a place, the drawer scene's cup),
answered by a scripted loopback endpoint both planners share (ros_support.ScriptedPlans, not an LLM): the drawer
task's six primitives took three times the CPU and proved nothing more about two arms.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from robot_support import RobotProcess
from ros_support import PLANS, ScriptedPlans
from test_launch_remapping import env, graph_names

from step_planner.llm.loopback import LoopbackServer

pytest.importorskip("step_planner_interfaces", reason="build the interfaces first: make interfaces")

pytestmark = [pytest.mark.ros, pytest.mark.sim, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[1]
ARMS = ("arm1", "arm2")
CUP = "put the cup on the tray"


def planner(namespace: str, tmp_path: Path, llm_url: str) -> subprocess.Popen:
    log = (tmp_path / f"{namespace}.log").open("w")
    return subprocess.Popen(
        [sys.executable, "-m", "step_planner.cli", "node", "--ros-args", "-r", "__node:=step_planner", "-r",
         f"__ns:=/{namespace}", "--params-file", str(ROOT / "config" / "step_planner.yaml"),
         "-p", "backend:=controllers", "-p", f"llm.base_url:={llm_url}", "-p", "llm.model:=loopback",
         "-p", f"episodes.folder:={tmp_path / namespace}"],
        stdout=log, stderr=subprocess.STDOUT, env=env(), stdin=subprocess.DEVNULL)


def stop(process: subprocess.Popen) -> None:
    process.send_signal(2)
    try:
        process.wait(20)
    except subprocess.TimeoutExpired:
        process.kill()


def test_two_planners_and_two_robots_in_two_namespaces_both_succeed_at_the_same_time(tmp_path, monkeypatch):
    spare = os.environ.get("STEP_PLANNER_SPARE_DOMAIN", str(int(os.environ.get("ROS_DOMAIN_ID") or 0) + 1))
    monkeypatch.setenv("ROS_DOMAIN_ID", spare)
    answers = LoopbackServer(ScriptedPlans(PLANS)).start()
    robots = [RobotProcess(scene="drawer_desk", namespace=ns).start() for ns in ARMS]
    planners = [planner(ns, tmp_path, answers.base_url) for ns in ARMS]
    sends: list[subprocess.Popen] = []
    try:
        up = [*(("mujoco_robot", f"/{ns}") for ns in ARMS), *(("step_planner", f"/{ns}") for ns in ARMS)]
        assert set(up) <= set(graph_names(*up, settle_s=1.0, timeout_s=90.0))
        started = time.monotonic()
        sends = [subprocess.Popen([sys.executable, "-m", "step_planner.cli", "send", CUP, "--node",
                                   f"/{ns}/step_planner", "--wait", "600", "--quiet", "--no-input"],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env(),
                                  stdin=subprocess.DEVNULL) for ns in ARMS]
        outputs, ended = [], []
        for send in sends:
            outputs.append(send.communicate(timeout=700)[0])
            ended.append(time.monotonic() - started)
        logs = {ns: (tmp_path / f"{ns}.log").read_text()[-3000:] for ns in ARMS}
        for ns, out in zip(ARMS, outputs, strict=True):
            assert "outcome: SUCCESS" in out, (ns, out[-2000:], logs[ns], robots[ARMS.index(ns)].output()[-2000:])
        # each robot serves its arm under its own namespace (its start line names its action)
        for ns, robot in zip(ARMS, robots, strict=True):
            assert f"/{ns}/panda_arm_controller/follow_joint_trajectory" in robot.output(), robot.output()[-2000:]
        # sent together, each moved for seconds, and at the same time: one after the other, the later goal would
        # have ended after both goals' time (about twice the earlier's)
        print(f"two arms: goals ended after {ended[0]:.1f} s and {ended[1]:.1f} s")
        assert min(ended) > 3.0 and max(ended) < 1.75 * min(ended), ended

        helpers = [("step_planner_controllers", f"/{ns}") for ns in ARMS]
        names = graph_names(*up, *helpers)
        assert set(helpers) <= set(names), names
        assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
        assert ("step_planner_controllers", "/") not in names, names
        for ns in ARMS:
            assert "already registered" not in (tmp_path / f"{ns}.log").read_text()
    finally:
        for process in [*sends, *planners]:
            if process.poll() is None:
                stop(process)
        for robot in robots:
            robot.close()
        answers.close()
