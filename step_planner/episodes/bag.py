"""Episodes as rosbag2 MCAP files (readable by ``ros2 bag`` and Foxglove), written with ``rosbags``.

Every record is a ``std_msgs/msg/String`` whose data is one JSON document, on these topics:

    /step_planner/goal          the goal: instruction, scene, backend, config, initial world
    /step_planner/tree          tree snapshots (schema step_planner/tree/v1) as the tree changes
    /step_planner/llm_exchange  each LLM exchange: purpose, request messages, answer, tokens, latency
    /step_planner/primitive     each primitive call with its outcome and the world before and after
    /step_planner/result        how the goal ended

JSON in strings keeps the bag readable without this package's message types.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

TOPICS = ("goal", "tree", "llm_exchange", "primitive", "result")
PREFIX = "/step_planner/"
MSGTYPE = "std_msgs/msg/String"


class EpisodeError(ValueError):
    """An episode folder is missing, truncated or corrupted."""


def _typestore() -> Any:
    from rosbags.typesys import Stores, get_typestore

    return get_typestore(Stores.ROS2_JAZZY)


class BagWriter:
    def __init__(self, path: Path) -> None:
        from rosbags.rosbag2 import StoragePlugin, Writer

        self._store = _typestore()
        self._string = self._store.types[MSGTYPE]
        self._writer = Writer(path, version=9, storage_plugin=StoragePlugin.MCAP)
        self._writer.open()
        self._connections = {
            topic: self._writer.add_connection(PREFIX + topic, MSGTYPE, typestore=self._store) for topic in TOPICS
        }

    def write(self, topic: str, stamp_ns: int, document: Any) -> None:
        data = json.dumps(document, default=str, separators=(",", ":"))
        raw = self._store.serialize_cdr(self._string(data=data), MSGTYPE)
        self._writer.write(self._connections[topic], stamp_ns, raw)

    def close(self) -> None:
        self._writer.close()


def read_bag(path: Path) -> Iterator[tuple[str, int, Any]]:
    """Yield (topic, stamp_ns, document) in time order; raise EpisodeError on damage."""
    from rosbags.rosbag2 import Reader

    if not (path / "metadata.yaml").exists():
        raise EpisodeError(f"{path} is not a rosbag2 folder (no metadata.yaml)")
    store = _typestore()
    try:
        with Reader(path) as reader:
            for connection, stamp, raw in reader.messages():
                if not connection.topic.startswith(PREFIX):
                    continue
                msg = store.deserialize_cdr(raw, connection.msgtype)
                yield connection.topic[len(PREFIX):], stamp, json.loads(msg.data)
    except EpisodeError:
        raise
    except Exception as exc:  # rosbags raises several types for truncated or corrupted files
        raise EpisodeError(f"cannot read episode bag {path}: {type(exc).__name__}: {exc}") from exc
