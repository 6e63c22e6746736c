"""config/franka.yaml loading and validation (pure: no ROS, no moveit)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from step_planner.execution.errors import BackendUnavailable
from step_planner.execution.moveit import make_moveit_executor
from step_planner.execution.moveit.config import FrankaConfig, FrankaConfigError

CONFIG = Path(__file__).resolve().parents[1] / "config"
RAW = yaml.safe_load((CONFIG / "franka.yaml").read_text())


def variant_of(data: dict) -> FrankaConfig:
    return FrankaConfig.from_dict(data, source="test.yaml")


def test_shipped_config_loads_with_panda_names():
    cfg = FrankaConfig.load(CONFIG / "franka.yaml")
    assert cfg.robot == "panda"
    v = cfg.variant
    assert (v.arm_group, v.ee_link, v.base_frame, v.tcp_offset) == ("panda_arm", "panda_hand", "panda_link0", 0.1034)
    assert v.arm_controller == "panda_arm_controller/follow_joint_trajectory"
    assert (v.gripper.server, v.gripper.interface, v.gripper.action) == (
        "gripper_action_controller", "gripper_command", "panda_hand_controller/gripper_cmd")
    assert cfg.ready_state == "ready"
    assert cfg.cartesian.pipeline == "pilz_industrial_motion_planner" and cfg.cartesian.planner_id == "LIN"
    assert cfg.free_space.pipeline == "ompl"
    assert 0 < cfg.velocity_scaling <= 0.1  # the shipped file is for a first run on a real arm
    assert cfg.locations["above_table"] == (0.45, 0.0, 0.30)


def test_fr3_variant_selects_fr3_names_and_franka_gripper():
    cfg = FrankaConfig.load(CONFIG / "franka.yaml", robot="fr3")  # the launch file's robot:= overrides the file's
    v = cfg.variant
    assert (v.arm_group, v.ee_link, v.base_frame, v.finger_joints) == (
        "fr3_arm", "fr3_hand", "fr3_link0", ("fr3_finger_joint1", "fr3_finger_joint2"))
    assert v.arm_controller == "fr3_arm_controller/follow_joint_trajectory"
    assert (v.gripper.server, v.gripper.interface, v.gripper.action, v.gripper.homing) == (
        "franka_gripper", "grasp_move", "franka_gripper", True)
    assert "fr3_leftfinger" in v.touch_links


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.update(robot="ur5"), "robot: input should be 'panda' or 'fr3'"),
        (lambda d: d["variants"].pop("panda"), "variants.panda is missing"),
        (lambda d: d["variants"]["panda"].pop("arm_group"), "variants.panda.arm_group"),
        (lambda d: d["variants"]["panda"].pop("arm_controller"), "variants.panda.arm_controller"),
        (lambda d: d["variants"]["panda"].update(arm_controller="/a b"), "arm_controller: must be a ROS name"),
        (lambda d: d["variants"]["panda"].update(finger_joints=["j1"]), "finger_joints: should have at least 2 items"),
        (lambda d: d["variants"]["panda"]["gripper"].update(server="robotiq"),
         "variants.panda.gripper.server: input should be 'gripper_action_controller' or 'franka_gripper'"),
        (lambda d: d["variants"]["panda"]["gripper"].update(interface="grasp_move"),
         "variants.panda.gripper: interface must be gripper_command (grasp_move is franka_gripper's)"),
        (lambda d: (d.update(robot="fr3"), d["variants"]["fr3"]["gripper"].update(interface="gripper_command")),
         "variants.fr3.gripper: homing must be false"),
        (lambda d: d["variants"]["panda"].pop("tcp_offset"), "variants.panda.tcp_offset"),
        (lambda d: d["variants"]["panda"].update(ee_link="panda hand"), "ee_link: must be a name without spaces"),
        (lambda d: d["motion"].update(velocity_scaling=0), "motion.velocity_scaling: input should be greater than 0"),
        (lambda d: d["motion"].update(acceleration_scaling=1.5), "motion.acceleration_scaling"),
        (lambda d: d["motion"].update(velocity_scaling="fast"), "motion.velocity_scaling"),
        (lambda d: d["motion"]["cartesian"].pop("planner_id"), "motion.cartesian.planner_id"),
        (lambda d: d["motion"]["free_space"].update(attempts=0), "motion.free_space.attempts"),
        (lambda d: d["gripper"].update(mode="hand_group"), "gripper.mode: unknown key (allowed: max_effort,"),
        (lambda d: d["gripper"].update(open_width=0.09), "open_width: input should be less than or equal to 0.08"),
        (lambda d: d["gripper"].update(max_effort=-1), "gripper.max_effort"),
        (lambda d: d["gripper"].update(epsilon_inner=0), "gripper.epsilon_inner"),
        (lambda d: d["grasp"].update(max_opening=0.079), "grasp.max_opening (0.079) must not exceed"),
        (lambda d: d["grasp"].update(pre_grasp_height=2.0), "grasp.pre_grasp_height"),
        (lambda d: d["drawer"].update(pull_direction=[0, 0, 0]), "drawer.pull_direction: must be a non-zero vector"),
        (lambda d: d["drawer"].update(pull_direction=[1, 0]), "pull_direction: should have at least 3 items"),
        (lambda d: d["locations"].update(home=[0.3, 0, 0.3]), "locations.home is reserved"),
        (lambda d: d["locations"].update(shelf=[0.3, 0, "high"]), "locations.shelf[2]"),
        (lambda d: d["named_states"].pop("ready"), "named_states.ready"),
        (lambda d: d.update(objects_source="camera"), "objects_source: input should be 'scene'"),
        (lambda d: d["timeouts"].update(execute_s=0), "timeouts.execute_s"),
        (lambda d: d.update(joint_states="joint states"), "joint_states: must be a ROS name"),
    ],
)
def test_bad_config_is_refused_naming_the_key(edit, message):
    data = copy.deepcopy(RAW)
    edit(data)
    with pytest.raises(FrankaConfigError) as err:
        variant_of(data)
    assert message in str(err.value)
    assert "test.yaml" in str(err.value)


def test_not_a_mapping_and_unreadable_file(tmp_path):
    with pytest.raises(FrankaConfigError, match="valid dictionary"):
        variant_of(["robot", "panda"])
    bad = tmp_path / "franka.yaml"
    bad.write_text("robot: [unclosed")
    with pytest.raises(FrankaConfigError, match="cannot read"):
        FrankaConfig.load(bad)


def test_pull_direction_is_normalised():
    data = copy.deepcopy(RAW)
    data["drawer"]["pull_direction"] = [-2.0, 0.0, 0.0]
    assert variant_of(data).drawer.pull_direction == (-1.0, 0.0, 0.0)


def test_config_beyond_the_safety_envelope_never_reaches_moveit(tmp_path, library, drawer_world):
    data = copy.deepcopy(RAW)
    data["motion"]["velocity_scaling"] = 0.9  # config/safety.yaml allows 0.5
    path = tmp_path / "franka.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(BackendUnavailable, match="velocity scaling 0.9 exceeds the limit 0.5"):
        make_moveit_executor(library, drawer_world, config_path=path)


def test_bad_config_file_is_a_backend_unavailable_with_the_reason(tmp_path, library, drawer_world):
    data = copy.deepcopy(RAW)
    data["robot"] = "kuka"
    path = tmp_path / "franka.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(BackendUnavailable, match="robot: input should be 'panda' or 'fr3'"):
        make_moveit_executor(library, drawer_world, config_path=path)


def test_unsupported_options_are_refused(library, drawer_world):
    with pytest.raises(BackendUnavailable, match="video_path"):
        make_moveit_executor(library, drawer_world, video_path="out.mp4")
