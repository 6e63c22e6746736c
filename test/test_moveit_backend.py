"""The MoveIt backend against the recording moveit_py stand-in in ``test/moveit_standin``.

moveit_py cannot run here; the stand-in enforces the bindings' signatures (see its docstring for
the sources) and records every call, so these tests check what the backend *asks MoveIt to do*:
the plan requests (groups, links, frames, poses, pipelines), executions, gripper commands and
collision-object edits, and how MoveIt failures and cancellation become outcomes.
"""

from __future__ import annotations

import copy
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from step_planner.domain.primitives import PrimitiveCall
from step_planner.execution.base import ExecCode, Executor
from step_planner.execution.errors import BackendUnavailable
from step_planner.execution.moveit import make_moveit_executor
from step_planner.execution.moveit import tool_poses as g
from step_planner.execution.moveit.config import FrankaConfig


@pytest.fixture
def drawer_world():
    """The frozen scene these tests' hand-computed poses refer to (see test/data/drawer_desk_moveit.yaml)."""
    from step_planner.domain.scene import load_scene

    return load_scene(Path(__file__).resolve().parent / "data" / "drawer_desk_moveit.yaml")


ROOT = Path(__file__).resolve().parents[1]
STANDIN = Path(__file__).resolve().parent / "moveit_standin"
STANDIN_PACKAGES = ("moveit", "moveit_msgs", "shape_msgs", "_msg")  # control_msgs: the real build (test/interfaces)
RAW = yaml.safe_load((ROOT / "config" / "franka.yaml").read_text())
CFG = FrankaConfig.from_dict(RAW)
NO_IK, PLANNING_FAILED = -31, -1


def _purge() -> None:
    for name in list(sys.modules):
        if name.split(".")[0] in STANDIN_PACKAGES:
            del sys.modules[name]


@pytest.fixture
def st(monkeypatch):
    """The stand-in on sys.path for this test only; yields its control/log module."""
    _purge()
    monkeypatch.syspath_prepend(str(STANDIN))
    import moveit._standin as standin

    standin.reset()
    yield standin
    _purge()


@pytest.fixture
def ex(st, library, drawer_world):
    executor = make_moveit_executor(library, drawer_world)
    st.LOG.calls.clear()
    return executor


def call(text: str, library) -> PrimitiveCall:
    parsed = library.parse_call_text(text)
    assert parsed is not None
    return parsed


def arm_plans(st) -> list[dict]:
    return [p for p in st.LOG.of("plan") if p["group"] == "panda_arm"]


def hand_goals(st) -> list[str]:
    return [p["goal"]["configuration_name"] for p in st.LOG.of("plan") if p["group"] == "hand"]


def flange(tcp: g.Pose) -> tuple:
    return g.flange_pose(tcp, CFG.tcp_offset).position


def readded_after_last_motion(st, body_id: str) -> bool:
    """The body went back into the collision scene only after the last trajectory (the retreat)."""
    calls = st.LOG.calls
    last_execute = max(i for i, (n, _) in enumerate(calls) if n == "execute")
    adds = [i for i, (n, c) in enumerate(calls)
            if n == "apply_collision_object" and c["id"] == body_id and c["operation"] == b"\x00"]
    return bool(adds) and adds[-1] > last_execute


def world_ids(ex) -> set[str]:
    return set(ex.arm.robot._robot.world)


# ---- construction ----------------------------------------------------------------------------------
def test_without_moveit_the_package_imports_and_the_backend_says_what_to_install():
    code = (
        "import sys\n"
        "from step_planner.domain.primitives import PrimitiveLibrary\n"
        "from step_planner.domain.scene import load_scene\n"
        "import step_planner.execution.moveit as m\n"
        "from step_planner.execution.errors import BackendUnavailable\n"
        "from step_planner.execution.factory import make_executor\n"
        "assert 'moveit' not in sys.modules\n"
        "lib = PrimitiveLibrary.load('config/primitives.yaml')\n"
        "world = load_scene('test/data/drawer_desk_moveit.yaml')\n"
        "try:\n"
        "    make_executor('moveit', lib, world)\n"
        "except BackendUnavailable as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "cannot import moveit.planning" in text
    assert "ros-jazzy-moveit-py" in text and "ros-jazzy-moveit-resources-panda-moveit-config" in text
    assert "franka_fr3_moveit_config" in text and "ros2 launch" in text


def test_construction_connects_the_configured_groups_and_builds_the_collision_scene(st, library, drawer_world):
    executor = make_moveit_executor(library, drawer_world)
    assert isinstance(executor, Executor)
    assert [c["group"] for c in st.LOG.of("get_planning_component")] == ["panda_arm", "hand"]
    assert [c["ns"] for c in st.LOG.of("PlanRequestParameters")] == ["ompl_rrtc", "pilz_lin"]
    added = {c["id"] for c in st.LOG.of("apply_collision_object") if c["operation"] == b"\x00"}
    assert added == {"table", "drawer", "tray", "tape", "screwdriver", "red_block", "cup"}
    assert all(c["frame"] == "panda_link0" for c in st.LOG.of("apply_collision_object"))
    assert "remove_all_collision_objects" in st.LOG.names()
    assert executor.observe().describe() == drawer_world.observed().describe()
    assert st.LOG.of("execute") == []  # building the backend never moves the arm


def test_fr3_variant_uses_fr3_names(st, library, drawer_world, tmp_path):
    data = copy.deepcopy(RAW)
    data["robot"] = "fr3"
    path = tmp_path / "franka.yaml"
    path.write_text(yaml.safe_dump(data))
    executor = make_moveit_executor(library, drawer_world, config_path=path)
    assert executor.execute(call("pick(tape)", library)).success
    assert {p["group"] for p in st.LOG.of("plan")} == {"fr3_arm", "fr3_hand"}
    assert {p["goal"]["link"] for p in st.LOG.of("plan") if "link" in p["goal"]} == {"fr3_hand"}
    assert {p["goal"]["frame"] for p in st.LOG.of("plan") if "frame" in p["goal"]} == {"fr3_link0"}
    assert st.LOG.of("attach")[0]["link"] == "fr3_hand"


def test_a_scene_without_geometry_is_refused_before_anything_moves(st, library, drawer_world):
    drawer_world.objects["cup"].geometry = {}
    with pytest.raises(Exception, match="'cup' has no geometry"):
        make_moveit_executor(library, drawer_world)
    assert st.LOG.of("execute") == []


# ---- primitives -------------------------------------------------------------------------------------
def test_pick_plans_opens_descends_closes_attaches_and_lifts(st, ex, library, drawer_world):
    outcome = ex.execute(call("pick(tape)", library))
    assert outcome.success, outcome.message
    shape = g.object_shape("tape", drawer_world.objects["tape"].geometry)
    grasp = g.top_grasp(shape, CFG.grasp)
    plans = arm_plans(st)
    assert [p["goal"]["pose"] for p in plans] == [pytest.approx(flange(p)) for p in (grasp.pre, grasp.grasp,
                                                                                      grasp.lift)]
    assert all(p["goal"]["link"] == "panda_hand" and p["goal"]["frame"] == "panda_link0" for p in plans)
    assert [(p["params"]["planning_pipeline"], p["params"]["planner_id"]) for p in plans] == [
        ("ompl", "RRTConnectkConfigDefault"), ("pilz_industrial_motion_planner", "LIN"),
        ("pilz_industrial_motion_planner", "LIN")]
    assert all(p["params"]["max_velocity_scaling_factor"] == CFG.velocity_scaling for p in st.LOG.of("plan"))
    assert all(p["start"] == "current" for p in st.LOG.of("plan"))  # every plan starts from the real state
    assert hand_goals(st) == ["open", "close"]
    assert len(st.LOG.of("execute")) == len(st.LOG.of("plan")) == 5
    names = st.LOG.names()
    removed = next(i for i, (n, c) in enumerate(st.LOG.calls)
                   if n == "apply_collision_object" and c["id"] == "tape" and c["operation"] == b"\x01")
    descend = [i for i, n in enumerate(names) if n == "plan"][2]
    attach = names.index("attach")
    assert removed < descend < attach  # tape leaves the world before the fingers go around it
    assert st.LOG.of("attach")[0] == {"id": "tape", "link": "panda_hand",
                                      "touch_links": ["panda_hand", "panda_leftfinger", "panda_rightfinger"]}
    assert "tape" in ex.arm.robot._robot.attached and "tape" not in world_ids(ex)
    assert ex.observe().held == "tape"


def test_place_into_the_open_drawer_lowers_releases_detaches_and_retreats(st, ex, library):
    for text in ("open_drawer(drawer)", "pick(tape)"):
        assert ex.execute(call(text, library)).success
    st.LOG.calls.clear()
    outcome = ex.execute(call("place(tape, drawer)", library))
    assert outcome.success, outcome.message
    d = g.drawer_model("drawer", ex.world.places["drawer"].geometry, CFG.drawer)
    floor = d.open_floor_center
    plans = arm_plans(st)
    assert len(plans) == 3 and plans[0]["params"]["planning_pipeline"] == "ompl"
    release = plans[1]["goal"]["pose"]
    assert release[:2] == pytest.approx(floor[:2])
    assert hand_goals(st) == ["open"]
    names = st.LOG.names()
    assert names.index("detach") > [i for i, n in enumerate(names) if n == "execute"][1]  # after lowering
    tape = ex.observe().objects["tape"]
    assert tape.location == "drawer" and tape.geometry["position"][2] == pytest.approx(floor[2] + 0.0125)
    assert "tape" in world_ids(ex) and not ex.arm.robot._robot.attached
    readded = [c for c in st.LOG.of("apply_collision_object") if c["id"] == "tape"][-1]
    assert readded["poses"][0] == pytest.approx(tuple(tape.geometry["position"]))
    assert readded_after_last_motion(st, "tape")


def test_open_and_close_drawer_pull_and_push_along_the_slide(st, ex, library):
    d = g.drawer_model("drawer", ex.world.places["drawer"].geometry, CFG.drawer)
    assert ex.execute(call("open_drawer(drawer)", library)).success
    plans = arm_plans(st)
    start, end = plans[1]["goal"]["pose"], plans[2]["goal"]["pose"]
    assert start == pytest.approx(flange(g.Pose(d.handle(False), g.front_facing(d.pull))))  # front handle grasp
    assert (end[0] - start[0], end[1] - start[1]) == pytest.approx((-0.18, 0.0))
    assert [p["params"]["planner_id"] for p in plans] == ["RRTConnectkConfigDefault", "LIN", "LIN", "LIN"]
    assert hand_goals(st) == ["open", "close", "open"]
    drawer_adds = [c for c in st.LOG.of("apply_collision_object") if c["id"] == "drawer"]
    assert drawer_adds[0]["operation"] == b"\x01" and drawer_adds[-1]["operation"] == b"\x00"
    assert drawer_adds[-1]["poses"][0][0] == pytest.approx(0.62 - 0.18)
    assert readded_after_last_motion(st, "drawer")
    assert ex.observe().places["drawer"].is_open
    # the screwdriver hidden in the drawer is revealed by opening it in the tracked world
    st.LOG.calls.clear()
    assert ex.execute(call("close_drawer(drawer)", library)).success
    plans = arm_plans(st)
    push_start, push_end = plans[1]["goal"]["pose"], plans[2]["goal"]["pose"]
    assert (push_end[0] - push_start[0]) == pytest.approx(0.18)
    assert hand_goals(st) == ["close"]
    assert not ex.observe().places["drawer"].is_open
    assert readded_after_last_motion(st, "drawer")


def test_push_moves_the_object_and_its_collision_body(st, ex, library, drawer_world):
    outcome = ex.execute(call("push(red_block, left)", library))
    assert outcome.success, outcome.message
    plans = arm_plans(st)
    start, end = plans[1]["goal"]["pose"], plans[2]["goal"]["pose"]
    assert (end[0] - start[0], end[1] - start[1], end[2] - start[2]) == pytest.approx((0.0, CFG.push.distance, 0.0))
    assert hand_goals(st) == ["close"]
    before = drawer_world.objects["red_block"].geometry["position"]
    after = ex.observe().objects["red_block"].geometry["position"]
    assert after == pytest.approx([before[0], before[1] + CFG.push.distance, before[2]])
    assert [c for c in st.LOG.of("apply_collision_object") if c["id"] == "red_block"][-1]["poses"][0] == (
        pytest.approx(tuple(after)))
    assert readded_after_last_motion(st, "red_block")


def test_move_to_and_home(st, ex, library):
    assert ex.execute(call("move_to(above_table)", library)).success
    assert arm_plans(st)[-1]["goal"]["pose"] == pytest.approx(flange(g.Pose((0.45, 0.0, 0.30), g.top_down(0))))
    assert ex.execute(call("move_to(tray)", library)).success
    assert arm_plans(st)[-1]["goal"]["pose"][:2] == pytest.approx((0.45, 0.3))
    assert ex.execute(call("home()", library)).success
    assert ex.execute(call("move_to(home)", library)).success
    assert [p["goal"].get("configuration_name") for p in arm_plans(st)[-2:]] == ["ready", "ready"]
    assert ex.observe().robot_at == "home"


# ---- failures ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(("failing_plan", "moveit_code", "expected"), [
    (1, NO_IK, ExecCode.NO_IK),            # free-space plan to the pre-grasp pose
    (2, PLANNING_FAILED, ExecCode.PLAN_FAILED),  # the straight descent
])
def test_plan_failure_maps_to_an_outcome_and_stops_the_primitive(st, ex, library, failing_plan, moveit_code,
                                                                 expected):
    st.CONTROL.plan_errors = {failing_plan: moveit_code}
    outcome = ex.execute(call("pick(tape)", library))
    assert outcome.code is expected
    assert ("NO_IK_SOLUTION" if moveit_code == NO_IK else "PLANNING_FAILED") in outcome.message
    assert len(st.LOG.of("execute")) == failing_plan  # nothing executed after the failed plan
    assert ex.observe().held is None
    assert "tape" in world_ids(ex)  # the collision scene is restored from the tracked world
    assert not outcome.details["effects_applied"]


def test_aborted_execution_is_a_backend_error(st, ex, library):
    st.CONTROL.execute_status = {1: "ABORTED"}
    outcome = ex.execute(call("move_to(tray)", library))
    assert outcome.success  # index 0 is this move
    outcome = ex.execute(call("home()", library))
    assert outcome.code is ExecCode.BACKEND_ERROR and "ABORTED" in outcome.message


def test_missed_grasp_reopens_and_reports_grasp_failed(st, ex, library):
    st.CONTROL.finger_after_close = 0.0
    outcome = ex.execute(call("pick(tape)", library))
    assert outcome.code is ExecCode.GRASP_FAILED and "nothing held" in outcome.message
    assert hand_goals(st) == ["open", "close", "open"]
    assert st.LOG.of("attach") == [] and ex.observe().held is None


def test_failure_after_the_grasp_keeps_the_object_held_in_the_tracked_world(st, ex, library):
    st.CONTROL.plan_errors = {4: PLANNING_FAILED}  # the lift
    outcome = ex.execute(call("pick(tape)", library))
    assert outcome.code is ExecCode.PLAN_FAILED and outcome.details["effects_applied"]
    assert ex.observe().held == "tape" and "tape" in ex.arm.robot._robot.attached


def test_object_too_wide_is_refused_without_motion(st, library, drawer_world):
    drawer_world.objects["red_block"].geometry["size"] = [0.1, 0.1, 0.04]
    executor = make_moveit_executor(library, drawer_world)
    st.LOG.calls.clear()
    outcome = executor.execute(call("pick(red_block)", library))
    assert outcome.code is ExecCode.GRASP_FAILED and "gripper opens" in outcome.message
    assert st.LOG.of("plan") == [] and st.LOG.of("execute") == []


def test_precondition_failure_never_moves(st, ex, library):
    outcome = ex.execute(call("place(tape, tray)", library))
    assert outcome.code is ExecCode.PRECONDITION_FAILED
    assert st.LOG.of("plan") == [] and st.LOG.of("execute") == []


def test_exceptions_inside_moveit_become_backend_errors(st, ex, library):
    def explode(index):
        raise RuntimeError("controller manager died")

    st.CONTROL.before_execute = explode
    outcome = ex.execute(call("home()", library))
    assert outcome.code is ExecCode.BACKEND_ERROR and "controller manager died" in outcome.message


def test_missing_named_state_is_a_clear_backend_error(st, library, drawer_world, tmp_path):
    data = copy.deepcopy(RAW)
    data["named_states"]["ready"] = "extended"
    path = tmp_path / "franka.yaml"
    path.write_text(yaml.safe_dump(data))
    executor = make_moveit_executor(library, drawer_world, config_path=path)
    outcome = executor.execute(call("home()", library))
    assert outcome.code is ExecCode.BACKEND_ERROR and "no named state 'extended'" in outcome.message
    assert st.LOG.of("execute") == []


# ---- cancellation -----------------------------------------------------------------------------------
def test_cancel_set_before_the_call_does_nothing(st, ex, library):
    cancel = threading.Event()
    cancel.set()
    outcome = ex.execute(call("pick(tape)", library), cancel)
    assert outcome.code is ExecCode.CANCELED
    assert st.LOG.of("plan") == [] and st.LOG.of("execute") == []


def test_cancel_between_segments_stops_before_the_next_execute(st, ex, library):
    cancel = threading.Event()
    st.CONTROL.before_execute = lambda index: cancel.set() if index == 1 else None
    outcome = ex.execute(call("pick(tape)", library), cancel)
    assert outcome.code is ExecCode.CANCELED
    assert [c["index"] for c in st.LOG.of("execute")] == [0, 1]
    assert len(st.LOG.of("plan")) == 2  # no further planning either
    assert ex.observe().held is None and "tape" in world_ids(ex)


def test_cancel_during_a_trajectory_stops_execution(st, ex, library):
    cancel = threading.Event()
    st.CONTROL.block_execute = 1
    threading.Timer(0.2, cancel.set).start()
    t0 = time.monotonic()
    outcome = ex.execute(call("pick(tape)", library), cancel)
    assert outcome.code is ExecCode.CANCELED and "trajectory execution stopped" in outcome.message
    assert time.monotonic() - t0 < 5.0
    assert st.LOG.names().count("stop_execution") == 1
    assert [c["index"] for c in st.LOG.of("execute")] == [0, 1]


def test_a_trajectory_that_overruns_is_stopped_as_timeout(st, library, drawer_world):
    data = copy.deepcopy(RAW)
    data["timeouts"]["execute_s"] = 0.2
    config = FrankaConfig.from_dict(data)
    from step_planner.execution.moveit.backend import MoveItExecutor

    executor = MoveItExecutor(library, drawer_world, config)
    st.CONTROL.block_execute = 0
    outcome = executor.execute(call("home()", library))
    assert outcome.code is ExecCode.TIMEOUT and "stopped" in outcome.message
    assert "stop_execution" in st.LOG.names()


def test_reset_rebuilds_the_scene_and_drops_a_stale_attachment(st, ex, library, drawer_world):
    assert ex.execute(call("pick(tape)", library)).success
    ex.reset(drawer_world)
    assert not ex.arm.robot._robot.attached
    assert world_ids(ex) == {"table", "drawer", "tray", "tape", "screwdriver", "red_block", "cup"}
    assert ex.observe().held is None
    ex.close()


# ---- the stand-in itself refuses what the real bindings refuse ---------------------------------------
def test_standin_enforces_the_binding_signatures(st):
    from geometry_msgs.msg import PoseStamped
    from moveit.planning import MoveItPy, PlanRequestParameters
    from moveit_msgs.msg import CollisionObject

    robot = MoveItPy(node_name="t")
    arm = robot.get_planning_component("panda_arm")
    pose = PoseStamped()
    pose.header.frame_id = "panda_link0"
    with pytest.raises(ValueError, match="Cannot specify both"):
        arm.set_goal_state(configuration_name="ready", pose_stamped_msg=pose, pose_link="panda_hand")
    with pytest.raises(ValueError, match="Must specify both message and corresponding link"):
        arm.set_goal_state(pose_stamped_msg=pose)
    with pytest.raises(TypeError):
        arm.set_goal_state(pose=pose, link="panda_hand")  # not the binding's keyword names
    assert arm.set_goal_state(configuration_name="nope") is False
    with pytest.raises(TypeError):
        PlanRequestParameters(moveit_cpp=robot, ns="ompl_rrtc")  # positional-only in the binding
    params = PlanRequestParameters(robot, "ompl_rrtc")
    with pytest.raises(TypeError):
        params.planning_attempts = 1.5
    with pytest.raises(ValueError, match="both single and multi"):
        arm.plan(single_plan_parameters=params, multi_plan_parameters=object())
    with pytest.raises(TypeError):
        robot.execute(None, controllers=[])
    result = arm.plan()  # the failed goal above left no goal
    with pytest.raises(TypeError):
        robot.execute(result.trajectory)  # controllers is required
    obj = CollisionObject()
    with pytest.raises(AssertionError, match="byte field"):
        obj.operation = 0  # rosidl byte fields take bytes
    psm = robot.get_planning_scene_monitor()
    with psm.read_only() as scene, pytest.raises(RuntimeError, match="read_only"):
        scene.remove_all_collision_objects()
    with pytest.raises(RuntimeError, match="outside"):
        scene.current_state  # noqa: B018 - using a scene after its with-block


def test_gripper_action_mode_without_a_gripper_server_is_refused_clearly(st, library, drawer_world, tmp_path):
    """With the real control_msgs (the test build, hash-checked in test_test_interfaces.py) the rclpy
    ActionClient is created; no GripperCommand server answers, so the backend must refuse to start with an
    error naming the action, before any motion (the command path itself is not exercised here)."""
    data = copy.deepcopy(RAW)
    data["gripper"]["mode"] = "gripper_action"
    data["timeouts"]["gripper_s"] = 0.5
    path = tmp_path / "franka.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(BackendUnavailable, match="no GripperCommand action server at /panda_hand_controller/"):
        make_moveit_executor(library, drawer_world, config_path=path)
    assert st.LOG.of("execute") == []
