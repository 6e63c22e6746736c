"""``step-planner recover``: ask the node to bring the FR3 back after a reflex, and print what it did.

The node's ``~/recover`` (std_srvs/Trigger) runs franka_ros2's three recovery steps in order (the error recovery
action, the hardware component active, the controllers activated; franka_hardware/doc/index.rst:97-145) and answers
when the controllers are active and the joint states move again, or with the step that failed. Look at why the
robot stopped before recovering it: the node refuses goals until then, saying why.
"""

from __future__ import annotations

import argparse

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
    from std_srvs.srv import Trigger

    from step_planner.ros.service_once import call_once

    args = build_parser().parse_args(argv)
    return call_once("step-planner recover", Trigger, f"{args.node.rstrip('/')}/recover", Trigger.Request(),
                     args.wait, RECOVER_TIMEOUT_S)  # never resent: a second recovery is not the first's answer
