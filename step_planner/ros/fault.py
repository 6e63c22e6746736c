"""``step-planner fault KIND [TARGET]``: arm a fault in the MuJoCo robot, to rehearse what the planner does about it.

    step-planner fault reflex                    the FR3's next arm goal stops with a cartesian_reflex
    step-planner fault reflex joint_reflex       ... with that reflex (any franka_msgs/msg/Errors field name)
    step-planner fault slip cup                  the fingers let go of the cup while the arm carries it
    step-planner fault miss_place cup            the cup lands 12 cm beside where the fingers release it
    step-planner fault drawer_short drawer       the drawer stops 4 cm short of closed (until the next scene)

It calls the MuJoCo robot's ``~/inject_fault`` (step_planner_interfaces/InjectFault; ``step-planner mujoco-robot``,
``-p robot:=fr3`` for a reflex) and prints its answer. The fault happens at its next moment, during the next goal that
meets it; it stays armed across the robot's ``~/load_scene`` until then. A reflex is then recovered with
``step-planner recover`` (docs/reflex_rehearsal.md walks through it). Only a simulated robot has this service: a real
arm's reflexes come from the arm.
"""

from __future__ import annotations

import argparse
import sys

ANSWER_TIMEOUT_S = 30.0  # arming answers at once; this only bounds a robot that never answers (a loaded machine)
RESEND_S = 2.0  # arming is idempotent: a request whose answer may be lost (rmw_fastrtps's race) is sent again


def build_parser() -> argparse.ArgumentParser:
    from step_planner.execution.sim.faults import DEFAULT_REFLEX, FAULTS

    parser = argparse.ArgumentParser(prog="step-planner fault", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kind", choices=FAULTS, help="what happens")
    parser.add_argument("target", nargs="?", default="",
                        help=f"the object (slip, miss_place), the drawer (drawer_short) or the reflex's name (reflex; "
                             f"default {DEFAULT_REFLEX})")
    parser.add_argument("--robot-node", default="/mujoco_robot", help="the MuJoCo robot node's name")
    parser.add_argument("--wait", type=float, default=30.0, help="seconds to wait for its ~/inject_fault service")
    return parser


def main_fault(argv: list[str] | None = None) -> int:
    """0 when the fault is armed, 1 when the robot refused it (its answer says why), 2 when no robot answered."""
    args = build_parser().parse_args(argv)
    if args.kind != "reflex" and not args.target:
        what = "drawer" if args.kind == "drawer_short" else "object"
        print(f"step-planner fault: {args.kind} needs the {what} it happens to", file=sys.stderr)
        return 2
    from step_planner.ros.service_once import call_once
    from step_planner_interfaces.srv import InjectFault

    return call_once("step-planner fault", InjectFault, f"{args.robot_node.rstrip('/')}/inject_fault",
                     InjectFault.Request(kind=args.kind, target=args.target), args.wait, ANSWER_TIMEOUT_S, RESEND_S,
                     "is `step-planner mujoco-robot` running in this ROS_DOMAIN_ID? a real robot has no such service")
