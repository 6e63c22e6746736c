"""The MuJoCo Panda and its scene as a robot: physics in a thread of its own, driven by the controllers.

WHY: across ROS, a robot is a process that keeps running whatever its clients do, with
joint_trajectory_controller and a gripper controller between the clients and the joints. This class is
that robot without ROS (``ros/mujoco_robot.py`` puts the actions and topics around it): the physics steps
continuously at a real-time factor, each step runs the controllers of :mod:`controller_emulation` (or, for the
FR3, franka_gripper of :mod:`franka_gripper_emulation`) on the measured state and tracks their command with the
same servo as the in-process simulator. Joint names on this side are the controllers' (``panda_joint1`` or
``fr3_joint1``); the model is the Panda's, under FR3 names too (its geometry, limits and fingers are the Panda's:
the FR3's differ, a little, in joint limits and link shapes).
"""

from __future__ import annotations

import difflib
import threading
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import mujoco
import numpy as np

from step_planner.domain import perceived_facts as facts
from step_planner.domain.pose_tree import ModelPose
from step_planner.domain.world import WorldState
from step_planner.execution.sim import perception as perc
from step_planner.execution.sim.control import Controller
from step_planner.execution.sim.controller_emulation import (
    INACTIVE,
    INVALID_GOAL,
    GoalEnd,
    GripperController,
    GripperParams,
    TrajectoryController,
    TrajectoryGoal,
    TrajectoryParams,
    validate,
)
from step_planner.execution.sim.controller_manager_emulation import ControllerManagerEmulation
from step_planner.execution.sim.faults import DEFAULT_REFLEX, FAULTS, REFLEXES
from step_planner.execution.sim.franka_gripper_emulation import (
    COMMAND_ABORTED,
    FrankaGripper,
    FrankaGripperParams,
    start_goal,
)
from step_planner.execution.sim.model import FINGER_MAX, HOME_Q, KP, KV
from step_planner.execution.sim.scene_builder import scene_at_home
from step_planner.execution.sim.scene_info import SceneInfo
from step_planner.execution.sim.servo import Servo, ServoSpec

SETTLE_S = 0.5  # objects come to rest after a (re)load, before the controllers start
REFLEX_AFTER_S = 0.2  # an injected reflex trips this far into the next arm goal
MISS_PLACE_OFFSET = 0.12  # m, sideways: where a missed place puts the object
RETRIP = 0.01  # rad: a joint already past its limit when its controller came back trips again this much further out
DRAWER_SHORT = 0.04  # m: how far from closed a drawer with that fault stops
# Faster than real time only while something happens: with realtime_factor above 1, a robot whose controllers run no
# goal and whose world is at rest (no joint, finger, drawer or object faster than AT_REST_SPEED) is paced at real time.
# Its physics is the same step for step; only fewer steps pass per wall second (a third as many at 3x, where the tests'
# robots spent more than half of their steps with no goal). Looked at every AT_REST_EVERY steps; a goal speeds it up at
# once. Neither the arm nor Gazebo (one physics real_time_factor per world) runs faster than real time, so nothing the
# product does may rest on this: it is a speed-up for tests and rehearsals of the stand-in alone.
AT_REST_SPEED = 0.05  # m/s or rad/s, any degree of freedom (a resting scene jitters below 0.01)
AT_REST_EVERY = 50  # physics steps: 0.1 s of simulated time


@dataclass(frozen=True)
class JointReading:
    time: float  # simulated seconds
    names: tuple[str, ...]  # controller joint names: arm joints, then both fingers
    position: tuple[float, ...]
    velocity: tuple[float, ...]
    effort: tuple[float, ...]


class SimRobot:
    """One scene on the MuJoCo Panda behind a trajectory controller and a gripper controller.

    ``arm_joints``/``finger_joints`` are the controller names of the model's arm and finger joints, in the
    model's order. ``realtime_factor`` 1.0 runs the physics at the pace of the wall clock (0: as fast as
    it computes; above 1, only while something happens: see AT_REST_SPEED). ``hooks`` are called after every
    physics step on the physics thread (publishers). ``servo``: how the joints follow the arm controller
    (:mod:`servo`: ideal, gazebo's position loop, the FR3's effort PID).
    """

    def __init__(self, world: WorldState, arm: TrajectoryParams, gripper: GripperParams | FrankaGripperParams, *,
                 arm_joints: Sequence[str], finger_joints: Sequence[str], seed: int = 0,
                 realtime_factor: float = 1.0, world_name: str = "", servo: ServoSpec | None = None,
                 limit_reflex: tuple[Sequence[float], Sequence[float]] | None = None,
                 controller_manager: ControllerManagerEmulation | None = None) -> None:
        if set(arm.joints) != set(arm_joints):
            raise ValueError(f"the trajectory controller's joints {list(arm.joints)} are not the robot's "
                             f"{list(arm_joints)}")
        if isinstance(gripper, GripperParams) and gripper.joint not in finger_joints:
            raise ValueError(f"the gripper controller's joint {gripper.joint!r} is not one of {list(finger_joints)}")
        self.arm_params, self.grip_params = arm, gripper
        self.servo_spec = servo or ServoSpec()
        self.arm_joints, self.finger_joints = tuple(arm_joints), tuple(finger_joints)
        self.realtime_factor = realtime_factor
        self._idle_pace = min(realtime_factor, 1.0)  # at rest: real time, unless asked for slower (0: unpaced stays)
        self.world_name = world_name
        self.hooks: list[Callable[[SimRobot], None]] = []
        self.lock = threading.RLock()
        self._thread: threading.Thread | None = None
        self._running = threading.Event()
        self.faults: dict[str, str] = {}  # armed faults: kind -> object (or reflex name), until they happen
        self._short_drawers: list[str] = []  # drawers the scene's drawer_short faults shortened
        self.faults_done: list[str] = []  # what happened, in order
        # (lower, upper) in model order: a joint past them trips the FR3's reflex (see :meth:`_limit_reflex`)
        self.limit_reflex = None if limit_reflex is None else tuple(np.asarray(v, dtype=float) for v in limit_reflex)
        self.reflex: str | None = None  # why the arm stopped, until the next load (or, with a controller manager,
        # until its arm controller is active again)
        # the FR3's controller manager and franka_hardware (reflex, recovery steps); None: a reflex ends at JTC's abort
        self.cm = controller_manager
        self._tolerated = np.zeros(len(self.arm_joints))  # rad past a limit where the arm stood when reactivated
        self.load(world, seed)

    # ---- scene ------------------------------------------------------------------------------------------------
    def load(self, world: WorldState, seed: int = 0) -> list[str]:
        """(Re)build the scene at home. Goals in flight end ABORTED, as when a controller is deactivated
        (JTC.cpp:1258-1267); the physics thread, if running, keeps running on the new scene.

        A fault armed and not yet happened stays armed (a person arms a reflex, resets the scene and expects the next
        goal to meet it), unless the new scene lacks its object; a drawer_short ends with its scene. Returns one note
        per fault that was armed: kept or cleared, and why."""
        model, info, data, index = scene_at_home(world, seed)
        # one lock for the physics and its readers: the truth and the perception never see a step half done
        controller = Controller(model, data, index, on_step=self._on_step, lock=self.lock)
        controller.hold(HOME_Q)
        controller.settle(SETTLE_S)
        controller.pace = self.realtime_factor
        with self.lock:
            ended = self._deactivate() if hasattr(self, "arm") else []
            self.model, self.info, self.data, self.index = model, info, data, index
            self.controller = controller
            self.world = world.copy()
            self.world_name = self.world_name or "step_planner"
            self._arm_order = [self.arm_joints.index(j) for j in self.arm_params.joints]  # controller -> model
            self._cache_indices()
            self.arm = TrajectoryController(self.arm_params, self._arm_q()[0])
            self.servo = Servo(self.servo_spec)
            self.servo.attach(model, index.arm_act)
            self._steps = 0  # physics steps since the load: the controller updates every control period
            self._command = (self._arm_q()[0], np.zeros(len(self.arm_joints)))
            self.grip: GripperController | FrankaGripper = \
                FrankaGripper(self.grip_params, 2 * float(data.qpos[index.finger_qpos[0]]), float(data.time)) \
                if self.franka else GripperController(self.grip_params, float(data.qpos[index.finger_qpos[0]]))
            self.arm.ended.extend(ended)
            notes = self._keep_faults()
            self.reflex = None  # a load is a fresh bring-up: no reflex, every controller active
            self._tolerated = np.zeros(len(self.arm_joints))
            if self.cm is not None:
                self.cm.reset()
        return notes

    def _cache_indices(self) -> None:
        """Under the lock, in a load: what :meth:`step` and the publishers would otherwise recompute every physics
        step (the scene's index arrays in the controller's joint order, the gains in that order, the control
        period, which bodies the poses report)."""
        order = np.array(self._arm_order)
        self._back = np.argsort(order)  # controller order -> model order
        self._arm_qpos = self.index.arm_qpos[order]  # controller order
        self._arm_dof = self.index.arm_dof[order]
        self._kp, self._kv = KP[order], KV[order]
        self._dt = float(self.model.opt.timestep)
        self._every = self.servo_spec.control_period(self._dt)
        finger = self._finger_slot()
        self._finger_qpos, self._finger_dof = int(self.index.finger_qpos[finger]), int(self.index.finger_dof[finger])
        self._limits = None if self.limit_reflex is None else tuple(v[order] for v in self.limit_reflex)
        # the publishers' (joint_state, model_poses): arm then finger joints in the model's order
        self._joint_names = self.arm_joints + self.finger_joints
        self._joint_qpos = np.concatenate([self.index.arm_qpos, self.index.finger_qpos])
        self._joint_dof = np.concatenate([self.index.arm_dof, self.index.finger_dof])
        self._pose_layout = PoseLayout.of(self.model, self.info)

    def _keep_faults(self) -> list[str]:
        """Under the lock, after a load: keep the armed faults the new scene can still meet (see :meth:`load`)."""
        notes = [f"cleared: drawer_short {d} (it ends with its scene)" for d in self._short_drawers]
        self._short_drawers = []
        for kind, target in list(self.faults.items()):
            if kind == "reflex" or target in self.info.objects:
                notes.append(f"still armed: {kind} {target}")
            else:
                del self.faults[kind]
                notes.append(f"cleared: {kind} {target} (no object {target!r} in this scene)")
        return notes

    def _deactivate(self) -> list[GoalEnd]:
        ended = [*self.arm.ended, *self.grip.ended]
        if self.arm.active is not None:
            ended.append(GoalEnd(self.arm.active.goal_id, "aborted", {
                "error_code": INVALID_GOAL, "error_string": "Current goal cancelled during deactivate transition."}))
        running = self.grip.command if isinstance(self.grip, FrankaGripper) else self.grip.active
        if running is not None:  # franka_gripper: the hand stops, its command returns aborted (UNVERIFIED)
            ended.append(GoalEnd(running.goal_id, "aborted", {"position": 0.0, "effort": 0.0, "stalled": False,
                                                             "reached_goal": False, "success": False,
                                                             "error": COMMAND_ABORTED}))
        return ended

    @property
    def franka(self) -> bool:
        """The gripper is franka_gripper (the FR3's), not a GripperActionController."""
        return isinstance(self.grip_params, FrankaGripperParams)

    # ---- the physics thread -------------------------------------------------------------------------------------
    def start(self) -> SimRobot:
        if self._thread is None:
            self._running.set()
            self._thread = threading.Thread(target=self._run, name="mujoco_robot_physics", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        self._running.clear()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _run(self) -> None:
        while self._running.is_set():
            self.step()
            if not self.controller.pace:
                time.sleep(0)  # unpaced: still let the ROS threads answer goals (the GIL)

    def step(self) -> None:
        """One control cycle and physics step (the thread calls this; tests may call it directly). It runs 500
        times per simulated second: what only a load changes is computed there (:meth:`_cache_indices`)."""
        with self.lock:
            ctl, data, dt = self.controller, self.data, self._dt
            t = float(data.time)
            q, qd = data.qpos[self._arm_qpos], data.qvel[self._arm_dof]  # new arrays, controller order
            if self.limit_reflex is not None and self.arm_active:
                self._limit_reflex(q)
            every = self._every
            if self._steps % every == 0:  # the controller manager's read and update (physics rate in ideal mode)
                self._command = self.arm.update(t, every * dt, q, qd)
                self.servo.latch(t, q, self._command[0], *self.arm.desired_now, qd, every * dt)
            self._steps += 1
            if self._idle_pace != self.realtime_factor:
                self._pace_by_activity()
            q_cmd, qd_cmd = self._command
            position, velocity = float(data.qpos[self._finger_qpos]), float(data.qvel[self._finger_dof])
            if isinstance(self.grip, FrankaGripper):  # the hand's width is both fingers'
                setpoint = self.grip.update(t, 2 * position, 2 * velocity) / 2
            else:
                setpoint = self.grip.update(t, position, velocity)
            ctl.grip_ref = float(_clip(setpoint, 0.0, FINGER_MAX))
            back = self._back
            q_ref, qd_ref = q_cmd[back], qd_cmd[back]
            arm_ctrl = self.servo.arm_ctrl(t + dt, q_cmd, qd_cmd, self._kp, self._kv)[back]
            if self.faults:
                self._faults_step()
        ctl.step(q_ref, qd_ref, arm_ctrl)  # locks for the physics step; paces outside the lock

    def _pace_by_activity(self) -> None:
        """Under the lock, each step: ``realtime_factor`` while a goal runs or anything moves, real time once all
        is at rest (see AT_REST_SPEED)."""
        ctl = self.controller
        grip = self.grip.command if isinstance(self.grip, FrankaGripper) else self.grip.active
        if self.arm.active is not None or grip is not None:
            busy = True
        elif self._steps % AT_REST_EVERY == 0:
            busy = float(np.abs(self.data.qvel).max(initial=0.0)) > AT_REST_SPEED
        else:
            return
        pace = self.realtime_factor if busy else self._idle_pace
        if ctl.pace != pace:
            ctl.pace = pace

    def _limit_reflex(self, q: np.ndarray) -> None:
        """A measured joint past the robot's limits, as the FR3 meets it: libfranka's joint_position_limits_violation
        reflex (errors.h:67-71) makes franka_hardware's read fail and stop the robot (franka_hardware_interface.cpp:
        250-257), the controller manager deactivates the arm controller (controller_manager.cpp:3275-3304): the goal
        ends ABORTED, INVALID_GOAL, and later goals are rejected until a load (config/robot_boundary.yaml)."""
        lower, upper = self._limits
        if ((lower <= q) & (q <= upper)).all():  # every joint inside (the usual step): no excess, nothing tolerated
            self._tolerated = np.zeros(len(q))
            return
        excess = np.maximum(lower - q, 0.0) + np.maximum(q - upper, 0.0)
        self._tolerated = np.minimum(self._tolerated, excess)  # back inside: no longer tolerated
        outside = np.nonzero(excess > np.where(self._tolerated > 0, self._tolerated + RETRIP, 0.0))[0]
        if not len(outside):
            return
        j = int(outside[0])
        where = f"{self.arm_params.joints[j]} at {q[j]:.4f} rad, limits [{lower[j]}, {upper[j]}]"
        self.reflex = f"libfranka: Control exception: joint_position_limits_violation ({where})"
        self.arm.deactivate(q)
        if self.cm is not None:
            self.cm.reflex({"joint_position_limits_violation"}, where)

    @property
    def arm_active(self) -> bool:
        """The arm controller runs: no reflex since the last load, or (with a controller manager) it was activated
        again after one."""
        if self.cm is None:
            return self.reflex is None
        return any(c.commands and c.state == "active" for c in self.cm.controllers.values())

    def controller_active(self, kind: str) -> bool:
        """A controller of this type (e.g. joint_state_broadcaster/JointStateBroadcaster) is active; without a
        controller manager every controller is."""
        with self.lock:
            return self.cm is None or any(c.type == kind and c.state == "active" for c in self.cm.controllers.values())

    # ---- the controller manager's services and franka_hardware's error recovery (FR3) --------------------------
    def error_recovery(self) -> tuple[bool, str]:
        with self.lock:
            assert self.cm is not None
            return self.cm.error_recovery()

    def set_hardware_state(self, name: str, target: int) -> tuple[bool, int]:
        with self.lock:
            assert self.cm is not None
            was = self.arm_active
            answer = self.cm.set_hardware_state(name, target)
            if was and not self.arm_active:
                self.arm.deactivate(self._arm_q()[0])
            return answer

    def switch_controllers(self, activate: Sequence[str], deactivate: Sequence[str],
                           strictness: int) -> tuple[bool, str]:
        """switch_controller; the arm controller coming back holds where the arm is (JTC on_activate, JTC.cpp:
        1121-1228), and a joint it finds past its limit may be moved back in (see RETRIP)."""
        with self.lock:
            assert self.cm is not None
            was = self.arm_active
            answer = self.cm.switch(activate, deactivate, strictness)
            q = self._arm_q()[0]
            if was and not self.arm_active:
                self.arm.deactivate(q)
            elif not was and self.arm_active:
                self.arm.deactivate(q)  # no goal runs: this only sets the hold at the measured position
                self.reflex = None
                if self.limit_reflex is not None:
                    lower, upper = self._limits
                    self._tolerated = np.maximum(lower - q, 0.0) + np.maximum(q - upper, 0.0)
            return answer

    def arm_problem(self, goal: TrajectoryGoal) -> str | None:
        """Why the trajectory controller rejects ``goal`` now (inactive after a reflex, or an invalid goal)."""
        with self.lock:
            return INACTIVE if not self.arm_active else validate(self.arm_params, goal, float(self.data.time))

    def _arm_q(self) -> tuple[np.ndarray, np.ndarray]:
        """Arm positions and velocities in the trajectory controller's joint order (copies: fancy indexing)."""
        return self.data.qpos[self._arm_qpos], self.data.qvel[self._arm_dof]

    def _finger_slot(self) -> int:
        return 0 if self.franka else self.finger_joints.index(self.grip_params.joint)

    def _on_step(self, _data: mujoco.MjData) -> None:
        for hook in self.hooks:
            hook(self)

    # ---- physical faults (tests and benchmarks) ---------------------------------------------------------------
    def arm_fault(self, kind: str, target: str) -> str | None:
        """Arm a fault for its next moment (see step_planner_interfaces/srv/InjectFault.srv); or why not."""
        with self.lock:
            if kind not in FAULTS:
                return f"unknown fault {kind!r}; one of {', '.join(FAULTS)}"
            if kind == "reflex":  # the next arm goal stops with this reflex, as franka_hardware meets it
                if self.cm is None:
                    return "reflex: this robot has no controller manager (robot:=fr3 has)"
                target = target or DEFAULT_REFLEX
                if target not in REFLEXES:
                    near = difflib.get_close_matches(target, REFLEXES, 1)
                    return f"reflex: unknown reflex {target!r}; " + (f"did you mean {near[0]}?" if near else
                                                                     "one of franka_msgs/msg/Errors's names: "
                                                                     + ", ".join(REFLEXES))
                self.faults[kind] = target
                return None
            known = self.info.drawers if kind == "drawer_short" else self.info.objects
            if target not in known:
                return f"{kind}: no {'drawer' if kind == 'drawer_short' else 'object'} {target!r} in this scene"
            if kind == "drawer_short":
                d = self.info.drawers[target]
                self.model.jnt_range[d.joint_id, 0] = DRAWER_SHORT  # the slide's inner stop moves out
                self.faults_done.append(f"drawer_short {target}")
                self._short_drawers.append(target)
                return None
            self.faults[kind] = target
            return None

    def _faults_step(self) -> None:
        """Under the lock, before a physics step: make an armed fault happen when its moment comes."""
        target = self.faults.get("reflex")
        if target is not None and self.arm.active is not None and self.arm.active.since_start > REFLEX_AFTER_S:
            del self.faults["reflex"]
            self.faults_done.append(f"reflex {target}")
            q = self._arm_q()[0]
            self.reflex = f"libfranka: Control exception: {target} (injected)"
            self.arm.deactivate(q)
            assert self.cm is not None
            self.cm.reflex({target}, "injected by ~/inject_fault")
            return
        held = perc.held_object(self.model, self.data, self.index, self.info)
        target = self.faults.get("slip")
        if target is not None and held == target and self.arm.active is not None:
            if isinstance(self.grip, FrankaGripper):  # the fingers let go while the arm carries it
                self.grip.hold = self.grip.params.max_width
            else:
                self.grip.setpoint = FINGER_MAX
            del self.faults["slip"]
            self.faults_done.append(f"slip {target}")
        target = self.faults.get("miss_place")
        if target is not None and held == target and self._releasing():
            obj = self.info.objects[target]  # being released: it lands beside the spot
            pos = self.data.qpos[obj.qpos_adr:obj.qpos_adr + 3]
            side = -np.sign(pos[1] - self.info.table_center[1]) or 1.0
            pos[1] += side * MISS_PLACE_OFFSET
            pos[2] += 0.01
            self.data.qvel[obj.dof_adr:obj.dof_adr + 6] = 0.0
            del self.faults["miss_place"]
            self.faults_done.append(f"miss_place {target}")

    def _releasing(self) -> bool:
        """A gripper goal is opening the fingers."""
        finger = float(self.data.qpos[self.index.finger_qpos[self._finger_slot()]])
        if isinstance(self.grip, FrankaGripper):
            return self.grip.command is not None and self.grip.command.target > 2 * finger
        return self.grip.active is not None and self.grip.active.setpoint > finger

    # ---- the controllers' goals ------------------------------------------------------------------------------
    def trajectory_goal(self, goal_id: Hashable, goal: TrajectoryGoal) -> str | None:
        """Accept ``goal`` (replacing the running one) or say why the controller rejects it."""
        with self.lock:
            if problem := self.arm_problem(goal):
                return problem
            self.arm.accept(goal_id, goal)
            return None

    def cancel_trajectory(self, goal_id: Hashable) -> bool:
        with self.lock:
            return self.arm.cancel(goal_id, float(self.data.time), *self._arm_q())

    def trajectory_feedback(self) -> dict | None:
        with self.lock:
            return self.arm.feedback(*self._arm_q())

    def gripper_goal(self, goal_id: Hashable, position: float, max_effort: float) -> None:
        with self.lock:
            self.grip.accept(goal_id, position, max_effort, float(self.data.time))

    def cancel_gripper(self, goal_id: Hashable) -> bool:
        with self.lock:
            if isinstance(self.grip, FrankaGripper):
                return self.grip.cancel(goal_id)
            return self.grip.cancel(goal_id, float(self.data.qpos[self.index.finger_qpos[self._finger_slot()]]))

    def franka_goal(self, action: str, goal_id: Hashable, request: object) -> None:
        """A goal of franka_gripper's ``action`` (homing, move, grasp, gripper_action) with its ROS fields."""
        with self.lock:
            assert isinstance(self.grip, FrankaGripper)
            start_goal(self.grip, "gripper_command" if action == "gripper_action" else action, goal_id, request,
                       float(self.data.time))

    def franka_feedback(self) -> dict | None:
        with self.lock:
            return self.grip.feedback() if isinstance(self.grip, FrankaGripper) else None

    def franka_state_width(self) -> float:
        with self.lock:
            return self.grip.state_width if isinstance(self.grip, FrankaGripper) else 0.0

    def take_ended(self) -> list[GoalEnd]:
        """Goals that ended since the last call (both controllers)."""
        with self.lock:
            ended = [*self.arm.ended, *self.grip.ended]
            self.arm.ended.clear()
            self.grip.ended.clear()
            return ended

    # ---- state ------------------------------------------------------------------------------------------------
    @property
    def time(self) -> float:
        return float(self.data.time)

    def joint_state(self) -> JointReading:
        """Arm and finger joints by controller name, as joint_state_broadcaster publishes them."""
        with self.lock:
            data, qpos, dofs = self.data, self._joint_qpos, self._joint_dof
            return JointReading(float(data.time), self._joint_names, tuple(data.qpos[qpos].tolist()),
                                tuple(data.qvel[dofs].tolist()), tuple(data.qfrc_actuator[dofs].tolist()))

    def hidden_objects(self) -> set[str]:
        """The objects inside a closed drawer now (a camera cannot see them)."""
        with self.lock:
            openings = perc.drawer_openings(self.data, self.info)
            closed = {d.name for d in self.info.volumes.drawers if not d.is_open(openings[d.name])}
            return {name for name in self.info.objects
                    if facts.location(self.info.volumes, perc.object_position(self.data, self.info, name),
                                      openings) in closed}

    def held_object(self) -> str | None:
        """What the fingers truly hold: both in contact, lifted, touching nothing but the robot (the physics'
        answer, for judges of truth; the client's own answer comes from the gripper's state)."""
        with self.lock:
            return perc.held_object(self.model, self.data, self.index, self.info)

    def model_poses(self) -> list[ModelPose]:
        """Every movable object as a model in the world and every drawer as a link of its cabinet model
        (the cabinet a model in the world), the way a world exported by ``export-world`` reports them."""
        with self.lock:
            return model_poses(self.model, self.data, self.info, self.world_name, self._pose_layout)


def _clip(value: float, low: float, high: float) -> float:
    """np.clip for one number, without its array machinery (NaN stays NaN, as there)."""
    return low if value < low else high if value > high else value


def _pose(pos: np.ndarray, quat_wxyz: np.ndarray) -> tuple[tuple[float, float, float], tuple[float, ...]]:
    w, x, y, z = (float(v) for v in quat_wxyz)
    return (float(pos[0]), float(pos[1]), float(pos[2])), (x, y, z, w)


@dataclass(frozen=True)
class PoseLayout:
    """Which bodies :func:`model_poses` reports, and under which names: fixed for a compiled scene."""

    objects: tuple[str, ...]
    object_bodies: np.ndarray
    # per drawer: its name as a link, its body, its cabinet's body and name, and whether the cabinet comes first here
    drawers: tuple[tuple[str, int, int, str, bool], ...]

    @classmethod
    def of(cls, model: mujoco.MjModel, info: SceneInfo) -> PoseLayout:
        drawers, cabinets = [], set()
        for name, d in info.drawers.items():
            parent = int(model.body_parentid[d.body_id])
            cabinet = model.body(parent).name
            drawers.append((f"{cabinet}/{name}", d.body_id, parent, cabinet, parent not in cabinets))
            cabinets.add(parent)
        return cls(tuple(info.objects), np.array([o.body_id for o in info.objects.values()], dtype=int),
                   tuple(drawers))


def model_poses(model: mujoco.MjModel, data: mujoco.MjData, info: SceneInfo, world_name: str,
                layout: PoseLayout | None = None) -> list[ModelPose]:
    """``layout``: :meth:`PoseLayout.of` the scene, when the caller keeps it (the robot publishes at 50 Hz)."""
    layout = layout or PoseLayout.of(model, info)
    ids = layout.object_bodies
    out = [ModelPose(world_name, name, (p[0], p[1], p[2]), (q[1], q[2], q[3], q[0]))
           for name, p, q in zip(layout.objects, data.xpos[ids].tolist(), data.xquat[ids].tolist(), strict=True)]
    for link, body, parent, cabinet, first in layout.drawers:
        if first:
            out.append(ModelPose(world_name, cabinet, *_pose(data.xpos[parent], data.xquat[parent])))
        rot = data.xmat[parent].reshape(3, 3)
        local = rot.T @ (data.xpos[body] - data.xpos[parent])
        quat = np.zeros(4)
        inv = np.zeros(4)
        mujoco.mju_negQuat(inv, data.xquat[parent])
        mujoco.mju_mulQuat(quat, inv, data.xquat[body])
        out.append(ModelPose(cabinet, link, *_pose(local, quat)))
    return out
