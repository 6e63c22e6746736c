"""The page's top-down picture (step_planner/viz/table_svg.py) from the scene snapshot the RViz markers come from,
checked without a browser: every shipped scene's objects where the snapshot (and the scene) puts them, places with
their boxes, the picture changing when an object moves, the goal's destinations ticked, the handled object
highlighted, believed and held objects marked in words too, and names escaped."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from conftest import CONFIG

from step_planner.domain.scene import load_scene
from step_planner.domain.scene_geometry import scene_geometry
from step_planner.domain.world import GRIPPER
from step_planner.viz.scene_markers import markers_of
from step_planner.viz.scene_snapshot import scene_snapshot
from step_planner.viz.table_svg import MM, screen, table_svg

SCENES = sorted((CONFIG / "scenes").glob("*.yaml"))
NS = {"s": "http://www.w3.org/2000/svg"}


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def groups(root: ET.Element, attr: str) -> dict[str, ET.Element]:
    found = [g for g in root.iter("{http://www.w3.org/2000/svg}g") if attr in g.attrib]
    out = {g.attrib[attr]: g for g in found}
    assert len(out) == len(found), f"two drawings of one {attr}"
    return out


def drawn_centre(g: ET.Element) -> tuple[float, float]:
    """Where the object's own shape is drawn (circle centre, or the rotation centre of its rectangle)."""
    circle = [c for c in g.findall("s:circle", NS) if c.attrib.get("class") != "active-ring"]
    if circle:
        return float(circle[0].attrib["cx"]), float(circle[0].attrib["cy"])
    rect = g.findall("s:rect", NS)[-1]
    x, y = float(rect.attrib["x"]), float(rect.attrib["y"])
    return x + float(rect.attrib["width"]) / 2, y + float(rect.attrib["height"]) / 2


def view_box(root: ET.Element) -> tuple[float, float, float, float]:
    x, y, w, h = map(float, root.attrib["viewBox"].split())
    return x, y, x + w, y + h


class _Geometries(dict):
    """(world, geometry) of a scene file, made when a test first asks for it: under xdist each worker builds only
    the scenes of the tests it runs (all nine up front took about 25 s per worker on a loaded machine)."""

    def __missing__(self, path: Path) -> tuple:
        world = load_scene(path)
        self[path] = world, scene_geometry(world)
        return self[path]


@pytest.fixture(scope="module")
def geometries() -> dict[Path, tuple]:
    return _Geometries()


@pytest.mark.parametrize("path", SCENES, ids=[p.stem for p in SCENES])
def test_every_shipped_scene_is_drawn_where_the_snapshot_puts_it(path, geometries):
    world, geometry = geometries[path]
    snap = scene_snapshot(world, frozenset(), geometry)
    root = parse(table_svg(snap))
    objects, places = groups(root, "data-object"), groups(root, "data-place")
    words = groups(root, "data-label-of")  # each place's name, state and goal ticks, drawn over every shape
    assert set(words) == set(places)
    assert set(objects) == {o["name"] for o in snap["objects"]} == set(world.objects)
    assert set(places) == {p["name"] for p in snap["places"]} and len(places) >= 2
    left, top, right, bottom = view_box(root)
    for obj in snap["objects"]:
        g = objects[obj["name"]]
        x, y = obj["centre"][:2]
        assert (float(g.attrib["data-x"]), float(g.attrib["data-y"])) == pytest.approx((x, y), abs=1e-4)
        seen = world.objects[obj["name"]].geometry.get("position")
        if seen is not None and obj["location"] in world.places:  # the scene's own pose, on its place
            assert (x, y) == pytest.approx(tuple(seen[:2]), abs=1e-6), obj["name"]
        cx, cy = drawn_centre(g)
        assert (cx, cy) == pytest.approx(screen(x, y), abs=0.1)
        assert cx == pytest.approx(-y * MM, abs=0.1) and cy == pytest.approx(-x * MM, abs=0.1)  # x up, y left
        assert left < cx < right and top < cy < bottom
        assert g.attrib["data-location"] == world.objects[obj["name"]].location
        assert g.attrib["data-believed"] == "false" and g.attrib["data-held"] == "false"
        assert "".join(g.itertext()) == obj["name"]
    for place in snap["places"]:
        rect = places[place["name"]].find("s:rect", NS)
        (lx, ly, _), (hx, hy, _) = place["lo"], place["hi"]
        assert float(rect.attrib["x"]) == pytest.approx(-hy * MM, abs=0.1)
        assert float(rect.attrib["y"]) == pytest.approx(-hx * MM, abs=0.1)
        assert float(rect.attrib["width"]) == pytest.approx((hy - ly) * MM, abs=0.1)
        assert float(rect.attrib["height"]) == pytest.approx((hx - lx) * MM, abs=0.1)
        if place["kind"] == "drawer":
            state = "open" if place["open"] else "closed"
            assert places[place["name"]].attrib["data-open"] == str(place["open"]).lower()
            assert f"{place['name']} ({state})" in "".join(words[place["name"]].itertext())
        else:
            assert place["name"] in "".join(words[place["name"]].itertext())
    # the markers are drawn from the same snapshot: each object's marker at the picture's point
    for shape in (s for s in markers_of(snap) if s.ns == "objects"):
        match = [o for o in snap["objects"] if np.allclose(o["centre"], shape.position)]
        assert match, shape


def test_the_picture_changes_when_an_object_moves(geometries):
    world, geometry = geometries[CONFIG / "scenes" / "drawer_desk.yaml"]
    before = table_svg(scene_snapshot(world, frozenset(), geometry))
    moved = world.copy()
    old = moved.objects["tape"].geometry["position"]
    moved.objects["tape"].geometry["position"] = [old[0] + 0.1, old[1] - 0.15, old[2]]  # still on the table
    after = table_svg(scene_snapshot(moved, frozenset(), geometry))
    assert after != before
    tape_before = groups(parse(before), "data-object")["tape"]
    tape_after = groups(parse(after), "data-object")["tape"]
    assert float(tape_after.attrib["data-x"]) == pytest.approx(old[0] + 0.1, abs=1e-4)
    assert float(tape_after.attrib["data-y"]) == pytest.approx(old[1] - 0.15, abs=1e-4)
    assert drawn_centre(tape_after) != drawn_centre(tape_before)
    others = {n: g.attrib["data-x"] for n, g in groups(parse(after), "data-object").items() if n != "tape"}
    assert others == {n: g.attrib["data-x"] for n, g in groups(parse(before), "data-object").items() if n != "tape"}


def _tree(conditions: list[tuple[str, bool]], call: dict | None = None) -> dict:
    nodes = [{"id": 0, "text": "put the tape in the drawer", "status": "executing",
              "conditions": [{"text": t, "holds": h} for t, h in conditions]}]
    if call is not None:
        nodes.append({"id": 1, "text": "pick up the tape", "status": "executing", "call": call})
    return {"root": 0, "active": 1 if call else None, "nodes": nodes}


def test_destinations_facts_and_the_handled_object(geometries):
    world, geometry = geometries[CONFIG / "scenes" / "drawer_desk.yaml"]
    tree = _tree([("in(tape, drawer)", False), ("in(screwdriver, drawer)", True), ("closed(drawer)", True)],
                 {"name": "pick", "args": {"object": "tape"}})
    root = parse(table_svg(scene_snapshot(world, frozenset(), geometry, tree)))
    drawer = groups(root, "data-place")["drawer"]
    assert drawer.attrib["data-goal"] == "true" and "goal" in drawer.attrib["class"].split()
    assert "data-goal" not in groups(root, "data-place")["tray"].attrib
    facts = {t.attrib["data-fact"]: (t.attrib["data-holds"], t.text) for t in groups(root, "data-label-of")[
        "drawer"].iter(
        "{http://www.w3.org/2000/svg}text") if "data-fact" in t.attrib}
    assert facts == {"in(tape, drawer)": ("false", "✗ tape"), "in(screwdriver, drawer)": ("true", "✓ screwdriver"),
                     "closed(drawer)": ("true", "✓ closed")}
    objects = groups(root, "data-object")
    assert [n for n, g in objects.items() if g.attrib.get("data-active") == "true"] == ["tape"]
    assert "(now)" in "".join(objects["tape"].itertext())
    assert objects["tape"].find("s:circle[@class='active-ring']", NS) is not None
    # a place call: the drawer is what the step handles
    root = parse(table_svg(scene_snapshot(world, frozenset(), geometry,
                                          _tree([], {"name": "open_drawer", "args": {"drawer": "drawer"}}))))
    assert not [g for g in groups(root, "data-object").values() if "data-active" in g.attrib]


def test_believed_and_held_objects_say_so_not_only_by_colour(geometries):
    world, geometry = geometries[CONFIG / "scenes" / "drawer_desk.yaml"]
    world = world.copy()
    world.objects["cup"].location = GRIPPER
    world.objects["cup"].geometry["position"] = [0.4, 0.0, 0.3]
    root = parse(table_svg(scene_snapshot(world, frozenset({"tape"}), geometry)))
    objects = groups(root, "data-object")
    tape, cup = objects["tape"], objects["cup"]
    assert tape.attrib["data-believed"] == "true" and "".join(tape.itertext()) == "tape (believed)"
    shape = tape.find("s:circle", NS)
    assert "stroke-dasharray" in shape.attrib and shape.attrib["fill"] == "#9ca3af"
    assert cup.attrib["data-held"] == "true" and "".join(cup.itertext()) == "cup (held)"
    assert (float(cup.attrib["data-x"]), float(cup.attrib["data-y"])) == (0.4, 0.0)
    arm = root.find(".//s:g[@id='arm']", NS)
    assert arm.attrib["data-held"] == "cup" and "holding cup" in "".join(arm.itertext())
    desc = root.find("s:desc", NS).text
    assert "cup in the gripper" in desc and "tape at table (believed, not seen)" in desc and "drawer closed" in desc


NASTY = ['<script>alert(1)</script>', 'a&b', 'say "hi"', "it's", "x y/z", "]]>", "ünïcode ✓"]


@pytest.mark.parametrize("name", NASTY)
def test_names_are_escaped_and_kept_exact(name):
    snap = {"places": [{"name": name + " place", "kind": "drawer", "lo": [0.3, -0.2, 0.0], "hi": [0.5, 0.0, 0.05],
                        "open": True}],
            "objects": [{"name": name, "shape": "box", "centre": [0.4, -0.1, 0.02], "half": [0.02, 0.02, 0.02],
                         "yaw": 30.0, "rgba": [1, 0, 0, 1], "location": name + " place", "believed": False,
                         "held": False}],
            "facts": [{"text": f"in({name}, {name} place)", "words": "", "holds": True,
                       "names": [name, name + " place"], "anchor": name}],
            "active": None, "root": None, "target": None, "handles": name}
    svg = table_svg(snap)
    assert "<script" not in svg
    root = parse(svg)  # well-formed XML whatever the name
    (obj,) = groups(root, "data-object").values()
    assert obj.attrib["data-object"] == name and obj.attrib["data-location"] == name + " place"
    assert "".join(obj.itertext()) == f"{name} (now)"
    ids = [e.attrib["id"] for e in root.iter() if "id" in e.attrib]
    assert len(ids) == len(set(ids)) and all(all(c.isalnum() or c in "_-" for c in i) for i in ids)
    assert groups(root, "data-label-of")[name + " place"].find(".//s:text[@data-fact]", NS).text == f"✓ {name}"
    assert "".join(groups(root, "data-label-of")[name + " place"].itertext()).startswith(f"{name} place (open)")
