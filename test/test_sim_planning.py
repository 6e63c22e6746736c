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


def test_a_start_a_hair_past_a_joint_limit_still_plans_and_a_far_one_is_refused():
    from step_planner.execution.sim.executor import SimExecutor
    from step_planner.execution.sim.model import HOME_Q
    from step_planner.execution.sim.planning import PlanningError, plan_rrt_connect

    library = PrimitiveLibrary.load(ROOT / "config" / "primitives.yaml")
    ex = SimExecutor(library, load_scene(ROOT / "config" / "scenes" / "drawer_desk.yaml"), seed=1)
    ex.checker.sync(ex.data)
    idx = ex.checker.index
    start = np.array(HOME_Q, dtype=float)
    start[6] = idx.upper[6] + 0.005  # servo settling past the wrist limit
    path, _ = plan_rrt_connect(ex.checker, start, np.array(HOME_Q, dtype=float), seed=1)
    assert np.all(path >= idx.lower - 1e-9) and np.all(path <= idx.upper + 1e-9)
    start[6] = idx.upper[6] + 0.2
    with pytest.raises(PlanningError, match="beyond joint limits"):
        plan_rrt_connect(ex.checker, start, np.array(HOME_Q, dtype=float), seed=1)
