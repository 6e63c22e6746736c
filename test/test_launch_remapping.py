"""One ``/robot1/step_planner`` in the graph when the node runs as ``ros2 launch`` starts it (issue 38, part 3).

launch_ros turns a Node action's ``name`` and ``namespace`` into ``--ros-args -r __node:=step_planner -r
__ns:=/robot1`` on the process's command line. A helper node the product makes inside that process in a context
that parses the command line (rclpy.init without ``args``) takes the same global remappings: two nodes named
``/robot1/step_planner``. Here the node runs as a process with exactly those arguments on each backend that runs
here (symbolic; sim, the in-process MuJoCo; controllers against the MuJoCo robot in another process, in the same
namespace: the robot's names resolve under the node's, issue 45), is given a
dry-run goal naming no scene (the controllers backend then connects to the robot to observe its world, making its
helper node), and the graph is read.
The in-process helpers (the controllers connection, the MoveIt backend's ROS link, the HMI's link, the bench's
robot truth) are also made under a process command line with those remappings and must keep their own names.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("step_planner_interfaces", reason="build the interfaces first: make interfaces")

pytestmark = [pytest.mark.ros, pytest.mark.timeout(240)]

ROOT = Path(__file__).resolve().parents[1]
REMAPS = ["--ros-args", "-r", "__node:=step_planner", "-r", "__ns:=/robot1"]  # launch_ros's for name/namespace
TASK = "put the tape and the screwdriver in the drawer"


def graph_names(*wait_for: tuple[str, str], settle_s: float = 3.0, timeout_s: float = 30.0) -> list[tuple[str, str]]:
    """Every (name, namespace) in the graph once all of ``wait_for`` are there and discovery had ``settle_s`` more
    (a second node of a name would be discovered as the first was)."""
    import rclpy

    from step_planner.execution.private_context import private_context

    context = private_context()
    node = rclpy.create_node("graph_reader", context=context)
    try:
        deadline = time.monotonic() + timeout_s
        while not set(wait_for) <= set(node.get_node_names_and_namespaces()) and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(settle_s)
        return node.get_node_names_and_namespaces()
    finally:
        node.destroy_node()
        rclpy.try_shutdown(context=context)


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


@pytest.mark.parametrize("backend", ["symbolic", "sim", "controllers"])
def test_one_node_of_the_launch_name_on_every_backend(backend, tmp_path):
    from step_planner.ros.robot_process import RobotProcess

    robot = RobotProcess(scene="drawer_desk", namespace="robot1") if backend == "controllers" else None
    if robot is not None:
        robot.start()
    log = (tmp_path / "node.log").open("w")
    node = subprocess.Popen(
        [sys.executable, "-m", "step_planner.cli", "node", *REMAPS, "--params-file",
         str(ROOT / "config" / "step_planner.yaml"), "-p", f"backend:={backend}", "-p", "llm.offline:=true",
         "-p", f"episodes.folder:={tmp_path / 'episodes'}"],
        stdout=log, stderr=subprocess.STDOUT, env=env(), stdin=subprocess.DEVNULL)
    try:
        if robot is not None:  # up before the goal: the backend connects at the goal and gives up after 10 s
            assert ("mujoco_robot", "/robot1") in graph_names(("mujoco_robot", "/robot1"), settle_s=1.0,
                                                              timeout_s=60.0)
        sent = subprocess.run([sys.executable, "-m", "step_planner.cli", "send", TASK, "--node",
                               "/robot1/step_planner", "--dry-run", "--wait", "60",
                               "--quiet", "--no-input"],
                              capture_output=True, text=True, timeout=180, env=env(), stdin=subprocess.DEVNULL)
        assert "outcome: SUCCESS" in sent.stdout, (sent.stdout, sent.stderr,
                                                   (tmp_path / "node.log").read_text()[-3000:])
        # the connection's node, beside the node and named after it; the robot in the node's namespace (issue 45)
        helper = [("step_planner_controllers", "/robot1")] if backend == "controllers" else []
        names = graph_names(("step_planner", "/robot1"), *helper)
        assert names.count(("step_planner", "/robot1")) == 1, names
        assert set(helper) <= set(names), names  # there, under its own name
        assert "already registered" not in (tmp_path / "node.log").read_text()
    finally:
        node.send_signal(2)
        try:
            node.wait(20)
        except subprocess.TimeoutExpired:
            node.kill()
        log.close()
        if robot is not None:
            robot.stop()


def test_in_process_helpers_keep_their_names_under_the_launch_remappings(monkeypatch):
    """Each helper made while sys.argv carries the remappings: rclpy.init(args=None) would parse them."""
    from step_planner.bench.robot_truth import RobotTruth
    from step_planner.execution.controllers.config import BoundaryConfig
    from step_planner.execution.controllers.connection import RobotConnection
    from step_planner.execution.moveit.ros_link import RosLink as MoveItLink
    from step_planner.hmi.ros_link import RosLink as HmiLink
    from step_planner.hmi.session import HmiState
    from step_planner.resources import config_path

    monkeypatch.setattr(sys, "argv", ["step_planner_node", *REMAPS])
    made = []
    try:
        made.append(RobotConnection(BoundaryConfig.load(config_path("robot_boundary.yaml"))))
        made.append(MoveItLink("/robot1", ("panda_finger_joint1", "panda_finger_joint2"), "joint_states"))
        made.append(HmiLink(HmiState()))
        made.append(RobotTruth())
        names = [(h.node.get_name(), h.node.get_namespace()) for h in made]
        assert names == [("step_planner_controllers", "/"), ("step_planner_moveit_io", "/robot1"),
                         ("step_planner_hmi", "/"), ("robot_truth", "/")]
    finally:
        for helper in made:
            helper.close()


def test_a_context_parsing_the_command_line_would_take_the_remappings(monkeypatch):
    """What the test above guards against is real: rclpy.init without args renames a helper node."""
    import rclpy

    monkeypatch.setattr(sys, "argv", ["step_planner_node", *REMAPS])
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = rclpy.create_node("step_planner_controllers", context=context)
        assert (node.get_name(), node.get_namespace()) == ("step_planner", "/robot1")
        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)
