"""``step-planner replay EPISODE --publish``: play a recorded episode back on ROS topics, to watch a past run.

The recorded joint trajectory goes out on ``/joint_states`` (with ``/robot_description``, latched) and the
tree on ``<prefix>/tree`` and ``<prefix>/tree_json`` (latched, as the node publishes them), in recorded
order and timing (``--rate`` scales it). Joint states are re-stamped with the current time so RViz (with
robot_state_publisher) and Foxglove show them live. Nothing is executed and no LLM is called. Episodes of the
first format (before typed episodes) have no joint states: their trees are played back alone. Where something else
already publishes ``/joint_states`` (a robot, Gazebo's joint_state_broadcaster) nothing is published: the recording
would contradict the robot and move nothing; ``replay --controllers`` moves it.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import rclpy
from rclpy.executors import ExternalShutdownException
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from step_planner.episodes.episode import Episode
from step_planner.ros.conversions import tree_to_msg
from step_planner.ros.qos import latched
from step_planner_interfaces.msg import SubgoalTree


def timeline(episode: Episode) -> list[tuple[int, str, Any]]:
    """(stamp_ns, kind, payload) of every tree snapshot and joint state, in recorded order."""
    events = [(stamp, "tree", tree) for stamp, tree in zip(episode.tree_stamps_ns, episode.trees, strict=True)]
    # arrival times: a robot's own header stamps run on its clock (sim time), not the tree's wall clock
    events += [(j.received_ns or j.stamp_ns, "joints", j) for j in episode.joint_states]
    return sorted(events, key=lambda e: e[0])


def publish_episode(episode: Episode, *, rate: float = 1.0, prefix: str = "/step_planner", delay_s: float = 1.0,
                    linger_s: float = 1.0, out: Any = sys.stdout) -> int:
    """Publish the episode's timeline; returns how many messages went out (-1: refused, another node publishes
    /joint_states)."""
    rclpy.init(args=None)
    node = rclpy.create_node("step_planner_replay")
    sent = 0
    try:
        joints = node.create_publisher(JointState, "/joint_states", 10)
        tree_pub = node.create_publisher(SubgoalTree, f"{prefix}/tree", latched())
        json_pub = node.create_publisher(String, f"{prefix}/tree_json", latched())
        if episode.robot_description:
            description = node.create_publisher(String, "/robot_description", latched())
            description.publish(String(data=episode.robot_description))
        events = timeline(episode)
        if not episode.joint_states:
            out.write("this episode has no joint states (recorded before typed episodes, or on the "
                      "symbolic backend): playing back its tree only\n")
        time.sleep(delay_s)  # discovery: let subscribers that are already waiting connect
        if (others := node.count_publishers("/joint_states") - 1) > 0:
            # a robot (joint_state_broadcaster: the arm, Gazebo's gz_ros2_control, the MuJoCo robot) already says
            # where the joints are: recorded states would contradict it and move nothing
            out.write(f"not publishing: {others} other publisher(s) of /joint_states (a robot or Gazebo's "
                      "joint_state_broadcaster); to move that robot through the recording use "
                      "`step-planner replay EPISODE --controllers`\n")
            return -1
        start_wall, start_stamp = time.monotonic(), events[0][0] if events else 0
        for stamp, kind, payload in events:
            wait = (stamp - start_stamp) / 1e9 / rate - (time.monotonic() - start_wall)
            if wait > 0:
                time.sleep(wait)
            now = node.get_clock().now().to_msg()
            if kind == "tree":
                tree_pub.publish(tree_to_msg(payload, changed=True, stamp=now))
                json_pub.publish(String(data=json.dumps(payload, default=str)))
            else:
                msg = JointState(name=list(payload.names), position=list(payload.position),
                                 velocity=list(payload.velocity), effort=list(payload.effort))
                msg.header.stamp = now
                joints.publish(msg)
            sent += 1
        time.sleep(linger_s)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    out.write(f"published {sent} messages: {len(episode.joint_states)} joint states on /joint_states, "
              f"{len(episode.trees)} trees on {prefix}/tree\n")
    return sent
