"""~/markers over DDS: the node's MarkerArray, received by another node as RViz would receive it.

Latched (a viewer started before any goal sees the scene; one started after the goal sees the end), and during the
drawer task it follows the goal: the drawer turns from closed to open and back, the current primitive's target is
marked, and at the end every goal fact is ✓ and the two objects shut in the drawer are greyed as only believed.
The graph has the topic with the type config/step_planner.rviz's MarkerArray display subscribes to.
"""

from __future__ import annotations

import json
import threading

import pytest

pytest.importorskip("step_planner_interfaces", reason="build the interfaces first: make interfaces")
pytest.importorskip("visualization_msgs", reason="pip install -r requirements.txt (ros-jazzy-visualization-msgs)")

from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from ros_support import PLANS, TASK, RosHarness, ScriptedPlans, wait_for, wait_quiet, wait_until  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from visualization_msgs.msg import Marker, MarkerArray  # noqa: E402

from step_planner.viz import scene_markers as sm  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.timeout(120)]
GOAL_FACTS = ["in(tape, drawer)", "in(screwdriver, drawer)", "closed(drawer)"]


def rgba(m: Marker) -> tuple:
    return (round(m.color.r, 3), round(m.color.g, 3), round(m.color.b, 3), round(m.color.a, 3))


def rounded(c: tuple) -> tuple:
    return tuple(round(v, 3) for v in c)


def in_ns(msg: MarkerArray, ns: str) -> list[Marker]:
    return [m for m in msg.markers if m.ns == ns and m.action == Marker.ADD]


def drawer_colour(msg: MarkerArray) -> tuple:
    (drawer,) = [m for m in in_ns(msg, "places") if rgba(m) in (rounded(sm.OPEN_RGBA), rounded(sm.CLOSED_RGBA))]
    return rgba(drawer)


def drawn(snap: dict) -> list[tuple]:
    """What a scene snapshot draws: each marker's namespace, text and position."""
    return [(s.ns, s.text, tuple(round(v, 6) for v in s.position)) for s in sm.markers_of(snap)]


def pictured(msg: MarkerArray) -> list[tuple]:
    """The same of a marker array (after its DELETEALL)."""
    return [(m.ns, m.text, (round(m.pose.position.x, 6), round(m.pose.position.y, 6), round(m.pose.position.z, 6)))
            for m in msg.markers[1:]]


def subscribe(node, topic: str, into: list) -> None:
    qos = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    node.create_subscription(MarkerArray, topic, into.append, qos)


def test_markers_show_the_scene_then_follow_the_drawer_task_over_dds():
    ros = RosHarness(ScriptedPlans(PLANS))
    arrays: list[MarkerArray] = []
    late: list[MarkerArray] = []
    scenes: list[String] = []
    lock = threading.Lock()
    try:
        topic = f"{ros.name}/markers"
        subscribe(ros.client_node, topic, arrays)
        qos = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
        ros.client_node.create_subscription(String, f"{ros.name}/scene_json", scenes.append, qos)
        wait_until(lambda: any(in_ns(m, "places") for m in arrays))  # latched: the scene, before any goal
        types = dict(ros.client_node.get_topic_names_and_types())
        assert types[topic] == ["visualization_msgs/msg/MarkerArray"]
        first = next(m for m in arrays if in_ns(m, "places"))  # once its geometry is built (off the node's threads)
        result = wait_for(ros.send(TASK).get_result_async(), timeout=60).result
        assert result.success, result.error_msg
        wait_quiet(arrays)
        with lock:
            received = list(arrays)
        subscribe(ros.client_node, topic, late)  # a viewer started after the goal
        wait_until(lambda: late)
        # the snapshot the last array was drawn from; a count of snapshots against arrays raced discovery under
        # load (a snapshot published before the second subscription matched is not repeated: depth 1, latched)
        wait_until(lambda: bool(scenes) and drawn(json.loads(scenes[-1].data)) == pictured(received[-1]))
    finally:
        ros.close()

    for msg in received:  # each array replaces the last picture, all in the robot base frame
        assert msg.markers[0].action == Marker.DELETEALL
        assert all(m.header.frame_id == "panda_link0" for m in msg.markers)
    labels = {m.text for m in in_ns(first, "labels")}
    assert {"tape", "screwdriver", "red_block", "cup", "tray", "drawer (closed)"} <= labels
    assert drawer_colour(first) == rounded(sm.CLOSED_RGBA) and not in_ns(first, "facts")

    assert all(in_ns(m, "places") for m in received[received.index(first):]), "the geometry was lost"
    colours = [drawer_colour(m) for m in received if in_ns(m, "places")]
    changes = [c for i, c in enumerate(colours) if i == 0 or colours[i - 1] != c]
    assert changes == [rounded(sm.CLOSED_RGBA), rounded(sm.OPEN_RGBA), rounded(sm.CLOSED_RGBA)]
    assert any(in_ns(m, "target") for m in received), "the current primitive's target was never marked"
    assert any(m.text == "open the drawer" or m.text.startswith("put the") for msg in received
               for m in in_ns(msg, "subgoal")), "the active subgoal was never shown"
    assert any(m.text.startswith(sm.UNMET) for msg in received for m in in_ns(msg, "facts"))

    end = received[-1]
    facts = {m.text for m in in_ns(end, "facts")}
    assert facts == {f"{sm.MET} {f}" for f in GOAL_FACTS}  # the goal's facts, each met
    end_labels = {m.text for m in in_ns(end, "labels")}
    assert {"tape (believed)", "screwdriver (believed)", "drawer (closed)", "cup"} <= end_labels
    grey = [m for m in in_ns(end, "objects") if rgba(m) == rounded(sm.BELIEVED_RGBA)]
    assert len(grey) == 2
    assert late[-1].markers == end.markers  # transient local: the last picture for a late viewer

    # ~/scene_json: the snapshot each array was drawn from (what `step-planner hmi` draws the table from)
    snap = json.loads(scenes[-1].data)
    assert snap["schema"] == "step_planner/scene/v1" and snap["frame"] == "panda_link0"
    assert drawn(snap) == pictured(end)
    assert {o["name"]: o["believed"] for o in snap["objects"]} == {
        "tape": True, "screwdriver": True, "red_block": False, "cup": False}
    assert [f["holds"] for f in snap["facts"]] == [True, True, True]


def test_a_slow_scene_geometry_is_built_off_the_callers_thread_once():
    """Laying out a scene with objects in drawers takes seconds: a goal starts at once with the objects drawn from
    their own poses, the places follow when built, and the next goal of that scene finds them built."""
    import time

    import rclpy

    from step_planner.domain.scene import load_scene
    from step_planner.resources import config_dir
    from step_planner.ros.markers import MarkerPublisher

    world = load_scene(config_dir() / "scenes" / "drawer_desk.yaml")
    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("markers_geometry_test", context=context)
    try:
        markers = MarkerPublisher(node)
        built = threading.Event()
        real_build = markers.geometries.build

        def slow_build(*args):
            built.wait(10)  # held until the test has looked
            return real_build(*args)

        markers.geometries.build = slow_build
        t0 = time.monotonic()
        thread = markers.reset(world)
        assert thread is not None and time.monotonic() - t0 < 1.0
        with markers._lock:
            shapes = markers.model.shapes()
        assert not by_ns(shapes, "places") and by_ns(shapes, "objects")  # the table objects, from their positions
        built.set()
        thread.join(10)
        with markers._lock:
            assert by_ns(markers.model.shapes(), "places")
        assert markers.reset(world) is None  # the same scene again: no second build
        markers.close()
        assert not markers._sender.is_alive()
    finally:
        node.destroy_node()
        rclpy.try_shutdown(context=context)


def by_ns(shapes, ns: str) -> list:
    return [s for s in shapes if s.ns == ns]
