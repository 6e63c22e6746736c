"""A stand-in of franka_ros2's fake gripper, for tests: what ``use_fake_hardware:=true`` gives the hand upstream.

franka_gripper/scripts/fake_gripper_state_publisher.py (frankarobotics/franka_ros2@29cb85a, ``FGSP``): a node that
publishes ``sensor_msgs/JointState`` on ``~/joint_states`` every 0.1 s (FGSP:26-27, 35) with the two names of its
``joint_names`` parameter (FGSP:29-34), positions fixed at 0.035 m per finger, velocities and efforts 0
(FGSP:37-44), and serves no action and no service. franka_gripper/launch/gripper.launch.py:52-60 starts it as
``franka_gripper`` with joint_names ``<robot_type>_finger_joint1/2`` when use_fake_hardware is true, and
franka_bringup's joint_state_publisher merges its ``franka_gripper/joint_states`` into ``joint_states``
(franka.launch.py:121-124, 148-160). ``topic`` lets a test publish where that merge would (``/joint_states``).
"""

from __future__ import annotations

import threading

import rclpy
from rclpy.executors import SingleThreadedExecutor
from sensor_msgs.msg import JointState

from step_planner.execution.private_context import private_context

FINGER_M = 0.035  # FGSP:41
PERIOD_S = 0.1  # FGSP:27


class FakeGripperStatePublisher:
    def __init__(self, joint_names: tuple[str, str] = ("fr3_finger_joint1", "fr3_finger_joint2"),
                 topic: str = "~/joint_states", node_name: str = "franka_gripper") -> None:
        assert len(joint_names) == 2  # FGSP:34
        self.context = private_context()
        self.node = rclpy.create_node(node_name, context=self.context)
        self.names = list(joint_names)
        self.publisher = self.node.create_publisher(JointState, topic, 1)  # FGSP:26: depth 1
        self.node.create_timer(PERIOD_S, self._publish)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.thread = threading.Thread(target=self.executor.spin, daemon=True)
        self.thread.start()

    def _publish(self) -> None:
        msg = JointState(name=self.names, position=[FINGER_M, FINGER_M], velocity=[0.0, 0.0], effort=[0.0, 0.0])
        msg.header.stamp = self.node.get_clock().now().to_msg()
        self.publisher.publish(msg)

    def close(self) -> None:
        self.executor.shutdown()
        self.thread.join(5)
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)
