"""The simulator as a ROS citizen (node with backend sim): /joint_states at >= 30 Hz of simulated time with
MoveIt's Panda joint names, a latched /robot_description naming those joints, object poses (the
perception message type) that follow an object the arm picks and places, and /tf with the URDF's links and the
objects under panda_link0 (what RViz's config/step_planner.rviz needs, whose topics are checked in the graph; the
markers draw the block where its frame is). Received by another node over real DDS; rates are measured from the
message stamps, which are in simulated time."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import yaml

pytest.importorskip("step_planner_interfaces", reason="build the interfaces first: make interfaces")
pytest.importorskip("mujoco")

from rclpy.qos import QoSProfile  # noqa: E402
from ros_support import RosHarness, ScriptedPlans, wait_for, wait_until  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402
from visualization_msgs.msg import MarkerArray  # noqa: E402

from step_planner.episodes.episode import load_episode  # noqa: E402
from step_planner.execution.sim.telemetry import urdf_links  # noqa: E402
from step_planner.ros.qos import latched  # noqa: E402
from step_planner.ros.sim_bridge import SimClock  # noqa: E402
from step_planner_interfaces.msg import ObjectPoses  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.ros, pytest.mark.sim, pytest.mark.slow, pytest.mark.timeout(300)]
TASK = "put the red block on the tray"
JOINTS = [f"panda_joint{i}" for i in range(1, 8)] + ["panda_finger_joint1", "panda_finger_joint2"]


def seconds(stamp) -> float:
    return stamp.sec + stamp.nanosec * 1e-9


def test_joint_states_description_and_object_poses_during_a_pick_and_place():
    ros = RosHarness(ScriptedPlans({TASK: ["pick(red_block)", "place(red_block, tray)"]}), backend="sim")
    lock = threading.Lock()
    joints: list[JointState] = []
    poses: list[ObjectPoses] = []
    descriptions: list[String] = []
    tf: list[TFMessage] = []
    try:
        deep = QoSProfile(depth=5000)
        deep_latched = latched()
        deep_latched.depth = 100
        ros.client_node.create_subscription(JointState, "/joint_states", lambda m: joints.append(m) or None, deep)
        ros.client_node.create_subscription(ObjectPoses, f"{ros.name}/sim/object_poses", lambda m: poses.append(m),
                                            deep)
        ros.client_node.create_subscription(String, "/robot_description", descriptions.append, latched())
        ros.client_node.create_subscription(TFMessage, "/tf", tf.append, deep)
        markers: list[MarkerArray] = []
        ros.client_node.create_subscription(MarkerArray, f"{ros.name}/markers", markers.append, deep_latched)
        wait_until(lambda: descriptions)  # latched: there before any goal
        result = wait_for(ros.send(TASK).get_result_async(), timeout=240).result
        assert result.success, result.error_msg
        with lock:
            received = list(joints)
        (episode,) = [p for p in Path(ros.episodes_dir).iterdir() if (p / "summary.json").exists()]
        recorded = load_episode(episode)  # the node's episode of a sim goal carries the joint trajectory too
        assert recorded.format == 2 and len(recorded.joint_states) > 100 and recorded.robot_description
        graph = dict(ros.client_node.get_topic_names_and_types())
        rviz = yaml.safe_load((ROOT / "config" / "step_planner.rviz").read_text())["Visualization Manager"]
        wanted = {"rviz_default_plugins/RobotModel": "std_msgs/msg/String",
                  "rviz_default_plugins/MarkerArray": "visualization_msgs/msg/MarkerArray"}
        for display in rviz["Displays"]:  # every topic RViz reads, with the type its display takes
            topic = (display.get("Topic") or display.get("Description Topic") or {}).get("Value")
            if topic:
                topic = topic.replace("/step_planner/", f"{ros.name}/")  # this test's node name
                assert graph.get(topic) == [wanted[display["Class"]]], (topic, graph.get(topic))
        assert graph.get("/tf") == ["tf2_msgs/msg/TFMessage"]
        with lock:
            transforms = [t for m in tf for t in m.transforms]
    finally:
        ros.close()

    links = {(t.header.frame_id, t.child_frame_id) for t in transforms}
    assert set(urdf_links()) <= links  # every joint of the URDF: RViz's RobotModel needs no robot_state_publisher
    blocks = [t for t in transforms if t.child_frame_id == "red_block"]
    assert blocks and all(t.header.frame_id == "panda_link0" for t in blocks)
    start_at, end_at = blocks[0].transform.translation, blocks[-1].transform.translation
    assert ((start_at.x - end_at.x) ** 2 + (start_at.y - end_at.y) ** 2) ** 0.5 > 0.05, "the block's frame stayed"
    (label,) = [m for m in markers[-1].markers if m.ns == "labels" and m.text == "red_block"]
    drawn = label.pose.position  # 3 cm above the block's top, which stands in the tray where its frame is
    assert abs(drawn.x - end_at.x) < 0.01 and abs(drawn.y - end_at.y) < 0.01 and 0 < drawn.z - end_at.z < 0.08
    objects = {t.child_frame_id for t in transforms if t.header.frame_id == "panda_link0"}
    assert {"tape", "screwdriver", "cup"} <= objects

    urdf = descriptions[0].data
    assert '<robot name="panda"' in urdf and all(f'<joint name="{j}"' in urdf for j in JOINTS)
    assert "package://" not in urdf and "file://" in urdf

    assert all(list(m.name) == JOINTS for m in received)
    stamps = [seconds(m.header.stamp) for m in received]
    gaps = [b - a for a, b in zip(stamps, stamps[1:], strict=False)]
    assert all(g >= 0 for g in gaps), "stamps went backwards"
    # After the goal the simulator is detached and the heartbeat (0.2 s here) repeats the last state with
    # wall-clock stamps: the goal's messages are those before the first such gap.
    end = next((i for i, g in enumerate(gaps) if g > 0.15), len(gaps))
    moving, during = gaps[:end], received[: end + 1]
    assert len(during) > 100 and len(received) - len(during) < 30
    rate = len(moving) / sum(moving)
    assert rate >= 30.0, f"{rate:.1f} Hz of simulated time"
    assert max(moving) <= 3 / 30.0, f"a gap of {max(moving):.3f} s of simulated time"
    first, last = during[0].position, during[-1].position
    assert max(abs(a - b) for a, b in zip(first[:7], last[:7], strict=True)) > 0.05, "the arm did not move"

    def block(msg: ObjectPoses):
        (obj,) = [o for o in msg.objects if o.name == "red_block"]
        return obj

    start, end = block(poses[0]), block(poses[-1])
    assert start.pose.header.frame_id == "panda_link0" and start.container == "table"
    assert end.container == "tray"
    moved = sum((getattr(start.pose.pose.position, a) - getattr(end.pose.pose.position, a)) ** 2 for a in "xyz")
    assert moved ** 0.5 > 0.05, "the picked block's pose did not change"
    assert any(block(m).container == "gripper" for m in poses), "the block was never reported in the gripper"
    assert {o.name for o in poses[0].objects} >= {"tape", "screwdriver", "red_block", "cup"}


def test_the_sim_clock_follows_the_physics_then_the_wall_and_never_goes_back():
    wall = [100.0]
    clock = SimClock(wall=lambda: wall[0])
    wall[0] = 105.0
    assert clock.now() == 105.0  # detached: wall time passes
    clock.start(sim_time=0.0)
    wall[0] = 200.0  # the physics is slower than the wall: stamps follow the physics
    assert clock.at(0.5) == 105.5 and clock.now() == 105.0
    clock.stop(sim_time=0.5)
    wall[0] = 201.0
    assert clock.now() == 106.5  # 105.5 + 1 s of wall time since the stop
    clock.start(sim_time=0.0)  # the next goal's simulator starts at 0 again
    assert clock.at(0.25) == 106.75
