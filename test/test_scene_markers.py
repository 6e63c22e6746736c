"""What ~/markers shows, checked against the world and the goal without ROS (step_planner/viz/scene_markers.py).

The drawer task runs through the real planner loop on the symbolic executor (scripted model); the marker model is
one more tree listener and gets every observation, as the node gives them. At every change the picture is checked
against the executor's true world: objects where the scene geometry puts them, with its sizes; believed objects
grey; the drawer red when closed and green when open; each goal fact ✓ exactly when it holds.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import DRAWER_GOAL, DRAWER_TASK, GROUNDED_PLANS, ScriptedLLM, grounded_plan, shipped_config

from step_planner.domain.conditions import holds, parse_fact
from step_planner.domain.scene_geometry import scene_geometry
from step_planner.execution.symbolic import SymbolicExecutor
from step_planner.planner.runner import run_goal
from step_planner.viz import scene_markers as sm

ROOT = Path(__file__).resolve().parents[1]


def by(shapes, ns: str) -> list[sm.Shape]:
    return [s for s in shapes if s.ns == ns]


def label(shapes, text: str) -> sm.Shape:
    (found,) = [s for s in by(shapes, "labels") if s.text == text]
    return found


def object_at(shapes, name: str, believed: bool = False) -> sm.Shape:
    """The object shape under the label ``name`` (labels stand 3 cm above the object's top)."""
    tag = label(shapes, f"{name} (believed)" if believed else name)
    near = [s for s in by(shapes, "objects") if np.allclose(s.position[:2], tag.position[:2])
            and abs(tag.position[2] - 0.03 - (s.position[2] + s.scale[2] / 2)) < 1e-9]
    assert len(near) == 1, (name, near)
    return near[0]


def facts(shapes) -> dict[str, bool]:
    out = {}
    for s in by(shapes, "facts"):
        mark, text = s.text.split(" ", 1)
        assert (mark == sm.MET) == (s.rgba == sm.MET_RGBA) and mark in (sm.MET, sm.UNMET)
        out[text] = mark == sm.MET
    return out


def test_the_scene_objects_places_sizes_and_colours(drawer_world):
    model = sm.MarkerModel()
    model.reset(drawer_world)
    shapes = model.shapes()
    geo = scene_geometry(drawer_world)
    for name, g in geo.objects.items():
        s = object_at(shapes, name)
        assert np.allclose(s.position, g.position) and np.allclose(s.scale, 2 * g.half)
        assert s.kind == ("cylinder" if g.shape == "cylinder" else "cube")
        assert s.rgba == g.rgba and np.isclose(np.degrees(2 * np.arctan2(s.orientation[2], s.orientation[3])), g.yaw)
    assert {s.text for s in by(shapes, "labels")} == {*geo.objects, "tray", "drawer (closed)"}
    lo, hi = geo.drawers["drawer"].interior_box(0.0)
    (drawer,) = [s for s in by(shapes, "places") if s.rgba in (sm.OPEN_RGBA, sm.CLOSED_RGBA)]
    assert drawer.rgba == sm.CLOSED_RGBA and np.allclose(drawer.position, (lo + hi) / 2)
    assert np.allclose(drawer.scale, hi - lo)
    assert not by(shapes, "facts") and not by(shapes, "subgoal") and not by(shapes, "target")


def test_the_drawer_task_picture_follows_the_world_and_the_goal(library, drawer_world):
    executor = SymbolicExecutor(library, drawer_world)
    model = sm.MarkerModel()
    model.reset(drawer_world)
    geo = model.geometry
    seen: dict[str, int] = {"facts": 0, "subgoal": 0, "target": 0}
    judged = [0]
    drawer_colours: list[tuple] = []

    errors: list[BaseException] = []

    class Watch:  # the tree logs and swallows a listener's exception: keep them for the end
        def on_tree_event(self, event, tree) -> None:
            model.set_tree(tree.snapshot())
            try:
                check(tree.snapshot())
            except BaseException as exc:
                errors.append(exc)

    def check(snapshot) -> None:
        shapes = model.shapes()
        truth = executor.world
        shown = facts(shapes)
        for text, met in shown.items():  # the mark is the fact's truth in the world now (symbolic: no hidden truth)
            root = next(n for n in snapshot["nodes"] if n["id"] == snapshot["root"])
            recorded = next(c for c in root["conditions"] if c["text"] == text)
            assert met == recorded["holds"]
            if last_event[0] is not None and last_event[0].kind == "conditions" and recorded["judged_from"] != \
                    "unknown" and last_event[0].node_id == snapshot["root"]:  # just judged: the world now
                assert met == holds(parse_fact(text), {}, truth), (text, truth.describe())
        seen["facts"] += bool(shown)
        nodes = {n["id"]: n for n in snapshot["nodes"]}
        if snapshot["active"] is not None:
            (sub,) = by(shapes, "subgoal")
            assert sub.text == nodes[snapshot["active"]]["text"] and sub.position == sm.SUBGOAL_AT
            seen["subgoal"] += 1
            call = nodes[snapshot["active"]].get("call")
            if call:
                (arrow,) = by(shapes, "target")
                target = call["args"].get("target") or call["args"].get("drawer") or call["args"]["object"]
                anchor = next(s for s in by(shapes, "labels") if s.text.split(" ")[0] == target)
                assert np.allclose(arrow.points[1][:2], anchor.position[:2])  # straight down onto its label's spot
                assert arrow.points[0][2] > arrow.points[1][2]
                seen["target"] += 1
        (drawer,) = [s for s in by(shapes, "places") if s.rgba in (sm.OPEN_RGBA, sm.CLOSED_RGBA)]
        opened = truth.places["drawer"].is_open
        assert drawer.rgba == (sm.OPEN_RGBA if opened else sm.CLOSED_RGBA)
        lo, hi = geo.drawers["drawer"].interior_box(geo.drawers["drawer"].open_position if opened else 0.0)
        assert np.allclose(drawer.position, (lo + hi) / 2)
        if not drawer_colours or drawer_colours[-1] != drawer.rgba:
            drawer_colours.append(drawer.rgba)

    last_event = [None]

    class Kind:
        def on_tree_event(self, event, tree) -> None:
            last_event[0] = event
            judged[0] += event.kind == "conditions" and event.node_id == tree.root

    def on_step(call, outcome, world) -> None:
        model.observe(world)

    result = run_goal(DRAWER_TASK, library=library, executor=executor, listeners=[Kind(), Watch()], on_step=on_step,
                      llm=ScriptedLLM(grounded_plan(GROUNDED_PLANS, DRAWER_GOAL)), config=shipped_config())
    assert result.success, result.message
    if errors:
        raise errors[0]
    assert judged[0] >= 2, "the root's facts were never judged during the goal"
    assert seen["facts"] > 5 and seen["subgoal"] > 5 and seen["target"] >= 6
    assert drawer_colours == [sm.CLOSED_RGBA, sm.OPEN_RGBA, sm.CLOSED_RGBA]

    end = model.shapes()
    assert facts(end) == {f: True for f in DRAWER_GOAL}
    lo, hi = geo.drawers["drawer"].interior_box(0.0)
    for name in ("tape", "screwdriver"):  # put away and shut in: believed, grey, inside the closed drawer
        s = object_at(end, name, believed=True)
        assert s.rgba == sm.BELIEVED_RGBA
        assert np.all(np.array(s.position[:2]) >= lo[:2]) and np.all(np.array(s.position[:2]) <= hi[:2])
        assert np.isclose(s.position[2] - s.scale[2] / 2, lo[2])  # on the drawer's floor
    cup = object_at(end, "cup")  # never touched: where the scene has it, in its own colour
    assert np.allclose(cup.position, geo.objects["cup"].position) and cup.rgba == geo.objects["cup"].rgba
    (sub,) = by(end, "subgoal")
    assert sub.text == f"{DRAWER_TASK} [succeeded]"


def test_a_perceived_position_is_used_only_where_the_world_model_has_the_object(drawer_world):
    geo = scene_geometry(drawer_world)
    tape = drawer_world.objects["tape"]
    half = np.asarray(geo.objects["tape"].half)
    tape.geometry = {**tape.geometry, "position": [0.4, 0.0, 0.015], "yaw": 30.0}  # on the table: used
    pos, yaw = sm.object_pose(tape, drawer_world, geo, half)
    assert np.allclose(pos, [0.4, 0.0, 0.015]) and yaw == 30.0
    tape.location = "tray"  # the symbolic backend moved the name, not the pose: a spot in the tray instead
    pos, _ = sm.object_pose(tape, drawer_world, geo, half)
    tray = geo.containers["tray"]
    assert np.allclose(pos[:2], tray.position[:2]) and np.isclose(pos[2], tray.position[2] + tray.floor + half[2])
    second, _ = sm.object_pose(tape, drawer_world, geo, half, slot=1)  # a second object there stands beside it
    assert np.isclose(second[1] - pos[1], 2 * half[1] + 0.01)


def test_a_scene_without_geometry_still_shows_the_goal_without_crashing():
    from step_planner.domain.world import ObjectState, Place, WorldState

    world = WorldState(objects={"cube": ObjectState("cube", location="bin")}, places={"bin": Place("bin", "bin")})
    model = sm.MarkerModel()
    model.reset(world)  # the bin has no geometry: no scene geometry at all
    assert model.geometry is None and model.shapes() == []


@pytest.mark.timeout(120)
def test_the_marker_content_imports_no_ros():
    code = ("import sys, step_planner.viz.scene_markers\n"
            "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in ('rclpy', 'visualization_msgs', "
            "'mujoco', 'step_planner_interfaces'))))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


def test_the_geometry_cache_ignores_what_moves_between_goals(drawer_world):
    cache = sm.GeometryCache()
    cache.build(drawer_world)
    moved = drawer_world.copy()
    moved.objects["tape"].location = "tray"
    moved.objects["tape"].geometry = {**moved.objects["tape"].geometry, "position": [0.45, 0.3, 0.02], "yaw": 10.0}
    moved.places["drawer"].is_open = True
    assert cache.get(moved)[0]  # a robot's next observation: built already
    bigger = drawer_world.copy()
    bigger.objects["tape"].geometry = {**bigger.objects["tape"].geometry, "size": [0.03, 0.03]}
    assert not cache.get(bigger)[0]  # another shape: built anew


def test_a_world_with_a_held_object_still_has_its_places_drawn(drawer_world):
    held = drawer_world.copy()
    held.objects["tape"].location, held.held = "gripper", "tape"
    model = sm.MarkerModel()
    model.reset(held)
    shapes = model.shapes()
    assert {s.text for s in by(shapes, "labels")} >= {"drawer (closed)", "tray", "tape"}
    assert np.allclose(object_at(shapes, "tape").position, [0.45, 0.08, 0.015])  # its own pose (last seen)
