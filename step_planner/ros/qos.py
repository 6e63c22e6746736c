"""QoS profiles of the node's topics.

The tree is state, not a stream: it is published latched (reliable, transient-local, keep-last 1) like
py_trees_ros snapshots, so a viewer that starts late still receives the current tree at once.
"""

from __future__ import annotations

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy


def latched() -> QoSProfile:
    """Reliable, transient-local, depth 1: late subscribers get the last message."""
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=1,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.TRANSIENT_LOCAL,
    )


def perception() -> QoSProfile:
    """Object reports: keep a few, reliable; a volatile stream (old reports are stale)."""
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=10,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.VOLATILE,
    )


FEEDBACK_DEPTH = 100


def feedback_stream() -> QoSProfile:
    """Action feedback: reliable, keep the last 100 (rclpy's default is 10).

    The symbolic and sim backends change the tree in bursts of tens of events between two spins of a
    busy client; with depth 10 the writer's and reader's histories push out the feedback of a primitive
    before the client reads it. Clients that want every message use the same profile.
    """
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=FEEDBACK_DEPTH,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.VOLATILE,
    )
