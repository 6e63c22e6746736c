"""The robot boundary's ROS messages <-> plain Python, for both sides (the client and the MuJoCo robot).

One place for the field-by-field translation of control_msgs/FollowJointTrajectory, control_msgs/GripperCommand,
tf2_msgs/TFMessage and sensor_msgs/JointState, so the client and the robot cannot disagree on a field.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from builtin_interfaces.msg import Duration, Time
from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointTolerance
from geometry_msgs.msg import TransformStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import Header
from tf2_msgs.msg import TFMessage
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from step_planner.domain.pose_tree import ModelPose
from step_planner.execution.controllers.config import TrajectorySettings
from step_planner.execution.controllers.trajectory import Waypoints
from step_planner.execution.sim.controller_emulation import JointToleranceSpec, TrajectoryGoal, TrajectoryPoint
from step_planner.execution.sim.robot import JointReading


def duration(seconds: float) -> Duration:
    sec = math.floor(seconds)
    return Duration(sec=int(sec), nanosec=min(999_999_999, int(round((seconds - sec) * 1e9))))


def stamp(seconds: float) -> Time:
    time = Time()
    set_stamp(time, seconds)
    return time


def set_stamp(time: Time, seconds: float) -> None:
    """:func:`stamp` into an existing message field (the MuJoCo robot's publishers fill theirs in place)."""
    sec = math.floor(seconds)
    time.sec, time.nanosec = int(sec), min(999_999_999, int(round((seconds - sec) * 1e9)))


def seconds(value: Duration | Time) -> float:
    return value.sec + value.nanosec * 1e-9


# ---- FollowJointTrajectory -----------------------------------------------------------------------------------
def trajectory_goal_msg(wp: Waypoints, joints: Sequence[str],
                        settings: TrajectorySettings) -> FollowJointTrajectory.Goal:
    """A goal for joint_trajectory_controller: every controller joint named, header stamp 0 (start when the
    controller receives it: no clock to agree on), positions and velocities (cubic splines), and this client's
    path and goal tolerances, which the controller applies over its own (tolerances.hpp, >= 4.11)."""
    points = [JointTrajectoryPoint(positions=[float(v) for v in q], velocities=[float(v) for v in qd],
                                   time_from_start=duration(float(t)))
              for t, q, qd in zip(wp.t, wp.q, wp.qd, strict=True)]
    return FollowJointTrajectory.Goal(
        trajectory=JointTrajectory(header=Header(stamp=Time(sec=0, nanosec=0)), joint_names=list(joints),
                                   points=points),
        path_tolerance=[JointTolerance(name=j, position=settings.path_tolerance) for j in joints],
        goal_tolerance=[JointTolerance(name=j, position=settings.goal_tolerance) for j in joints],
        goal_time_tolerance=duration(settings.goal_time_tolerance_s),
    )


def _array(values: Sequence[float]) -> np.ndarray | None:
    return np.array(values, dtype=float) if len(values) else None


def trajectory_goal_from_msg(goal: FollowJointTrajectory.Goal) -> TrajectoryGoal:
    """What joint_trajectory_controller reads of a goal (an empty velocities/accelerations field is absent)."""
    traj = goal.trajectory
    points = tuple(TrajectoryPoint(seconds(p.time_from_start), np.array(p.positions, dtype=float),
                                   _array(p.velocities), _array(p.accelerations)) for p in traj.points)

    def specs(tolerances) -> tuple[JointToleranceSpec, ...]:
        return tuple(JointToleranceSpec(t.name, t.position, t.velocity, t.acceleration) for t in tolerances)

    return TrajectoryGoal(tuple(traj.joint_names), points, seconds(traj.header.stamp), specs(goal.path_tolerance),
                          specs(goal.goal_tolerance), seconds(goal.goal_time_tolerance),
                          has_effort=any(len(p.effort) for p in traj.points))


def trajectory_point(q: Sequence[float], qd: Sequence[float] | None, since_start: float) -> JointTrajectoryPoint:
    return JointTrajectoryPoint(positions=[float(v) for v in q],
                                velocities=[] if qd is None else [float(v) for v in qd],
                                time_from_start=duration(max(0.0, since_start)))


# ---- poses and joint states --------------------------------------------------------------------------------
# The MuJoCo robot publishes these on its physics thread hundreds of times per simulated second. A generated
# message's constructor builds a default for every field even when the field is given (``kwargs.get('header',
# Header())``), so a TransformStamped built from its parts costs 13 constructors; the writers below build their
# message once and fill it in place (145 -> 12 us for 13 transforms). rclpy's publish serializes the message
# before it returns, so the next call may overwrite it.
def transforms_msg(poses: Sequence[ModelPose], at: float) -> TFMessage:
    """Model and link poses as ros_gz_bridge turns gz-sim's PosePublisher output into a TFMessage: per
    transform the sim-time stamp, the parent's scoped name, the entity's, ``/`` for gz's ``::``
    (ros_gz@739cb42 ros_gz_bridge/src/convert/geometry_msgs.cpp:243-258, utils.cpp:47-50). A new message."""
    return TransformsWriter()(poses, at)


class TransformsWriter:
    """:func:`transforms_msg` for one publisher: the same TFMessage and transforms each call, filled in place (the
    message is valid until the next call)."""

    def __init__(self) -> None:
        self._msg = TFMessage()
        self._pool: list[TransformStamped] = []

    def __call__(self, poses: Sequence[ModelPose], at: float) -> TFMessage:
        when = stamp(at)  # one stamp object for every transform, as before
        pool = self._pool
        while len(pool) < len(poses):
            pool.append(TransformStamped())
        for t, p in zip(pool, poses, strict=False):
            header, transform = t.header, t.transform
            header.stamp, header.frame_id, t.child_frame_id = when, p.frame_id, p.child_frame_id
            v, r = transform.translation, transform.rotation
            v.x, v.y, v.z = p.position[0], p.position[1], p.position[2]
            r.x, r.y, r.z, r.w = p.orientation[0], p.orientation[1], p.orientation[2], p.orientation[3]
        self._msg.transforms = pool[:len(poses)]
        return self._msg


def poses_from_msg(msg: TFMessage) -> list[ModelPose]:
    out = []
    for t in msg.transforms:
        tr, rot = t.transform.translation, t.transform.rotation
        out.append(ModelPose(t.header.frame_id.replace("::", "/"), t.child_frame_id.replace("::", "/"),
                             (tr.x, tr.y, tr.z), (rot.x, rot.y, rot.z, rot.w), seconds(t.header.stamp)))
    return out


def joint_state_msg(reading: JointReading) -> JointState:
    """A new message."""
    return JointStateWriter()(reading)


class JointStateWriter:
    """:func:`joint_state_msg` for one publisher: the same message each call, filled in place."""

    def __init__(self) -> None:
        self._msg = JointState()

    def __call__(self, reading: JointReading) -> JointState:
        msg = self._msg
        msg.header.stamp = stamp(reading.time)
        msg.name, msg.position, msg.velocity, msg.effort = (list(reading.names), list(reading.position),
                                                            list(reading.velocity), list(reading.effort))
        return msg
