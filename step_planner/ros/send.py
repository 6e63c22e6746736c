"""``step-planner send "instruction"``: send an ExecuteTask goal, show the tree growing, print the result.

Ctrl-C cancels the goal (and waits for the node to confirm) instead of leaving the arm running; a second
Ctrl-C stops waiting. rclpy installs no signal handler here: its handler shuts the context down on SIGINT
(see step_planner.ros.shutdown), after which the cancel request could not be sent.

A result response can be lost (seen when the node stopped right after ending the goal): once the goal's
status says it ended, the result is asked for once more, and if it still does not come the status is reported
instead of waiting forever.
"""

from __future__ import annotations

import argparse
import sys
import time

import rclpy
from action_msgs.msg import GoalStatus
from rclpy.action import ActionClient
from rclpy.signals import SignalHandlerOptions

from step_planner.ros.conversions import ERROR_NAMES, msg_to_tree, render_tree
from step_planner.ros.qos import feedback_stream, latched
from step_planner_interfaces.action import ExecuteTask
from step_planner_interfaces.msg import SubgoalTree


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="step-planner send", description=__doc__)
    parser.add_argument("instruction")
    parser.add_argument("--scene", default="", help="scene name or path (symbolic/sim backends)")
    parser.add_argument("--dry-run", action="store_true", help="plan on a symbolic copy; never moves the arm")
    parser.add_argument("--goal", action="append", default=[], metavar="FACT",
                        help="a fact of the goal, e.g. 'in(tape, drawer)' (repeat; default: the model states them)")
    parser.add_argument("--node", default="/step_planner", help="the planner node's name")
    parser.add_argument("--wait", type=float, default=30.0, help="seconds to wait for the action server "
                        "(a node that was just started needs a few)")
    parser.add_argument("--quiet", action="store_true", help="print only the result")
    return parser


def _spin_until(node, future, timeout: float | None = None) -> bool:
    deadline = None if timeout is None else time.monotonic() + timeout
    while not future.done():
        rclpy.spin_once(node, timeout_sec=0.1)
        if deadline is not None and time.monotonic() > deadline:
            return False
    return True


ENDED = {GoalStatus.STATUS_SUCCEEDED: "SUCCEEDED", GoalStatus.STATUS_CANCELED: "CANCELED",
         GoalStatus.STATUS_ABORTED: "ABORTED"}
RESULT_AFTER_END_S = 5.0  # how long a result may lag behind the status that says the goal ended


def wait_result(node, handle, spin=_spin_until, clock=time.monotonic):
    """The goal's result response, or None when the status says the goal ended but no result came (asked
    twice, ``RESULT_AFTER_END_S`` each)."""
    future = handle.get_result_async()
    for attempt in range(2):
        ended_at = None
        while not future.done():
            spin(node, future, timeout=0.1)
            if handle.status in ENDED and ended_at is None:
                ended_at = clock()
            if ended_at is not None and clock() - ended_at > RESULT_AFTER_END_S:
                break
        if future.done():
            return future.result()
        if attempt == 0:
            future = handle.get_result_async()
    return None


def main_send(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    rclpy.init(args=None, signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node("step_planner_send")
    out = sys.stdout
    try:
        client = ActionClient(node, ExecuteTask, f"{args.node}/execute_task",
                              feedback_sub_qos_profile=feedback_stream())
        if not client.wait_for_server(timeout_sec=args.wait):
            print(f"step-planner send: no action server {args.node}/execute_task", file=sys.stderr)
            return 2
        shown = {"revision": -1}

        def show_tree(msg: SubgoalTree) -> None:
            if args.quiet or not msg.changed or msg.revision <= shown["revision"]:
                return
            shown["revision"] = msg.revision
            out.write(f"\n-- tree rev {msg.revision} --\n{render_tree(msg_to_tree(msg))}\n")
            out.flush()

        def show_feedback(fb) -> None:
            f = fb.feedback
            if not args.quiet and f.last_primitive:
                goal = f"   goal facts met: {f.conditions_met}/{f.conditions_total}" if f.conditions_total else ""
                out.write(f"   last: {f.last_primitive} -> {f.last_outcome}   done: {f.leaves_done}   "
                          f"LLM calls: {f.llm_calls}   {f.elapsed_s:.1f} s{goal}\n")

        node.create_subscription(SubgoalTree, f"{args.node}/tree", show_tree, latched())
        goal = ExecuteTask.Goal(instruction=args.instruction, scene=args.scene, dry_run=args.dry_run,
                                success_when=list(args.goal))
        send_future = client.send_goal_async(goal, feedback_callback=show_feedback)
        if not _spin_until(node, send_future, timeout=args.wait):
            print(f"step-planner send: {args.node} did not answer the goal within {args.wait:g} s", file=sys.stderr)
            return 2
        handle = send_future.result()
        if not handle.accepted:
            print("step-planner send: the goal was rejected", file=sys.stderr)
            return 1
        try:
            response = wait_result(node, handle)
        except KeyboardInterrupt:
            out.write("\ncanceling the goal... (Ctrl-C again: stop waiting)\n")
            out.flush()
            try:
                cancel = handle.cancel_goal_async()
                _spin_until(node, cancel, timeout=10.0)
                response = wait_result(node, handle)
            except KeyboardInterrupt:
                print("step-planner send: stopped waiting; the goal may still be running", file=sys.stderr)
                return 130
        if response is None:
            status = ENDED.get(handle.status, "UNKNOWN")
            print(f"step-planner send: the node ended the goal ({status}) but its result did not arrive "
                  "(the node may have stopped)", file=sys.stderr)
            return 1
        result = response.result
        out.write("\n" + render_tree(msg_to_tree(result.final_tree)) + "\n" if result.final_tree.nodes else "\n")
        for line in result.executed_primitives:
            out.write(f"   {line}\n")
        if result.success:  # error_msg is empty then (nav2's convention): the facts below say what holds
            out.write(f"outcome: SUCCESS: the instruction is achieved "
                      f"({'verified in the world' if result.verified else 'not verified'})\n")
        else:
            out.write(f"outcome: FAILED ({ERROR_NAMES.get(result.error_code, result.error_code)}): "
                      f"{result.error_msg}\n")
        if result.conditions:
            out.write(f"goal conditions ({'checked in the world' if result.verified else 'not checked'}):\n")
            for cond in result.conditions:
                out.write(f"  {'✓' if cond.holds else '✗'} {cond.text}  ({cond.judged_from})\n")
        else:
            out.write("goal conditions: none (not verified against the world)\n")
        return 0 if result.success else 1
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
