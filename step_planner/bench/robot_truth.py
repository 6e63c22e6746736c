"""The true world of a MuJoCo robot whose client perceives a noisy one: for benchmarks that judge success on truth.

The MuJoCo robot publishes its exact model poses on ``truth_topic`` while its perception topic carries the noisy,
partial reports the controllers backend plans with. Truth is read here (a node of its own, a TFMessage
subscription, no action clients) and derived by the same fact deriver, so "true" and "perceived" differ only in
their poses.
"""

from __future__ import annotations

import threading
import time

import rclpy
from rclpy.executors import SingleThreadedExecutor
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage

from step_planner.domain import perceived_facts as facts
from step_planner.domain.pose_tree import PoseTree
from step_planner.domain.scene_geometry import scene_geometry
from step_planner.domain.world import WorldState
from step_planner.execution.controllers.backend import yaw_deg
from step_planner.execution.controllers.messages import poses_from_msg
from step_planner.execution.private_context import private_context
from step_planner.ros.mujoco_robot import truth_held_topic

TRUTH_TOPIC = "/model_poses_truth"


class RobotTruth:
    """Exact poses of the robot's world, what its fingers truly hold, and the facts they make, for a template world
    (the task's scene)."""

    def __init__(self, topic: str = TRUTH_TOPIC) -> None:
        self.context = private_context()
        self.node = rclpy.create_node("robot_truth", context=self.context)
        self._lock = threading.Lock()
        self._tree = PoseTree()
        self._held: str | None = None
        self.node.create_subscription(TFMessage, topic, self._on_poses, 10)
        self.node.create_subscription(String, truth_held_topic(topic), self._on_held, 10)
        self._executor = SingleThreadedExecutor(context=self.context)
        self._executor.add_node(self.node)
        self._thread = threading.Thread(target=self._executor.spin, daemon=True)
        self._thread.start()

    def _on_poses(self, msg: TFMessage) -> None:
        with self._lock:
            self._tree.update(poses_from_msg(msg), time.monotonic())

    def _on_held(self, msg: String) -> None:
        with self._lock:
            self._held = msg.data or None

    def world(self, template: WorldState, settle_s: float = 0.3) -> WorldState:
        """The true world now (after ``settle_s`` for the last poses to arrive)."""
        time.sleep(settle_s)
        volumes = facts.volumes_of(scene_geometry(template))
        with self._lock:
            poses, held = self._tree.world_poses(), self._held
        objects = {n: facts.ObjectPose(tuple(map(float, p.position)), yaw_deg(p.quat))
                   for n, p in poses.items() if n in template.objects}
        openings = {d.name: float((poses[d.name].position - d.closed_origin) @ d.axis)
                    for d in volumes.drawers if d.name in poses}
        seen = facts.Perception(objects, openings, held if held in template.objects else None)
        return facts.perceived_world(template, volumes, seen, robot_at="home")

    def close(self) -> None:
        self._executor.shutdown()
        self._thread.join(5.0)
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)
