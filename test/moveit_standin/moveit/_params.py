"""Which parameters a node receives from ``--params-file`` files, by rcl's rules (not part of the real package).

MoveItPy hands its files to rclcpp as ``--ros-args --params-file <file>`` (moveit2@4d84106
moveit_py/src/moveit/moveit_ros/moveit_cpp/moveit_cpp.cpp:72-89, 116-124). rclcpp keeps, of each file, the
blocks whose node-name key matches the node's fully qualified name: a key without a leading ``/`` gets one, ``/*``
becomes the regular expression ``(/\\w+)`` (so ``/**`` matches any name), and the whole name must match
(ros2/rclpy@85415f7 rclpy/src/rclpy/node.cpp:300-318; rclcpp's parameter_map_from does the same). Later files
override earlier ones. Nested keys flatten to dotted parameter names.
"""

from __future__ import annotations

import re
from typing import Any

import yaml


def _flatten(prefix: str, value: Any, out: dict[str, Any]) -> None:
    if isinstance(value, dict):
        for key, sub in value.items():
            _flatten(f"{prefix}.{key}" if prefix else str(key), sub, out)
    else:
        out[prefix] = value


def node_matches(key: str, node_fqn: str) -> bool:
    name = key if key.startswith("/") else "/" + key
    return re.fullmatch(name.replace("/*", r"(/\w+)"), node_fqn) is not None


def resolve(files: list[str], node_fqn: str) -> dict[str, Any]:
    """The parameters the node ``node_fqn`` gets from ``files`` (flattened)."""
    params: dict[str, Any] = {}
    for path in files:
        with open(path) as handle:
            data = yaml.safe_load(handle) or {}
        for key, block in data.items():
            if node_matches(str(key), node_fqn) and isinstance(block, dict):
                _flatten("", block.get("ros__parameters") or {}, params)
    return params


def fqn(namespace: str, name: str) -> str:
    ns = "/" + namespace.strip("/") if namespace.strip("/") else ""
    return f"{ns}/{name}"
