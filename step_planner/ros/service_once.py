"""One service call from a command (`step-planner recover`, `step-planner fault`): its own context and node, the
service waited for, the answer printed, an exit code a script can test.

WHY: each such command is a short-lived ROS client; writing the context, the wait and the polling once keeps their
exit codes alike (0 done, 1 refused, 2 nobody answered, 130 interrupted).
"""

from __future__ import annotations

import sys
import time
from typing import Any


def call_once(prog: str, srv_type: Any, name: str, request: Any, wait_s: float, answer_s: float,
              resend_s: float | None = None, missing: str = "") -> int:
    """Call ``name`` once and print its ``message`` (stdout when ``success``, else stderr). ``resend_s``: ask again
    after that long without an answer, only for a request that is safe to repeat (a lost answer, rmw_fastrtps's race
    on a new client). ``missing``: what to add when no such service appears."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.signals import SignalHandlerOptions

    context = rclpy.Context()
    rclpy.init(args=[], context=context, signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node(prog.replace("-", "_").replace(" ", "_"), context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    try:
        client = node.create_client(srv_type, name)
        if not client.wait_for_service(timeout_sec=wait_s):
            print(f"{prog}: no service {name} ({missing or 'is the node running in this ROS_DOMAIN_ID?'})",
                  file=sys.stderr)
            return 2
        futures = [client.call_async(request)]
        deadline = time.monotonic() + answer_s
        again = time.monotonic() + resend_s if resend_s else float("inf")
        while not any(f.done() for f in futures) and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.05)
            if time.monotonic() > again:
                futures.append(client.call_async(request))
                again = time.monotonic() + (resend_s or 0.0)
        done = next((f for f in futures if f.done()), None)
        if done is None:
            print(f"{prog}: {name} did not answer within {answer_s:.0f} s", file=sys.stderr)
            return 2
        response = done.result()
        print(response.message, file=sys.stdout if response.success else sys.stderr)
        return 0 if response.success else 1
    except KeyboardInterrupt:
        print(f"{prog}: interrupted (the call may still be under way; see the node's log)", file=sys.stderr)
        return 130
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown(context=context)
