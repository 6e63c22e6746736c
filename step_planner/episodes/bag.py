"""Episodes as rosbag2 MCAP files (readable by ``ros2 bag`` and Foxglove), written with ``rosbags``.

Format 2 (typed; what is written now):

    /step_planner/goal            std_msgs/String JSON: instruction, scene, backend, config, initial world
    /step_planner/tree            step_planner_interfaces/SubgoalTree, as the node's ~/tree, on every change
    /step_planner/tree_json       std_msgs/String JSON: the same snapshots, complete (schema step_planner/tree/v1)
    /step_planner/llm_exchange    std_msgs/String JSON: purpose, request messages, answer, tokens, latency
    /step_planner/primitive       step_planner_interfaces/PrimitiveStep: call, outcome, world before and after
    /step_planner/result          std_msgs/String JSON: how the goal ended
    backend sim only:
    /joint_states                 sensor_msgs/JointState (MoveIt's Panda names), sampled in simulated time
    /tf                           tf2_msgs/TFMessage: every link of the URDF, from the physics
    /robot_description            std_msgs/String: the URDF the simulator loads
    /step_planner/sim/object_poses step_planner_interfaces/ObjectPoses: ground truth
    robot backends (controllers, MoveIt):
    /step_planner/joint_states_source std_msgs/String JSON: {"received": true, topic, by}: what follows is not
                                  sampled but every joint state the backend's connection received
    /joint_states                 sensor_msgs/JointState as the robot published it (its names and header
                                  stamps), logged at the wall-clock time it arrived

Format 1 (before typed episodes) had only std_msgs/String JSON on goal, tree, llm_exchange, primitive and
result; :func:`read_bag` reads both. The custom types are registered from step_planner_interfaces' .msg
files when writing, so every bag carries complete message definitions; reading uses the definitions stored
in the bag itself, so an episode stays readable after the messages gain fields.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

PREFIX = "/step_planner/"
STRING = "std_msgs/msg/String"
TREE = "step_planner_interfaces/msg/SubgoalTree"
PRIMITIVE = "step_planner_interfaces/msg/PrimitiveStep"
OBJECT_POSES = "step_planner_interfaces/msg/ObjectPoses"
JOINT_STATE = "sensor_msgs/msg/JointState"
TF = "tf2_msgs/msg/TFMessage"
TOPICS: dict[str, str] = {  # format 2
    "/step_planner/goal": STRING,
    "/step_planner/tree": TREE,
    "/step_planner/tree_json": STRING,
    "/step_planner/llm_exchange": STRING,
    "/step_planner/primitive": PRIMITIVE,
    "/step_planner/result": STRING,
    "/joint_states": JOINT_STATE,
    "/tf": TF,
    "/robot_description": STRING,
    "/step_planner/sim/object_poses": OBJECT_POSES,
    "/step_planner/joint_states_source": STRING,
}


class EpisodeError(ValueError):
    """An episode folder is missing, truncated or corrupted."""


@lru_cache(maxsize=1)
def typestore() -> Any:
    """ROS 2 Jazzy's types plus every message of step_planner_interfaces (from its .msg files)."""
    from rosbags.typesys import Stores, get_types_from_msg, get_typestore

    from step_planner.resources import interfaces_dir

    store = get_typestore(Stores.ROS2_JAZZY)
    types: dict[str, Any] = {}
    for path in sorted((interfaces_dir() / "msg").glob("*.msg")):
        types.update(get_types_from_msg(path.read_text(), f"step_planner_interfaces/msg/{path.stem}"))
    store.register(types)
    return store


class BagWriter:
    """Thread-safe: the planner, the LLM client's listener and the simulator's step hook all write."""

    def __init__(self, path: Path) -> None:
        from rosbags.rosbag2 import StoragePlugin, Writer

        self.store = typestore()
        self._writer = Writer(path, version=9, storage_plugin=StoragePlugin.MCAP)
        self._writer.open()
        self._connections: dict[str, Any] = {}
        self._lock = threading.Lock()

    def write(self, topic: str, stamp_ns: int, message: Any) -> None:
        msgtype = TOPICS[topic]
        raw = self.store.serialize_cdr(message, msgtype)
        with self._lock:
            if topic not in self._connections:
                self._connections[topic] = self._writer.add_connection(topic, msgtype, typestore=self.store)
            self._writer.write(self._connections[topic], stamp_ns, raw)

    def write_json(self, topic: str, stamp_ns: int, document: Any) -> None:
        data = json.dumps(document, default=str, separators=(",", ":"))
        self.write(topic, stamp_ns, self.store.types[STRING](data=data))

    def close(self) -> None:
        with self._lock:
            self._writer.close()


@dataclass(frozen=True)
class Record:
    topic: str
    stamp_ns: int
    msgtype: str
    message: Any  # a rosbags message object

    def document(self) -> Any:
        """The JSON document of a std_msgs/String record."""
        return json.loads(self.message.data)


def read_bag(path: Path) -> Iterator[Record]:
    """Every record in time order, decoded with the bag's own message definitions; EpisodeError on damage."""
    from rosbags.highlevel import AnyReader
    from rosbags.typesys import Stores, get_typestore

    if not (path / "metadata.yaml").exists():
        raise EpisodeError(f"{path} is not a rosbag2 folder (no metadata.yaml)")
    try:
        with AnyReader([path], default_typestore=get_typestore(Stores.ROS2_JAZZY)) as reader:
            for connection, stamp, raw in reader.messages():
                yield Record(connection.topic, stamp, connection.msgtype, reader.deserialize(raw, connection.msgtype))
    except EpisodeError:
        raise
    except Exception as exc:  # rosbags raises several types for truncated or corrupted files
        raise EpisodeError(f"cannot read episode bag {path}: {type(exc).__name__}: {exc}") from exc
