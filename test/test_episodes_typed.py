"""Typed episodes: a simulated run recorded with SubgoalTree, PrimitiveStep, joint states and /tf, read back
with rosbags' typestore; ``replay --publish`` plays the joint trajectory back on ROS; episodes of the first
format (String JSON only, ``test/data/episode_v1``) still load and replay; the Foxglove layout names only
topics a recorded episode has."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import CONFIG, ROOT, shipped_config

from step_planner.domain.scene import load_scene
from step_planner.episodes.bag import TOPICS, typestore
from step_planner.episodes.episode import load_episode, replay_episode
from step_planner.episodes.recorder import EpisodeRecorder
from step_planner.execution.symbolic import SymbolicExecutor
from step_planner.llm.client import LLMClient
from step_planner.llm.config import LLMConfig
from step_planner.llm.loopback import LoopbackServer
from step_planner.planner.runner import run_goal

TASK = "put the red block on the tray"
JOINTS = [f"panda_joint{i}" for i in range(1, 8)] + ["panda_finger_joint1", "panda_finger_joint2"]
V1 = ROOT / "test" / "data" / "episode_v1"


@pytest.fixture(scope="module")
def sim_episode(tmp_path_factory, library):
    pytest.importorskip("mujoco")
    from ros_support import ScriptedPlans

    from step_planner.execution.sim.executor import SimExecutor

    world = load_scene(CONFIG / "scenes" / "drawer_desk.yaml")
    executor = SimExecutor(library, world)
    recorder = EpisodeRecorder(tmp_path_factory.mktemp("episodes"), "sim-1", instruction=TASK, scene="drawer_desk",
                               backend="sim", world=world)
    detach = recorder.attach_executor(executor)
    with LoopbackServer(ScriptedPlans({TASK: ["pick(red_block)", "place(red_block, tray)"]})) as server:
        llm = LLMClient(LLMConfig(base_url=server.base_url, model="loopback", max_retries=0))
        llm.add_listener(recorder.on_exchange)
        result = run_goal(TASK, library=library, executor=executor, llm=llm, config=shipped_config(),
                          listeners=[recorder], on_step=recorder.on_step)
        llm.close()
    detach()
    path = recorder.finish(result)
    executor.close()
    assert result.success, result.message
    return path, result


def test_a_sim_episode_read_back_with_the_typestore_has_typed_trees_steps_and_joint_states(sim_episode):
    from rosbags.rosbag2 import Reader

    path, result = sim_episode
    store = typestore()
    by_topic: dict[str, list] = {}
    with Reader(path / "bag") as reader:
        types = {c.topic: c.msgtype for c in reader.connections}
        for connection, _, raw in reader.messages():
            by_topic.setdefault(connection.topic, []).append(store.deserialize_cdr(raw, connection.msgtype))
    # every topic but the robot backends' note that their joint states are as received
    assert types == {t: TOPICS[t] for t in types} and set(types) == set(TOPICS) - {"/step_planner/joint_states_source"}
    trees = by_topic["/step_planner/tree"]
    assert types["/step_planner/tree"] == "step_planner_interfaces/msg/SubgoalTree"
    final = trees[-1]
    assert final.nodes[0].text == TASK and final.nodes[0].parent_id == -1
    assert {n.primitive for n in final.nodes if n.primitive} == {"pick(object=red_block)",
                                                                  "place(object=red_block, target=tray)"}
    assert [t.revision for t in trees] == sorted(t.revision for t in trees)
    steps = by_topic["/step_planner/primitive"]
    assert [(s.name, s.outcome_code) for s in steps] == [("pick", "SUCCESS"), ("place", "SUCCESS")]
    assert list(steps[0].arg_names) == ["object"] and list(steps[0].arg_values) == ["red_block"]
    joints = by_topic["/joint_states"]
    assert len(joints) > 100 and all(list(j.name) == JOINTS for j in joints)
    moved = max(abs(a - b) for a, b in zip(joints[0].position[:7], joints[-1].position[:7], strict=True))
    assert moved > 0.05
    stamps = [j.header.stamp.sec + j.header.stamp.nanosec * 1e-9 for j in joints]
    assert stamps == sorted(stamps)
    frames = {t.child_frame_id for t in by_topic["/tf"][0].transforms}
    assert {"panda_link1", "panda_hand", "panda_leftfinger"} <= frames
    (description,) = by_topic["/robot_description"]
    assert '<robot name="panda"' in description.data
    metadata = (path / "bag" / "metadata.yaml").read_text()  # what `ros2 bag info` prints
    assert "step_planner_interfaces/msg/SubgoalTree" in metadata and "sensor_msgs/msg/JointState" in metadata


def test_the_bag_carries_complete_message_definitions(sim_episode):
    from mcap.reader import make_reader

    path, _ = sim_episode
    with open(next((path / "bag").glob("*.mcap")), "rb") as handle:
        schemas = {s.name: s for s in make_reader(handle).get_summary().schemas.values()}
    tree = schemas["step_planner_interfaces/msg/SubgoalTree"]
    assert tree.encoding == "ros2msg"
    text = tree.data.decode()
    assert "MSG: step_planner_interfaces/SubgoalNode" in text and "MSG: builtin_interfaces/Time" in text


def test_load_episode_reads_the_typed_format(sim_episode, library):
    path, result = sim_episode
    episode = load_episode(path)
    assert episode.format == 2 and episode.typed_trees == len(episode.trees) > 0
    assert [s["call"] for s in episode.steps] == [c.to_dict() for c, _ in result.executed]
    assert episode.steps[1]["world_after"]["objects"]["red_block"]["location"] == "tray"
    assert episode.final_tree["nodes"] == result.tree["nodes"] and episode.exchanges
    assert episode.joint_states and episode.joint_states[0].names == tuple(JOINTS)
    comparisons = replay_episode(episode, SymbolicExecutor(library))
    assert [c.matches for c in comparisons] == [True, True]


def test_an_episode_of_the_first_format_still_loads_and_replays(library):
    episode = load_episode(V1)
    assert episode.format == 1 and episode.typed_trees == 0 and not episode.joint_states
    assert episode.goal["instruction"] == TASK and episode.result["success"]
    assert [s["call"]["name"] for s in episode.steps] == ["pick", "place"]
    assert episode.final_tree["nodes"][0]["status"] == "succeeded" and episode.exchanges
    comparisons = replay_episode(episode, SymbolicExecutor(library))
    assert [c.matches for c in comparisons] == [True, True]


def _subscribe_and_replay(episode: Path, rate: float):
    pytest.importorskip("step_planner_interfaces")
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import QoSProfile
    from sensor_msgs.msg import JointState

    from step_planner.ros.qos import latched
    from step_planner_interfaces.msg import SubgoalTree

    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("replay_watcher", context=context)
    joints, trees = [], []
    node.create_subscription(JointState, "/joint_states", joints.append, QoSProfile(depth=5000))
    node.create_subscription(SubgoalTree, "/step_planner/tree", trees.append, latched())
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    spin = threading.Thread(target=executor.spin, daemon=True)
    spin.start()
    try:
        time.sleep(0.5)
        done = subprocess.run([sys.executable, "-m", "step_planner.cli", "replay", str(episode), "--publish",
                               "--rate", str(rate), "--delay", "4"], capture_output=True, text=True, timeout=120,
                              env=os.environ.copy(), stdin=subprocess.DEVNULL)
        time.sleep(0.5)
    finally:
        executor.shutdown()
        spin.join(10)
        node.destroy_node()
        rclpy.try_shutdown(context=context)
    assert done.returncode == 0, done.stderr
    return done.stdout, joints, trees


@pytest.mark.ros
@pytest.mark.timeout(180)
def test_replay_publish_plays_the_joint_trajectory_and_the_tree_back_on_ros(sim_episode):
    path, result = sim_episode
    recorded = load_episode(path)
    out, joints, trees = _subscribe_and_replay(path, rate=4.0)
    assert f"{len(recorded.joint_states)} joint states on /joint_states" in out
    assert len(joints) >= 0.9 * len(recorded.joint_states), (len(joints), len(recorded.joint_states))
    assert all(list(j.name) == JOINTS for j in joints)
    assert [tuple(j.position) for j in joints[:3]] == [r.position for r in recorded.joint_states[:3]]
    assert trees and trees[-1].revision == result.tree["revision"]


@pytest.mark.ros
@pytest.mark.timeout(180)
def test_replay_publish_of_a_first_format_episode_plays_its_tree(tmp_path):
    out, joints, trees = _subscribe_and_replay(V1, rate=20.0)
    assert "no joint states" in out and joints == []
    assert trees and trees[-1].nodes[0].text == TASK and trees[-1].nodes[0].status == "succeeded"


def layout_topics(layout: dict) -> set[str]:
    """Every topic a Foxglove layout reads: 3D topics and layers, message paths of panels and plots."""
    found: set[str] = set()

    def walk(value, key=""):
        if isinstance(value, dict):
            if key == "topics":
                found.update(value)
            for k, v in value.items():
                walk(v, k)
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        elif isinstance(value, str) and key in ("topic", "topicPath", "value") and value.startswith("/"):
            found.add(value.split(".")[0].split("{")[0])

    walk(layout)
    return found


def test_the_foxglove_layout_reads_only_topics_a_recorded_episode_has(sim_episode):
    from rosbags.rosbag2 import Reader

    path, _ = sim_episode
    layout = json.loads((CONFIG / "foxglove_layout.json").read_text())
    with Reader(path / "bag") as reader:
        recorded = {c.topic for c in reader.connections}
    topics = layout_topics(layout)
    assert topics <= recorded, f"not in a recorded episode: {topics - recorded}"
    assert {"/step_planner/tree", "/joint_states", "/robot_description", "/step_planner/llm_exchange"} <= topics
    panels = set(layout["configById"])
    assert all(isinstance(v, str) and v in panels for v in _leaves(layout["layout"]))


def _leaves(mosaic):
    if isinstance(mosaic, str):
        return [mosaic]
    return [*_leaves(mosaic["first"]), *_leaves(mosaic["second"])]
