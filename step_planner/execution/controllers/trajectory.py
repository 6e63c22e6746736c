"""A timed trajectory of the motion stack as the waypoints a joint_trajectory_controller goal carries.

Pure numpy (no ROS): the motion stack samples its TOPP-RA trajectories at the physics period (2 ms);
a controller goal needs far fewer points, because the controller interpolates between them with a
cubic spline through positions and velocities. Points every ``period`` (20 ms) keep that spline within
a fraction of a millimetre of the checked trajectory. ``time_from_start`` is strictly increasing and the
last point is the trajectory's end at rest, as the controller requires.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from step_planner.execution.sim.timing import TimedTrajectory


@dataclass(frozen=True)
class Waypoints:
    t: np.ndarray  # (n,) seconds from start, strictly increasing, t[0] > 0
    q: np.ndarray  # (n, joints)
    qd: np.ndarray  # (n, joints); the last row is zero

    @property
    def duration(self) -> float:
        return float(self.t[-1])


def waypoints(traj: TimedTrajectory, period: float) -> Waypoints:
    """Every ``period`` of ``traj`` after its start, and its end (velocity zero).

    The start itself is left out: the controller starts from where the arm is (it interpolates from the
    current state to the first point), and a first point at t = 0 would only repeat that state.
    A trajectory that does not move becomes one point at ``period``: hold the end.
    """
    t, q, qd = np.asarray(traj.t), np.asarray(traj.q), np.asarray(traj.qd)
    if len(t) < 2 or t[-1] <= 0:
        return Waypoints(np.array([period]), q[-1:].copy(), np.zeros((1, q.shape[1])))
    step = max(1, int(round(period / max(t[1] - t[0], 1e-9))))
    idx = list(range(step, len(t) - 1, step))
    if idx and t[-1] - t[idx[-1]] < 0.5 * period:  # no sliver of a segment before the end
        idx.pop()
    idx.append(len(t) - 1)
    qd_out = qd[idx].copy()
    qd_out[-1] = 0.0
    return Waypoints(t[idx].copy(), q[idx].copy(), qd_out)
