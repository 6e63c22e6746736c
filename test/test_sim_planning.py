"""Collision-free planning: the arm carries the tape over a wall without touching it."""

from pathlib import Path

import numpy as np
import pytest

from step_planner.domain.primitives import PrimitiveLibrary
from step_planner.domain.scene import load_scene
from step_planner.domain.world import ObjectState

pytestmark = pytest.mark.sim
ROOT = Path(__file__).resolve().parents[1]


def test_transport_over_a_wall_never_touches_it():
    from step_planner.execution.sim.executor import SimExecutor

    library = PrimitiveLibrary.load(ROOT / "config" / "primitives.yaml")
    world = load_scene(ROOT / "config" / "scenes" / "drawer_desk.yaml")
    del world.objects["cup"], world.objects["red_block"]
    world.objects["tape"].geometry["position"] = [0.45, 0.0, 0.015]
    world.objects["wall"] = ObjectState(
        "wall",
        "wall",
        "table",
        graspable=False,
        pushable=False,
        geometry={"shape": "box", "size": [0.24, 0.02, 0.2], "position": [0.48, 0.17, 0.1], "mass": 5.0},
    )
    ex = SimExecutor(library, world, seed=1)
    wall = ex.info.objects["wall"].body_id
    start = ex.data.xpos[wall].copy()
    touches = []

    def watch(data):
        for c in data.contact[: data.ncon]:
            bodies = {ex.model.geom_bodyid[c.geom1], ex.model.geom_bodyid[c.geom2]}
            if wall in bodies and (bodies & (ex.index.arm_bodies | {ex.info.objects["tape"].body_id})):
                touches.append(data.time)

    ex.step_hooks.append(watch)
    assert ex.execute(library.parse_call_text("pick(tape)")).success
    out = ex.execute(library.parse_call_text("place(tape, tray)"))
    assert out.success, out.message
    assert ex.observe().objects["tape"].location == "tray"
    assert not touches
    assert np.linalg.norm(ex.data.xpos[wall] - start) < 0.002
