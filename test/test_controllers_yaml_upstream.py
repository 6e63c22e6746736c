"""config/ros2_controllers_fr3.yaml against upstream's fr3_ros_controllers.yaml (issue 38, part 4).

Upstream's parameters are the ones test/data/franka_ros2/extract.py read at the commit upstream.json names (its two
``/**`` blocks merged as rcl merges them). Every difference is listed; each one must be justified in our file: a
parameter whose value differs or that upstream lacks by a ``differs:`` comment on its own line, a parameter we lack
by a ``differs:`` comment naming its dotted path, and the node-name keys (``/**`` upstream) by a ``differs:``
comment naming ``/**``.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "test" / "data" / "franka_ros2"
OURS = ROOT / "config" / "ros2_controllers_fr3.yaml"
UPSTREAM = json.loads((DATA / "upstream.json").read_text())


def _extract():
    spec = importlib.util.spec_from_file_location("franka_ros2_extract", DATA / "extract.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def differences(ours_text: str) -> list[tuple[str, str, object, object, int | None]]:
    """(kind, dotted path, upstream's value, ours, our line) for every difference; kind: value, missing, extra,
    namespace (``/**`` upstream, node names at the top level here)."""
    upstream = UPSTREAM["controllers"]["parameters"]
    ours = _extract().parameters(ours_text)
    found = []
    for key in sorted(set(upstream) | set(ours)):
        if key not in ours:
            found.append(("missing", key, upstream[key]["value"], None, None))
        elif key not in upstream:
            found.append(("extra", key, None, ours[key]["value"], ours[key]["line"]))
        elif ours[key]["value"] != upstream[key]["value"]:
            found.append(("value", key, upstream[key]["value"], ours[key]["value"], ours[key]["line"]))
    if not any(line.startswith("/**:") for line in ours_text.splitlines()):
        found.append(("namespace", "/**", "/**", "(top level)", None))
    return found


def unjustified(ours_text: str) -> list[tuple]:
    lines = ours_text.splitlines()
    justifications = [line.split("differs:", 1)[1] for line in lines if "differs:" in line]
    bad = []
    for kind, key, theirs, ours, line in differences(ours_text):
        if kind in ("value", "extra"):
            ok = "differs:" in lines[line - 1].split("#", 1)[-1] if "#" in lines[line - 1] else False
        else:
            ok = any(key in text for text in justifications)
        if not ok:
            bad.append((kind, key, theirs, ours, line))
    return bad


def test_the_reference_is_upstreams_file_at_the_cited_commit():
    assert UPSTREAM["repository"] == "frankarobotics/franka_ros2"
    assert UPSTREAM["commit"].startswith("29cb85a") and len(UPSTREAM["commit"]) == 40
    assert UPSTREAM["controllers"]["path"] == "franka_fr3_moveit_config/config/fr3_ros_controllers.yaml"
    assert UPSTREAM["commit"] in OURS.read_text()


def test_thread_priority_and_the_robot_state_broadcaster_are_there_as_upstream_has_them():
    params = _extract().parameters(OURS.read_text())
    upstream = UPSTREAM["controllers"]["parameters"]
    for key in ("controller_manager.ros__parameters.thread_priority",
                "controller_manager.ros__parameters.franka_robot_state_broadcaster.type"):
        assert params[key]["value"] == upstream[key]["value"], key
        cited = f"FRC:{upstream[key]['line']}"  # the comment on our line cites upstream's
        line = OURS.read_text().splitlines()[params[key]["line"] - 1]
        assert cited in line or f"FRC:{upstream[key]['line'] - 1}-{upstream[key]['line']}" in \
            OURS.read_text().splitlines()[params[key]["line"] - 2], (key, line)
    assert params["controller_manager.ros__parameters.thread_priority"]["value"] == 98


def test_every_difference_from_upstream_is_listed_and_justified():
    found = differences(OURS.read_text())
    print("\n".join(f"{kind}: {key}: upstream {theirs!r}, ours {ours!r}" for kind, key, theirs, ours, _ in found))
    assert unjustified(OURS.read_text()) == []


def test_an_unjustified_difference_fails():
    """The check can fail: each kind of difference, made in a copy of our file, is reported as unjustified."""
    text = OURS.read_text()
    dropped = text.replace("    thread_priority: 98", "    # (no thread priority)")
    assert ("missing", "controller_manager.ros__parameters.thread_priority", 98, None, None) in unjustified(dropped)
    changed = text.replace("fr3_joint7: {p: 50.0", "fr3_joint7: {p: 55.0")
    assert [d[:4] for d in unjustified(changed)] == [
        ("value", "fr3_arm_controller.ros__parameters.gains.fr3_joint7.p", 50.0, 55.0)]
    justified = changed.replace("fr3_joint7: {p: 55.0, d: 5.0, i: 0.0, i_clamp: 1.0}",
                                "fr3_joint7: {p: 55.0, d: 5.0, i: 0.0, i_clamp: 1.0}  # differs: a reason")
    assert unjustified(justified) == []
    extra = text.replace("    update_rate: 1000  # Hz", "    update_rate: 1000  # Hz\n    use_sim_time: true")
    assert [d[:2] for d in unjustified(extra)] == [("extra", "controller_manager.ros__parameters.use_sim_time")]
    unexplained_keys = "\n".join(line for line in text.splitlines() if "`/**`" not in line)
    assert ("namespace", "/**") in [d[:2] for d in unjustified(unexplained_keys)]
