"""The controllers backend on franka_ros2's fake hardware says at start what it does about homing and the width
check (issue 38, part 5).

Against a stand-in of upstream's fake gripper (test/fake_gripper_state_publisher.py: 0.035 m per finger, no
action), the backend stops at start with a message naming it, the 70 mm it reports, that homing is skipped and the
width check not reached, and what to start instead. Against this package's mock franka_gripper (what
fr3_controllers.launch.py use_fake_hardware:=true starts) it says it homes the hand as on the arm.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("franka_msgs", reason="franka_msgs (test interfaces) not built")

from fake_gripper_state_publisher import FakeGripperStatePublisher  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.timeout(120)]

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def fr3_connection():
    from step_planner.execution.controllers.config import BoundaryConfig
    from step_planner.execution.controllers.connection import RobotConnection

    connection = RobotConnection(BoundaryConfig.load(ROOT / "config" / "robot_boundary.yaml", "fr3"),
                                 node_name="fake_hardware_test")
    yield connection
    connection.close()


def test_upstreams_fake_gripper_stops_the_backend_saying_what_it_does_about_homing_and_width(fr3_connection):
    from step_planner.domain.primitives import PrimitiveLibrary
    from step_planner.domain.scene import load_scene
    from step_planner.execution.controllers.backend import make_controllers_executor
    from step_planner.execution.errors import BackendUnavailable

    hand = FakeGripperStatePublisher(topic="/joint_states")  # where joint_state_publisher merges it
    try:
        library = PrimitiveLibrary.load(ROOT / "config" / "primitives.yaml")
        world = load_scene(ROOT / "config" / "scenes" / "drawer_desk.yaml")
        deadline = time.monotonic() + 10
        while fr3_connection.joints() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        with pytest.raises(BackendUnavailable) as refused:
            make_controllers_executor(library, world, connection=fr3_connection, fake_hardware=True)
    finally:
        hand.close()
    text = str(refused.value)
    assert "use_fake_hardware: /franka_gripper/homing is not served" in text
    assert "70.0 mm from its joint states" in text  # 2 x 0.035, the stand-in's fixed fingers
    assert "fake_gripper_state_publisher.py" in text and "Homing is skipped" in text
    assert "70 mm width check is not reached" in text and "ros2 run step_planner franka_gripper" in text


def test_the_mock_franka_gripper_is_homed_as_on_the_arm_and_the_backend_says_so(fr3_connection):
    import rclpy
    from rclpy.executors import MultiThreadedExecutor
    from rclpy.parameter import Parameter

    from step_planner.execution.controllers.backend import fake_hardware_hand
    from step_planner.execution.private_context import private_context
    from step_planner.ros.franka_gripper_node import FrankaGripperNode

    context = private_context()
    gripper = FrankaGripperNode(context=context, parameter_overrides=[Parameter("fake_hardware", value=True)])
    executor = MultiThreadedExecutor(num_threads=4, context=context)
    executor.add_node(gripper)
    spin = threading.Thread(target=executor.spin, daemon=True)
    spin.start()
    try:
        note = fake_hardware_hand(fr3_connection, wait_s=10.0)
    finally:
        executor.shutdown()
        spin.join(5)
        gripper.destroy_node()
        rclpy.try_shutdown(context=context)
    assert note.startswith("use_fake_hardware: /franka_gripper/homing is served")
    assert "homing it once now" in note and "under 70 mm after homing stops the backend" in note
