"""How fast does a cancel stop the arm when the arm is a robot across ROS?

    python benchmarks/controllers_cancel.py --runs 24
    python benchmarks/controllers_cancel.py --runs 12 --servo fr3_effort

The controllers backend drives the MuJoCo robot (``step-planner mujoco-robot``, real-time pace, its own process)
in one servo mode, chosen as benchmarks/servo_modes.py chooses it (``-p servo:=<mode>``, execution/sim/servo.py):
``ideal`` (the robot's default: the MuJoCo PD; the Panda), ``gazebo`` (gz_ros2_control's position loop; the Panda),
``fr3_effort`` (franka_ros2's effort PID; the FR3 entry of robot_boundary.yaml).
Each run starts a primitive (open_drawer, pick, close_drawer in turn; no planner, no LLM), waits until the arm
moves faster than 0.2 rad/s plus a random 0-0.6 s, then sets the primitive's cancel event from another thread:
what the node's cancel callback does when an ExecuteTask cancel arrives. The backend cancels its
FollowJointTrajectory goal and joint_trajectory_controller holds the arm (JTC.cpp:1429-1450). Measured from
``cancel.set()`` to the first /joint_states message (received by this process) in which every arm joint moves
slower than 0.01 rad/s (looked for until 2 s after the return), and to the primitive's CANCELED return. Two more
figures say how the arm comes to rest: the time after which it stays below 0.01 rad/s until the window ends (an arm
that swings through zero speed is not still yet), the time it first moves slower than 0.05 rad/s, and how far the
farthest joint went from where it was at the cancel (the overshoot a person near the arm would see).
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FAST = 0.2  # rad/s: the arm is in motion
STILL = 0.01  # rad/s: the arm has stopped
CREEP = 0.05  # rad/s: the arm has shed its speed (what is left is the servo settling onto the held position)
WINDOW_S = 2.0  # s after the primitive returned in which the still sample is looked for (a slower stop is "not still")
CALLS = ("open_drawer(drawer)", "pick(tape)", "close_drawer(drawer)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=24)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--realtime-factor", type=float, default=1.0, help="the MuJoCo robot's pace")
    parser.add_argument("--servo", default="ideal", choices=("ideal", "gazebo", "fr3_effort"),
                        help="the MuJoCo robot's servo mode (ideal: its default; fr3_effort drives the FR3)")
    parser.add_argument("--stop-within-s", type=float, default=None,
                        help="plan with this speed cap instead of robot_boundary.yaml's stop_within_s (0: no cap)")
    return parser


def ms(values: list[float]) -> str:
    return f"median {statistics.median(values) * 1000:.0f} ms, max {max(values) * 1000:.0f} ms" if values else "n/a"


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from sensor_msgs.msg import JointState

    from step_planner.domain.primitives import PrimitiveLibrary
    from step_planner.domain.scene import load_scene
    from step_planner.execution.base import ExecCode
    from step_planner.execution.controllers.config import BoundaryConfig
    from step_planner.execution.controllers.connection import RobotConnection
    from step_planner.execution.factory import make_executor
    from step_planner.resources import config_path
    from step_planner.ros.robot_process import RobotProcess

    rng = random.Random(args.seed)
    library = PrimitiveLibrary.load(config_path("primitives.yaml"))
    world = load_scene(config_path("scenes", "drawer_desk.yaml"))
    robot = "fr3" if args.servo == "fr3_effort" else "panda"  # as benchmarks/servo_modes.py chooses it
    config = BoundaryConfig.load(config_path("robot_boundary.yaml"), robot)
    if args.stop_within_s is not None:
        config = dataclasses.replace(config, stop_within_s=args.stop_within_s)
    print("No planner and no answers at all (NOT an LLM): primitives run directly. The MuJoCo robot at real-time "
          f"factor {args.realtime_factor} "
          f"in another process, robot {robot}, servo {args.servo}; {args.runs} cancels; speed cap: stop_within_s "
          f"{config.stop_within_s} s at stop_deceleration {list(config.arm.stop_deceleration)} rad/s^2.\n")
    # (received, fastest arm joint's speed, its name, arm positions in config.arm.joints order)
    samples: list[tuple[float, float, str, tuple[float, ...]]] = []
    lock = threading.Lock()

    def on_joints(msg: JointState) -> None:
        speed, joint = max((abs(v), n) for n, v in zip(msg.name, msg.velocity, strict=False) if n in config.arm.joints)
        position = dict(zip(msg.name, msg.position, strict=False))
        with lock:
            samples.append((time.monotonic(), speed, joint, tuple(position.get(j, 0.0) for j in config.arm.joints)))

    stops, returns, codes, at_cancel = [], [], [], []
    settled, creeps, travels = [], [], []
    with RobotProcess(realtime_factor=args.realtime_factor, scene="drawer_desk", robot=robot, servo=args.servo):
        connection = RobotConnection(config, node_name="controllers_cancel_bench")
        connection.node.create_subscription(JointState, config.joint_states, on_joints, 100)
        try:
            connection.wait_ready(60.0)
            executor = make_executor("controllers", library, world, connection=connection, robot=robot,
                                     load_scene="/mujoco_robot/load_scene")
            for run in range(args.runs):
                call = library.parse_call_text(CALLS[run % len(CALLS)])
                if call.name == "close_drawer":  # needs an open drawer: open it first, uncanceled
                    executor.reset(world)
                    executor.execute(library.parse_call_text("open_drawer(drawer)"))
                else:
                    executor.reset(world)
                cancel, stamp = threading.Event(), {}
                delay = rng.uniform(0.0, 0.6)

                def press(cancel=cancel, stamp=stamp, delay=delay) -> None:
                    deadline = time.monotonic() + 60.0
                    moving_since = None
                    while time.monotonic() < deadline and "done" not in stamp:
                        with lock:
                            fast = bool(samples) and samples[-1][1] > FAST
                        if fast and moving_since is None:
                            moving_since = time.monotonic()
                        if moving_since is not None and time.monotonic() - moving_since >= delay:
                            stamp["set"] = time.monotonic()
                            cancel.set()
                            return
                        time.sleep(0.002)

                presser = threading.Thread(target=press, daemon=True)
                presser.start()
                outcome = executor.execute(call, cancel)
                returned = time.monotonic()
                stamp["done"] = True
                presser.join()
                codes.append(outcome.code.value)
                print(f"run {run}: {call} {outcome.code.value} {outcome.message[:100]}", file=sys.stderr, flush=True)
                if outcome.code is not ExecCode.CANCELED or "set" not in stamp:
                    continue
                t_set = stamp["set"]
                returns.append(returned - t_set)
                time.sleep(WINDOW_S)
                with lock:
                    after = [(t, s, j, q) for t, s, j, q in samples if t > t_set]
                    before = [(s, j, q) for t, s, j, q in samples if t <= t_set]
                still = next((t for t, s, _, _ in after if s < STILL), None)
                if still is not None:
                    stops.append(still - t_set)
                moving = [t for t, s, _, _ in after if s >= STILL]  # settled: still from the sample after the last
                later_still = [t for t, s, _, _ in after if not moving or t > moving[-1]]
                if later_still:
                    settled.append(later_still[0] - t_set)
                if (creep := next((t for t, s, _, _ in after if s < CREEP), None)) is not None:
                    creeps.append(creep - t_set)
                if before and after:
                    start = before[-1][2]
                    travels.append(max(abs(a - b) for _, _, _, q in after for a, b in zip(q, start, strict=True)))
                at_cancel.append(before[-1][0] if before else float("nan"))
                # per run (stderr): the stop, the fastest joint at the cancel, and the speed 100 ms later
                later = next(((s, j) for t, s, j, _ in after if t >= t_set + 0.1), (float("nan"), "-"))
                print(f"run {run}: stopped in {(still - t_set) * 1000 if still else float('nan'):.0f} ms, settled in "
                      f"{(later_still[0] - t_set) * 1000 if later_still else float('nan'):.0f} ms; at the "
                      f"cancel {before[-1][1] if before else '-'} {at_cancel[-1]:.2f} rad/s; 100 ms later "
                      f"{later[1]} {later[0]:.3f} rad/s; travel {travels[-1] * 1000 if travels else float('nan'):.0f} "
                      "mrad", file=sys.stderr, flush=True)
            executor.close()
        finally:
            connection.close()
    others = sorted(c for c in codes if c != "CANCELED") or "none"
    print(f"{codes.count('CANCELED')}/{len(codes)} primitives CANCELED (others: {others}; a primitive can end before "
          f"its cancel)")
    print(f"cancel.set() -> every arm joint below {STILL} rad/s on /joint_states: {ms(stops)} (n={len(stops)}; "
          f"target: within 100 ms)")
    print(f"canceled runs whose arm was not below {STILL} rad/s within {WINDOW_S:g} s of the return: "
          f"{len(returns) - len(stops)}")
    print(f"cancel.set() -> every arm joint below {STILL} rad/s and staying there until the window ends: "
          f"{ms(settled)} (n={len(settled)})")
    print(f"cancel.set() -> every arm joint below {CREEP} rad/s: {ms(creeps)} (n={len(creeps)})")
    if travels:
        print("farthest any arm joint went from its position at the cancel: "
              f"median {statistics.median(travels) * 1000:.0f} mrad, max {max(travels) * 1000:.0f} mrad")
    print(f"cancel.set() -> the primitive returned CANCELED: {ms(returns)}")
    if at_cancel:
        print(f"fastest arm joint at the cancel: median {statistics.median(at_cancel):.2f} rad/s, "
              f"max {max(at_cancel):.2f} rad/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
