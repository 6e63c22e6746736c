"""The simulator's camera (step_planner/ros/sim_camera.py) over DDS: while a goal runs on backend sim and someone
watches, JPEG frames of MuJoCo's rendered scene arrive a few times a second, the last one latched for a viewer
that comes later, and the picture changes as the arm moves the block; sim.camera_rate_hz 0 publishes nothing."""

from __future__ import annotations

import io
import threading
import time

import pytest

pytest.importorskip("step_planner_interfaces", reason="build the interfaces first: make interfaces")
pytest.importorskip("mujoco")

import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402
from ros_support import RosHarness, ScriptedPlans, wait_for, wait_until  # noqa: E402
from sensor_msgs.msg import CompressedImage  # noqa: E402

from step_planner.ros.qos import latched  # noqa: E402
from step_planner.ros.sim_camera import HEIGHT, WIDTH  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.sim, pytest.mark.slow, pytest.mark.timeout(300)]
TASK = "put the red block on the tray"
PLAN = ScriptedPlans({TASK: ["pick(red_block)", "place(red_block, tray)"]})


def pixels(msg: CompressedImage) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(bytes(msg.data))).convert("RGB"), dtype=float)


def test_frames_while_a_goal_runs_the_last_latched():
    ros = RosHarness(PLAN, backend="sim")
    frames: list[tuple[float, CompressedImage]] = []
    late: list[CompressedImage] = []
    lock = threading.Lock()
    try:
        topic = f"{ros.name}/sim/camera/image/compressed"
        ros.client_node.create_subscription(CompressedImage, topic,
                                            lambda m: frames.append((time.monotonic(), m)), latched())
        wait_until(lambda: ros.node.sim_camera._pub.get_subscription_count() > 0)
        start = time.monotonic()
        result = wait_for(ros.send(TASK).get_result_async(), timeout=240).result
        took = time.monotonic() - start
        assert result.success, result.error_msg
        wait_until(lambda: len(frames) >= 3)
        time.sleep(0.5)
        with lock:
            got = list(frames)
        ros.client_node.create_subscription(CompressedImage, topic, late.append, latched())  # a page opened later
        wait_until(lambda: late)
    finally:
        ros.close()
    assert all(m.format == "jpeg" and m.header.frame_id == "sim_camera" for _, m in got)
    first, last = pixels(got[0][1]), pixels(got[-1][1])
    assert first.shape == last.shape == (HEIGHT, WIDTH, 3)
    assert first.std() > 10  # a scene, not a blank frame
    assert np.abs(first - last).mean() > 0.5, "the block was moved, the picture did not change"
    # a few a second while the goal ran (at most sim.camera_rate_hz = 4, plus the start's and the end's)
    assert 2 <= len(got) <= 4 * took + 4, (len(got), took)
    assert bytes(late[-1].data) == bytes(got[-1][1].data)  # latched: the table as the goal left it


def test_rate_zero_means_no_camera():
    ros = RosHarness(PLAN, backend="sim", **{"sim.camera_rate_hz": 0.0})
    try:
        assert ros.node.sim_camera is None
        topics = dict(ros.client_node.get_topic_names_and_types())
        assert f"{ros.name}/sim/camera/image/compressed" not in topics
    finally:
        ros.close()
