"""Time parameterization of joint paths with TOPP-RA (the analogue of MoveIt's TOTG).

Paths are densified first so the cubic spline through the waypoints stays within millimetres of
the collision-checked polyline; the sampled trajectory is then re-checked by the caller.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from step_planner.execution.sim.model import ACC_LIMITS, VEL_LIMITS


@dataclass
class TimedTrajectory:
    t: np.ndarray  # (n,)
    q: np.ndarray  # (n, 7)
    qd: np.ndarray  # (n, 7)

    @property
    def duration(self) -> float:
        return float(self.t[-1]) if len(self.t) else 0.0


class TimingError(Exception):
    """TOPP-RA could not parameterize the path."""


def densify(qs: np.ndarray, max_step: float = 0.04) -> np.ndarray:
    out = [qs[0]]
    for a, b in zip(qs[:-1], qs[1:], strict=True):
        n = max(1, int(np.ceil(np.max(np.abs(b - a)) / max_step)))
        out.extend(a + (b - a) * s for s in np.linspace(0, 1, n + 1)[1:])
    return np.array(out)


def time_parameterize(
    qs: np.ndarray,
    dt: float,
    speed: float = 1.0,
    densify_step: float = 0.04,
    velocity_cap: np.ndarray | None = None,
) -> TimedTrajectory:
    """Sample a time-optimal trajectory through ``qs`` at period ``dt``; ``speed`` scales limits;
    ``velocity_cap`` (rad/s per joint) bounds the scaled velocity limits further."""
    import toppra as ta
    import toppra.algorithm as algo
    import toppra.constraint as constraint

    logging.getLogger("toppra").setLevel(logging.ERROR)  # failures surface as TimingError instead
    qs = np.asarray(qs, dtype=float)
    keep = [qs[0]]
    for q in qs[1:]:  # drop near-duplicate waypoints: they make the spline path badly conditioned
        if np.max(np.abs(q - keep[-1])) > 1e-4:
            keep.append(q)
    keep[-1] = qs[-1]  # end exactly at the goal (moves < 1e-4 rad if the start was kept alone)
    qs = densify(np.array(keep), densify_step)
    if len(qs) < 2:  # start and goal coincide: hold there
        return TimedTrajectory(np.array([0.0]), qs[-1:].copy(), np.zeros((1, qs.shape[1])))
    seg = np.linalg.norm(np.diff(qs, axis=0), axis=1)
    ss = np.concatenate([[0.0], np.cumsum(seg)])
    ss /= ss[-1]
    path = ta.SplineInterpolator(ss, qs, bc_type="clamped")
    vmax = VEL_LIMITS * speed if velocity_cap is None else np.minimum(VEL_LIMITS * speed, velocity_cap)
    vlim = np.column_stack([-vmax, vmax])
    alim = np.column_stack([-ACC_LIMITS * speed, ACC_LIMITS * speed])
    pc_vel = constraint.JointVelocityConstraint(vlim)
    pc_acc = constraint.JointAccelerationConstraint(alim)
    gridpoints = np.linspace(0, 1, min(400, max(50, 8 * len(qs))))
    instance = algo.TOPPRA([pc_vel, pc_acc], path, gridpoints=gridpoints, parametrizer="ParametrizeConstAccel")
    traj = instance.compute_trajectory(0, 0)
    if traj is None:
        raise TimingError("TOPP-RA found no feasible parameterization")
    duration = float(traj.duration)
    t = np.arange(0.0, duration + dt, dt)
    t[-1] = min(t[-1], duration)
    return TimedTrajectory(t, traj(t), traj(t, 1))
