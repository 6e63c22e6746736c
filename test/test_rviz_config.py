"""config/step_planner.rviz names only topics and frames that exist (RViz itself cannot be installed here).

Topics: each display's topic is one the package publishes, under the node name the launch files give it, with the
durability the publisher offers (a transient-local subscription to a volatile publisher would get nothing).
Frames: the fixed frame is the root link of the URDF the MuJoCo robot loads and publishes, and the frame the
node draws ~/markers in. test_ros_markers.py and test_ros_sim_bridge.py check the same topics in a live graph.
"""

from __future__ import annotations

import ast
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from step_planner.ros.parameters import SPECS
from step_planner.viz.scene_markers import BASE_FRAME

ROOT = Path(__file__).resolve().parents[1]
RVIZ = ROOT / "config" / "step_planner.rviz"
NODE_NAME = "step_planner"  # launch_common.step_planner_node's name=
TOPICS = {  # the topics the package (or robot_state_publisher on its URDF) publishes that RViz reads
    "/robot_description": "rviz_default_plugins/RobotModel",
    f"/{NODE_NAME}/markers": "rviz_default_plugins/MarkerArray",
}


def displays() -> list[dict]:
    return yaml.safe_load(RVIZ.read_text())["Visualization Manager"]["Displays"]


def display_topics() -> dict[str, dict]:
    out = {}
    for d in displays():
        for key in ("Topic", "Description Topic"):
            if isinstance(d.get(key), dict):
                out[d["Class"]] = d[key]
    return out


def test_the_config_has_the_robot_tf_and_the_markers():
    classes = {d["Class"] for d in displays() if d.get("Enabled")}
    assert {"rviz_default_plugins/RobotModel", "rviz_default_plugins/TF", "rviz_default_plugins/MarkerArray"} <= classes
    (robot,) = [d for d in displays() if d["Class"] == "rviz_default_plugins/RobotModel"]
    assert robot["Description Source"] == "Topic"


def test_every_topic_is_one_the_package_publishes_with_its_durability():
    topics = display_topics()
    assert {t["Value"]: cls for cls, t in topics.items()} == TOPICS
    for topic in topics.values():
        assert topic["Reliability Policy"] == "Reliable" and topic["Durability Policy"] == "Transient Local"
    # the node is started under that name, and publishes ~/markers latched; the sim bridge robot_description latched,
    # relative so that it lands in the node's namespace: /robot_description for a node in the root namespace
    common = ast.parse((ROOT / "step_planner" / "ros" / "launch_common.py").read_text())
    names = {kw.value.value for n in ast.walk(common) if isinstance(n, ast.Call)
             for kw in n.keywords if kw.arg == "name" and isinstance(kw.value, ast.Constant)}
    assert NODE_NAME in names
    assert 'create_publisher(MarkerArray, "~/markers", latched())' in (ROOT / "step_planner/ros/markers.py").read_text()
    assert 'create_publisher(String, "robot_description", latched())' in \
        (ROOT / "step_planner/ros/sim_bridge.py").read_text()


def test_the_fixed_frame_is_the_robots_root_link_and_the_markers_frame():
    fixed = yaml.safe_load(RVIZ.read_text())["Visualization Manager"]["Global Options"]["Fixed Frame"]
    assert fixed == BASE_FRAME == SPECS["markers.frame"].default
    pytest.importorskip("mujoco")
    from step_planner.execution.sim.model import panda_urdf_path

    urdf = ET.fromstring(panda_urdf_path().read_text())
    links = {link.get("name") for link in urdf.iter("link")}
    children = {j.find("child").get("link") for j in urdf.iter("joint")}
    assert links - children == {fixed}, "the fixed frame is not the URDF's root link"


def test_the_config_is_installed_and_the_launch_files_start_rviz_with_it(monkeypatch):
    from test_package_data import installed_files

    installed = {dest.removeprefix("share/step_planner/") for dest in installed_files(monkeypatch)}
    assert "config/step_planner.rviz" in installed
    common = (ROOT / "step_planner" / "ros" / "launch_common.py").read_text()
    assert 'package_file("config", "step_planner.rviz")' in common
