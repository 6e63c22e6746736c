"""``step-planner recover``: ask the node to bring the FR3 back after a reflex, and print what it did.

The node's ``~/recover`` (std_srvs/Trigger) runs franka_ros2's three recovery steps in order (the error recovery
action, the hardware component active, the controllers activated; franka_hardware/doc/index.rst:97-145) and answers
when the controllers are active and the joint states move again, or with the step that failed. Look at why the
robot stopped before recovering it: the node refuses goals until then, saying why.
"""

from __future__ import annotations

import argparse
import sys
import time

RECOVER_TIMEOUT_S = 60.0  # the node's own steps time out sooner; this only bounds a node that never answers


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="step-planner recover", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--node", default="/step_planner", help="the planner node's name")
    parser.add_argument("--wait", type=float, default=30.0, help="seconds to wait for the node's ~/recover service")
    return parser


def main_recover(argv: list[str] | None = None) -> int:
    """0 when the node recovered the robot (or found nothing to recover), 1 when it could not, 2 when no node
    answered."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.signals import SignalHandlerOptions
    from std_srvs.srv import Trigger

    args = build_parser().parse_args(argv)
    context = rclpy.Context()
    rclpy.init(args=[], context=context, signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node("step_planner_recover", context=context)
    name = f"{args.node.rstrip('/')}/recover"
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    try:
        client = node.create_client(Trigger, name)
        if not client.wait_for_service(timeout_sec=args.wait):
            print(f"step-planner recover: no service {name} (is the node running in this ROS_DOMAIN_ID?)",
                  file=sys.stderr)
            return 2
        future = client.call_async(Trigger.Request())
        deadline = time.monotonic() + RECOVER_TIMEOUT_S
        while not future.done() and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.05)
        if not future.done():
            print(f"step-planner recover: {name} did not answer within {RECOVER_TIMEOUT_S:.0f} s", file=sys.stderr)
            return 2
        response = future.result()
        print(response.message, file=sys.stdout if response.success else sys.stderr)
        return 0 if response.success else 1
    except KeyboardInterrupt:
        print("step-planner recover: interrupted (the node may still be recovering; see its log)", file=sys.stderr)
        return 130
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown(context=context)
