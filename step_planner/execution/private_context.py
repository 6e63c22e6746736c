"""An rclpy context of its own for a helper node inside a process, blind to the process's command line.

``rclpy.init(context=...)`` without ``args`` parses ``sys.argv`` (rclpy 7.1, Jazzy: ``init`` passes
``args=None`` on to ``Context.init``, which takes the process's arguments). ``ros2 launch`` starts the node with
``--ros-args -r __node:=step_planner -r __ns:=/robot1`` (launch_ros jazzy, actions/node.py: the ``name`` and
``namespace`` of a Node become these global remappings), and a global remapping applies to every node of a
context that parsed it: a helper node created in such a context is renamed ``/robot1/step_planner`` too, so the
graph holds two nodes of that name and ``ros2 param`` or ``ros2 node info`` answer for either at random. A
context made here parses no command line; the helper node keeps the name and namespace its code gives it.
"""

from __future__ import annotations

from typing import Any


def private_context(domain_id: int | None = None) -> Any:
    """A new, initialised rclpy context with no command-line arguments (``domain_id``: None = ROS_DOMAIN_ID's)."""
    import rclpy

    context = rclpy.Context()
    rclpy.init(args=[], context=context, domain_id=domain_id)
    return context
