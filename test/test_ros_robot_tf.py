"""The MuJoCo robot process puts the objects (and, without robot_state_publisher, its links) on /tf: received across
real DDS by another process, as RViz would. Every frame hangs off the robot base frame (RViz's fixed frame), the
objects stand where the scene geometry puts them, and the links are the URDF's joints."""

from __future__ import annotations

import threading

import numpy as np
import pytest

pytest.importorskip("mujoco")
pytest.importorskip("step_planner_interfaces", reason="build the interfaces first: make interfaces")

import rclpy  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from robot_support import START_S, RobotProcess, wait_until  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from step_planner.domain.scene import load_scene  # noqa: E402
from step_planner.domain.scene_geometry import scene_geometry  # noqa: E402
from step_planner.execution.sim.telemetry import BASE_FRAME, urdf_links  # noqa: E402
from step_planner.resources import config_dir  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.sim, pytest.mark.timeout(180)]


def test_objects_and_links_reach_tf_under_the_base_frame():
    world = load_scene(config_dir() / "scenes" / "drawer_desk.yaml")
    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("tf_listener", context=context)
    frames: dict[str, tuple[str, tuple[float, float, float]]] = {}
    lock = threading.Lock()

    def on_tf(msg: TFMessage) -> None:
        with lock:
            for t in msg.transforms:
                v = t.transform.translation
                frames[t.child_frame_id] = (t.header.frame_id, (v.x, v.y, v.z))

    node.create_subscription(TFMessage, "/tf", on_tf, 100)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    spin = threading.Thread(target=executor.spin, daemon=True)
    spin.start()
    names = set(world.objects)
    links = {child for _, child in urdf_links()}
    try:
        with RobotProcess(scene="drawer_desk", tf_links=True):
            wait_until(lambda: names | links <= set(frames), START_S + 15, "objects and links on /tf")
            with lock:
                seen = dict(frames)
    finally:
        executor.shutdown()
        spin.join(10)
        node.destroy_node()
        rclpy.try_shutdown(context=context)

    def root(frame: str) -> str:
        hops = 0
        while frame in seen and hops < 20:
            frame, hops = seen[frame][0], hops + 1
        return frame

    assert all(root(f) == BASE_FRAME for f in seen), {f: root(f) for f in seen if root(f) != BASE_FRAME}
    assert seen["drawer_desk"] == (BASE_FRAME, (0.0, 0.0, 0.0))  # the world frame is the base frame
    assert {(parent, child) for child, (parent, _) in seen.items() if child in links} == set(urdf_links())
    geo = scene_geometry(world)
    for name in names:
        parent, at = seen[name]
        assert parent == "drawer_desk"
        assert np.linalg.norm(np.array(at) - geo.objects[name].position) < 0.01, name  # settled where it was put
