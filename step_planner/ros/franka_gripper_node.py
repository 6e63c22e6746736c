"""franka_gripper's interfaces on a mock hand: the FR3 gripper for fake hardware, and the tests' stand-in.

    step-planner franka-gripper --ros-args -p joint_names:="[fr3_finger_joint1, fr3_finger_joint2]"
    ros2 run step_planner franka_gripper                 # what franka.launch.py starts with use_fake_hardware:=true

WHY: franka_ros2's fake hardware starts no gripper server at all, only a publisher of fixed finger states
(franka_ros2@29cb85a franka_gripper/launch/gripper.launch.py:49-60, scripts/fake_gripper_state_publisher.py:26-41),
so a dry run of the MoveIt backend could not even start. This node serves the real node's actions and topic,
with its rules (:mod:`step_planner.execution.sim.franka_gripper_emulation`), on a hand without physics
(:mod:`step_planner.execution.sim.mock_hand`). With ``fake_hardware`` true (the default) every grasp finds its
object at the commanded width, as mock_components' joints reach every command: a dry run proves the sequence and
the conventions, never a grasp. The tests set the hand's object themselves (``hand.object_width``).
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from collections import deque
from collections.abc import Hashable
from typing import Any

from rcl_interfaces.msg import ParameterDescriptor
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node

from step_planner.execution.sim.controller_emulation import GoalEnd
from step_planner.execution.sim.franka_gripper_emulation import FrankaGripper, FrankaGripperParams, start_goal
from step_planner.execution.sim.mock_hand import MockHand
from step_planner.ros.franka_gripper_server import FrankaGripperServer, GripperHand

STEP_S = 0.002  # the mock hand's step (500 Hz of wall time)
PARAMETERS: dict[str, tuple[Any, str]] = {
    "joint_names": (["fr3_finger_joint1", "fr3_finger_joint2"], "The finger joints of ~/joint_states "
                    "(gripper.launch.py:31-34: robot_type + '_finger_joint1/2')."),
    "fake_hardware": (True, "Every grasp finds its object at the commanded width (mock hardware); false: the hand "
                            "is empty unless a test puts an object in it."),
    "initial_width": (0.08, "Finger gap at start (m)."),
    "default_speed": (0.1, "franka_gripper_node.yaml: speed of ~/gripper_action's move and grasp (m/s)."),
    "state_publish_rate": (15, "franka_gripper_node.yaml: ~/joint_states and the width results report (Hz)."),
    "feedback_publish_rate": (30, "franka_gripper_node.yaml: action feedback (Hz)."),
}


class MockFrankaHand:
    """The emulation on a mock hand, stepped by a thread of its own at wall-clock pace."""

    def __init__(self, params: FrankaGripperParams, width: float, fake_hardware: bool) -> None:
        self.lock = threading.Lock()
        self.hand = MockHand(width=width, max_width=params.max_width)
        self.gripper = FrankaGripper(params, width)
        self.fake_hardware = fake_hardware
        self._start = time.monotonic()
        self._ends: dict[Hashable, GoalEnd] = {}
        self.started: deque[tuple[str, Any]] = deque(maxlen=100)  # (action, goal) of the latest goals
        self._running = threading.Event()
        self._thread: threading.Thread | None = None

    def now(self) -> float:
        return time.monotonic() - self._start

    def start(self, action: str, goal_id: Hashable, request: Any) -> None:
        with self.lock:
            self.started.append((action, request))
            if self.fake_hardware and action in ("grasp", "gripper_command", "gripper_action"):
                width = request.width if action == "grasp" else 2 * request.command.position
                if width < self.hand.width:  # a close: the object is where the command says (mock hardware)
                    self.hand.object_width = width
            if self.fake_hardware and action in ("move", "homing"):
                self.hand.object_width = None  # opening lets go
            start_goal(self.gripper, "gripper_command" if action == "gripper_action" else action, goal_id, request,
                       self.now())

    def cancel(self, goal_id: Hashable) -> bool:
        with self.lock:
            return self.gripper.cancel(goal_id)

    def end_of(self, goal_id: Hashable) -> GoalEnd | None:
        with self.lock:
            for end in self.gripper.ended:
                self._ends[end.goal_id] = end
            self.gripper.ended.clear()
            return self._ends.pop(goal_id, None)

    def feedback(self) -> dict | None:
        with self.lock:
            return self.gripper.feedback()

    def state_width(self) -> float:
        with self.lock:
            return self.gripper.state_width

    def step(self) -> None:
        with self.lock:
            setpoint = self.gripper.update(self.now(), self.hand.width, self.hand.velocity)
            self.hand.step(setpoint, STEP_S)

    def run(self) -> MockFrankaHand:
        self._running.set()
        self._thread = threading.Thread(target=self._loop, name="mock_franka_hand", daemon=True)
        self._thread.start()
        return self

    def _loop(self) -> None:
        next_step = time.monotonic()
        while self._running.is_set():
            self.step()
            next_step += STEP_S
            time.sleep(max(0.0, next_step - time.monotonic()))

    def stop(self) -> None:
        self._running.clear()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def interface(self) -> GripperHand:
        return GripperHand(self.start, self.cancel, self.end_of, self.feedback, self.state_width)


class FrankaGripperNode(Node):
    """Node ``franka_gripper`` (the name franka_ros2's gripper.launch.py gives it, :43-50): ``~/homing``, ``~/move``,
    ``~/grasp`` (franka_msgs), ``~/gripper_action`` (control_msgs GripperCommand), ``~/joint_states``."""

    def __init__(self, node_name: str = "franka_gripper", **kwargs: Any) -> None:
        super().__init__(node_name, **kwargs)
        for name, (default, text) in PARAMETERS.items():
            self.declare_parameter(name, default, ParameterDescriptor(description=text, read_only=True))
        p = {name: self.get_parameter(name).value for name in PARAMETERS}
        joints = list(p["joint_names"])
        if len(joints) != 2:  # FG:57-62
            raise ValueError(f"Parameter 'joint_names' needs exactly two arguments, got {len(joints)} instead")
        params = FrankaGripperParams(default_speed=float(p["default_speed"]),
                                     state_publish_rate=float(p["state_publish_rate"]),
                                     feedback_publish_rate=float(p["feedback_publish_rate"]))
        self.hand = MockFrankaHand(params, float(p["initial_width"]), bool(p["fake_hardware"])).run()
        self.server = FrankaGripperServer(self, self.hand.interface(), params, "~", (joints[0], joints[1]),
                                          ReentrantCallbackGroup())
        self.get_logger().info(f"franka_gripper on a mock hand ({'fake hardware' if p['fake_hardware'] else 'empty'})"
                               f": {self.get_fully_qualified_name()}/grasp, /move, /homing, /gripper_action")

    def stop_goals(self, reason: str, timeout_s: float) -> bool:
        self.server.stopping = True
        return True

    def destroy_node(self) -> None:
        self.hand.stop()
        self.server.destroy()
        super().destroy_node()


def build_parser(prog: str = "franka_gripper") -> argparse.ArgumentParser:
    lines = [f"  {name} = {default!r}: {text}" for name, (default, text) in PARAMETERS.items()]
    return argparse.ArgumentParser(
        prog=prog, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="franka_gripper's actions (~/homing, ~/move, ~/grasp, ~/gripper_action) and ~/joint_states on a "
                    "mock hand: the FR3 gripper for fake hardware (see FrankaGripperNode).",
        epilog="ROS arguments: --ros-args [-p name:=value]\n\nparameters:\n" + "\n".join(lines))


def main_gripper(argv: list[str] | None = None) -> int:
    """``step-planner franka-gripper`` and ``ros2 run step_planner franka_gripper``; stops on SIGINT/SIGTERM."""
    from rclpy.utilities import remove_ros_args

    from step_planner.ros.shutdown import run_node

    args = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser("franka_gripper" if argv is None else "step-planner franka-gripper")
    parser.parse_args(remove_ros_args(["franka_gripper", *args])[1:])
    return run_node(FrankaGripperNode, ["franka_gripper", *args], num_threads=6, quiesce=FrankaGripperNode.stop_goals)


def main() -> None:
    sys.exit(main_gripper())


if __name__ == "__main__":
    main()
