"""The STEP drawer task, physically: afterwards the tape and screwdriver are hidden in the drawer."""

from pathlib import Path

import pytest

from step_planner.bench.record_video import DRAWER_CALLS
from step_planner.domain.primitives import PrimitiveLibrary
from step_planner.domain.scene import load_scene
from step_planner.execution.base import ExecCode

ROOT = Path(__file__).resolve().parents[1]
SEQUENCE = DRAWER_CALLS


@pytest.mark.sim
@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_put_tape_and_screwdriver_in_drawer(seed):
    from step_planner.execution.sim.executor import SimExecutor

    library = PrimitiveLibrary.load(ROOT / "config" / "primitives.yaml")
    ex = SimExecutor(library, load_scene(ROOT / "config" / "scenes" / "drawer_desk.yaml"), seed=seed)
    for text in SEQUENCE:
        out = ex.execute(library.parse_call_text(text))
        assert out.code is ExecCode.SUCCESS, f"{text}: {out.message}"
        if text == "open_drawer(drawer)":
            assert ex.observe().places["drawer"].is_open
    truth = ex.observe()
    assert truth.objects["tape"].location == "drawer"
    assert truth.objects["screwdriver"].location == "drawer"
    assert not truth.places["drawer"].is_open
    assert truth.places["drawer"].geometry["opening"] < 0.02
    seen = truth.observed()
    assert "tape" not in seen.objects and "screwdriver" not in seen.objects  # hidden
    assert {"red_block", "cup"} <= set(seen.objects)


@pytest.mark.sim
@pytest.mark.slow
def test_hidden_object_in_closed_drawer_is_found_by_opening_it():
    from step_planner.domain.scene import scene_from_dict
    from step_planner.execution.sim.executor import SimExecutor

    library = PrimitiveLibrary.load(ROOT / "config" / "primitives.yaml")
    world = scene_from_dict(
        {
            "places": [
                {"name": "table", "kind": "surface"},
                {
                    "name": "drawer",
                    "kind": "drawer",
                    "open": False,
                    "geometry": {
                        "cabinet_position": [0.74, -0.38, 0.0],
                        "inner_size": [0.26, 0.3, 0.04],
                        "slide": 0.22,
                    },
                },
            ],
            "objects": [
                {
                    "name": "screwdriver",
                    "at": "drawer",
                    "geometry": {"shape": "box", "size": [0.14, 0.02, 0.02], "mass": 0.06},
                },
                {"name": "block", "at": "table"},  # no geometry: a 4 cm cube on a free table spot
            ],
        }
    )
    ex = SimExecutor(library, world, seed=3)
    assert ex.observe().objects["screwdriver"].location == "drawer"
    assert "screwdriver" not in ex.observe().observed().objects
    assert ex.execute(library.parse_call_text("pick(screwdriver)")).code is ExecCode.PRECONDITION_FAILED
    for text in ("open_drawer(drawer)", "pick(screwdriver)", "place(screwdriver, table)"):
        out = ex.execute(library.parse_call_text(text))
        assert out.code is ExecCode.SUCCESS, f"{text}: {out.message}"
    seen = ex.observe().observed()
    assert seen.objects["screwdriver"].location == "table" and seen.objects["block"].location == "table"
