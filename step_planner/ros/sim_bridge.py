"""The MuJoCo simulator as a ROS citizen: joint states, the robot description, object poses, a clock.

With ``backend: sim`` the node builds one simulator per goal. This bridge is attached to it for the goal
(:meth:`SimBridge.attach`, an attachment of the goal session) and publishes from the simulator's step
hook, so the rate is one of *simulated* time whatever the wall-clock speed of the physics (the names as in the root
namespace; under the node's namespace, e.g. /arm1/joint_states, when it has one, but /tf):

    /joint_states          sensor_msgs/JointState, MoveIt's Panda names, ``sim.joint_state_rate_hz``
    /robot_description     std_msgs/String, latched: the URDF the simulator loads (meshes as file:// URIs)
    ~/sim/object_poses     step_planner_interfaces/ObjectPoses (the perception type), ground truth, all
                           objects, ``sim.object_pose_rate_hz``; NOT ~/object_poses, which is the node's
                           perception *input*
    /clock                 rosgraph_msgs/Clock: the time the stamps above are in (``use_sim_time`` viewers)
    /tf                    tf2_msgs/TFMessage: every joint of the URDF from the bodies' poses (parent link to
                           child link, at the joint rate), and each object's frame under ``panda_link0``
                           (frame = the object's name, at the object rate)

Stamps come from :class:`SimClock`: simulated time while a simulator runs, wall-clock time passing between
goals, never going back. Between goals the last joint state is repeated at the heartbeat (with a new
stamp), so RViz keeps showing the arm. The link frames come from the physics itself, so RViz shows the arm
without robot_state_publisher (which would publish the same frames from /robot_description and /joint_states;
the launch file's backend:=sim runs the MuJoCo robot in a process of its own instead, see mujoco_robot).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from builtin_interfaces.msg import Time
from geometry_msgs.msg import PoseStamped, Transform, TransformStamped
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Header, String
from tf2_msgs.msg import TFMessage

from step_planner.execution.sim import telemetry
from step_planner.execution.sim.telemetry import BASE_FRAME, JointSample, Sampler, joint_sample, object_samples
from step_planner.ros.qos import latched
from step_planner_interfaces.msg import ObjectPose, ObjectPoses


class SimClock:
    """Seconds for stamps: advances with the physics while attached, with the wall clock while detached."""

    def __init__(self, wall: Callable[[], float] = time.time) -> None:
        self._wall = wall
        self._lock = threading.Lock()
        self._base = wall()  # the time at the last start/stop
        self._since = self._base  # wall time of the last stop (detached) or sim time of the start (attached)
        self._attached = False

    def start(self, sim_time: float) -> None:
        with self._lock:
            self._base, self._since, self._attached = self._now(), sim_time, True

    def at(self, sim_time: float) -> float:
        """The stamp of a simulated instant of the running simulator."""
        with self._lock:
            return self._base + max(0.0, sim_time - self._since) if self._attached else self._now()

    def stop(self, sim_time: float) -> None:
        with self._lock:
            if self._attached:
                self._base, self._since, self._attached = self._base + max(0.0, sim_time - self._since), \
                    self._wall(), False

    def now(self) -> float:
        with self._lock:
            return self._now()

    def _now(self) -> float:
        return self._base if self._attached else self._base + max(0.0, self._wall() - self._since)


def stamp(seconds: float) -> Time:
    sec = int(seconds)
    return Time(sec=sec, nanosec=min(999_999_999, int(round((seconds - sec) * 1e9))))


def joint_state_msg(sample: JointSample, seconds: float) -> JointState:
    return JointState(header=Header(stamp=stamp(seconds), frame_id=""), name=list(sample.names),
                      position=list(sample.position), velocity=list(sample.velocity), effort=list(sample.effort))


Frame = tuple[str, str, tuple[float, ...], tuple[float, ...]]  # parent, child, translation, rotation x y z w


def tf_msg(frames: list[Frame], seconds: float) -> TFMessage:
    when = stamp(seconds)
    out = []
    for parent, child, t, q in frames:
        tf = TransformStamped(header=Header(stamp=when, frame_id=parent), child_frame_id=child, transform=Transform())
        v, r = tf.transform.translation, tf.transform.rotation
        v.x, v.y, v.z = (float(a) for a in t)
        r.x, r.y, r.z, r.w = (float(a) for a in q)
        out.append(tf)
    return TFMessage(transforms=out)


class SimBridge:
    """Publishers of the simulated robot; attach it to each goal's SimExecutor (see the module docstring)."""

    def __init__(self, node: Any, joint_rate_hz: float, object_rate_hz: float, description: str) -> None:
        self.node = node
        self.joint_period = 1.0 / joint_rate_hz
        self.object_period = 1.0 / object_rate_hz
        self.clock = SimClock()
        # relative: /joint_states ... in the root namespace, under the node's namespace when it has one (as the
        # MuJoCo robot's), so two sim nodes in two namespaces do not mix their robots; /tf stays global
        self._joints = node.create_publisher(JointState, "joint_states", 10)
        self._objects = node.create_publisher(ObjectPoses, "~/sim/object_poses", 10)
        self._clock = node.create_publisher(Clock, "clock", 10)
        self._description = node.create_publisher(String, "robot_description", latched())
        self._tf = node.create_publisher(TFMessage, "/tf", 100)
        self._frames: list[Frame] = []  # the last links and objects, repeated between goals
        self._objects_tf: list[Frame] = []
        self._description.publish(String(data=description))
        self._last: JointSample | None = None
        self._attached = False

    def attach(self, executor: Any) -> Callable[[], None] | None:
        """Publish from ``executor``'s physics until the returned function is called (None: not a simulator)."""
        if not hasattr(executor, "step_hooks"):
            return None
        self.clock.start(float(executor.data.time))
        hooks = [Sampler(self.joint_period, lambda: self._publish_joints(executor)),
                 Sampler(self.object_period, lambda: self._publish_objects(executor))]
        executor.step_hooks.extend(hooks)
        self._attached = True
        self._publish_joints(executor)
        self._publish_objects(executor)

        def detach() -> None:
            for hook in hooks:
                if hook in executor.step_hooks:
                    executor.step_hooks.remove(hook)
            self.clock.stop(float(executor.data.time))
            self._attached = False

        return detach

    def heartbeat(self) -> None:
        """Between goals: repeat the last joint state with the current stamp, so viewers keep the arm."""
        if self._attached or self._last is None:
            return
        seconds = self.clock.now()
        self._clock.publish(Clock(clock=stamp(seconds)))
        self._joints.publish(joint_state_msg(self._last, seconds))
        self._tf.publish(tf_msg(self._frames + self._objects_tf, seconds))

    def _publish_joints(self, executor: Any) -> None:
        sample = joint_sample(executor)
        seconds = self.clock.at(sample.sim_time)
        self._last = sample
        self._clock.publish(Clock(clock=stamp(seconds)))
        self._joints.publish(joint_state_msg(sample, seconds))
        self._frames = telemetry.link_transforms(executor)
        self._tf.publish(tf_msg(self._frames, seconds))

    def _publish_objects(self, executor: Any) -> None:
        world = executor.observe()  # ground truth: where each object is (container), hidden ones included
        seconds = self.clock.at(float(executor.data.time))
        header = Header(stamp=stamp(seconds), frame_id=BASE_FRAME)
        objects = []
        samples = object_samples(executor)
        self._objects_tf = [(BASE_FRAME, s.name, s.position, s.orientation) for s in samples]
        self._tf.publish(tf_msg(self._objects_tf, seconds))
        for sample in samples:
            state = world.objects.get(sample.name)
            pose = PoseStamped(header=header)
            pose.pose.position.x, pose.pose.position.y, pose.pose.position.z = sample.position
            o = pose.pose.orientation
            o.x, o.y, o.z, o.w = sample.orientation
            objects.append(ObjectPose(name=sample.name, class_name=state.category if state else "",
                                      container=(state.location or "") if state else "", pose=pose))
        self._objects.publish(ObjectPoses(header=header, objects=objects))
