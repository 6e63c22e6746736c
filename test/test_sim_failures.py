"""Failures come back as the right error codes, from the physics, and never as exceptions."""

import threading
from pathlib import Path

import numpy as np
import pytest

from step_planner.domain.primitives import PrimitiveLibrary
from step_planner.domain.scene import load_scene
from step_planner.execution.base import ExecCode

pytestmark = pytest.mark.sim
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def library():
    return PrimitiveLibrary.load(ROOT / "config" / "primitives.yaml")


def scene():
    return load_scene(ROOT / "config" / "scenes" / "drawer_desk.yaml")


def executor(library, world=None, seed=1):
    from step_planner.execution.sim.executor import SimExecutor

    return SimExecutor(library, world or scene(), seed=seed)


def call(library, text):
    return library.parse_call_text(text)


def teleport(ex, name, position):
    obj = ex.info.objects[name]
    ex.data.qpos[obj.qpos_adr : obj.qpos_adr + 3] = position
    ex.data.qvel[obj.dof_adr : obj.dof_adr + 6] = 0.0


def test_object_out_of_reach_gives_no_ik_or_plan_failed(library):
    world = scene()
    world.objects["tape"].geometry["position"] = [1.05, 0.05, 0.015]  # table edge, > 1 m from the base
    ex = executor(library, world)
    out = ex.execute(call(library, "pick(tape)"))
    assert out.code in (ExecCode.NO_IK, ExecCode.PLAN_FAILED), out.message
    assert ex.observe().objects["tape"].location == "table"


def test_object_removed_from_under_the_gripper_gives_grasp_failed(library):
    ex = executor(library)
    tape = ex.info.objects["tape"]
    removed = []

    def snatch(data):
        hand, obj = data.xpos[ex.index.grasp_body], data.xpos[tape.body_id]
        if not removed and np.linalg.norm(hand[:2] - obj[:2]) < 0.01 and hand[2] < obj[2] + 0.06:
            teleport(ex, "tape", [0.3, -0.25, 0.016])
            removed.append(data.time)

    ex.step_hooks.append(snatch)
    out = ex.execute(call(library, "pick(tape)"))
    assert removed, "the hook never fired"
    assert out.code is ExecCode.GRASP_FAILED, out.message
    seen = ex.observe()
    assert seen.held is None and seen.objects["tape"].location == "table"


def test_too_big_object_gives_grasp_failed(library):
    world = scene()
    world.objects["red_block"].geometry.update(size=[0.1, 0.1, 0.04])
    ex = executor(library, world)
    out = ex.execute(call(library, "pick(red_block)"))
    assert out.code is ExecCode.GRASP_FAILED and "wide" in out.message


def test_object_lost_in_transport_gives_object_slipped(library):
    ex = executor(library)
    assert ex.execute(call(library, "pick(tape)")).success
    start = ex.data.time
    dropped = []

    def drop(data):
        if not dropped and data.time > start + 0.4:
            teleport(ex, "tape", [0.3, -0.25, 0.016])
            dropped.append(data.time)

    ex.step_hooks.append(drop)
    out = ex.execute(call(library, "place(tape, tray)"))
    assert out.code is ExecCode.OBJECT_SLIPPED, out.message
    assert ex.observe().held is None


def test_cancel_during_motion_stops_within_a_few_steps(library):
    ex = executor(library)
    cancel = threading.Event()
    start = ex.data.time

    def press_stop(data):
        if data.time > start + 0.8 and not cancel.is_set():
            cancel.set()

    ex.step_hooks.append(press_stop)
    out = ex.execute(call(library, "pick(tape)"), cancel)
    assert out.code is ExecCode.CANCELED, out.message
    assert out.details["stop_sim_s"] < 0.3  # still within 0.02 rad/s
    assert np.max(np.abs(ex.data.qvel[ex.index.arm_dof])) < 0.05
    assert ex.data.time - start < 0.8 + 0.35


def test_cancel_from_another_thread(library):
    ex = executor(library)
    cancel = threading.Event()
    timer = threading.Timer(0.05, cancel.set)
    timer.start()
    out = ex.execute(call(library, "open_drawer(drawer)"), cancel)
    timer.join()
    assert out.code is ExecCode.CANCELED, out.message
    assert ex.execute(call(library, "home()"), cancel).code is ExecCode.CANCELED  # already set: no motion


def test_exception_inside_the_backend_becomes_backend_error(library):
    ex = executor(library)

    def broken(data):
        raise RuntimeError("sensor driver crashed")

    ex.step_hooks.append(broken)
    out = ex.execute(call(library, "home()"))
    assert out.code is ExecCode.BACKEND_ERROR
    assert "sensor driver crashed" in out.message


def test_a_scene_that_cannot_be_built_is_refused_with_a_clear_error(library):
    from step_planner.domain.scene import SceneError

    world = scene()
    world.objects["tape"].location = "gripper"
    with pytest.raises(SceneError, match="object 'tape'"):
        executor(library, world)
    world = scene()
    world.places["drawer"].geometry.pop("inner_size")
    with pytest.raises(SceneError, match=r"place 'drawer': geometry\.inner_size"):
        executor(library, world)
    world = scene()
    world.objects["cup"].geometry["shape"] = "sphere"
    with pytest.raises(SceneError, match="cylinder"):
        executor(library, world)
