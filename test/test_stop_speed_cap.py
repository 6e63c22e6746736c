"""The joint speed cap that lets a cancel stop the arm quickly: a joint moving at v needs v / deceleration to
stop, so the controllers backend plans no joint faster than it sheds in ``stop_within_s`` at the arm
controller's deceleration (config/robot_boundary.yaml). Pure: timing and config, no robot."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import yaml

from step_planner.execution.controllers.config import BoundaryConfig, BoundaryConfigError
from step_planner.execution.sim.model import VEL_LIMITS
from step_planner.execution.sim.timing import time_parameterize
from step_planner.resources import config_path

SHOULDER_SWING = np.array([[0.0, -0.8, 0.0, -2.4, 0.0, 1.6, 0.8], [0.0, 0.6, 0.0, -2.4, 0.0, 1.6, 0.8]])


@pytest.fixture(scope="module")
def shipped() -> dict:
    return yaml.safe_load(config_path("robot_boundary.yaml").read_text())


def test_a_capped_trajectory_keeps_every_joint_under_its_cap_and_takes_longer():
    free = time_parameterize(SHOULDER_SWING, 0.002)
    cap = np.array([1.2, 0.6, 0.8, 1.0, 1.2, 1.6, 1.6])
    capped = time_parameterize(SHOULDER_SWING, 0.002, velocity_cap=cap)
    assert np.max(np.abs(free.qd[:, 1])) > 0.9 * VEL_LIMITS[1]  # uncapped, the shoulder runs at its limit
    assert np.all(np.max(np.abs(capped.qd), axis=0) <= cap * 1.02)  # TOPP-RA bounds its grid points
    assert capped.duration > free.duration * 1.3
    assert np.allclose(capped.q[-1], SHOULDER_SWING[-1], atol=1e-6)


def test_a_cap_above_the_limits_changes_nothing():
    free = time_parameterize(SHOULDER_SWING, 0.002)
    loose = time_parameterize(SHOULDER_SWING, 0.002, velocity_cap=VEL_LIMITS * 3)
    assert loose.duration == pytest.approx(free.duration)


def test_the_shipped_caps_are_what_each_robot_sheds_in_stop_within_s(shipped):
    panda = BoundaryConfig.from_dict(shipped, "panda")
    fr3 = BoundaryConfig.from_dict(shipped, "fr3")
    assert 0 < panda.stop_within_s <= 0.1
    assert panda.velocity_cap == pytest.approx([d * panda.stop_within_s for d in (15, 7.5, 10, 12.5, 15, 20, 20)])
    assert fr3.velocity_cap == pytest.approx([10 * fr3.stop_within_s] * 7)  # libfranka's 10 rad/s^2 for each


def test_the_panda_caps_match_the_controllers_own_deceleration_on_cancel(shipped):
    """The cap is derived from the decelerations the arm controller stops with: the two files must agree."""
    controllers = yaml.safe_load(config_path("ros2_controllers_panda.yaml").read_text())
    constraints = controllers["panda_arm_controller"]["ros__parameters"]["constraints"]
    joints = shipped["robots"]["panda"]["arm"]["joints"]
    assert [constraints[j]["max_deceleration_on_cancel"] for j in joints] == \
        shipped["robots"]["panda"]["arm"]["stop_deceleration"]


def test_no_stop_time_or_no_decelerations_means_no_cap(shipped):
    data = copy.deepcopy(shipped)
    data["stop_within_s"] = 0
    assert BoundaryConfig.from_dict(data).velocity_cap is None
    data = copy.deepcopy(shipped)
    del data["robots"]["panda"]["arm"]["stop_deceleration"]
    assert BoundaryConfig.from_dict(data).velocity_cap is None


@pytest.mark.parametrize("bad", [[7.5] * 6, [15, -7.5, 10, 12.5, 15, 20, 20], [True] * 7, "7.5", [0] * 7])
def test_malformed_decelerations_are_refused_naming_the_key(shipped, bad):
    data = copy.deepcopy(shipped)
    data["robots"]["panda"]["arm"]["stop_deceleration"] = bad
    with pytest.raises(BoundaryConfigError, match="robots.panda.arm.stop_deceleration"):
        BoundaryConfig.from_dict(data)


@pytest.mark.parametrize("bad", [-0.1, 2.0, "fast", True])
def test_a_malformed_stop_time_is_refused(shipped, bad):
    data = copy.deepcopy(shipped)
    data["stop_within_s"] = bad
    with pytest.raises(BoundaryConfigError, match="stop_within_s"):
        BoundaryConfig.from_dict(data)
