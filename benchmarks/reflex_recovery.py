"""From a reflex to a recovered FR3: how long the controllers backend takes to notice, name and recover.

    python benchmarks/reflex_recovery.py --runs 10 --realtime-factor 1.0

The MuJoCo robot with ``robot:=fr3`` (its own process, franka_ros2's controller manager stand-in: the hardware
component unconfigured and the controllers inactive after a reflex, /joint_states republished stale) is made to trip
a reflex 0.2 s into an arm goal (its ~/inject_fault ``reflex``, alternating cartesian_reflex and joint_reflex). The
backend then does what the node does with ``auto_recover``: asks the controller manager (the stop), and recovers in
franka_ros2's three steps (error_recovery action, set_hardware_component_state active, switch_controller), waiting
until the controllers are active and the arm's joint states move again. No planner and no answers (NOT an LLM).

The reflex's moment is the arrival of the last joint state whose arm values changed (joint_state_broadcaster's last
before it went inactive; joint_state_publisher repeats it after). Times are wall-clock in this process:
reflex -> goal ended (the arm controller's abort), -> stop named (the controller manager asked), -> recovered.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

REFLEXES = ("cartesian_reflex", "joint_reflex")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--realtime-factor", type=float, default=1.0, help="the MuJoCo robot's pace")
    return parser


def ms(values: list[float]) -> str:
    return f"median {statistics.median(values) * 1000:.0f} ms, max {max(values) * 1000:.0f} ms" if values else "n/a"


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    import numpy as np

    from step_planner.domain.primitives import PrimitiveLibrary
    from step_planner.domain.scene import load_scene
    from step_planner.execution.controllers.config import BoundaryConfig
    from step_planner.execution.controllers.connection import SERVICE_RESEND_S, RobotConnection
    from step_planner.execution.controllers.trajectory import waypoints
    from step_planner.execution.factory import make_executor
    from step_planner.execution.sim.model import HOME_Q
    from step_planner.execution.sim.timing import time_parameterize
    from step_planner.resources import config_path
    from step_planner.ros.robot_process import RobotProcess
    from step_planner_interfaces.srv import InjectFault

    library = PrimitiveLibrary.load(config_path("primitives.yaml"))
    world = load_scene(config_path("scenes", "drawer_desk.yaml"))
    config = BoundaryConfig.load(config_path("robot_boundary.yaml"), "fr3")
    print("No planner and no answers at all (NOT an LLM): arm goals sent directly. The MuJoCo robot as the FR3 "
          f"(robot:=fr3) at real-time factor {args.realtime_factor} in another process; {args.runs} reflexes, each "
          "recovered at once (as auto_recover does; by default the node waits for `step-planner recover`).\n")
    away = HOME_Q.copy()
    away[0] += 0.4
    trips = [waypoints(time_parameterize(np.array([HOME_Q, away]), 0.002, speed=0.5), 0.02)]
    ended, named, recovered, inside = [], [], [], []
    failures: list[str] = []
    with RobotProcess(realtime_factor=args.realtime_factor, scene="drawer_desk", robot="fr3"):
        connection = RobotConnection(config, node_name="reflex_recovery_bench")
        try:
            connection.wait_ready(60.0)
            executor = make_executor("controllers", library, world, connection=connection,
                                     load_scene="/mujoco_robot/load_scene")
            link = executor.franka
            for run in range(args.runs):
                reflex = REFLEXES[run % len(REFLEXES)]
                answer = connection.call_service(InjectFault, "/mujoco_robot/inject_fault",
                                                 InjectFault.Request(kind="reflex", target=reflex),
                                                 resend_s=SERVICE_RESEND_S)
                if not answer.success:
                    failures.append(f"run {run}: {answer.message}")
                    continue
                outcome = connection.run_trajectory(trips[0])
                t_end = time.monotonic()
                why = executor.robot_stop(refresh=True)
                t_named = time.monotonic()
                t_reflex = link._moved_at  # the last changing arm joint state: the reflex (see the module doc)
                report = executor.recover()
                t_back = time.monotonic()
                if outcome.status != "aborted" or why is None or not report.ok or reflex not in report.message:
                    failures.append(f"run {run}: {outcome.status}, {why}, {report.message}")
                else:
                    ended.append(t_end - t_reflex)
                    named.append(t_named - t_reflex)
                    recovered.append(t_back - t_reflex)
                    inside.append(report.seconds)
                if run == 0:
                    print(f"first recovery: {report.message}\n")
                joints = connection.joints()
                now = np.array([joints.position[f"panda_joint{i}"] for i in range(1, 8)])
                back = connection.run_trajectory(waypoints(time_parameterize(np.array([now, HOME_Q]), 0.002,
                                                                             speed=0.5), 0.02))  # home again
                if back.status != "succeeded":
                    failures.append(f"run {run}: going home after recovery: {back.message}")
                    executor.reset(world)
            executor.close()
        finally:
            connection.close()
    print("| from the reflex to | runs | time |")
    print("|---|---|---|")
    print(f"| the goal ended (the arm controller's abort) | {len(ended)} | {ms(ended)} |")
    print(f"| the stop named (controller manager asked) | {len(named)} | {ms(named)} |")
    print(f"| recovered (three steps, controllers active, joint states moving) | {len(recovered)} | {ms(recovered)} |")
    print(f"\nrecover() alone (the three steps and the wait): {ms(inside)}; every recovery named the reflex from "
          "franka_robot_state_broadcaster's last_motion_errors.")
    print(f"failures: {len(failures)}" + "".join(f"\n  {f}" for f in failures))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
