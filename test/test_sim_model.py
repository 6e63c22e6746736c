"""The Panda model: MoveIt names, a gripper that holds an object symmetrically, lazy import."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.sim
ROOT = Path(__file__).resolve().parents[1]


def test_model_has_moveit_names_and_ready_pose_is_collision_free():
    import mujoco

    from step_planner.execution.sim.model import (
        ARM_JOINTS,
        HOME_Q,
        PandaIndex,
        compile_spec,
        exclude_resting_self_contacts,
        panda_spec,
    )

    spec = panda_spec()
    exclude_resting_self_contacts(spec)
    model = compile_spec(spec)
    for name in (*ARM_JOINTS, "panda_finger_joint1", "panda_finger_joint2"):
        assert model.joint(name).id >= 0
    for name in ("panda_link0", "panda_link8", "panda_hand", "panda_grasptarget"):
        assert model.body(name).id >= 0
    data = mujoco.MjData(model)
    index = PandaIndex(model)
    data.qpos[index.arm_qpos] = HOME_Q
    data.ctrl[index.arm_act] = HOME_Q
    data.ctrl[index.grip_act] = 0.04
    for _ in range(500):
        mujoco.mj_step(model, data)
    assert data.ncon == 0
    assert np.max(np.abs(data.qpos[index.arm_qpos] - HOME_Q)) < 1e-3  # gravity compensated, holds still


def test_importing_step_planner_does_not_load_mujoco():
    code = (
        "import sys, step_planner, step_planner.execution.base, step_planner.execution.symbolic, "
        "step_planner.domain.scene; print('mujoco' in sys.modules, 'ompl' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False"


@pytest.mark.parametrize("start, target", [(0.04, 0.028), (0.035, 0.02), (0.0, 0.04), (0.04, 0.0)])
def test_fingers_come_to_rest_at_their_command_in_free_space(start, target):
    """No limit cycle after a free move (it used to chatter at +-0.6 m/s: FINGER_ARMATURE in model.py)."""
    from step_planner.domain.scene import load_scene
    from step_planner.execution.sim.control import Controller
    from step_planner.execution.sim.scene_builder import scene_at_home
    from step_planner.resources import config_path

    model, _, data, index = scene_at_home(load_scene(config_path("scenes", "drawer_desk.yaml")))
    ctl = Controller(model, data, index)
    ctl.gripper(start)
    ctl.grip_ref = target
    for _ in range(250):  # 0.5 s
        ctl.step(ctl.q_ref, np.zeros(7))
    assert np.max(np.abs(data.qvel[index.finger_dof])) < 1e-3
    assert ctl.finger_opening == pytest.approx(target, abs=5e-4)
