"""config/robot_boundary.yaml under a namespace (issue 45): the robot's every name moves under it, as franka_bringup's
``namespace`` moves every node of the arm; nothing else changes."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from step_planner.execution.controllers.config import BoundaryConfig

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("robot", ["panda", "fr3"])
@pytest.mark.parametrize("namespace", ["arm1", "/arm1", "/arm1/", "/site/arm1"])
def test_every_robot_side_name_moves_under_the_namespace(robot, namespace):
    plain = BoundaryConfig.load(ROOT / "config" / "robot_boundary.yaml", robot)
    placed = plain.under(namespace)
    ns = "/" + namespace.strip("/")
    assert placed.arm.action == ns + plain.arm.action
    assert placed.gripper.action == ns + plain.gripper.action
    assert placed.gripper.node == ns + plain.gripper.node  # franka_gripper's grasp, move, homing
    assert placed.joint_states == ns + "/joint_states" and placed.object_poses == ns + plain.object_poses
    if robot == "fr3":
        for name in ("controller_manager", "error_recovery", "robot_state"):
            assert getattr(placed.franka_hardware, name) == ns + getattr(plain.franka_hardware, name)
        assert placed.franka_hardware.controllers == plain.franka_hardware.controllers
    moved = {"arm", "gripper", "joint_states", "object_poses", "franka_hardware"}
    for field in fields(BoundaryConfig):
        if field.name not in moved:
            assert getattr(placed, field.name) == getattr(plain, field.name), field.name
    assert placed.arm.joints == plain.arm.joints and placed.gripper.joints == plain.gripper.joints


@pytest.mark.parametrize("namespace", ["", "/", "//"])
def test_the_root_namespace_changes_nothing(namespace):
    plain = BoundaryConfig.load(ROOT / "config" / "robot_boundary.yaml", "fr3")
    assert plain.under(namespace) is plain


def test_no_object_poses_stays_none():
    plain = BoundaryConfig.load(ROOT / "config" / "robot_boundary.yaml", "panda")
    bare = BoundaryConfig(**{**{f.name: getattr(plain, f.name) for f in fields(BoundaryConfig)}, "object_poses": ""})
    assert bare.under("/arm1").object_poses == ""


@pytest.mark.parametrize("own, given, expected", [
    ("/arm1", "", "/arm1"), ("/", "", "/"), ("/arm1", "/", "/"), ("/arm1", "/cell/arm2", "/cell/arm2"),
    ("/cell", "arm2", "/cell/arm2"), ("/", "arm2", "/arm2")])
def test_the_controllers_namespace_parameter_resolves_as_a_ros_name(own, given, expected):
    """controllers.namespace: empty = the node's own; absolute as given; relative under the node's."""
    from step_planner.ros.node import robot_namespace

    assert robot_namespace(own, given) == expected
