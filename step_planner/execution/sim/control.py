"""Stepping the physics: trajectory tracking, gripper commands, cancellation and monitoring.

Arm actuators are PD servos (gravity is compensated in the model); the control is
``q_ref + qd_ref * kv / kp`` so the servo sees the velocity feed-forward, which measured
1-2 mrad tracking error on TOPP-RA trajectories versus 0.13 rad for a plain position servo.
The ``cancel`` event is polled every physics step (2 ms); on cancel the arm holds where it is.

``pace`` 1.0 runs the physics in real time (a motion takes its physical duration in wall time, as on
the robot); 0 runs it as fast as it computes. Pacing never catches up on time spent elsewhere
(motion planning, waiting for the next command): the clock is re-anchored whenever the wall is ahead.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import mujoco
import numpy as np

from step_planner.execution.base import ExecCode
from step_planner.execution.sim import perception as perc
from step_planner.execution.sim.model import FINGER_MAX, KP, KV, PandaIndex
from step_planner.execution.sim.scene_info import SceneInfo
from step_planner.execution.sim.timing import TimedTrajectory


class MotionInterrupted(Exception):
    """A motion stopped early: canceled, or a monitor reported a failure (e.g. object slipped)."""

    def __init__(self, code: ExecCode, message: str, **details) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details


Monitor = Callable[[], "tuple[ExecCode, str] | None"]


class Controller:
    def __init__(
        self,
        model: mujoco.MjModel,
        data: mujoco.MjData,
        index: PandaIndex,
        on_step: Callable[[mujoco.MjData], None] | None = None,
        pace: float = 0.0,
        lock: threading.RLock | None = None,
    ) -> None:
        self.model, self.data, self.index = model, data, index
        self.on_step = on_step
        self._anchor = (time.perf_counter(), data.time)  # (wall, sim) at the last re-anchoring
        self.pace = pace
        # observe() from another thread reads a consistent state; an owner that reads the physics too passes its
        # own lock, so no reader sees a step half done (contacts are rebuilt from none at every step)
        self.lock = lock if lock is not None else threading.RLock()
        self.q_ref = data.qpos[index.arm_qpos].copy()
        self.grip_ref = FINGER_MAX
        self.sim_time_moving = 0.0

    @property
    def q(self) -> np.ndarray:
        return self.data.qpos[self.index.arm_qpos].copy()

    @property
    def finger_opening(self) -> float:
        """Mean opening of one finger (0 = closed, 0.04 = fully open)."""
        return float(np.mean(self.data.qpos[self.index.finger_qpos]))

    # ---- what the fingers feel: the in-process physics answers from contacts; a robot across ROS
    # answers from its gripper's own state (execution/controllers/port.py)
    def holds(self, info: SceneInfo, name: str) -> bool:
        """Whether the fingers hold the object: both touch it, they are not closed, it is at the grasp frame."""
        return perc.is_held(self.model, self.data, self.index, info, name)

    def grips(self, body_id: int, point: np.ndarray) -> bool:
        """Whether both fingers are closed on ``body_id`` (a drawer handle near ``point``)."""
        return len(perc.finger_contacts(self.model, self.data, self.index, body_id)) == 2

    def hold(self, q: np.ndarray | None = None) -> None:
        self.q_ref = self.q if q is None else np.asarray(q, dtype=float).copy()

    @property
    def pace(self) -> float:
        """Simulated seconds per wall second (the real-time factor); 0 runs as fast as it computes."""
        return self._pace

    @pace.setter
    def pace(self, value: float) -> None:
        """A pace counts from when it is set: simulated time stepped before it (a scene's unpaced settle) is not
        slept off later. Anchored at construction, the MuJoCo robot went silent for SETTLE_S / realtime_factor
        (0.5 s at real time) right after every scene (re)load (test/test_sim_pacing.py)."""
        if value < 0:
            raise ValueError(f"pace must be >= 0, got {value}")
        self._pace = value
        self._anchor = (time.perf_counter(), self.data.time)

    def step(self, q_ref: np.ndarray, qd_ref: np.ndarray, arm_ctrl: np.ndarray | None = None) -> None:
        """One physics step toward (q_ref, qd_ref) with the gripper at ``grip_ref``, paced, hooks called.
        ``arm_ctrl``: the arm actuators' controls as given (another servo's, execution/sim/servo.py) instead."""
        with self.lock:
            self.data.ctrl[self.index.arm_act] = q_ref + qd_ref * (KV / KP) if arm_ctrl is None else arm_ctrl
            self.data.ctrl[self.index.grip_act] = self.grip_ref
            mujoco.mj_step(self.model, self.data)
        if self.on_step is not None:
            self.on_step(self.data)
        if self.pace:
            self._keep_pace()

    def _keep_pace(self) -> None:
        wall0, sim0 = self._anchor
        ahead = (self.data.time - sim0) / self.pace - (time.perf_counter() - wall0)
        if ahead < 0:  # the wall clock is ahead (planning, idling): never run faster to catch up
            self._anchor = (time.perf_counter(), self.data.time)
        elif ahead > 0.005:
            time.sleep(ahead)

    def _check_cancel(self, cancel: threading.Event | None) -> None:
        if cancel is not None and cancel.is_set():
            wall0, sim0 = time.perf_counter(), self.data.time
            speed = float(np.max(np.abs(self.data.qvel[self.index.arm_dof])))
            q_at_cancel = self.q
            stop_sim = self.stop()
            coast = float(np.max(np.abs(self.q - q_at_cancel)))
            raise MotionInterrupted(
                ExecCode.CANCELED,
                f"canceled during motion; arm stopped in {stop_sim * 1000:.0f} ms (sim)",
                stop_sim_s=stop_sim,
                stop_wall_s=time.perf_counter() - wall0,
                canceled_at_sim_s=sim0,
                joint_speed_at_cancel=speed,
                coast_rad=coast,
            )

    def stop(self, max_time: float = 1.0, vel_tol: float = 0.02) -> float:
        """Hold the current configuration until the arm is still; returns simulated stop time."""
        t0 = self.data.time
        self.hold()
        zero = np.zeros(7)
        while self.data.time - t0 < max_time:
            self.step(self.q_ref, zero)
            if np.max(np.abs(self.data.qvel[self.index.arm_dof])) < vel_tol:
                break
        return self.data.time - t0

    def settle(self, duration: float, cancel: threading.Event | None = None) -> None:
        zero = np.zeros(7)
        t_end = self.data.time + duration
        while self.data.time < t_end:
            self._check_cancel(cancel)
            self.step(self.q_ref, zero)

    def follow(
        self,
        traj: TimedTrajectory,
        cancel: threading.Event | None = None,
        monitor: Monitor | None = None,
        monitor_every: int = 25,
    ) -> None:
        """Track a timed trajectory sampled at the physics period."""
        t0 = self.data.time
        for k in range(len(traj.t)):
            self._check_cancel(cancel)
            self.step(traj.q[k], traj.qd[k])
            if monitor is not None and k % monitor_every == monitor_every - 1 and (bad := monitor()):
                self.stop()
                raise MotionInterrupted(bad[0], bad[1])
        self.hold(traj.q[-1])
        self.settle(0.1, cancel)
        self.sim_time_moving += self.data.time - t0

    def gripper(self, opening: float, cancel: threading.Event | None = None, max_time: float = 1.2,
                grasp_width: float | None = None) -> None:
        """Command one finger's opening; returns when the fingers stop moving (contact or target).
        ``grasp_width`` (what a grasp expects between the fingers) is for grippers that judge a grasp themselves
        (franka_gripper, across ROS); here the physics decides."""
        self.grip_ref = float(np.clip(opening, 0.0, FINGER_MAX))
        t0 = self.data.time
        zero = np.zeros(7)
        while self.data.time - t0 < max_time:
            self._check_cancel(cancel)
            self.step(self.q_ref, zero)
            moving = np.max(np.abs(self.data.qvel[self.index.finger_dof]))
            if self.data.time - t0 > 0.15 and moving < 2e-3:
                break
        self.settle(0.1, cancel)
