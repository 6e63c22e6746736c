"""ros2_controllers' joint_trajectory_controller and GripperActionController, reproduced on plain numbers.

The MuJoCo robot (:mod:`step_planner.execution.sim.robot`) runs these at every physics step, so a client
across ROS meets what the real controllers do in Gazebo and on the arm, not what we assumed they do.
Every rule names the upstream line it follows, in ros-controls/ros2_controllers, branch ``jazzy``, commit
ed360c97 (4.42.1):

- ``JTC``  joint_trajectory_controller/src/joint_trajectory_controller.cpp
- ``TRAJ`` joint_trajectory_controller/src/trajectory.cpp
- ``TOL``  joint_trajectory_controller/include/joint_trajectory_controller/tolerances.hpp
- ``GAC``  gripper_controllers/include/gripper_controllers/gripper_action_controller_impl.hpp

Deviations, on purpose: the controllers update at the physics rate (every 2 ms) instead of the controller
manager's ``update_rate``; ``interpolate_from_desired_state``, ``cmd_timeout``, partial goals and angle
wrap-around are not reproduced (all off in the Panda and FR3 configs); a goal's efforts are accepted where
upstream accepts them (an effort command interface, the FR3's) but not added to the command as feed-forward
(JTC.cpp:417-422). Deceleration on cancel is (the Panda's
config turns it on, see config/ros2_controllers_panda.yaml).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

# control_msgs/action/FollowJointTrajectory Result error codes (control_msgs jazzy, FollowJointTrajectory.action:34-39)
SUCCESSFUL, INVALID_GOAL, PATH_TOLERANCE_VIOLATED, GOAL_TOLERANCE_VIOLATED = 0, -1, -4, -5
DEACTIVATED = "Current goal cancelled during deactivate transition."  # JTC.cpp:1265
INACTIVE = "Can't accept new action goals. Controller is not running."  # JTC.cpp:1407-1412 (rejected)
_EPS = float(np.finfo(np.float32).eps)  # JTC.cpp:1717-1730 compares the last velocities with float epsilon


@dataclass(frozen=True)
class GoalEnd:
    """How a goal ended, to be delivered to its client: status and the result's fields."""

    goal_id: Hashable
    status: str  # succeeded | aborted | canceled
    result: dict[str, Any] = field(default_factory=dict)


# ---- joint_trajectory_controller -------------------------------------------------------------------------------
@dataclass(frozen=True)
class TrajectoryPoint:
    time: float  # time_from_start (s)
    positions: np.ndarray
    velocities: np.ndarray | None = None  # None: the message's field was empty
    accelerations: np.ndarray | None = None


@dataclass(frozen=True)
class JointToleranceSpec:
    name: str
    position: float = 0.0  # control_msgs JointTolerance: > 0 use, 0 keep the default, -1 erase
    velocity: float = 0.0
    acceleration: float = 0.0


@dataclass(frozen=True)
class TrajectoryGoal:
    """A FollowJointTrajectory goal as the controller reads it."""

    joint_names: tuple[str, ...]
    points: tuple[TrajectoryPoint, ...]
    start_stamp: float = 0.0  # header.stamp in seconds; 0 = start at the first update after acceptance
    path_tolerance: tuple[JointToleranceSpec, ...] = ()
    goal_tolerance: tuple[JointToleranceSpec, ...] = ()
    goal_time_tolerance: float = 0.0  # 0 keeps the controller's, -1 erases it
    has_effort: bool = False  # any point carries efforts


@dataclass(frozen=True)
class TrajectoryParams:
    """The controller's parameters (JTC ``joint_trajectory_controller_parameters.yaml``, defaults as upstream)."""

    joints: tuple[str, ...]
    allow_nonzero_velocity_at_trajectory_end: bool = False
    action_monitor_rate: float = 20.0
    stopped_velocity_tolerance: float = 0.01
    goal_time: float = 0.0
    path: dict[str, float] = field(default_factory=dict)  # constraints.<joint>.trajectory (0 = unchecked)
    goal: dict[str, float] = field(default_factory=dict)  # constraints.<joint>.goal
    velocity_command: bool = False  # a velocity (or effort) command interface: only then is velocity error known
    effort_command: bool = False  # an effort command interface: only then are goals with efforts accepted
    decelerate_on_cancel: bool = False  # constraints.decelerate_on_cancel (>= 4.39)
    max_deceleration_on_cancel: dict[str, float] = field(default_factory=dict)  # constraints.<joint>.(...) rad/s^2
    update_rate: float = 100.0  # the controller manager's; the stop ramp has a point every period
    # each joint's velocity limit in the robot_description URDF (<limit velocity>), which JTC reads at configure
    # (JTC.cpp:94-100; a joint without one, or no URDF, reads 0)
    urdf_velocity: dict[str, float] = field(default_factory=dict)
    command_interfaces: tuple[str, ...] = ("position",)
    gains: dict[str, dict[str, float]] = field(default_factory=dict)  # gains.<joint>.{p,i,d}: the PID adapter's

    @property
    def decelerates(self) -> bool:
        """Decelerate, not hold, on cancel and aborts: every joint needs a deceleration > 0 and a URDF velocity
        limit > 0, else the controller logs why and holds (JTC.cpp:144-169), and a velocity state interface, which
        both configs here have (JTC.cpp:955-965)."""
        return self.decelerate_on_cancel and all(self.max_deceleration_on_cancel.get(j, 0.0) > 0
                                                 and self.urdf_velocity.get(j, 0.0) > 0 for j in self.joints)

    @classmethod
    def from_ros_parameters(cls, values: dict[str, Any], update_rate: float = 100.0,
                            urdf_velocity: dict[str, float] | None = None) -> TrajectoryParams:
        """From a controller's ``ros__parameters`` block of a ros2_control YAML (and the manager's update_rate, and
        the URDF's joint velocity limits by joint name)."""
        joints = tuple(values["joints"])
        constraints = values.get("constraints") or {}
        return cls(
            joints=joints,
            allow_nonzero_velocity_at_trajectory_end=bool(values.get("allow_nonzero_velocity_at_trajectory_end",
                                                                     False)),
            action_monitor_rate=float(values.get("action_monitor_rate", 20.0)),
            stopped_velocity_tolerance=float(constraints.get("stopped_velocity_tolerance", 0.01)),
            goal_time=float(constraints.get("goal_time", 0.0)),
            path={j: float((constraints.get(j) or {}).get("trajectory", 0.0)) for j in joints},
            goal={j: float((constraints.get(j) or {}).get("goal", 0.0)) for j in joints},
            velocity_command=bool({"velocity", "effort"} & set(values.get("command_interfaces", ["position"]))),
            effort_command="effort" in values.get("command_interfaces", ["position"]),
            decelerate_on_cancel=bool(constraints.get("decelerate_on_cancel", False)),
            max_deceleration_on_cancel={j: float((constraints.get(j) or {}).get("max_deceleration_on_cancel", 0.0))
                                        for j in joints},
            update_rate=float(update_rate),
            urdf_velocity=dict(urdf_velocity or {}),
            command_interfaces=tuple(values.get("command_interfaces", ["position"])),
            gains={j: {k: float(v) for k, v in (values.get("gains") or {}).get(j, {}).items()
                       if isinstance(v, (int, float))} for j in joints if j in (values.get("gains") or {})},
        )


@dataclass(frozen=True)
class Tolerances:
    path: np.ndarray  # position, per controller joint (0 = unchecked)
    goal: np.ndarray
    goal_velocity: np.ndarray  # stopped_velocity_tolerance unless a goal overrides it
    goal_time: float


def validate(params: TrajectoryParams, goal: TrajectoryGoal, now: float) -> str | None:
    """Why the controller REJECTS the goal at goal_received_callback, or None (JTC.cpp:1406-1420, 1671-1816).

    A rejected goal gets no result, no error code and no message (the reason is only in the controller's log).
    """
    names, points = goal.joint_names, goal.points
    if len(names) != len(params.joints):  # JTC.cpp:1676-1685 (allow_partial_joints_goal is false)
        return "Joints on incoming trajectory don't match the controller joints."
    if not names:  # JTC.cpp:1688-1692
        return "Empty joint names on incoming trajectory."
    if not points:  # JTC.cpp:1695-1699
        return "Empty trajectory received."
    for name in names:  # JTC.cpp:1702-1714 (count and membership: the order is free)
        if name not in params.joints:
            return f"Incoming joint {name} doesn't match the controller's joints."
    last = points[-1]
    if not params.allow_nonzero_velocity_at_trajectory_end and last.velocities is not None \
            and np.any(np.abs(last.velocities) > _EPS):  # JTC.cpp:1717-1730
        return "Velocity of last trajectory point is not zero"
    if goal.start_stamp != 0.0 and goal.start_stamp + last.time < now:  # JTC.cpp:1733-1749
        return "Received trajectory with non-zero start time that ends in the past"
    for i in range(1, len(points)):  # JTC.cpp:1751-1764 (point 0 may be at t = 0)
        if points[i].time <= points[i - 1].time:
            return f"Time between points {i - 1} and {i} is not strictly increasing"
    for i, p in enumerate(points):  # JTC.cpp:1797-1804: positions required, the others empty or full
        if len(p.positions) != len(names):
            return f"Mismatch between joint_names and positions at point #{i}."
        for what, values in (("velocities", p.velocities), ("accelerations", p.accelerations)):
            if values is not None and len(values) != len(names):
                return f"Mismatch between joint_names and {what} at point #{i}."
    if goal.has_effort and not params.effort_command:  # JTC.cpp:1805-1813: only without an effort interface
        return "Trajectories with effort fields are only supported for controllers using the 'effort' command " \
            "interface."
    return None


def segment_tolerances(params: TrajectoryParams, goal: TrajectoryGoal) -> Tolerances:
    """The goal's tolerances over the controller's defaults (TOL:95-127 defaults, TOL:129-154 and 165-288 per goal).

    > 0 replaces the default, 0 keeps it, -1 erases it (0 = unchecked); an unknown joint name or another
    negative value drops every tolerance the goal gave, keeping the defaults (the goal is not rejected).
    """
    joints = params.joints
    default = Tolerances(
        path=np.array([params.path.get(j, 0.0) for j in joints]),
        goal=np.array([params.goal.get(j, 0.0) for j in joints]),
        goal_velocity=np.full(len(joints), params.stopped_velocity_tolerance),
        goal_time=params.goal_time,
    )

    def resolve(value: float, fallback: float) -> float | None:  # TOL:129-154
        if value > 0:
            return value
        if value == 0:
            return fallback
        if value == -1:
            return 0.0
        return None

    path, goal_pos, goal_vel = default.path.copy(), default.goal.copy(), default.goal_velocity.copy()
    for spec in goal.path_tolerance:
        if spec.name not in joints or (v := resolve(spec.position, path[joints.index(spec.name)])) is None:
            return default  # TOL:193-202, 217-225
        path[joints.index(spec.name)] = v
    for spec in goal.goal_tolerance:
        if spec.name not in joints:
            return default  # TOL:242-251
        i = joints.index(spec.name)
        p, v = resolve(spec.position, goal_pos[i]), resolve(spec.velocity, goal_vel[i])
        if p is None or v is None:
            return default
        goal_pos[i], goal_vel[i] = p, v
    goal_time = resolve(goal.goal_time_tolerance, default.goal_time)
    if goal_time is None:  # TOL:266-274
        return default
    return Tolerances(path, goal_pos, goal_vel, goal_time)


def _segment(t: float, t0: float, p0: TrajectoryPoint, t1: float, p1: TrajectoryPoint
             ) -> tuple[np.ndarray, np.ndarray]:
    """Spline between two points (TRAJ:279-281, 315, 334-336, 365-367): linear with positions only, cubic
    with velocities, quintic with accelerations. Returns (position, velocity) at ``t``."""
    T = t1 - t0
    s = min(max(t - t0, 0.0), T)
    q0, q1 = p0.positions, p1.positions
    if T <= 0:
        return q1.copy(), np.zeros_like(q1)
    if p0.velocities is None or p1.velocities is None:
        return q0 + (q1 - q0) * (s / T), (q1 - q0) / T
    v0, v1 = p0.velocities, p1.velocities
    if p0.accelerations is None or p1.accelerations is None:
        a2 = (3 * (q1 - q0) - (2 * v0 + v1) * T) / T**2
        a3 = (2 * (q0 - q1) + (v0 + v1) * T) / T**3
        return q0 + v0 * s + a2 * s**2 + a3 * s**3, v0 + 2 * a2 * s + 3 * a3 * s**2
    c0, c1 = p0.accelerations, p1.accelerations
    a3 = (20 * (q1 - q0) - (8 * v1 + 12 * v0) * T - (3 * c0 - c1) * T**2) / (2 * T**3)
    a4 = (30 * (q0 - q1) + (14 * v1 + 16 * v0) * T + (3 * c0 - 2 * c1) * T**2) / (2 * T**4)
    a5 = (12 * (q1 - q0) - (6 * v1 + 6 * v0) * T - (c0 - c1) * T**2) / (2 * T**5)
    q = q0 + v0 * s + c0 / 2 * s**2 + a3 * s**3 + a4 * s**4 + a5 * s**5
    qd = v0 + c0 * s + 3 * a3 * s**2 + 4 * a4 * s**3 + 5 * a5 * s**4
    return q, qd


class TrajectorySampler:
    """One accepted trajectory in the controller's joint order, sampled in controller time.

    The measured state at the first update is the "point before the trajectory" (JTC.cpp:297-315,
    TRAJ:50-76); a start stamp of 0 starts the trajectory at that update (TRAJ:126-134).
    """

    def __init__(self, points: Sequence[TrajectoryPoint], start: float, before: TrajectoryPoint) -> None:
        self.points = list(points)
        self.start = start
        self.before = before  # time = absolute time of the first sample
        self.end_time = start + self.points[-1].time

    def sample(self, t: float) -> tuple[np.ndarray, np.ndarray, bool, float]:
        """(position, velocity, before the last point, time since the current segment's start point)."""
        first = self.points[0]
        t_first = self.start + first.time
        if t < t_first:  # from the measured state to point 0 (TRAJ:143-169)
            before = TrajectoryPoint(0.0, self.before.positions,
                                     None if first.velocities is None else _zeros_if_none(self.before.velocities,
                                                                                          first.positions),
                                     None if first.accelerations is None else _zeros_if_none(
                                         self.before.accelerations, first.positions))
            q, qd = _segment(t, self.before.time, before, t_first, first)
            return q, qd, True, t - t_first
        if t >= self.end_time:  # past the end: the last point, at rest where velocities were not given (TRAJ:208-253)
            last = self.points[-1]
            qd = last.velocities if last.velocities is not None else np.zeros_like(last.positions)
            return last.positions.copy(), qd.copy(), False, t - self.end_time
        for i in range(len(self.points) - 1):
            t0, t1 = self.start + self.points[i].time, self.start + self.points[i + 1].time
            if t0 <= t < t1:
                q, qd = _segment(t, t0, self.points[i], t1, self.points[i + 1])
                return q, qd, True, t - t0
        raise AssertionError("unreachable: t is inside the trajectory")


def _zeros_if_none(values: np.ndarray | None, like: np.ndarray) -> np.ndarray:
    return np.zeros_like(like) if values is None else values


@dataclass
class _ActiveTrajectory:
    goal_id: Hashable
    goal: TrajectoryGoal  # points already in the controller's joint order
    tolerances: Tolerances
    sampler: TrajectorySampler | None = None  # built at the first update
    desired: np.ndarray | None = None
    desired_velocity: np.ndarray | None = None
    since_start: float = 0.0


class TrajectoryController:
    """The joint_trajectory_controller's goal handling and update() for one arm (positions in its joint order).

    ``accept`` replaces the running goal (the old one ends ABORTED, INVALID_GOAL, JTC.cpp:1824-1837);
    ``cancel`` ends the goal CANCELED with an empty result and stops the arm (JTC.cpp:1429-1452);
    ``update`` checks path and goal tolerances (JTC.cpp:371-538) and returns the command. Goal ends are
    collected in ``ended`` for the action server to deliver.
    """

    def __init__(self, params: TrajectoryParams, q: np.ndarray) -> None:
        self.params = params
        self.hold_q = np.asarray(q, dtype=float).copy()
        self.active: _ActiveTrajectory | None = None
        self.stopping: TrajectorySampler | None = None  # the ramp to a stop after a cancel or an abort
        self.ended: list[GoalEnd] = []
        # the desired state at the last update's time (state_desired_, JTC.cpp:322-324): what a PID adapter's
        # error is taken from (JTC.cpp:374, 414-426); a hold is a one-point trajectory, desired = where it holds
        self.desired_now: tuple[np.ndarray, np.ndarray] = (self.hold_q.copy(), np.zeros_like(self.hold_q))
        self._rest = np.zeros_like(self.hold_q)
        self._rest.flags.writeable = False

    def accept(self, goal_id: Hashable, goal: TrajectoryGoal) -> None:
        order = [goal.joint_names.index(j) for j in self.params.joints]  # sort_to_local_joint_order, JTC.cpp:1603-1650
        points = tuple(TrajectoryPoint(p.time, p.positions[order],
                                       None if p.velocities is None else p.velocities[order],
                                       None if p.accelerations is None else p.accelerations[order])
                       for p in goal.points)
        local = TrajectoryGoal(self.params.joints, points, goal.start_stamp, goal.path_tolerance,
                               goal.goal_tolerance, goal.goal_time_tolerance)
        self._preempt()
        self.stopping = None
        self.active = _ActiveTrajectory(goal_id, local, segment_tolerances(self.params, goal))

    def _preempt(self) -> None:
        if self.active is not None:  # JTC.cpp:1824-1837 (4.41+: aborted, delivered at once)
            self.ended.append(GoalEnd(self.active.goal_id, "aborted", {
                "error_code": INVALID_GOAL, "error_string": "Current goal preempted by new incoming action."}))
            self.active = None

    def cancel(self, goal_id: Hashable, now: float, q: np.ndarray, qd: np.ndarray) -> bool:
        """Cancel the goal if it is the active one (JTC.cpp:1429-1452): the arm stops (see :meth:`_stop`)."""
        if self.active is None or self.active.goal_id != goal_id:
            return False
        self.ended.append(GoalEnd(goal_id, "canceled", {"error_code": SUCCESSFUL, "error_string": ""}))
        self.active = None
        self._stop(now, q, qd)
        return True

    def _stop(self, now: float, q: np.ndarray, qd: np.ndarray) -> None:
        """Hold the measured position (set_hold_position, JTC.cpp:1839-1849) or, with decelerate_on_cancel, ramp
        every joint to rest at its max deceleration and hold where it stops (JTC.cpp:1851-1937)."""
        q, qd = np.asarray(q, dtype=float).copy(), np.asarray(qd, dtype=float).copy()
        if not self.params.decelerates:
            self.hold_q, self.stopping = q, None
            return
        decel = np.array([self.params.max_deceleration_on_cancel[j] for j in self.params.joints])
        direction = np.where(qd >= 0.0, 1.0, -1.0)
        stop_time = np.abs(qd) / decel
        hold = q + direction * qd**2 / (2 * decel)
        period = 1.0 / self.params.update_rate
        points = []
        for k in range(int(np.ceil(stop_time.max() / period)) + 1):
            t = k * period
            moving = (t < stop_time) & (np.abs(qd) > _EPS)
            v = np.where(moving, qd - direction * decel * t, 0.0)
            v = np.where(v * direction < 0.0, 0.0, v)
            p = np.where(moving, q + qd * t - 0.5 * direction * decel * t * t, hold)
            a = np.where(moving, -direction * decel, 0.0)
            points.append(TrajectoryPoint(t, p, v, a))
        if len(points) < 2:  # already at rest
            self.hold_q, self.stopping = q, None
            return
        self.stopping = TrajectorySampler(points, now, TrajectoryPoint(now, q, qd, np.zeros_like(q)))
        self.hold_q = hold

    def deactivate(self, q: np.ndarray) -> None:
        """The controller manager deactivates the controller (its hardware failed): the running goal ends ABORTED,
        INVALID_GOAL (on_deactivate, JTC.cpp:1255-1268) and the arm is held where it is."""
        if self.active is not None:
            self._end("aborted", INVALID_GOAL, DEACTIVATED, None)
        self.hold_q, self.stopping = np.asarray(q, dtype=float).copy(), None

    def _end(self, status: str, code: int, text: str, stop: tuple[float, np.ndarray, np.ndarray] | None) -> None:
        assert self.active is not None
        self.ended.append(GoalEnd(self.active.goal_id, status, {"error_code": code, "error_string": text}))
        self.active = None
        if stop is not None:
            self._stop(*stop)

    def update(self, now: float, period: float, q: np.ndarray, qd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One control cycle at time ``now``: the (position, velocity) command for the next period."""
        a = self.active
        if a is None:
            if self.stopping is not None:
                self.desired_now = self.stopping.sample(now)[:2]
                command, command_v, before_last, _ = self.stopping.sample(now + period)
                if not before_last:
                    self.stopping = None
                return command, command_v
            rest = self._rest  # read-only zeros: not built anew at every update of a holding arm
            self.desired_now = (self.hold_q, rest)
            return self.hold_q, rest
        first_sample = a.sampler is None
        if first_sample:
            start = now if a.goal.start_stamp == 0.0 else a.goal.start_stamp
            a.sampler = TrajectorySampler(a.goal.points, start, TrajectoryPoint(now, q.copy(), qd.copy()))
        desired, desired_v, _, _ = a.sampler.sample(now)
        # the setpoint one period ahead; its segment also decides "before the last point" (JTC.cpp:326-347)
        command, command_v, before_last, ahead = a.sampler.sample(now + period)
        since = ahead - period  # time_difference: from traj_time_, not the sample ahead (JTC.cpp:340-343)
        a.desired, a.desired_velocity, a.since_start = desired, desired_v, now - a.sampler.start
        self.desired_now = (desired, desired_v)
        error = desired - q  # desired - actual, JTC.cpp:1494-1520
        tol = a.tolerances
        # path tolerance while moving (JTC.cpp:380-389); a violation aborts and holds (JTC.cpp:466-491)
        if (before_last or first_sample) and np.any((tol.path > 0) & (np.abs(error) > tol.path)):
            self._end("aborted", PATH_TOLERANCE_VIOLATED, "Aborted due to path tolerance violation", (now, q, qd))
            return self.update(now, period, q, qd)
        if not before_last:  # goal tolerance past the last point, JTC.cpp:390-407
            outside = (tol.goal > 0) & (np.abs(error) > tol.goal)
            if self.params.velocity_command:  # velocity error exists only then, JTC.cpp:1510-1515
                outside |= (tol.goal_velocity > 0) & (np.abs(desired_v - qd) > tol.goal_velocity)
            if not np.any(outside):
                self._end("succeeded", SUCCESSFUL, "Goal successfully reached!", None)  # JTC.cpp:493-510
                self.hold_q = command.copy()  # it keeps commanding the last point (JTC.cpp:1939-1951)
                return command, command_v
            if tol.goal_time != 0.0 and since > tol.goal_time:  # JTC.cpp:394-405, 511-538
                self._end("aborted", GOAL_TOLERANCE_VIOLATED,
                          f"Aborted due to goal_time_tolerance exceeding by {since:.6f} seconds", (now, q, qd))
                return self.update(now, period, q, qd)
            # goal_time 0 and outside the goal tolerance: the goal waits, possibly forever (JTC.yaml:222-230)
        return command, command_v

    def feedback(self, q: np.ndarray, qd: np.ndarray) -> dict[str, Any] | None:
        """The running goal's feedback (JTC.cpp:456-464): desired, actual and error in controller joint order."""
        a = self.active
        if a is None or a.desired is None:
            return None
        assert a.sampler is not None
        return {"goal_id": a.goal_id, "joint_names": list(self.params.joints), "since_start": a.since_start,
                "desired": a.desired.copy(),
                "desired_velocity": a.desired_velocity.copy(), "actual": q.copy(), "actual_velocity": qd.copy(),
                "error": a.desired - q}


# ---- GripperActionController -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class GripperParams:
    """``gripper_action_controller_parameters.yaml`` (defaults as upstream, jazzy)."""

    joint: str
    goal_tolerance: float = 0.01
    max_effort: float = 0.0
    allow_stalling: bool = False
    stall_velocity_threshold: float = 0.001
    stall_timeout: float = 1.0
    action_monitor_rate: float = 20.0

    @classmethod
    def from_ros_parameters(cls, values: dict[str, Any]) -> GripperParams:
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in values.items() if k in known})


@dataclass
class _ActiveGrip:
    goal_id: Hashable
    setpoint: float
    max_effort: float
    last_movement: float


class GripperController:
    """position_controllers/GripperActionController for one finger joint (GAC).

    The goal's position is that joint's setpoint (one finger of the Panda, 0..0.04 m, GAC:102-104); no goal is
    rejected (GAC:84-89); max_effort is only echoed as ``result.effort`` by the position adapter. A goal
    succeeds within ``goal_tolerance`` (reached_goal), else after ``stall_timeout`` without movement it
    stalls: SUCCEEDED with ``allow_stalling``, else ABORTED (GAC:155-202). The setpoint stays commanded after
    either. There is no feedback. Cancel holds the measured position (GAC:122-153).
    """

    def __init__(self, params: GripperParams, position: float) -> None:
        self.params = params
        self.setpoint = float(position)
        self.active: _ActiveGrip | None = None
        self.ended: list[GoalEnd] = []

    def accept(self, goal_id: Hashable, position: float, max_effort: float, now: float) -> None:
        if self.active is not None:  # GAC:28-38, 92-120: the old goal is canceled with an empty result
            self.ended.append(GoalEnd(self.active.goal_id, "canceled", _grip_result(0.0, 0.0, False, False)))
        self.setpoint = float(position)
        self.active = _ActiveGrip(goal_id, self.setpoint, float(max_effort), last_movement=now)  # GAC:109

    def cancel(self, goal_id: Hashable, position: float) -> bool:
        if self.active is None or self.active.goal_id != goal_id:
            return False
        self.setpoint = float(position)  # hold the current position, GAC:122-153
        self.ended.append(GoalEnd(goal_id, "canceled", _grip_result(0.0, 0.0, False, False)))
        self.active = None
        return True

    def update(self, now: float, position: float, velocity: float) -> float:
        """One control cycle (check_for_success, GAC:155-202); returns the finger setpoint."""
        a = self.active
        if a is None:
            return self.setpoint
        if abs(a.setpoint - position) < self.params.goal_tolerance:  # GAC:166-175
            self.ended.append(GoalEnd(a.goal_id, "succeeded", _grip_result(position, a.max_effort, False, True)))
            self.active = None
        elif abs(velocity) > self.params.stall_velocity_threshold:
            a.last_movement = now
        elif now - a.last_movement > self.params.stall_timeout:  # GAC:176-201
            status = "succeeded" if self.params.allow_stalling else "aborted"
            self.ended.append(GoalEnd(a.goal_id, status, _grip_result(position, a.max_effort, True, False)))
            self.active = None
        return self.setpoint


def _grip_result(position: float, effort: float, stalled: bool, reached: bool) -> dict[str, Any]:
    return {"position": float(position), "effort": float(effort), "stalled": stalled, "reached_goal": reached}
