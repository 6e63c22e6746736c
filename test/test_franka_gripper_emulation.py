"""franka_gripper's rules on plain numbers (step_planner/execution/sim/franka_gripper_emulation.py), driven by the
mock hand: each test names the upstream line it checks (franka_ros2@29cb85a, libfranka 0.20.5)."""

from __future__ import annotations

import pytest

from step_planner.execution.sim.franka_gripper_emulation import (
    COMMAND_ABORTED,
    COMMAND_FAILED,
    FrankaGripper,
    FrankaGripperParams,
)
from step_planner.execution.sim.mock_hand import MockHand

DT = 0.002


def run(gripper: FrankaGripper, hand: MockHand, t: float, until: float = 3.0) -> float:
    """Step hand and gripper until a goal ends (or ``until`` seconds pass); returns the time."""
    end = t + until
    while t < end and not gripper.ended:
        setpoint = gripper.update(t, hand.width, hand.velocity)
        hand.step(setpoint, DT)
        t += DT
    for _ in range(int(0.2 / DT)):  # a little longer: what the hand holds afterwards
        hand.step(gripper.update(t, hand.width, hand.velocity), DT)
        t += DT
    return t


@pytest.fixture
def setup():
    hand = MockHand(width=0.08)
    return FrankaGripper(FrankaGripperParams(), hand.width), hand


def test_grasp_at_the_objects_width_succeeds_and_keeps_squeezing(setup):
    gripper, hand = setup
    hand.object_width = 0.07
    gripper.grasp("g", 0.07, 0.1, 20.0, 0.005, 0.005, 0.0)
    run(gripper, hand, 0.0)
    [end] = gripper.ended
    assert (end.goal_id, end.status, end.result) == ("g", "succeeded", {"success": True, "error": ""})
    assert hand.width == pytest.approx(0.07)
    assert gripper.hold == 0.0  # still driven closed: the grasp holds with its force


@pytest.mark.parametrize("object_width", [None, 0.05, 0.0649, 0.0751])
def test_a_grasp_that_stops_outside_the_epsilons_fails_without_error(setup, object_width):
    """LF gripper.h:83-84: grasped iff (width - epsilon_inner) < d < (width + epsilon_outer), strict; false is
    kUnsuccessful: success false, error empty (LF gripper.cpp:21-32, FGH:193-200)."""
    gripper, hand = setup
    hand.object_width = object_width
    gripper.grasp("g", 0.07, 0.1, 20.0, 0.005, 0.005, 0.0)
    run(gripper, hand, 0.0)
    [end] = gripper.ended
    assert end.status == "aborted" and end.result == {"success": False, "error": ""}  # FGH:171-179


def test_move_reaches_its_width_and_a_blocked_move_fails(setup):
    gripper, hand = setup
    gripper.move("m", 0.03, 0.1, 0.0)
    t = run(gripper, hand, 0.0)
    assert gripper.ended.pop().status == "succeeded" and hand.width == pytest.approx(0.03, abs=6e-4)
    hand.width, hand.object_width = 0.08, 0.06
    gripper.move("m2", 0.0, 0.1, t)
    run(gripper, hand, t)
    end = gripper.ended.pop()
    assert end.status == "aborted" and end.result == {"success": False, "error": ""}
    assert hand.width == pytest.approx(0.06)


def test_a_move_beyond_the_hand_fails_in_the_firmware(setup):
    gripper, hand = setup
    gripper.move("m", 0.09, 0.1, 0.0)
    run(gripper, hand, 0.0)
    assert gripper.ended[0].result == {"success": False, "error": COMMAND_FAILED}


def test_homing_opens_to_the_maximum_width(setup):
    gripper, hand = setup
    hand.width = 0.01
    gripper.update(0.0, hand.width, 0.0)
    gripper.homing("h", 0.0)
    run(gripper, hand, 0.0)
    assert gripper.ended[0].status == "succeeded" and hand.width == pytest.approx(0.08, abs=6e-4)


def test_gripper_command_goal_is_per_finger_and_its_result_the_full_width(setup):
    """FG:167 doubles the goal; FG:189-195 closing is a grasp at that width with the default epsilons; FG:233-234
    the result's position is the full width, effort 0, stalled never set."""
    gripper, hand = setup
    hand.object_width = 0.07
    gripper.gripper_command("c", 0.035, 30.0, 0.0)
    run(gripper, hand, 0.0)
    [end] = gripper.ended
    assert end.status == "succeeded"
    assert end.result["reached_goal"] and not end.result["stalled"] and end.result["effort"] == 0.0
    assert end.result["position"] == pytest.approx(0.07, abs=1e-3)  # full width, not 0.035


def test_gripper_command_to_zero_on_an_object_aborts(setup):
    """A goal of 0 is a grasp at width 0: any real object is outside the 5 mm epsilons, reached_goal false, ABORTED."""
    gripper, hand = setup
    hand.object_width = 0.07
    gripper.gripper_command("c", 0.0, 30.0, 0.0)
    run(gripper, hand, 0.0)
    [end] = gripper.ended
    assert end.status == "aborted" and not end.result["reached_goal"]
    assert end.result["position"] == pytest.approx(0.07, abs=1e-3)


def test_gripper_command_range_and_same_position(setup):
    gripper, hand = setup
    gripper.gripper_command("wide", 0.041, 10.0, 0.0)  # 8.2 cm > max_width: FG:173-178, an empty result
    gripper.gripper_command("same", 0.04, 10.0, 0.0)  # already there: FG:180-187
    assert [(e.goal_id, e.status) for e in gripper.ended] == [("wide", "aborted"), ("same", "succeeded")]
    assert gripper.ended[0].result == {"position": 0.0, "effort": 0.0, "stalled": False, "reached_goal": False}
    assert gripper.ended[1].result["position"] == pytest.approx(0.08) and gripper.ended[1].result["reached_goal"]


def test_results_report_the_width_read_at_the_state_rate(setup):
    """current_gripper_state_ is refreshed only by the 15 Hz state timer (FG:128-129, 260-264)."""
    gripper, hand = setup
    gripper.update(0.0, 0.08, 0.0)
    gripper.update(0.01, 0.05, 0.0)
    assert gripper.state_width == 0.08
    gripper.update(1 / 15, 0.05, 0.0)
    assert gripper.state_width == 0.05


def test_cancel_stops_the_hand_and_ends_canceled_with_the_interrupted_result(setup):
    gripper, hand = setup
    gripper.move("m", 0.0, 0.1, 0.0)
    t = 0.0
    for _ in range(50):
        hand.step(gripper.update(t, hand.width, hand.velocity), DT)
        t += DT
    assert gripper.cancel("m") and not gripper.cancel("other")
    [end] = gripper.ended
    assert end.status == "canceled" and end.result == {"success": False, "error": COMMAND_ABORTED}
    stopped = hand.width
    for _ in range(50):
        hand.step(gripper.update(t, hand.width, hand.velocity), DT)
        t += DT
    assert hand.width == pytest.approx(stopped, abs=1e-3)  # held where it was measured when stopped


def test_a_second_command_interrupts_the_first(setup):
    gripper, hand = setup
    gripper.move("a", 0.0, 0.1, 0.0)
    gripper.move("b", 0.05, 0.1, 0.0)
    assert gripper.ended[0].goal_id == "a" and gripper.ended[0].result["error"] == COMMAND_ABORTED
