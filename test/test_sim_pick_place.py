"""Pick and place in the physics simulation; the symbolic state is read back from the physics."""

from pathlib import Path

import pytest

from step_planner.domain.primitives import PrimitiveLibrary
from step_planner.domain.scene import load_scene
from step_planner.execution.base import ExecCode

pytestmark = pytest.mark.sim
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def library():
    return PrimitiveLibrary.load(ROOT / "config" / "primitives.yaml")


def make_executor(library, seed=1):
    from step_planner.execution.sim.executor import SimExecutor

    world = load_scene(ROOT / "config" / "scenes" / "drawer_desk.yaml")
    return SimExecutor(library, world, seed=seed)


def run(executor, library, text):
    return executor.execute(library.parse_call_text(text))


def test_pick_tape_then_place_in_tray(library):
    ex = make_executor(library)
    assert ex.observe().objects["tape"].location == "table"
    out = run(ex, library, "pick(tape)")
    assert out.code is ExecCode.SUCCESS, out.message
    seen = ex.observe()
    assert seen.held == "tape" and seen.objects["tape"].location == "gripper"
    assert seen.objects["tape"].geometry["position"][2] > 0.1  # really lifted
    out = run(ex, library, "place(tape, tray)")
    assert out.code is ExecCode.SUCCESS, out.message
    seen = ex.observe()
    assert seen.held is None and seen.objects["tape"].location == "tray"
    assert out.details["planning_s"] >= 0 and out.details["sim_s"] > 1.0


def test_place_on_table_moves_the_object_and_releases_it(library):
    ex = make_executor(library, seed=2)
    before = ex.observe().objects["screwdriver"].geometry["position"]
    assert run(ex, library, "pick(screwdriver)").success
    out = run(ex, library, "place(screwdriver, table)")
    assert out.code is ExecCode.SUCCESS, out.message
    after = ex.observe()
    assert after.objects["screwdriver"].location == "table" and after.held is None
    assert after.objects["screwdriver"].geometry["position"] != before


def test_preconditions_are_checked_before_any_motion(library):
    ex = make_executor(library)
    t0 = ex.data.time
    out = run(ex, library, "place(tape, tray)")
    assert out.code is ExecCode.PRECONDITION_FAILED
    assert "holding" in out.message
    assert ex.data.time == t0  # the arm never moved
    out = run(ex, library, "close_drawer(drawer)")
    assert out.code is ExecCode.PRECONDITION_FAILED


def test_push_and_move_to_and_home(library):
    ex = make_executor(library, seed=3)
    x0 = ex.observe().objects["tape"].geometry["position"][0]
    out = run(ex, library, "push(tape, forward)")
    assert out.code is ExecCode.SUCCESS, out.message
    assert ex.observe().objects["tape"].geometry["position"][0] > x0 + 0.03
    assert run(ex, library, "move_to(tray)").success
    assert ex.observe().robot_at == "tray"
    assert run(ex, library, "home()").success
    assert ex.observe().robot_at == "home"


def test_held_means_between_the_fingers_and_lifted(library):
    from step_planner.execution.sim import perception

    ex = make_executor(library, seed=4)
    tape = ex.info.objects["tape"]
    seen_while_gripped_on_table = set()
    table_geom = ex.model.geom("table_top").id

    def watch(data):
        gripped = len(perception.finger_contacts(ex.model, data, ex.index, tape.body_id)) == 2
        on_table = any(
            {c.geom1, c.geom2} == {table_geom, ex.model.geom("tape_geom").id} for c in data.contact[: data.ncon]
        )
        if gripped and on_table:  # closed on it, not lifted yet
            seen_while_gripped_on_table.add(ex.observe().objects["tape"].location)

    ex.step_hooks.append(watch)
    assert run(ex, library, "pick(tape)").success
    assert seen_while_gripped_on_table == {"table"}
    assert ex.observe().objects["tape"].location == "gripper"


def test_observe_from_another_thread_while_executing(library):
    import threading
    import time

    ex = make_executor(library, seed=5)
    result = {}
    worker = threading.Thread(target=lambda: result.setdefault("out", run(ex, library, "pick(tape)")))
    worker.start()
    seen = set()
    while worker.is_alive():  # at 200 Hz, far above a joint-state rate; a busy loop would starve the physics
        seen.add(ex.observe().objects["tape"].location)
        time.sleep(0.005)
    worker.join()
    assert result["out"].success
    assert seen <= {"table", "gripper"} and "table" in seen


def test_both_fingers_close_symmetrically_on_a_cube(library):
    ex = make_executor(library, seed=6)
    assert run(ex, library, "pick(red_block)").success
    left, right = ex.data.qpos[ex.index.finger_qpos]
    assert abs(left - right) < 0.001  # the stiff coupling: no finger sits further in than the other
    assert abs(left + right - 0.04) < 0.003  # a 4 cm cube between them
    block = ex.data.xpos[ex.info.objects["red_block"].body_id]
    hand = ex.data.xpos[ex.index.grasp_body]
    assert abs((ex.data.xmat[ex.index.grasp_body].reshape(3, 3).T @ (block - hand))[1]) < 0.003  # centred
