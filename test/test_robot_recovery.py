"""When the controllers backend counts a lost robot as back (RemoteController.still_lost), without ROS.

The kill test (test_ros_controllers.py) failed in CI when the robot came back quickly: the goal sent on the restarted
robot's first joint states ended "lost the robot while sending to ...: no joint state for 1.0 s". No state was
missing: the robot counted as back only on a joint state newer than the loss *plus* ``state_stale_s``, and the
error repeated the loss's own message. These tests pin the rule and the message."""

from __future__ import annotations

import re
import time
from types import SimpleNamespace

import pytest

from step_planner.execution.controllers.connection import Joints
from step_planner.execution.controllers.port import RemoteController

ARM = "/panda_arm_controller/follow_joint_trajectory"
LOSS = "lost the robot while sending to /panda_hand_controller/gripper_cmd: no joint state on /joint_states for 1.0 s"


class Connection:
    """What still_lost reads of a RobotConnection: the latest joint state and the servers not discovered."""

    def __init__(self) -> None:
        self.config = SimpleNamespace(joint_states="/joint_states", timeouts=SimpleNamespace(state_stale_s=1.0))
        self.received: float | None = None
        self.missing: list[str] = []

    def joints(self) -> Joints | None:
        return None if self.received is None else Joints({}, {}, self.received, 0.0)

    def missing_servers(self) -> list[str]:
        return list(self.missing)


def lost_port(connection: Connection, ago: float = 0.5) -> RemoteController:
    port = RemoteController(connection, None, None, None, None)  # the mirror is not used here
    port.lost, port.lost_at, port.closed_on = LOSS, time.monotonic() - ago, 0.01
    return port


def test_a_robot_never_lost_is_not_lost():
    assert RemoteController(Connection(), None, None, None, None).still_lost() is None


@pytest.mark.parametrize("after", [0.001, 0.1, 0.5])
def test_a_joint_state_heard_after_the_loss_with_both_servers_there_is_back_at_once(after):
    connection = Connection()
    port = lost_port(connection)
    connection.received = port.lost_at + after  # well within state_stale_s of the loss (refused before)
    assert port.still_lost() is None
    assert port.lost is None and port.closed_on is None  # what the fingers held is forgotten


@pytest.mark.parametrize("received", [None, -0.3, 0.0])  # never heard, heard before the loss, at it
def test_without_a_joint_state_after_the_loss_it_is_not_back_and_says_so_as_it_stands_now(received):
    connection = Connection()
    port = lost_port(connection, ago=2.0)
    connection.received = None if received is None else port.lost_at + received
    why = port.still_lost()
    # the loss it follows, dated, not passed off as today's news
    assert re.fullmatch(rf"the robot is not back: no joint state on /joint_states since it was lost \(2\.\d s ago: "
                        rf"{re.escape(LOSS)}\)", why), why
    assert port.lost == LOSS and port.closed_on == 0.01


def test_joint_states_without_the_action_servers_are_not_back_and_name_the_missing_server():
    connection = Connection()
    port = lost_port(connection)
    connection.received, connection.missing = time.monotonic(), [ARM]
    why = port.still_lost()
    assert why is not None and f"the action server {ARM} is not available" in why
    assert "no joint state" not in why.split(" s ago: ")[0]
    connection.missing = []
    assert port.still_lost() is None
