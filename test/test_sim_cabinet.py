"""Cabinets: stacked drawers the hand can serve from the front, and scenes that cannot work refused."""

from pathlib import Path

import numpy as np
import pytest

from step_planner.domain.scene import load_scene, scene_from_dict

pytestmark = pytest.mark.sim
ROOT = Path(__file__).resolve().parents[1]


def test_front_rotation_points_the_hand_horizontally_with_fingers_closing_across():
    from step_planner.execution.sim.ik import front_rotation

    for yaw in (0.0, 0.3, -0.45):
        for sign in (1.0, -1.0):
            rot = front_rotation(yaw, sign)
            assert np.allclose(rot.T @ rot, np.eye(3)) and np.isclose(np.linalg.det(rot), 1.0)
            assert np.allclose(rot[:, 2], [np.cos(yaw), np.sin(yaw), 0.0])  # approach: into the cabinet
            assert abs(rot[2, 1]) < 1e-12 and abs(rot[:, 1] @ rot[:, 2]) < 1e-12  # fingers close horizontally


@pytest.mark.parametrize("scene", ["two_drawers", "supply_cabinet", "workshop_drawers"])
def test_a_hand_fits_under_the_open_drawer_above_and_the_lower_drawer_keeps_a_reachable_front(scene):
    import mujoco

    from step_planner.domain.cabinets import HAND_ACROSS, MIN_STRIP
    from step_planner.execution.sim.scene_builder import build_scene

    world = load_scene(ROOT / "config" / "scenes" / f"{scene}.yaml")
    model, info = build_scene(world)
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    stacked = [d for d in info.drawers.values() if d.above is not None]
    assert stacked
    for lower in stacked:
        upper = info.drawers[lower.above]
        handle = data.site_xpos[lower.handle_site]
        upper_floor = min(data.geom_xpos[g][2] - model.geom_size[g][2] for g in upper.geom_ids)
        assert handle[2] - 0.05 >= 0.0 + 0.006  # hand and wrist (+-5 cm) clear the table
        assert handle[2] + 0.05 + 0.006 <= upper_floor  # ... and the drawer above
        assert lower.slide > upper.slide + 0.15  # the lower drawer comes out further
        assert lower.reach_x - HAND_ACROSS - lower.interior_front(lower.open_position) >= MIN_STRIP


def test_a_stack_whose_lower_drawer_cannot_be_reached_is_refused():
    from step_planner.execution.sim.scene_builder import SceneGeometryError, build_scene

    geo = {"cabinet_position": [0.8, -0.38, 0.0], "inner_size": [0.3, 0.3, 0.04]}
    world = scene_from_dict({"places": [
        {"name": "table", "kind": "surface"},
        {"name": "upper", "kind": "drawer", "open": False, "geometry": {**geo, "slide": 0.2, "level": 1}},
        {"name": "lower", "kind": "drawer", "open": False, "geometry": {**geo, "slide": 0.2, "level": 0}},
    ]})
    with pytest.raises(SceneGeometryError, match=r"place 'lower'.*slide at least"):
        build_scene(world)



def test_a_tray_in_a_drawers_way_is_refused():
    from step_planner.execution.sim.scene_builder import SceneGeometryError, build_scene

    world = scene_from_dict({"places": [
        {"name": "table", "kind": "surface"},
        {"name": "drawer", "kind": "drawer", "open": False, "geometry": {
            "cabinet_position": [0.74, -0.38, 0.0], "inner_size": [0.26, 0.3, 0.04], "slide": 0.22}},
        {"name": "tray", "kind": "tray", "geometry": {"position": [0.45, -0.3, 0.0], "size": [0.2, 0.16, 0.03]}},
    ]})
    with pytest.raises(SceneGeometryError, match="place 'tray': it stands where drawer"):
        build_scene(world)


@pytest.mark.slow
def test_an_object_too_tall_for_a_drawer_is_refused_before_it_goes_in():
    from step_planner.domain.primitives import PrimitiveLibrary
    from step_planner.execution.base import ExecCode
    from step_planner.execution.sim.executor import SimExecutor

    library = PrimitiveLibrary.load(ROOT / "config" / "primitives.yaml")
    ex = SimExecutor(library, load_scene(ROOT / "config" / "scenes" / "drawer_desk.yaml"), seed=1)
    for text in ("open_drawer(drawer)", "pick(cup)"):
        assert ex.execute(library.parse_call_text(text)).code is ExecCode.SUCCESS, text
    q = ex.controller.q
    out = ex.execute(library.parse_call_text("place(cup, drawer)"))  # an 8 cm cup, 5 cm of headroom
    assert out.code is ExecCode.PLAN_FAILED and "would not close" in out.message
    assert np.max(np.abs(ex.controller.q - q)) < 0.01 and ex.observe().held == "cup"  # nothing moved
