"""Facts read from franka_ros2's source into upstream.json, the reference test/test_launch_arguments_upstream.py and
test/test_controllers_yaml_upstream.py compare against (test data; not installed).

    python test/data/franka_ros2/extract.py /work/.mirror/frankarobotics+franka_ros2/repo 29cb85a

Stores, with the commit and each fact's file:line, what the tests need and no file's text: every
DeclareLaunchArgument of franka_bringup/launch/franka.launch.py and franka_gripper/launch/gripper.launch.py (name,
default as written, line), and every parameter of franka_fr3_moveit_config/config/fr3_ros_controllers.yaml as a
dotted path under the node-name key (``/**`` dropped; its two ``/**`` blocks merged as rcl's parser merges them,
where PyYAML's safe_load would keep only the second) with its parsed value and line.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import yaml

LAUNCH_FILES = ("franka_bringup/launch/franka.launch.py", "franka_gripper/launch/gripper.launch.py")
CONTROLLERS = "franka_fr3_moveit_config/config/fr3_ros_controllers.yaml"


def show(repo: Path, commit: str, path: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "show", f"{commit}:{path}"], check=True, capture_output=True,
                          text=True).stdout


def launch_arguments(source: str) -> list[dict]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "DeclareLaunchArgument":
            default = next((k.value for k in node.keywords if k.arg == "default_value"), None)
            found.append({"name": node.args[0].value, "line": node.lineno,
                          "default": None if default is None else
                          default.value if isinstance(default, ast.Constant) else ast.unparse(default)})
    return sorted(found, key=lambda a: a["line"])


def parameters(source: str) -> dict[str, dict]:
    """{dotted path: {"value", "line"}} of every scalar or list, duplicate mapping keys merged."""
    out: dict[str, dict] = {}

    def walk(node, path: list[str]) -> None:
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                walk(value, path + ([] if key.value == "/**" and not path else [key.value]))
        else:
            value = yaml.safe_load(yaml.serialize(node))
            out[".".join(path)] = {"value": value, "line": node.start_mark.line + 1}

    walk(yaml.compose(source), [])
    return out


def main(repo: str, commit: str) -> None:
    repo_path = Path(repo)
    full = subprocess.run(["git", "-C", repo, "rev-parse", commit], check=True, capture_output=True,
                          text=True).stdout.strip()
    data = {"repository": "frankarobotics/franka_ros2", "commit": full,
            "launch_arguments": {path: launch_arguments(show(repo_path, full, path)) for path in LAUNCH_FILES},
            "controllers": {"path": CONTROLLERS, "parameters": parameters(show(repo_path, full, CONTROLLERS))}}
    (Path(__file__).with_name("upstream.json")).write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:3])
