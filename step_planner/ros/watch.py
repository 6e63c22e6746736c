"""``step-planner watch``: follow the node's latched ``~/tree`` and redraw it on every change.

Starts at any time (the latched topic hands over the current tree at once); heartbeats only refresh
the "alive" line, so a still tree does not flicker.
"""

from __future__ import annotations

import argparse
import sys
import time

import rclpy
from rclpy.executors import ExternalShutdownException

from step_planner.ros.conversions import msg_to_tree, render_tree
from step_planner.ros.qos import latched
from step_planner_interfaces.msg import SubgoalTree

CLEAR = "\033[2J\033[H"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="step-planner watch", description=__doc__)
    parser.add_argument("--node", default="/step_planner", help="the planner node's name")
    parser.add_argument("--once", action="store_true", help="print the current tree and exit")
    parser.add_argument("--timeout", type=float, default=10.0, help="with --once: seconds to wait for a tree")
    parser.add_argument("--no-clear", action="store_true", help="append instead of redrawing the screen")
    return parser


def main_watch(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    rclpy.init(args=None)
    node = rclpy.create_node("step_planner_watch")
    out = sys.stdout
    state = {"revision": None, "goal": None, "received": 0}
    clear = "" if args.no_clear or not out.isatty() else CLEAR

    def on_tree(msg: SubgoalTree) -> None:
        state["received"] += 1
        if (msg.goal_id, msg.revision) == (state["goal"], state["revision"]):
            return  # a heartbeat of a tree already drawn
        state["goal"], state["revision"] = msg.goal_id, msg.revision
        out.write(f"{clear}goal {msg.goal_id} rev {msg.revision}: {msg.instruction}\n")
        out.write(render_tree(msg_to_tree(msg)) + "\n")
        out.flush()

    node.create_subscription(SubgoalTree, f"{args.node}/tree", on_tree, latched())
    try:
        deadline = time.monotonic() + args.timeout
        while rclpy.ok():
            rclpy.spin_once(node, timeout_sec=0.1)
            if args.once and (state["received"] or time.monotonic() > deadline):
                break
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    if args.once and not state["received"]:
        print(f"step-planner watch: no tree on {args.node}/tree within {args.timeout:g} s", file=sys.stderr)
        return 1
    return 0
