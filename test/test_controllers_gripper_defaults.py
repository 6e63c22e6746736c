"""The controllers backend against upstream's default gripper controller (moveit_resources' Panda config): a grasp
ends ABORTED with stalled=true after stall_timeout, a close on nothing "reaches" its goal 1 cm early. A module of
its own: its MuJoCo robot must not share the ROS graph with another one."""

from __future__ import annotations

import pytest
from robot_support import DATA, RobotProcess

from step_planner.domain.primitives import PrimitiveLibrary
from step_planner.domain.scene import load_scene
from step_planner.execution.factory import make_executor
from step_planner.resources import config_path

pytestmark = [pytest.mark.ros, pytest.mark.sim]


def test_a_stalled_close_is_a_grasp_and_a_close_on_nothing_is_not_with_upstreams_default_gripper(monkeypatch):
    lib = PrimitiveLibrary.load(config_path("primitives.yaml"))
    world = load_scene(config_path("scenes", "drawer_desk.yaml"))
    with RobotProcess(scene="drawer_desk", controllers_file=str(DATA / "moveit_resources_panda_controllers.yaml")):
        ex = make_executor("controllers", lib, world)
        try:
            seen = []
            real = ex.connection.command_gripper

            def recording(opening, cancel=None, **kwargs):  # the real call; only what it returned is kept
                seen.append(real(opening, cancel, **kwargs))
                return seen[-1]

            monkeypatch.setattr(ex.connection, "command_gripper", recording)
            outcome = ex.execute(lib.parse_call_text("pick(tape)"))
            assert outcome.success, outcome.message
            assert ex.observe().held == "tape"
            close = next(o for o in seen if o.result is not None and o.result.stalled)
            assert close.status == "aborted" and not close.result.reached_goal  # GAC:176-201, allow_stalling false
            assert close.details["opening"] > 0.01  # judged by where the fingers rest: on the tape
            assert ex.execute(lib.parse_call_text("place(tape, table)")).success
            ex.controller.gripper(0.0)  # on nothing: SUCCEEDED within goal_tolerance 0.01, the fingers go on to 0
            assert seen[-1].result.reached_goal and seen[-1].result.position > 0.009
            assert ex.controller.closed_on is None and ex.controller.finger_opening < 0.002
        finally:
            ex.close()
