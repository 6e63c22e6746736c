"""Arm motions built from IK, planning, timing and control: the MoveIt-like layer primitives use.

``move_to_pose`` = IK (collision-free solution) -> RRTConnect -> TOPP-RA -> dense re-check ->
track. ``move_linear`` = straight-line Cartesian IK path -> TOPP-RA (slow) -> track. Failures
raise :class:`MotionInterrupted` with the error code the planner sees (NO_IK, PLAN_FAILED, ...).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from step_planner.execution.base import ExecCode
from step_planner.execution.sim.control import Controller, Monitor, MotionInterrupted
from step_planner.execution.sim.ik import IkSolver
from step_planner.execution.sim.planning import (
    CollisionChecker,
    PlanningCanceled,
    PlanningError,
    plan_rrt_connect,
)
from step_planner.execution.sim.timing import TimingError, time_parameterize

RRT_TIMEOUT = 3.0  # seconds for the first RRTConnect attempt; a retry gets more


@dataclass
class MotionStats:
    planning_s: float = 0.0
    plans: int = 0
    collision_checks: int = 0
    notes: list[str] = field(default_factory=list)


class Arm:
    """``speed_scale`` scales every motion's velocity and acceleration limits (1.0: half the Panda's limits);
    ``velocity_cap`` (rad/s per joint, None: none) bounds every joint's planned speed, e.g. to what the arm
    controller can stop quickly on a cancel."""

    def __init__(self, controller: Controller, ik: IkSolver, checker: CollisionChecker, seed: int = 0,
                 speed_scale: float = 1.0, velocity_cap: Sequence[float] | None = None) -> None:
        self.controller, self.ik, self.checker = controller, ik, checker
        self.seed = seed
        self.speed_scale = speed_scale
        self.velocity_cap = None if velocity_cap is None else np.asarray(velocity_cap, dtype=float)
        self.stats = MotionStats()

    def solve_ik(
        self, position: np.ndarray, rotation: np.ndarray, what: str, collision_free: bool = True, then=None
    ) -> np.ndarray:
        """A joint solution for the pose; with ``then(q) -> bool`` a solution must also pass that
        test (e.g. its straight-line descent is feasible), else IK tries other seeds: a solution
        on an awkward branch (after a front handle grasp) can leave no straight way down."""
        self.checker.sync(self.controller.data)

        def accept(q: np.ndarray) -> bool:
            return (not collision_free or self.checker.is_free(q)) and (then is None or then(q))

        q = self.ik.solve(position, rotation, seed_q=self.controller.q, accept=accept)
        if q is None:
            raise MotionInterrupted(
                ExecCode.NO_IK,
                f"no collision-free IK solution for {what} at {np.round(position, 3).tolist()}",
            )
        return q

    def move_joints(
        self,
        q_goal: np.ndarray,
        what: str,
        cancel: threading.Event | None = None,
        monitor: Monitor | None = None,
        speed: float = 1.0,
        attempts: int = 3,
    ) -> None:
        """Plan (RRTConnect), time, re-check densely and track. A timed trajectory that still cuts
        a corner after a slower retry is planned again, up to ``attempts`` plans, and an
        RRTConnect that timed out gets one more try with twice the time: over a 40-primitive
        task a one-in-fifty failure would otherwise end most runs."""
        self.checker.sync(self.controller.data)
        q_start = self.controller.q
        for attempt in range(attempts):
            try:
                path, seconds = plan_rrt_connect(
                    self.checker,
                    q_start,
                    q_goal,
                    timeout=RRT_TIMEOUT * (1 + attempt),
                    seed=self.seed + self.stats.plans,
                    cancel=cancel,
                )
            except PlanningCanceled as exc:
                raise MotionInterrupted(ExecCode.CANCELED, "canceled while planning (the arm had not moved)") from exc
            except PlanningError as exc:
                if str(exc).startswith("RRTConnect found no path") and attempt == 0 < attempts - 1:
                    continue  # a narrow passage (under an open drawer): once more, with twice the time
                raise MotionInterrupted(ExecCode.PLAN_FAILED, f"planning to {what} failed: {exc}") from exc
            finally:
                self.stats.plans += 1
            self.stats.planning_s += seconds
            traj = self._timed_free(path, speed, what)
            if traj is not None:
                break
            if attempt == attempts - 1:
                raise MotionInterrupted(ExecCode.PLAN_FAILED, f"timed trajectory to {what} collides ({attempts} plans)")
        self.stats.collision_checks = self.checker.checks
        self.controller.follow(traj, cancel, monitor)

    def _timed_free(self, path: np.ndarray, speed: float, what: str):
        """The timed trajectory of ``path`` if it is collision-free (else a slower one hugging the
        polyline), or None when both cut a corner."""
        dt = self.controller.model.opt.timestep
        speed *= self.speed_scale
        try:
            traj = time_parameterize(path, dt, speed=speed, velocity_cap=self.velocity_cap)
            if self.checker.first_collision(traj.q[::5], step=0.01) is None:
                return traj
            traj = time_parameterize(path, dt, speed=speed * 0.5, densify_step=0.005,
                                     velocity_cap=self.velocity_cap)
        except TimingError as exc:
            raise MotionInterrupted(ExecCode.PLAN_FAILED, f"timing the path to {what} failed: {exc}") from exc
        return traj if self.checker.first_collision(traj.q[::5], step=0.01) is None else None

    def move_to_pose(
        self,
        position: np.ndarray,
        rotation: np.ndarray,
        what: str,
        cancel: threading.Event | None = None,
        monitor: Monitor | None = None,
    ) -> None:
        q_goal = self.solve_ik(position, rotation, what)
        self.move_joints(q_goal, what, cancel, monitor)

    def plan_linear(
        self, q_start: np.ndarray, position: np.ndarray, what: str, moving: frozenset[int] = frozenset()
    ) -> list[np.ndarray]:
        """Joint waypoints for a straight-line Cartesian move, checked for collisions.

        Finger and held-object contacts are allowed (bringing them close is the point); so are
        contacts with ``moving`` geoms (a drawer pulled along with the hand). Any other robot
        contact within the safety margin rejects the path.
        """
        path = self.ik.cartesian_path(q_start, np.asarray(position, dtype=float))
        if path is None:
            raise MotionInterrupted(ExecCode.NO_IK, f"no straight-line IK path for {what}")
        self.checker.sync(self.controller.data)
        self.checker.ignore(moving)
        try:
            for q in path[1:]:
                if hits := self.checker.contacts(q, allow_fingers=True):
                    raise MotionInterrupted(ExecCode.PLAN_FAILED, f"straight-line path for {what} collides: {hits[0]}")
        finally:
            self.checker.ignore(())
        return path

    def run_path(
        self,
        path: list[np.ndarray],
        cancel: threading.Event | None = None,
        monitor: Monitor | None = None,
        speed: float = 0.25,
    ) -> None:
        traj = time_parameterize(np.array(path), self.controller.model.opt.timestep, speed=speed * self.speed_scale,
                                 densify_step=0.02, velocity_cap=self.velocity_cap)
        self.controller.follow(traj, cancel, monitor)

    def move_linear(
        self,
        position: np.ndarray,
        what: str,
        cancel: threading.Event | None = None,
        monitor: Monitor | None = None,
        speed: float = 0.25,
        moving: frozenset[int] = frozenset(),
    ) -> None:
        """Straight-line Cartesian move of the grasp frame (approach, retreat, pull, push)."""
        self.run_path(self.plan_linear(self.controller.q, position, what, moving), cancel, monitor, speed)

    def grasp_position(self) -> np.ndarray:
        return self.controller.data.xpos[self.controller.index.grasp_body].copy()
