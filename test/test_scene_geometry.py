"""One geometry description of a scene: the MuJoCo model is its translation, unchanged by the rewrite, and its
semantic volumes (container interiors, drawer interiors and travel) say what the bodies are."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from step_planner.domain.scene import SceneGeometryError, load_scene, scene_from_dict
from step_planner.domain.scene_geometry import scene_geometry

ROOT = Path(__file__).resolve().parents[1]
SCENES = sorted((ROOT / "config" / "scenes").glob("*.yaml"))
FIXTURE = json.loads((ROOT / "test" / "data" / "scene_models.json").read_text())


def _differences(expected, got, path: str = "") -> list[str]:
    """Where two dumps differ (numbers within 1e-9 count as equal)."""
    if isinstance(expected, dict) and isinstance(got, dict):
        out = [f"{path}/{k}: missing" for k in expected.keys() - got.keys()]
        out += [f"{path}/{k}: unexpected" for k in got.keys() - expected.keys()]
        for k in expected.keys() & got.keys():
            out += _differences(expected[k], got[k], f"{path}/{k}")
        return out
    if isinstance(expected, list) and isinstance(got, list) and len(expected) == len(got) and \
            all(isinstance(v, (int, float)) for v in expected + got):
        return [] if np.allclose(expected, got, rtol=0, atol=1e-9) else [f"{path}: {expected} != {got}"]
    if isinstance(expected, list) and isinstance(got, list) and len(expected) == len(got):
        pairs = enumerate(zip(expected, got, strict=True))
        return [d for i, (e, g) in pairs for d in _differences(e, g, f"{path}[{i}]")]
    if isinstance(expected, float) or isinstance(got, float):
        return [] if abs(float(expected) - float(got)) <= 1e-9 else [f"{path}: {expected} != {got}"]
    return [] if expected == got else [f"{path}: {expected!r} != {got!r}"]


@pytest.mark.sim
@pytest.mark.parametrize("key", sorted(FIXTURE), ids=sorted(FIXTURE))
def test_the_compiled_model_is_the_one_the_builder_compiled_before_the_description(key):
    """Bodies, geoms, joints, sites, masses and the SceneInfo of every shipped scene at seeds 0 and 3 equal the dump
    of the model compiled by the builder before it became a translation of the description (scene_model_dump.py)."""
    import scene_model_dump

    from step_planner.execution.sim.scene_builder import build_scene

    scene, seed = key.split("@")
    world = load_scene(ROOT / "config" / "scenes" / f"{scene}.yaml")
    expected = FIXTURE[key]
    if "error" in expected:
        with pytest.raises(SceneGeometryError) as err:
            build_scene(world, int(seed))
        assert str(err.value).replace(str(ROOT) + "/", "") == expected["error"]
        return
    got = scene_model_dump.dump_model(*build_scene(world, int(seed)))
    got = {k: got[k] for k in expected}
    assert _differences(expected, got) == []


def test_the_comparison_sees_a_millimetre():
    a = {"bodies": {"tray": {"pos": [0.5, 0.1, 0.0]}}}
    assert _differences(a, {"bodies": {"tray": {"pos": [0.5, 0.101, 0.0]}}}) == ["/bodies/tray/pos: [0.5, 0.1, 0.0] "
                                                                                  "!= [0.5, 0.101, 0.0]"]
    assert _differences(a, {"bodies": {}}) == ["/bodies/tray: missing"]
    assert _differences({"x": "a"}, {"x": "b"}) == ["/x: 'a' != 'b'"]


@pytest.mark.parametrize("path", SCENES, ids=[p.stem for p in SCENES])
def test_container_and_drawer_volumes_are_the_insides_of_their_bodies(path):
    """Each tray's interior lies between its walls and above its floor; each drawer's interior between its sides
    and ends and above its floor, in the drawer frame, and the drawer slides along -x by its travel."""
    world = load_scene(path)
    try:
        geo = scene_geometry(world)
    except SceneGeometryError:
        pytest.skip("a scene without simulation geometry")
    bodies = {b.name: b for b in geo.fixtures}
    for c in geo.containers.values():
        lo, hi = c.interior
        boxes = {b.name.removeprefix(f"{c.name}_"): b for b in bodies[c.name].boxes}
        origin = np.asarray(bodies[c.name].pos)
        assert lo[2] == pytest.approx(origin[2] + boxes["floor"].pos[2] + boxes["floor"].half[2])
        assert hi[2] == pytest.approx(origin[2] + boxes["wall_x+1"].pos[2] + boxes["wall_x+1"].half[2])
        assert hi[0] == pytest.approx(origin[0] + boxes["wall_x+1"].pos[0] - boxes["wall_x+1"].half[0])
        assert lo[1] == pytest.approx(origin[1] + boxes["wall_y-1"].pos[1] + boxes["wall_y-1"].half[1])
    for d in geo.drawers.values():
        cab = bodies[d.cabinet]
        body = next(b for b in cab.children if b.name == d.name)
        boxes = {b.name.removeprefix(f"{d.name}_"): b for b in body.boxes}
        assert np.allclose(np.asarray(cab.pos) + body.pos, d.closed_position)
        assert d.interior_lo[2] == pytest.approx(boxes["floor"].pos[2] + boxes["floor"].half[2])
        assert d.interior_hi[2] == pytest.approx(boxes["side+1"].pos[2] + boxes["side+1"].half[2])
        assert d.interior_hi[1] == pytest.approx(boxes["side+1"].pos[1] - boxes["side+1"].half[1])
        assert d.interior_lo[0] == pytest.approx(boxes["end-1"].pos[0] + boxes["end-1"].half[0])
        assert body.slide.travel == d.slide and tuple(body.slide.axis) == tuple(d.axis)
        lo, hi = d.interior_box(d.slide)
        assert lo[0] == pytest.approx(d.interior_front(d.slide)) and hi[2] - lo[2] == pytest.approx(d.inner[2])
        assert d.floor_z == pytest.approx(lo[2])
        assert np.allclose(d.handle, next(s.pos for s in body.sites))
        assert geo.initial_openings[d.name] == (d.slide if world.places[d.name].is_open else 0.0)
    for o in geo.objects.values():  # every object starts inside what it is listed at
        if o.location in geo.containers:
            lo, hi = geo.containers[o.location].interior
        elif o.location in geo.drawers:
            lo, hi = geo.drawers[o.location].interior_box(geo.initial_openings[o.location])
        else:
            continue
        assert np.all(o.position[:2] > lo[:2]) and np.all(o.position[:2] < hi[:2])
        assert o.position[2] - o.half[2] == pytest.approx(lo[2])


def test_the_description_needs_no_simulator():
    """A pure-core module: the geometry is computed without MuJoCo (the pure-core test checks the import too)."""
    import subprocess
    import sys

    code = ("import sys\nfrom step_planner.domain.scene import load_scene\nfrom step_planner.domain.scene_geometry "
            "import scene_geometry\n"
            f"g = scene_geometry(load_scene({str(ROOT / 'config/scenes/workshop_drawers.yaml')!r}), 3)\n"
            "print(len(g.objects), len(g.drawers), 'mujoco' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split()[-1] == "False" and int(out.stdout.split()[1]) >= 2


def test_a_drawer_scene_without_geometry_is_refused_naming_the_field():
    world = scene_from_dict({"places": [{"name": "table", "kind": "surface"},
                                        {"name": "drawer", "kind": "drawer"}]})
    with pytest.raises(SceneGeometryError, match=r"place 'drawer': geometry\.cabinet_position"):
        scene_geometry(world)
