"""The Franka Panda as a MuJoCo model, built from the URDF shipped in the pybullet wheel.

Names follow MoveIt's Panda config (``panda_link0..8``, ``panda_hand``, ``panda_joint1..7``,
``panda_finger_joint1/2``, ``panda_grasptarget``). The URDF's mimic joint would become a soft
equality that lets the fingers drift apart, so the gripper is rebuilt the way that measured well
here: a stiff joint equality, one tendon driving both fingers, a capped finger force and stiffer,
higher-friction finger contacts. Arm joints get gravity compensation and PD position actuators
whose control carries a velocity feed-forward term (see :mod:`control`).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import mujoco
import numpy as np

ARM_JOINTS = tuple(f"panda_joint{i}" for i in range(1, 8))
FINGER_JOINTS = ("panda_finger_joint1", "panda_finger_joint2")
ARM_BODIES = tuple(f"panda_link{i}" for i in range(0, 9)) + (
    "panda_hand",
    "panda_leftfinger",
    "panda_rightfinger",
    "panda_grasptarget",
)
FINGER_BODIES = ("panda_leftfinger", "panda_rightfinger")
GRASP_FRAME = "panda_grasptarget"
HOME_Q = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])

# joint velocity / acceleration limits used for time parameterization (scaled-down Panda limits: velocities from
# franka_description robots/fer/joint_limits.yaml, accelerations from moveit_resources@ef5836d
# panda_moveit_config/config/hard_joint_limits.yaml:11-53)
VEL_LIMITS = np.array([2.175, 2.175, 2.175, 2.175, 2.61, 2.61, 2.61]) * 0.5
ACC_LIMITS = np.array([15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0]) * 0.25
EFFORT = np.array([87.0, 87.0, 87.0, 87.0, 12.0, 12.0, 12.0])
KP = np.array([4500.0, 4500.0, 3500.0, 3500.0, 2000.0, 2000.0, 2000.0])
KV = np.array([450.0, 450.0, 350.0, 350.0, 200.0, 200.0, 200.0])

FINGER_MAX = 0.04  # opening of one finger (m)
FINGER_FORCE = 20.0  # per finger (N)
# Reflected inertia of each finger's drive (kg). At 0.01 the gripper's velocity damping, clipped with its force
# while the fingers travel, was explicit and unstable for the light fingers: after a move of more than ~1 cm
# that did not end on an object (open to 2.8 cm for a handle, close from 3.5 to 2 cm) they chattered at
# +-0.6 m/s for as long as the command stood. The in-process gripper only waited 1.2 s and went on; the
# MuJoCo robot's GripperActionController, which waits for the fingers to stop, never ended its goal.
FINGER_ARMATURE = 0.05
TIMESTEP = 0.002


def panda_urdf_path() -> Path:
    import pybullet_data

    path = Path(pybullet_data.getDataPath()) / "franka_panda" / "panda.urdf"
    if not path.exists():
        raise FileNotFoundError(f"Panda URDF not found at {path} (pip install pybullet==3.2.7)")
    return path


def _urdf_text() -> str:
    path = panda_urdf_path()
    text = path.read_text().replace("package://", "")
    compiler = (
        f'<mujoco><compiler meshdir="{path.parent}" strippath="false" fusestatic="false" '
        f'inertiafromgeom="true" discardvisual="false" balanceinertia="true"/></mujoco>'
    )
    head = text.index(">", text.index("<robot")) + 1
    return text[:head] + compiler + text[head:]


def panda_spec() -> mujoco.MjSpec:
    """An editable spec of the Panda with actuators, gripper coupling and physics options."""
    spec = mujoco.MjSpec.from_string(_urdf_text())
    spec.option.timestep = TIMESTEP
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    spec.option.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
    spec.option.impratio = 10.0
    spec.stat.extent = 1.5
    spec.stat.center = [0.4, 0.0, 0.3]
    spec.visual.quality.shadowsize = 0  # shadows off: 8x faster software rendering
    for body in spec.bodies:
        if body.name in ARM_BODIES:
            body.gravcomp = 1.0
    for i, name in enumerate(ARM_JOINTS):
        joint = spec.joint(name)
        joint.armature = 0.1
        joint.damping = [1.0, 0.0, 0.0]  # 4.x: damping is a 3-vector
        act = spec.add_actuator()
        act.name = f"act_{name}"
        act.target = name
        act.trntype = mujoco.mjtTrn.mjTRN_JOINT
        act.gaintype = mujoco.mjtGain.mjGAIN_FIXED
        act.biastype = mujoco.mjtBias.mjBIAS_AFFINE
        act.gainprm[0] = KP[i]
        act.biasprm[:3] = [0.0, -KP[i], -KV[i]]
        act.forcelimited = True
        act.forcerange = [-EFFORT[i], EFFORT[i]]
        act.ctrllimited = False
    for name in FINGER_JOINTS:
        joint = spec.joint(name)
        joint.armature = FINGER_ARMATURE
        joint.damping = [2.0, 0.0, 0.0]
    eq = spec.add_equality()
    eq.name = "finger_coupling"
    eq.type = mujoco.mjtEq.mjEQ_JOINT
    eq.name1, eq.name2 = FINGER_JOINTS[1], FINGER_JOINTS[0]
    eq.solref = [0.004, 1.0]
    eq.solimp = [0.95, 0.99, 0.001, 0.5, 2.0]
    tendon = spec.add_tendon()
    tendon.name = "finger_split"
    for name in FINGER_JOINTS:
        tendon.wrap_joint(name, 0.5)
    grip = spec.add_actuator()
    grip.name = "act_gripper"
    grip.target = "finger_split"
    grip.trntype = mujoco.mjtTrn.mjTRN_TENDON
    grip.gaintype = mujoco.mjtGain.mjGAIN_FIXED
    grip.biastype = mujoco.mjtBias.mjBIAS_AFFINE
    grip.gainprm[0] = 4000.0
    grip.biasprm[:3] = [0.0, -4000.0, -100.0]
    grip.forcelimited = True
    grip.forcerange = [-2 * FINGER_FORCE, 2 * FINGER_FORCE]  # split 0.5/0.5 over the two fingers
    grip.ctrllimited = True
    grip.ctrlrange = [0.0, FINGER_MAX]
    for geom in spec.geoms:
        if geom.parent.name in FINGER_BODIES and geom.contype:
            geom.priority = 1
            geom.friction = [1.5, 0.01, 0.001]
            geom.condim = 4
            geom.solref = [0.004, 1.0]
            geom.solimp = [0.95, 0.99, 0.001, 0.5, 2.0]
    return spec


def compile_spec(spec: mujoco.MjSpec) -> mujoco.MjModel:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # texture-coordinate notes from the visual OBJ files
        return spec.compile()


def exclude_resting_self_contacts(spec: mujoco.MjSpec) -> None:
    """Exclude link pairs whose convex hulls already touch in the ready pose (mesh artefacts)."""
    model = compile_spec(spec)
    data = mujoco.MjData(model)
    for i, name in enumerate(ARM_JOINTS):
        data.qpos[model.joint(name).qposadr[0]] = HOME_Q[i]
    mujoco.mj_forward(model, data)
    pairs = set()
    for c in data.contact[: data.ncon]:
        b1, b2 = (model.body(model.geom_bodyid[g]).name for g in (c.geom1, c.geom2))
        if b1 in ARM_BODIES and b2 in ARM_BODIES:
            pairs.add(tuple(sorted((b1, b2))))
    pairs.add(("panda_link0", "panda_link1"))  # link0 is welded to the world, so MuJoCo keeps this pair
    pairs.add(("panda_hand", "panda_link7"))
    pairs.add(("panda_link6", "panda_link8"))
    for b1, b2 in sorted(pairs):
        ex = spec.add_exclude()
        ex.bodyname1, ex.bodyname2 = b1, b2


def narrow_arm_limits(model: mujoco.MjModel, lower: np.ndarray, upper: np.ndarray) -> None:
    """Bound the arm joints' ranges of ``model`` to [lower, upper] (planning-model order), so every user of the
    ranges (IK's limits, the planner's bounds, :class:`PandaIndex`) plans within a robot's own limits."""
    for i, name in enumerate(ARM_JOINTS):
        joint = model.joint(name).id
        model.jnt_range[joint] = [float(lower[i]), float(upper[i])]
        model.jnt_limited[joint] = 1


class PandaIndex:
    """Index arrays into qpos/qvel/ctrl for the arm and gripper of a compiled model."""

    def __init__(self, model: mujoco.MjModel) -> None:
        self.arm_qpos = np.array([model.joint(n).qposadr[0] for n in ARM_JOINTS])
        self.arm_dof = np.array([model.joint(n).dofadr[0] for n in ARM_JOINTS])
        self.finger_qpos = np.array([model.joint(n).qposadr[0] for n in FINGER_JOINTS])
        self.finger_dof = np.array([model.joint(n).dofadr[0] for n in FINGER_JOINTS])
        self.arm_act = np.array([model.actuator(f"act_{n}").id for n in ARM_JOINTS])
        self.grip_act = model.actuator("act_gripper").id
        self.grasp_body = model.body(GRASP_FRAME).id
        self.hand_body = model.body("panda_hand").id
        self.finger_bodies = tuple(model.body(n).id for n in FINGER_BODIES)
        self.arm_bodies = frozenset(model.body(n).id for n in ARM_BODIES)
        self.lower = model.jnt_range[[model.joint(n).id for n in ARM_JOINTS], 0].copy()
        self.upper = model.jnt_range[[model.joint(n).id for n in ARM_JOINTS], 1].copy()
