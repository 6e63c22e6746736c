"""Pure geometry and error mapping of the MoveIt backend (no ROS, no moveit)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from step_planner.execution.base import ExecCode
from step_planner.execution.moveit import errors
from step_planner.execution.moveit import tool_poses as g
from step_planner.execution.moveit.config import FrankaConfig
from step_planner.execution.moveit.scene_model import SURFACE_GAP, world_bodies


@pytest.fixture
def drawer_world():
    """The frozen scene these tests' hand-computed poses refer to (see test/data/drawer_desk_moveit.yaml)."""
    from step_planner.domain.scene import load_scene

    return load_scene(Path(__file__).resolve().parent / "data" / "drawer_desk_moveit.yaml")


CFG = FrankaConfig.load(Path(__file__).resolve().parents[1] / "config" / "franka.yaml")


def close(a, b, tol=1e-9):
    return all(abs(x - y) <= tol for x, y in zip(a, b, strict=True))


def finger_axis(q):
    """The hand's y axis (the fingers' closing direction) in the base frame."""
    x, y, z, w = q
    return (2 * (x * y - w * z), 1 - 2 * (x * x + z * z), 2 * (y * z + w * x))


def test_top_down_points_the_gripper_down_and_yaw_turns_the_fingers():
    for yaw in (0.0, 0.3, math.pi / 2, -2.0):
        q = g.top_down(yaw)
        assert close(g.z_axis(q), (0.0, 0.0, -1.0))
        assert close(finger_axis(q), (math.sin(yaw), -math.cos(yaw), 0.0))
    for axis in ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (-0.6, 0.8, 0.0)):
        fa = finger_axis(g.top_down(g.yaw_closing_along(axis)))
        assert abs(abs(fa[0] * axis[0] + fa[1] * axis[1]) - 1.0) < 1e-9  # parallel


def test_flange_sits_tcp_offset_above_a_downward_tcp():
    tcp = g.Pose((0.4, 0.1, 0.02), g.top_down(0.7))
    assert close(g.flange_pose(tcp, 0.1034).position, (0.4, 0.1, 0.1234))


def test_object_shapes_from_scene_geometry(drawer_world):
    tape = g.object_shape("tape", drawer_world.objects["tape"].geometry)
    assert tape.kind == "cylinder" and close(tape.extents, (0.07, 0.07, 0.025))
    assert tape.top == pytest.approx(0.025) and tape.bottom == pytest.approx(0.0)
    with pytest.raises(g.GeometryError, match="no geometry.position/size") as err:
        g.object_shape("ghost", {})
    assert err.value.code is ExecCode.BACKEND_ERROR
    with pytest.raises(g.GeometryError, match="knows box and cylinder"):
        g.object_shape("ball", {"shape": "sphere", "size": [0.02], "position": [0, 0, 0]})
    with pytest.raises(g.GeometryError, match="list of 3 numbers"):
        g.object_shape("box", {"shape": "box", "size": [0.02, 0.02], "position": [0, 0, 0]})


def test_top_grasp_closes_across_the_narrow_side(drawer_world):
    sd = g.object_shape("screwdriver", drawer_world.objects["screwdriver"].geometry)  # long along x
    grasp = g.top_grasp(sd, CFG.grasp)
    assert grasp.width == pytest.approx(0.022)
    assert close(finger_axis(grasp.grasp.orientation), (0.0, -1.0, 0.0))  # fingers close along y
    assert grasp.grasp.position[2] == pytest.approx(max(0.022 - 0.011, CFG.grasp.min_tcp_height))
    assert grasp.pre.position[2] == pytest.approx(grasp.grasp.position[2] + CFG.grasp.pre_grasp_height)
    assert grasp.lift.position[2] == pytest.approx(grasp.grasp.position[2] + CFG.grasp.lift_height)
    turned = g.Shape("box", (0.3, 0.0, 0.05), (0.03, 0.1, 0.1))  # narrow along x
    fa = finger_axis(g.top_grasp(turned, CFG.grasp).grasp.orientation)
    assert abs(abs(fa[0]) - 1.0) < 1e-9


def test_too_wide_object_is_a_grasp_failure_before_any_motion():
    wide = g.Shape("box", (0.4, 0.0, 0.05), (0.12, 0.09, 0.1))
    with pytest.raises(g.GeometryError, match="gripper opens 0.075 m") as err:
        g.top_grasp(wide, CFG.grasp)
    assert err.value.code is ExecCode.GRASP_FAILED


def test_place_puts_the_object_bottom_just_above_the_support(drawer_world):
    cup = g.object_shape("cup", drawer_world.objects["cup"].geometry)
    grasp = g.top_grasp(cup, CFG.grasp)
    tray = drawer_world.places["tray"]
    support = g.support_of("tray", "tray", tray.geometry, CFG.drawer, True)
    assert support.center == pytest.approx((0.45, 0.3, CFG.drawer.wall))
    spot = g.free_spot(support, 0.06, [], CFG.grasp.place_spacing)
    placement = g.place_at(spot, grasp, cup.extents, CFG.grasp)
    bottom = placement.release.position[2] - grasp.tcp_above_bottom
    assert bottom == pytest.approx(support.center[2] + CFG.grasp.place_clearance)
    assert placement.object_center == pytest.approx((0.45, 0.3, CFG.drawer.wall + 0.04))
    assert placement.pre.position[2] > placement.release.position[2] < placement.retreat.position[2]


def test_free_spot_avoids_objects_and_stays_on_the_support():
    support = g.Support((0.5, 0.0, 0.0), 0.1, 0.1)
    first = g.free_spot(support, 0.04, [], 0.05)
    assert first == (0.5, 0.0, 0.0)
    second = g.free_spot(support, 0.04, [(0.5, 0.0, 0.03)], 0.05)
    assert math.hypot(second[0] - 0.5, second[1]) >= 0.05
    assert abs(second[0] - 0.5) + 0.02 <= 0.1 and abs(second[1]) + 0.02 <= 0.1
    with pytest.raises(g.GeometryError, match="no free spot") as err:
        g.free_spot(g.Support((0, 0, 0), 0.03, 0.03), 0.05, [(0.0, 0.0, 0.02)], 0.05)
    assert err.value.code is ExecCode.PLAN_FAILED


def test_closed_drawer_cannot_be_a_place(drawer_world):
    d = drawer_world.places["drawer"]
    with pytest.raises(g.GeometryError, match="closed") as err:
        g.support_of("drawer", "drawer", d.geometry, CFG.drawer, False)
    assert err.value.code is ExecCode.PRECONDITION_FAILED


@pytest.mark.parametrize("direction", ["forward", "backward", "left", "right"])
def test_push_starts_behind_the_object_and_moves_it_by_the_distance(drawer_world, direction):
    block = g.object_shape("red_block", drawer_world.objects["red_block"].geometry)
    p = g.push_poses(block, direction, CFG.push, CFG.grasp)
    d = g.DIRECTIONS[direction]
    start, end = p.start.position, p.end.position
    assert close((end[0] - start[0], end[1] - start[1], end[2] - start[2]),
                 (d[0] * CFG.push.distance, d[1] * CFG.push.distance, 0.0))
    behind = (block.center[0] - start[0]) * d[0] + (block.center[1] - start[1]) * d[1]
    assert behind > 0.02  # the start is on the far side from the push direction, clear of the block
    assert p.new_center == pytest.approx(tuple(c + v * CFG.push.distance for c, v in zip(block.center, d, strict=True)))
    assert p.pre.position[2] > start[2] and p.retreat.position[2] > end[2]
    with pytest.raises(g.GeometryError, match="push direction"):
        g.push_poses(block, "up", CFG.push, CFG.grasp)


def test_drawer_handle_pull_and_push_along_the_pull_direction(drawer_world):
    geom = drawer_world.places["drawer"].geometry
    d = g.drawer_model("drawer", geom, CFG.drawer)
    assert d.pull == (-1.0, 0.0, 0.0)
    expected_x = 0.62 - (0.22 / 2 + CFG.drawer.wall + CFG.drawer.handle_depth)
    assert d.handle(False) == pytest.approx((expected_x, -0.32, CFG.drawer.wall + 0.04))
    assert d.handle(True) == pytest.approx((expected_x - 0.18, -0.32, CFG.drawer.wall + 0.04))
    op = g.open_drawer_poses(d, CFG.drawer, CFG.grasp)
    assert op.start.position == pytest.approx(d.handle(False))
    assert op.end.position == pytest.approx(d.handle(True))
    cl = g.close_drawer_poses(d, CFG.drawer, CFG.grasp)
    assert cl.start.position[0] < d.handle(True)[0]  # outside the open handle
    assert cl.end.position[0] - cl.start.position[0] == pytest.approx(0.18)
    for motion in (op, cl):  # from the front: hand horizontal into the drawer, fingers closing across the bar
        q = motion.start.orientation
        assert close(g.z_axis(q), (1.0, 0.0, 0.0)) and close(finger_axis(q), (0.0, 1.0, 0.0))
        assert all(p.orientation == q for p in (motion.pre, motion.end, motion.retreat))
        # approach and retreat are horizontal, in front of the handle (never from above: a drawer
        # stacked over this one may be open)
        for a, b in ((motion.pre, motion.start), (motion.retreat, motion.end)):
            assert a.position[2] == pytest.approx(b.position[2])
            assert b.position[0] - a.position[0] == pytest.approx(CFG.drawer.approach_distance)
    custom = g.drawer_model("drawer", {**geom, "pull_direction": [0, 2, 0], "handle_position": [0.6, -0.1, 0.05]},
                            CFG.drawer)
    assert custom.pull == (0.0, 1.0, 0.0) and custom.handle(True) == pytest.approx((0.6, 0.08, 0.05))
    turned = g.front_facing(custom.pull)  # a drawer opening along +y: the hand points along -y
    assert close(g.z_axis(turned), (0.0, -1.0, 0.0)) and close(finger_axis(turned), (1.0, 0.0, 0.0))


def test_drawer_geometry_errors_name_the_key(drawer_world):
    geom = dict(drawer_world.places["drawer"].geometry)
    geom.pop("slide")
    with pytest.raises(g.GeometryError, match="geometry.slide"):
        g.drawer_model("drawer", geom, CFG.drawer)
    with pytest.raises(g.GeometryError, match="horizontally"):
        g.drawer_model("drawer", {**drawer_world.places["drawer"].geometry, "pull_direction": [0, 0, 1]},
                       CFG.drawer)


def test_collision_bodies_cover_the_scene(drawer_world):
    bodies = {b.id: b for b in world_bodies(drawer_world, CFG.drawer)}
    assert set(bodies) == {"table", "drawer", "tray", "tape", "screwdriver", "red_block", "cup"}
    table = bodies["table"].primitives[0]
    assert table.center[2] + table.dimensions[2] / 2 == pytest.approx(-SURFACE_GAP)
    assert len(bodies["drawer"].primitives) == 5 and len(bodies["tray"].primitives) == 5
    tape = bodies["tape"].primitives[0]
    assert tape.kind == "cylinder" and tape.dimensions == pytest.approx((0.025, 0.035))  # (height, radius)
    drawer_world.places["drawer"].is_open = True
    opened = {b.id: b for b in world_bodies(drawer_world, CFG.drawer)}["drawer"]
    assert opened.primitives[0].center[0] == pytest.approx(bodies["drawer"].primitives[0].center[0] - 0.18)
    drawer_world.objects["tape"].location = "gripper"
    assert "tape" not in {b.id for b in world_bodies(drawer_world, CFG.drawer)}
    drawer_world.objects["cup"].geometry = {}
    with pytest.raises(g.GeometryError, match="'cup' has no geometry"):
        world_bodies(drawer_world, CFG.drawer)


@pytest.mark.parametrize(
    ("val", "code"),
    [
        (errors.SUCCESS, ExecCode.SUCCESS),
        (errors.NO_IK_SOLUTION, ExecCode.NO_IK),
        (errors.PLANNING_FAILED, ExecCode.PLAN_FAILED),
        (errors.GOAL_IN_COLLISION, ExecCode.PLAN_FAILED),
        (errors.INVALID_MOTION_PLAN, ExecCode.PLAN_FAILED),
        (errors.START_STATE_IN_COLLISION, ExecCode.COLLISION),
        (errors.TIMED_OUT, ExecCode.TIMEOUT),
        (errors.PREEMPTED, ExecCode.CANCELED),
        (errors.INVALID_GROUP_NAME, ExecCode.BACKEND_ERROR),
        (errors.CONTROL_FAILED, ExecCode.BACKEND_ERROR),
        (12345, ExecCode.BACKEND_ERROR),
    ],
)
def test_moveit_error_codes_map_to_outcomes(val, code):
    assert errors.plan_code(val) is code


def test_error_names_and_execution_status():
    assert errors.code_name(-31) == "NO_IK_SOLUTION" and errors.code_name(7) == "UNKNOWN_CODE_7"

    class Status:
        def __init__(self, s):
            self.status = s

    assert errors.execution_code(Status("SUCCEEDED")) == (ExecCode.SUCCESS, "SUCCEEDED")
    assert errors.execution_code(Status("PREEMPTED"))[0] is ExecCode.CANCELED
    assert errors.execution_code(Status("TIMED_OUT"))[0] is ExecCode.TIMEOUT
    assert errors.execution_code(Status("ABORTED"))[0] is ExecCode.BACKEND_ERROR
    assert errors.execution_code(True)[0] is ExecCode.SUCCESS  # pre-Jazzy execute() returned bool
    assert errors.execution_code(False)[0] is ExecCode.BACKEND_ERROR
    assert errors.execution_code(None)[0] is ExecCode.BACKEND_ERROR
