"""Free spots from footprints: containers take as many objects as physically fit, and no more."""

from pathlib import Path

import numpy as np
import pytest

from step_planner.domain.placement import (
    PALM_ABOVE_GRASP,
    Area,
    Footprint,
    Resting,
    free_spots,
    grasp_height,
    overlap,
    palm_zone,
)
from step_planner.domain.primitives import PrimitiveLibrary
from step_planner.domain.scene import load_scene
from step_planner.execution.base import ExecCode

ROOT = Path(__file__).resolve().parents[1]
BLOCK = np.array([0.02, 0.02, 0.02])
YAWS = [(np.pi / 2, 0.0), (0.0, np.pi / 2)]  # grasp across y, or the wrist turned a quarter


def resting(half, xy, yaw=0.0, shape="box"):
    fp = Footprint(np.asarray(xy, float), half[:2], yaw, round=shape == "cylinder")
    return Resting(fp, 2 * half[2], grasp_height(half) + PALM_ABOVE_GRASP, palm_zone(shape, half, yaw, fp.centre))


def fill(inner_half: float, count: int) -> list:
    """Put ``count`` blocks one after the other, each at the first free spot."""
    area = Area(np.full(2, -inner_half), np.full(2, inner_half))
    placed: list = []
    for _ in range(count):
        spots = free_spots(area, "box", BLOCK, YAWS, placed, 0.005, area.fill_order)
        if not spots:
            return placed
        xy, hand = spots[0]
        placed.append(resting(BLOCK, xy, dict(YAWS)[hand]))
    return placed


def test_overlap_of_boxes_and_discs():
    a = Footprint(np.zeros(2), np.array([0.02, 0.02]), 0.0)
    assert overlap(a, Footprint(np.array([0.035, 0.0]), np.array([0.02, 0.02]), 0.0), 0.0)
    assert not overlap(a, Footprint(np.array([0.045, 0.0]), np.array([0.02, 0.02]), 0.0), 0.0)
    assert overlap(a, Footprint(np.array([0.045, 0.0]), np.array([0.02, 0.02]), 0.0), 0.01)  # gap counts
    # a square turned 45 degrees reaches 2.8 cm along x
    assert overlap(a, Footprint(np.array([0.047, 0.0]), np.array([0.02, 0.02]), np.pi / 4), 0.0)
    disc = Footprint(np.array([0.05, 0.0]), np.array([0.025, 0.025]), 0.0, round=True)
    assert not overlap(a, disc, 0.0) and overlap(a, disc, 0.01)


def test_blocks_fill_a_box_as_far_as_blocks_and_fingers_fit():
    assert len(fill(0.062, 6)) == 2  # 14 cm box, 8 mm walls: fixed slots took only one
    placed = fill(0.082, 6)  # 18 cm box
    assert len(placed) == 4
    for i, p in enumerate(placed):
        for q in placed[i + 1 :]:
            assert not overlap(p.footprint, q.footprint, 0.004)


def test_a_neighbours_pick_fingers_stay_free():
    """A block is not set down where a neighbour's fingers must go when that one is picked
    (fingers landing on a block upset the physics); beside it, across the closing axis, it is."""
    from step_planner.domain.rest_areas import resting

    area = Area(np.array([-0.2, -0.2]), np.array([0.2, 0.2]))
    neighbour = resting("box", BLOCK, np.zeros(2), 0.0)  # a cube is gripped along its y: fingers at y +-5 cm
    assert neighbour.fingers is not None and neighbour.fingers.extent()[1] > 0.05
    spots = free_spots(area, "box", BLOCK, YAWS, [neighbour], 0.005, lambda c: float(np.linalg.norm(c)), limit=40)
    assert spots
    for xy, hand in spots:
        body = Footprint(xy, BLOCK[:2], dict(YAWS)[hand])
        assert not overlap(body, neighbour.fingers, 0.0)
    assert min(abs(xy[0]) for xy, _ in spots if abs(xy[1]) < 0.01) < 0.06  # right beside it along x is fine


def test_a_crowded_container_leaves_every_pick_possible():
    """Fill trays block by block: each new block keeps clear of the others' bodies and pick
    fingers, and the others keep clear of its own."""
    from step_planner.domain.rest_areas import container_spot, resting, tray_area

    for size, fits_in in ((0.18, 4), (0.2, 5)):
        floor = tray_area(np.array([0.5, 0.0, 0.0]), np.array([size, size, 0.03]))
        inside: list = []
        while (found := container_spot(floor, "box", BLOCK, 0.0, inside)) is not None:
            inside.append(resting("box", BLOCK, *found))
        assert len(inside) == fits_in
        for i, a in enumerate(inside):
            for b in inside[i + 1 :]:
                assert not overlap(a.footprint, b.footprint, 0.003)
                assert not overlap(a.footprint, b.fingers, 0.0) and not overlap(b.footprint, a.fingers, 0.0)


def test_fingers_need_room_beside_the_object():
    # a 4.6 cm square inside: the block fits, its fingers do not
    area = Area(np.full(2, -0.023), np.full(2, 0.023))
    assert free_spots(area, "box", BLOCK, YAWS, [], 0.005, area.fill_order) == []


def test_a_tall_object_is_not_put_where_the_palm_picks_a_low_one():
    pen = np.array([0.06, 0.006, 0.006])
    cup = np.array([0.03, 0.03, 0.04])
    area = Area(np.array([-0.12, -0.15]), np.array([0.12, 0.15]))
    spots = free_spots(area, "cylinder", cup, [(np.pi / 2, 0.0)], [resting(pen, (0.0, 0.0))], 0.005, area.fill_order)
    assert spots
    for xy, _ in spots:  # the pen is gripped across y: the palm spans y, so the cup keeps off in x
        assert abs(xy[0]) >= 0.035 + 0.03


@pytest.mark.sim
def test_three_blocks_into_the_box_in_physics():
    from step_planner.execution.sim.executor import SimExecutor

    library = PrimitiveLibrary.load(ROOT / "config" / "primitives.yaml")
    ex = SimExecutor(library, load_scene(ROOT / "config" / "scenes" / "blocks_tray.yaml"), seed=1)
    for block in ("blue_block", "red_block", "green_block"):
        for text in (f"pick({block})", f"place({block}, box)"):
            out = ex.execute(library.parse_call_text(text))
            assert out.code is ExecCode.SUCCESS, f"{text}: {out.message}"
    seen = ex.observe()
    assert all(seen.objects[b].location == "box" for b in ("blue_block", "red_block", "green_block"))


@pytest.mark.sim
@pytest.mark.slow
def test_front_handle_grasp_opens_and_serves_a_lower_drawer_under_an_open_upper_one():
    """The STEP stacked-drawer case that top-down handle grasps could not do: with the top drawer
    open over it, the bottom drawer is opened, an object comes out of it and one goes in, and
    both drawers close again."""
    from step_planner.execution.sim.executor import SimExecutor

    library = PrimitiveLibrary.load(ROOT / "config" / "primitives.yaml")
    ex = SimExecutor(library, load_scene(ROOT / "config" / "scenes" / "two_drawers.yaml"), seed=1)
    for text in ("open_drawer(top_drawer)", "open_drawer(bottom_drawer)"):
        out = ex.execute(library.parse_call_text(text))
        assert out.code is ExecCode.SUCCESS, f"{text}: {out.message}"
    seen = ex.observe()
    assert seen.places["top_drawer"].is_open and seen.places["bottom_drawer"].is_open
    assert seen.places["top_drawer"].geometry["opening"] > 0.08  # the top drawer really stayed open
    for text in ("pick(tape)", "place(tape, bottom_drawer)", "pick(screwdriver)", "place(screwdriver, table)",
                 "close_drawer(bottom_drawer)", "close_drawer(top_drawer)"):
        out = ex.execute(library.parse_call_text(text))
        assert out.code is ExecCode.SUCCESS, f"{text}: {out.message}"
    seen = ex.observe()
    assert {n: seen.objects[n].location for n in ("tape", "screwdriver", "pen")} == {
        "tape": "bottom_drawer", "screwdriver": "table", "pen": "bottom_drawer"}
    assert not seen.places["top_drawer"].is_open and not seen.places["bottom_drawer"].is_open


@pytest.mark.sim
@pytest.mark.slow
def test_four_blocks_into_one_bin_among_twelve_objects_and_one_back_out():
    from step_planner.execution.sim.executor import SimExecutor

    library = PrimitiveLibrary.load(ROOT / "config" / "primitives.yaml")
    ex = SimExecutor(library, load_scene(ROOT / "config" / "scenes" / "cluttered_desk.yaml"), seed=2)
    assert len(ex.observe().objects) == 12
    blocks = ("red_block", "blue_block", "green_block", "yellow_block")
    for block in blocks:
        for text in (f"pick({block})", f"place({block}, block_bin)"):
            out = ex.execute(library.parse_call_text(text))
            assert out.code is ExecCode.SUCCESS, f"{text}: {out.message}"
    seen = ex.observe()
    assert all(seen.objects[b].location == "block_bin" for b in blocks)
    assert all(seen.objects[o].location == "table" for o in seen.objects if o not in blocks)  # nothing knocked off
    for text in ("pick(blue_block)", "place(blue_block, table)"):  # the full bin still gives one back
        out = ex.execute(library.parse_call_text(text))
        assert out.code is ExecCode.SUCCESS, f"{text}: {out.message}"
