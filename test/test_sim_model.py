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
