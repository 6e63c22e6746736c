"""The node with the moveit backend (the FR3's configuration), as franka.launch.py starts it: MoveIt's parameters in a
``--params-file`` of the process. moveit_py is the stand-in of test/moveit_standin, the arm controller and
franka_gripper the servers of test/robot_standin.py. A start-up error ends the goal with what to fix and the node
serves the next goal; once the servers are there, a goal runs through the backend."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from moveit_support import params_file
from robot_standin import StandInRobot
from ros_support import PLANS, TASK, RosHarness, ScriptedPlans, wait_for

from step_planner_interfaces.action import ExecuteTask

pytestmark = [pytest.mark.ros, pytest.mark.timeout(300)]
R = ExecuteTask.Result
STANDIN = Path(__file__).resolve().parent / "moveit_standin"


def test_a_start_up_error_fails_the_goal_saying_what_to_fix_and_the_next_goal_runs(tmp_path, monkeypatch):
    for name in [n for n in sys.modules if n.split(".")[0] in ("moveit", "moveit_msgs", "shape_msgs", "_msg")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.syspath_prepend(str(STANDIN))
    moveit = params_file("fr3", tmp_path)
    monkeypatch.setattr(sys, "argv", ["step_planner_node", "--ros-args", "--params-file", moveit])
    ros = RosHarness(ScriptedPlans(PLANS), backend="moveit", scene="drawer_desk", **{"moveit.robot": "fr3"})
    servers = None
    try:
        result = wait_for(ros.send(TASK).get_result_async(), 60.0).result  # no arm controller, no gripper yet
        assert result.error_code == R.EXECUTION_FAILED
        assert "/fr3_arm_controller/follow_joint_trajectory" in result.error_msg and "spawned" in result.error_msg
        servers = StandInRobot(fake_hardware=True)
        result = wait_for(ros.send("put the cup on the tray").get_result_async(), 240.0).result
        assert result.success, result.error_msg
        assert [p.rsplit(" -> ", 1)[0] for p in result.executed_primitives] == [
            "pick(object=cup)", "place(object=cup, target=tray)"]
        grasps = [goal.width for action, goal in servers.fr3_goals if action == "grasp"]
        assert [round(w, 3) for w in grasps] == [0.06]  # the cup's diameter in config/scenes/drawer_desk.yaml
    finally:
        ros.close()
        if servers is not None:
            servers.close()
        for name in [n for n in sys.modules if n.split(".")[0] in ("moveit", "moveit_msgs", "shape_msgs", "_msg")]:
            del sys.modules[name]


def test_an_fr3_reflex_through_the_node_ends_the_goal_naming_it_and_step_planner_recover_reaches_moveit(
        tmp_path, monkeypatch):
    """The node's ~/recover (step-planner recover) reaches the MoveIt backend's recover() as the controllers
    backend's: the controller-manager stand-in of test/robot_standin.py is put in the post-reflex state, MoveIt's
    execute then ABORTs (the inactive fr3_arm_controller rejects its goal; see test_moveit_backend.py)."""
    import os
    import subprocess

    for name in [n for n in sys.modules if n.split(".")[0] in ("moveit", "moveit_msgs", "shape_msgs", "_msg")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.syspath_prepend(str(STANDIN))
    import moveit._standin as st

    st.reset()
    moveit = params_file("fr3", tmp_path)
    monkeypatch.setattr(sys, "argv", ["step_planner_node", "--ros-args", "--params-file", moveit])
    servers = StandInRobot(fake_hardware=True)
    ros = RosHarness(ScriptedPlans(PLANS), backend="moveit", scene="drawer_desk", **{"moveit.robot": "fr3"})

    def before(index: int) -> None:
        if not servers.fr3_cm.cm.active("fr3_arm_controller"):
            st.CONTROL.execute_status[index] = "ABORTED"

    def recover() -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "step_planner.cli", "recover", "--node", ros.name, "--wait",
                               "20"], capture_output=True, text=True, timeout=120, env=dict(os.environ))

    st.CONTROL.before_execute = before
    try:
        servers.fr3_cm.reflex()
        result = wait_for(ros.send(TASK).get_result_async(), 120.0).result
        assert result.error_code == R.EXECUTION_FAILED
        assert "the FR3 stopped: joint_position_limits_violation" not in result.error_msg  # ready pose: not inferred
        assert "the FR3 stopped: an error it did not name (reflex" in result.error_msg, result.error_msg
        assert "FrankaHardwareInterface unconfigured" in result.error_msg

        refused = wait_for(ros.send(TASK).get_result_async(), 60.0).result
        assert refused.error_code == R.EXECUTION_FAILED and refused.executed_primitives == []
        assert refused.error_msg.startswith("the FR3 stopped: ") and "step-planner recover" in refused.error_msg

        done = recover()
        assert done.returncode == 0, done.stdout + done.stderr
        assert "1. error recovery: /action_server/error_recovery succeeded; 2. FrankaHardwareInterface active; " \
               "3. activated joint_state_broadcaster, franka_robot_state_broadcaster, fr3_arm_controller" in done.stdout

        result = wait_for(ros.send("put the cup on the tray").get_result_async(), 240.0).result
        assert result.success, result.error_msg
    finally:
        ros.close()
        servers.close()
        for name in [n for n in sys.modules if n.split(".")[0] in ("moveit", "moveit_msgs", "shape_msgs", "_msg")]:
            del sys.modules[name]
