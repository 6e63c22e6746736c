"""Inverse kinematics of the grasp frame with mink (differential IK on the arm-only model).

Solutions are seeded from the current arm configuration (so consecutive motions stay on one
branch) and restarted from random seeds when that fails. Collision checking of the result is
the planner's job; IK only answers "can the hand be there with this orientation".
"""

from __future__ import annotations

import mink
import numpy as np

from step_planner.execution.sim.model import (
    GRASP_FRAME,
    HOME_Q,
    PandaIndex,
    compile_spec,
    narrow_arm_limits,
    panda_spec,
)

POS_TOL = 1e-3
ROT_TOL = 1e-2


def topdown_rotation(closing_angle: float) -> np.ndarray:
    """Hand pointing down with the finger closing axis at ``closing_angle`` (rad) from world x."""
    y = np.array([np.cos(closing_angle), np.sin(closing_angle), 0.0])
    z = np.array([0.0, 0.0, -1.0])
    return np.column_stack([np.cross(y, z), y, z])


def front_rotation(approach_yaw: float, closing_sign: float = 1.0) -> np.ndarray:
    """Hand horizontal, pointing along ``approach_yaw`` (rad from world x), fingers closing
    horizontally across it (a vertical handle bar); ``closing_sign`` picks one of the hand's two
    rolls about the approach axis (IK takes whichever the arm can reach)."""
    z = np.array([np.cos(approach_yaw), np.sin(approach_yaw), 0.0])
    y = closing_sign * np.array([-np.sin(approach_yaw), np.cos(approach_yaw), 0.0])
    return np.column_stack([np.cross(y, z), y, z])


class IkSolver:
    """``limits``: (lower, upper) arm joint ranges to solve within instead of the model's (a robot's own limits)."""

    def __init__(self, seed: int = 0, limits: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        self.model = compile_spec(panda_spec())
        self.index = PandaIndex(self.model)
        self.configuration = mink.Configuration(self.model)
        self.task = mink.FrameTask(GRASP_FRAME, "body", position_cost=1.0, orientation_cost=0.5)
        self.posture = mink.PostureTask(self.model, cost=1e-3)
        self.limits = [mink.ConfigurationLimit(self.model)]
        self.rng = np.random.default_rng(seed)
        if limits is not None:
            self.restrict(*limits)

    def restrict(self, lower: np.ndarray, upper: np.ndarray) -> None:
        """Solve within [lower, upper] (arm joints, rad) from now on."""
        narrow_arm_limits(self.model, lower, upper)
        self.index = PandaIndex(self.model)
        self.limits = [mink.ConfigurationLimit(self.model)]

    def _q_full(self, arm_q: np.ndarray) -> np.ndarray:
        q = self.model.qpos0.copy()
        q[self.index.arm_qpos] = arm_q
        q[self.index.finger_qpos] = 0.04
        return q

    def forward(self, arm_q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Grasp-frame position and rotation matrix at ``arm_q``."""
        self.configuration.update(self._q_full(arm_q))
        pose = self.configuration.get_transform_frame_to_world(GRASP_FRAME, "body")
        return pose.translation().copy(), pose.rotation().as_matrix().copy()

    def _converge(self, target: mink.SE3, q0: np.ndarray, iters: int) -> np.ndarray | None:
        self.configuration.update(self._q_full(q0))
        self.task.set_target(target)
        self.posture.set_target(self._q_full(q0))
        for _ in range(iters):
            err = self.task.compute_error(self.configuration)
            if np.linalg.norm(err[:3]) < POS_TOL and np.linalg.norm(err[3:]) < ROT_TOL:
                return self.configuration.q[self.index.arm_qpos].copy()
            vel = mink.solve_ik(
                self.configuration, [self.task, self.posture], 0.1, "daqp", damping=1e-3, limits=self.limits
            )
            self.configuration.integrate_inplace(vel, 0.1)
        return None

    def solve(
        self,
        position: np.ndarray,
        rotation: np.ndarray,
        seed_q: np.ndarray | None = None,
        restarts: int = 8,
        accept=None,
    ) -> np.ndarray | None:
        """An arm configuration putting the grasp frame at the pose, or None (no IK).

        ``accept(q) -> bool`` can reject solutions (e.g. in collision) and ask for another.
        """
        target = mink.SE3.from_rotation_and_translation(mink.SO3.from_matrix(rotation), position)
        seeds = [np.asarray(seed_q if seed_q is not None else HOME_Q, dtype=float), HOME_Q.copy()]
        for _ in range(restarts):
            # clipped: a range not centred on 0 (the FR3's joint 6) must not seed outside it (a no-op for the Panda's)
            seeds.append(np.clip(self.rng.uniform(self.index.lower * 0.8, self.index.upper * 0.8),
                                 self.index.lower, self.index.upper))
        for q0 in seeds:
            q = self._converge(target, q0, iters=150)
            if q is not None and (accept is None or accept(q)):
                return q
        return None

    def cartesian_path(
        self,
        q_start: np.ndarray,
        goal_position: np.ndarray,
        step: float = 0.005,
    ) -> list[np.ndarray] | None:
        """Joint waypoints moving the grasp frame in a straight line, orientation kept."""
        p0, rot = self.forward(q_start)
        dist = float(np.linalg.norm(goal_position - p0))
        n = max(2, int(np.ceil(dist / step)) + 1)
        path = [np.asarray(q_start, dtype=float)]
        for s in np.linspace(0.0, 1.0, n)[1:]:
            target = mink.SE3.from_rotation_and_translation(mink.SO3.from_matrix(rot), p0 + s * (goal_position - p0))
            q = self._converge(target, path[-1], iters=60)
            if q is None or np.max(np.abs(q - path[-1])) > 0.15:
                return None
            path.append(q)
        return path
