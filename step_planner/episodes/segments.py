"""A recorded joint trajectory split into what a robot's controllers execute: arm segments and gripper events.

Pure numpy (no ROS). An episode recorded on the MuJoCo backend samples the arm and finger joints at a rate of
simulated time (``joint_rate_hz``, 50 Hz). The primitives move the arm and the gripper one after the other (the
arm holds while the fingers move, the fingers hold while the arm moves), so the timeline splits into

- **arm segments**: maximal runs in which some arm joint moves faster than ``ARM_MOVING`` (joint_trajectory_
  controller's stopped_velocity_tolerance, 0.01 rad/s), cut where a gripper event happens; each becomes one
  FollowJointTrajectory goal through the recorded positions and velocities, in recorded timing, ending at rest;
- **gripper events**: runs in which the fingers move by more than ``FINGER_EVENT`` (2 mm) in all; each becomes one
  GripperCommand goal. Where the fingers came to rest pressing (their recorded effort above ``GRIP_EFFORT``) they
  closed on something: the command is 0, as the simulator's primitives command a grasp, and the gripper controller
  stalls on the object as the recording's did. Otherwise (an opening, or a free move to a smaller opening such as
  the handle pre-grasp) the command is the opening the fingers came to rest at. A recording without efforts counts
  every closing motion as a grasp.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

ARM_MOVING = 0.01  # rad/s: an arm joint moving slower than this is at rest (JTC stopped_velocity_tolerance)
FINGER_MOVING = 0.005  # m/s: the fingers moving slower than this are at rest
FINGER_EVENT = 0.002  # m: a finger motion smaller than this in all is contact jitter, not a command
MERGE_S = 0.1  # rests shorter than this inside a motion do not split it
GRIP_EFFORT = 2.0  # N per finger: fingers at rest pushing harder than this hold something (a free move rests at ~0)


class SegmentError(ValueError):
    """The recorded joint states cannot be replayed (missing joints, too few samples); the message says which."""


@dataclass(frozen=True)
class ArmSegment:
    """One arm motion: ``t`` from the rest before it (strictly increasing, > 0), positions and velocities in the
    model's joint order, ending at rest; ``start`` is the rest position it leaves from."""

    index: int  # sample index of the rest it starts from
    start: np.ndarray  # (7,)
    t: np.ndarray  # (n,)
    q: np.ndarray  # (n, 7)
    qd: np.ndarray  # (n, 7); the last row is zero

    @property
    def duration(self) -> float:
        return float(self.t[-1])

    @property
    def largest_move(self) -> float:
        """The largest joint travel from the start (rad)."""
        return float(np.max(np.abs(self.q - self.start)))


@dataclass(frozen=True)
class GripperEvent:
    index: int  # sample index where the fingers start to move
    before: float  # one finger's opening before (m)
    after: float  # ... where it came to rest
    command: float  # the GripperCommand position to send (one finger's opening, m)

    @property
    def grasp(self) -> bool:
        """A close onto something (commanded to 0, resting on the object)."""
        return self.command == 0.0 and self.after > self.command


def _runs(moving: np.ndarray, merge: int) -> list[tuple[int, int]]:
    """[first, last] sample-step indices of the True runs of ``moving``, runs less than ``merge`` apart joined."""
    runs: list[list[int]] = []
    for i in np.flatnonzero(moving):
        if runs and i - runs[-1][1] <= merge:
            runs[-1][1] = int(i)
        else:
            runs.append([int(i), int(i)])
    return [(a, b) for a, b in runs]


def split(names: Sequence[str], q_all: np.ndarray, qd_all: np.ndarray, rate_hz: float, arm_joints: Sequence[str],
          finger_joints: Sequence[str], effort_all: np.ndarray | None = None) -> list[ArmSegment | GripperEvent]:
    """The events of a recorded joint trajectory, in order.

    ``q_all``/``qd_all``/``effort_all``: (samples, len(names)) positions, velocities and efforts sampled every
    1/``rate_hz`` s (efforts may be None); ``arm_joints``/``finger_joints``: the names to read, in the model's order.
    """
    missing = [j for j in (*arm_joints, *finger_joints) if j not in names]
    if missing:
        raise SegmentError(f"the recorded joint states lack {', '.join(missing)}")
    if len(q_all) < 2:
        raise SegmentError("fewer than two recorded joint states: nothing moved")
    col = [list(names).index(j) for j in arm_joints]
    fingers = [list(names).index(j) for j in finger_joints]
    q, qd = np.asarray(q_all, float)[:, col], np.asarray(qd_all, float)[:, col]
    f = np.asarray(q_all, float)[:, fingers].mean(axis=1)
    dt = 1.0 / rate_hz
    merge = max(1, int(round(MERGE_S / dt)))
    arm_steps = np.max(np.abs(np.diff(q, axis=0)), axis=1) > ARM_MOVING * dt
    finger_steps = np.abs(np.diff(f)) > FINGER_MOVING * dt
    pushing = None if effort_all is None else np.abs(np.asarray(effort_all, float)[:, fingers]).mean(axis=1)
    grips = []
    for a, b in _runs(finger_steps, merge):
        before, after = float(f[a]), float(f[b + 1])
        if abs(after - before) < FINGER_EVENT:
            continue
        holds = after < before and (pushing is None or float(np.median(pushing[b + 1:b + 4])) > GRIP_EFFORT)
        grips.append(GripperEvent(a, before, after, 0.0 if holds else after))
    cuts = sorted({g.index for g in grips})
    events: list[ArmSegment | GripperEvent] = list(grips)
    for a, b in _runs(arm_steps, merge):
        # a motion the gripper interrupts is two motions (the recording's arm held while the fingers moved)
        bounds = [a, *[c for c in cuts if a < c <= b], b + 1]
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
            if hi - lo < 1:
                continue
            idx = np.arange(lo + 1, hi + 1)
            seg_qd = qd[idx].copy()
            seg_qd[-1] = 0.0
            events.append(ArmSegment(lo, q[lo].copy(), (idx - lo) * dt, q[idx].copy(), seg_qd))
    return sorted(events, key=lambda e: (e.index, isinstance(e, ArmSegment)))


Message = tuple[float, Sequence[str], Sequence[float], Sequence[float], Sequence[float]]


def resample(received: Sequence[Message], joints: Sequence[str],
             rate_hz: float) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """A robot's joint states, as its messages arrived, on a uniform grid of ``rate_hz`` for :func:`split`.

    ``received``: (time s, names, positions, velocities, efforts) per message, in time order; a message may carry
    only some joints (franka_ros2 publishes the arm and the fingers apart): each row holds every joint's latest
    value, from the first message after which all of ``joints`` are known. Velocities a robot does not report are
    the positions' slope; efforts, unless every joint reports them, are left out (None). Returns positions,
    velocities and efforts, (samples, len(joints)) each, in ``joints``' order.
    """
    index = {name: k for k, name in enumerate(joints)}
    pos, vel, eff = (np.full(len(joints), np.nan) for _ in range(3))
    times: list[float] = []
    rows: list[np.ndarray] = []
    for t, names, p, v, e in received:
        for i, name in enumerate(names):
            if (k := index.get(name)) is None:
                continue
            pos[k] = p[i] if i < len(p) else np.nan
            vel[k] = v[i] if i < len(v) else np.nan
            eff[k] = e[i] if i < len(e) else np.nan
        if np.isnan(pos).any():
            continue
        row = np.concatenate([pos, vel, eff])
        if times and t <= times[-1]:  # the same instant again (or a message from before it): the newest counts
            if t == times[-1]:
                rows[-1] = row
            continue
        times.append(float(t))
        rows.append(row)
    missing = [j for j in joints if j not in {n for _, names, *_ in received for n in names}]
    if missing:
        raise SegmentError(f"the recorded joint states lack {', '.join(missing)}")
    if len(rows) < 2:
        raise SegmentError("fewer than two recorded joint states: nothing moved")
    t_in, table = np.asarray(times), np.asarray(rows)
    grid = t_in[0] + np.arange(int(np.floor((t_in[-1] - t_in[0]) * rate_hz)) + 1) / rate_hz
    n = len(joints)
    out = np.column_stack([np.interp(grid, t_in, table[:, c]) if not np.isnan(table[:, c]).any()
                           else np.full(len(grid), np.nan) for c in range(3 * n)])
    q, qd, effort = out[:, :n], out[:, n:2 * n], out[:, 2 * n:]
    if len(grid) >= 2:
        slope = np.gradient(q, 1.0 / rate_hz, axis=0)
        qd = np.where(np.isnan(qd), slope, qd)
    else:
        qd = np.nan_to_num(qd)
    return q, qd, None if np.isnan(effort).any() else effort
