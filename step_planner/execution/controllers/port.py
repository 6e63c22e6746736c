"""The sim primitives' controller interface, served by a robot across ROS instead of in-process physics.

The primitives (:mod:`step_planner.execution.sim.primitives`) plan on a MuJoCo model of the arm and the scene
and ask a controller to move and to say what the fingers feel. Here the model is a *mirror*: its joints come
from the robot's joint states, its objects and drawers from the model poses the robot's world reports, and
nothing in it is simulated. Motions go out as FollowJointTrajectory goals, the gripper as GripperCommand goals.
What the fingers hold is judged the way a robot can judge it: the fingers closed and came to rest apart (on
something) and stay apart, and the object is perceived between them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import mujoco
import numpy as np

from step_planner.execution.base import ExecCode
from step_planner.execution.controllers.connection import ActionOutcome, RobotConnection
from step_planner.execution.controllers.trajectory import waypoints
from step_planner.execution.sim.control import Monitor, MotionInterrupted
from step_planner.execution.sim.controller_emulation import GOAL_TOLERANCE_VIOLATED, PATH_TOLERANCE_VIOLATED
from step_planner.execution.sim.model import ARM_JOINTS, FINGER_JOINTS, FINGER_MAX, PandaIndex
from step_planner.execution.sim.perception import MIN_GRASP_OPENING
from step_planner.execution.sim.scene_info import SceneInfo
from step_planner.execution.sim.timing import TimedTrajectory

HANDLE_NEAR = 0.03  # m: the grasp frame must be this close to a handle the fingers are closed on
FINGERS_MOVED = 0.002  # m: a close that leaves the fingers within this of where they were did not happen
FRESH_S = 0.2  # waiting for a joint state (and poses) newer than a call, before judging the world


class RemoteController:
    """Duck-types :class:`step_planner.execution.sim.control.Controller` for :class:`SimPrimitives`."""

    def __init__(self, connection: RobotConnection, model: mujoco.MjModel, data: mujoco.MjData,
                 index: PandaIndex, info: SceneInfo) -> None:
        self.connection = connection
        self.model, self.data, self.index, self.info = model, data, index, info
        self.lock = threading.RLock()
        self.sim_time_moving = 0.0
        self.grip_ref = FINGER_MAX
        self.closed_on: float | None = None  # where the last close came to rest on something (one finger, m)
        self.lost: str | None = None  # why the robot is gone, once it is
        self.lost_at = 0.0  # time.monotonic() when it was found gone
        self.last_outcome: ActionOutcome | None = None
        # asked when an arm goal did not succeed: why the robot stopped (the FR3's reflex), or None
        self.robot_stopped: Callable[[], str | None] | None = None

    # ---- the mirror ---------------------------------------------------------------------------------------
    @property
    def q(self) -> np.ndarray:
        return self.data.qpos[self.index.arm_qpos].copy()

    @property
    def finger_opening(self) -> float:
        return float(np.mean(self.data.qpos[self.index.finger_qpos]))

    def sync(self, fresh: bool = False, moving: bool = False) -> None:
        """Bring the mirror to the robot's latest joint states and perceived poses (``fresh``: newer than now;
        ``moving``: during a motion, the newest poses rather than the filtered ones)."""
        if fresh:
            self.connection.wait_fresh(time.monotonic(), FRESH_S)
        joints = self.connection.joints()
        poses = self.connection.poses(filtered=not moving)
        model, data, index = self.model, self.data, self.index
        with self.lock:
            if joints is not None:
                for adr, name in zip([*index.arm_qpos, *index.finger_qpos], ARM_JOINTS + FINGER_JOINTS, strict=True):
                    if name in joints.position:
                        data.qpos[adr] = joints.position[name]
                data.time = joints.stamp
            for name, obj in self.info.objects.items():
                if (pose := poses.get(name)) is not None:
                    data.qpos[obj.qpos_adr:obj.qpos_adr + 3] = pose.position
                    data.qpos[obj.qpos_adr + 3:obj.qpos_adr + 7] = pose.quat
            for name, d in self.info.drawers.items():
                if (pose := poses.get(name)) is not None:  # the slide's travel in its cabinet's frame
                    parent = int(model.body_parentid[d.body_id])
                    local = data.xmat[parent].reshape(3, 3).T @ (pose.position - data.xpos[parent])
                    data.qpos[d.qpos_adr] = float((local - model.body_pos[d.body_id]) @ model.jnt_axis[d.joint_id])
            data.qvel[:] = 0.0
            mujoco.mj_forward(model, data)

    # ---- motions ------------------------------------------------------------------------------------------
    def hold(self, q: np.ndarray | None = None) -> None:
        """Nothing to send: joint_trajectory_controller holds the last point of every goal (JTC.cpp:1939-1951)."""

    def stop(self, max_time: float = 1.0, vel_tol: float = 0.02) -> float:
        """Motions are stopped by canceling their goal (the connection does); nothing runs between goals."""
        return 0.0

    def follow(self, traj: TimedTrajectory, cancel: threading.Event | None = None, monitor: Monitor | None = None,
               monitor_every: int = 25) -> None:
        config = self.connection.config
        wp = waypoints(traj, config.trajectory.point_period_s)
        if outside := config.arm.outside_limits(wp.q):  # checked on what is sent: the arm never moves
            k, j, value = outside[0]
            lo, hi = config.arm.lower[j], config.arm.upper[j]
            raise MotionInterrupted(ExecCode.PLAN_FAILED, f"not sent: {len(outside)} waypoint position(s) outside "
                                    f"the {config.robot}'s joint limits, first at waypoint {k} of {len(wp.t)}: "
                                    f"{config.arm.joints[j]} at {value:.4f} rad, limits [{lo}, {hi}]")

        def check():
            self.sync(moving=True)
            return monitor() if monitor is not None else None

        outcome = self.connection.run_trajectory(wp, cancel, check if monitor is not None else None)
        self.sync()
        self.last_outcome = outcome
        if outcome.status not in ("succeeded", "canceled") and self.robot_stopped is not None \
                and (why := self.robot_stopped()) is not None:
            raise MotionInterrupted(ExecCode.BACKEND_ERROR, f"{why} ({outcome.message})")
        self._raise_unless_ok(outcome, "the trajectory")
        self.sim_time_moving += traj.duration

    def gripper(self, opening: float, cancel: threading.Event | None = None, max_time: float = 1.2,
                grasp_width: float | None = None) -> None:
        """Command one finger's opening; returns when the fingers rest. ``grasp_width``: the primitive closes on
        something that wide (franka_gripper grasps at it). A close is remembered as closed *on something* only if
        the fingers moved and came to rest apart, and, where the gripper decides (franka_gripper's grasp), only
        if it says the object is grasped."""
        self.sync()
        before = self.finger_opening
        target = float(np.clip(opening, 0.0, FINGER_MAX))
        outcome = self.connection.command_gripper(target, cancel, grasp_width=grasp_width)
        self.sync()
        self.last_outcome = outcome
        self._raise_unless_ok(outcome, "the gripper", gripper=True)
        rest = float(outcome.details.get("opening", self.finger_opening))
        self.grip_ref = target
        if outcome.details.get("grasped") is False:  # franka_gripper: not within the epsilons of the width
            self.closed_on = None
            return
        if target >= before - FINGERS_MOVED:
            self.closed_on = None  # opened (or stayed): nothing held
            return
        if rest > before - FINGERS_MOVED:
            self.closed_on = None
            raise MotionInterrupted(ExecCode.GRASP_FAILED, f"the gripper did not close: the fingers stayed at "
                                                           f"{rest * 1000:.1f} mm ({outcome.message})")
        self.closed_on = rest if rest > MIN_GRASP_OPENING else None

    def settle(self, duration: float, cancel: threading.Event | None = None) -> None:
        """Let the world come to rest: the robot keeps running in real time while this waits."""
        end = time.monotonic() + duration
        while time.monotonic() < end:
            if cancel is not None and cancel.is_set():
                raise MotionInterrupted(ExecCode.CANCELED, "canceled while waiting for the world to settle")
            time.sleep(0.005)
        self.sync()

    def _raise_unless_ok(self, outcome: ActionOutcome, what: str, gripper: bool = False) -> None:
        status = outcome.status
        if status == "succeeded" or (gripper and status == "aborted"):
            return  # a gripper that stalls on an object aborts unless allow_stalling (GAC:176-201): judged by rest
        if status == "canceled":
            stop = outcome.cancel_to_result_s
            raise MotionInterrupted(ExecCode.CANCELED, f"canceled during {what}; the controller holds the arm"
                                    + (f" (result {stop * 1000:.0f} ms after the cancel)" if stop is not None else ""),
                                    stop_wall_s=stop, **outcome.details)
        if status == "stopped" and outcome.stopped_by is not None:
            raise MotionInterrupted(outcome.stopped_by[0], outcome.stopped_by[1])
        if status == "lost":
            self.lost, self.lost_at = outcome.message, time.monotonic()
            raise MotionInterrupted(ExecCode.BACKEND_ERROR, outcome.message)
        if status == "timeout":
            raise MotionInterrupted(ExecCode.TIMEOUT, outcome.message)
        if status == "rejected":
            raise MotionInterrupted(ExecCode.BACKEND_ERROR, f"{outcome.message}: joint_trajectory_controller rejects "
                                    f"a goal whose joints, timing or final velocity it does not accept and logs why")
        code = getattr(outcome.result, "error_code", None)
        if code in (PATH_TOLERANCE_VIOLATED, GOAL_TOLERANCE_VIOLATED):
            raise MotionInterrupted(ExecCode.COLLISION, f"the arm could not follow {what} (blocked?): "
                                                        f"{outcome.message}; max tracking error "
                                                        f"{outcome.max_error:.3f} rad")
        raise MotionInterrupted(ExecCode.BACKEND_ERROR, f"{what} ended: {outcome.message}")

    def still_lost(self) -> str | None:
        """None once the robot is back after a loss: a joint state received after the loss was noticed, and both
        action servers there (what the fingers held is then forgotten: a restarted robot starts open). A loss is
        noticed after ``state_stale_s`` of silence or when a server is gone, so no state sent before it is still
        on its way by then. Otherwise why it is not back, as it stands now, with the loss it follows."""
        if self.lost is None:
            return None
        joints = self.connection.joints()
        missing = [] if joints is not None and joints.received > self.lost_at else \
            [f"no joint state on {self.connection.config.joint_states} since it was lost"]
        missing += [f"the action server {name} is not available" for name in self.connection.missing_servers()]
        if missing:
            return f"the robot is not back: {'; '.join(missing)} ({time.monotonic() - self.lost_at:.1f} s ago: " \
                   f"{self.lost})"
        self.lost, self.closed_on = None, None
        return None

    # ---- what the fingers feel -------------------------------------------------------------------------------
    def holds(self, info: SceneInfo, name: str) -> bool:
        """Closed on something, still apart, and the object perceived at the grasp frame."""
        if self.closed_on is None or self.finger_opening <= MIN_GRASP_OPENING:
            return False
        obj = info.objects[name]
        gap = np.linalg.norm(self.data.xpos[obj.body_id] - self.data.xpos[self.index.grasp_body])
        return bool(gap < 0.04 + obj.half[2])

    def grips(self, body_id: int, point: np.ndarray) -> bool:
        """Closed on something, still apart, and the grasp frame at the handle ``point``."""
        if self.closed_on is None or self.finger_opening <= MIN_GRASP_OPENING:
            return False
        return bool(np.linalg.norm(self.data.xpos[self.index.grasp_body] - point) < HANDLE_NEAR)
