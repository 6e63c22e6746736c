"""The FR3's reflex and recovery without ROS: the controller manager emulation the MuJoCo robot serves
(execution/sim/controller_manager_emulation.py), how a client reads a stop from the controller manager's answers and
names the reflex (execution/reflex.py), and upstream's three recovery steps in order, with fakes for the ROS calls."""

from __future__ import annotations

import itertools

import pytest

from step_planner.execution.reflex import (
    LIMIT_REFLEX,
    ROBOT_MODE_REFLEX,
    ManagerState,
    RecoverySteps,
    RobotErrors,
    assess,
    recover,
)
from step_planner.execution.sim.controller_manager_emulation import (
    ACTIVE,
    INACTIVE,
    STATE_IDS,
    STRICT,
    UNCONFIGURED,
    ControllerManagerEmulation,
)

FR3 = {"fr3_arm_controller": "joint_trajectory_controller/JointTrajectoryController",
       "joint_state_broadcaster": "joint_state_broadcaster/JointStateBroadcaster",
       "franka_robot_state_broadcaster": "franka_robot_state_broadcaster/FrankaRobotStateBroadcaster"}
HW = "FrankaHardwareInterface"
WATCHED = ("joint_state_broadcaster", "franka_robot_state_broadcaster", "fr3_arm_controller")
JOINTS = tuple(f"fr3_joint{i}" for i in range(1, 8))
LOWER = (-2.7437, -1.7837, -2.9007, -3.0421, -2.8065, 0.5445, -3.0159)
UPPER = (2.7437, 1.7837, 2.9007, -0.1518, 2.8065, 4.5169, 3.0159)


def emulation() -> ControllerManagerEmulation:
    return ControllerManagerEmulation(FR3, commanding=["fr3_arm_controller"])


def snapshot(cm: ControllerManagerEmulation) -> ManagerState:
    return ManagerState({cm.hardware: cm.hardware_state}, {c.name: c.state for c in cm.controllers.values()})


# ---- the emulation ----------------------------------------------------------------------------------------------
def test_a_reflex_unconfigures_the_component_and_deactivates_every_controller_on_it():
    cm = emulation()
    stopped = cm.reflex({LIMIT_REFLEX})
    assert sorted(stopped) == sorted(FR3) and cm.hardware_state == UNCONFIGURED
    assert all(c.state == INACTIVE for c in cm.controllers.values())
    assert cm.current_errors == cm.last_motion_errors == {LIMIT_REFLEX} and cm.robot_mode == ROBOT_MODE_REFLEX
    assert any('motion aborted by reflex! ["joint_position_limits_violation"]' in e for e in cm.events)


def test_the_three_steps_in_order_bring_every_controller_back_and_keep_the_last_motions_errors():
    cm = emulation()
    cm.reflex({"cartesian_reflex"})
    assert cm.error_recovery()[0] and not cm.current_errors
    assert cm.set_hardware_state(HW, STATE_IDS[ACTIVE]) == (True, STATE_IDS[ACTIVE])
    assert cm.switch(list(WATCHED), [], STRICT) == (True, "")
    assert all(c.state == ACTIVE for c in cm.controllers.values())
    assert cm.last_motion_errors == {"cartesian_reflex"}  # what aborted the last motion, still reported


@pytest.mark.parametrize("order", [p for p in itertools.permutations(("recover", "hardware", "switch"))
                                   if p[-1] != "switch"])
def test_switching_before_the_error_is_cleared_or_the_component_is_back_leaves_the_arm_controller_inactive(order):
    """DOC:142-145: the error is cleared and the component active before the controllers can be activated. (The doc
    also wants step 1 before step 2; by the code, franka_hardware's on_activate reads once and ignores the answer,
    FHI:167-175, so the emulation lets the component come back first. The client always runs the doc's order.)"""
    cm = emulation()
    cm.reflex({LIMIT_REFLEX})
    steps = {"recover": cm.error_recovery, "hardware": lambda: cm.set_hardware_state(HW, STATE_IDS[ACTIVE]),
             "switch": lambda: cm.switch(list(WATCHED), [], STRICT)}
    for step in order:
        steps[step]()
    assert not cm.active("fr3_arm_controller")


def test_the_controller_manager_refuses_what_upstream_refuses():
    cm = emulation()
    assert cm.set_hardware_state("left_FrankaHardwareInterface", STATE_IDS[ACTIVE]) == (False, 0)
    assert cm.switch(["no_such_controller"], [], STRICT)[0] is False
    cm.reflex({LIMIT_REFLEX})
    ok, message = cm.switch(["joint_state_broadcaster"], [], STRICT)
    assert not ok and "not available" in message  # the component is unconfigured
    cm.set_hardware_state(HW, STATE_IDS[ACTIVE])
    ok, message = cm.switch(["fr3_arm_controller"], [], STRICT)
    assert not ok and "Reflex" in message  # the robot's error is not cleared
    assert cm.switch(["joint_state_broadcaster"], [], STRICT)[0]  # a broadcaster starts no motion


# ---- a client reading the stop ---------------------------------------------------------------------------------
def test_nothing_is_stopped_while_everything_is_active_whatever_the_positions():
    cm = emulation()
    assert assess(snapshot(cm), HW, WATCHED, positions=dict(zip(JOINTS, LOWER, strict=True)),
                  limits=(JOINTS, LOWER, UPPER)) is None


def test_published_errors_name_the_reflex_as_the_issue_words_it():
    cm = emulation()
    cm.reflex({LIMIT_REFLEX})
    errors = RobotErrors(ROBOT_MODE_REFLEX, (LIMIT_REFLEX,), (LIMIT_REFLEX,), 0.0)
    stop = assess(snapshot(cm), HW, WATCHED, errors)
    assert stop is not None
    assert stop.message().startswith("the FR3 stopped: joint_position_limits_violation (reflex); the controllers are "
                                     "inactive (joint_state_broadcaster, franka_robot_state_broadcaster, "
                                     "fr3_arm_controller, FrankaHardwareInterface unconfigured)")


def test_without_published_errors_a_joint_at_its_limit_names_the_limit_reflex_and_says_it_is_inferred():
    cm = emulation()
    cm.reflex({LIMIT_REFLEX})
    q = dict(zip(JOINTS, [0.0, -0.785, 0.0, -2.356, 0.0, 0.5440, 0.785], strict=True))
    message = assess(snapshot(cm), HW, WATCHED, None, q, (JOINTS, LOWER, UPPER)).message()
    assert "the FR3 stopped: joint_position_limits_violation (reflex; inferred: fr3_joint6 at 0.5440 rad" in message
    q["fr3_joint6"] = 1.0  # nowhere near a limit: nothing to infer, and it says why
    message = assess(snapshot(cm), HW, WATCHED, None, q, (JOINTS, LOWER, UPPER)).message()
    assert "an error it did not name" in message and "only once it is active again" in message


def test_a_controller_still_active_on_an_unconfigured_component_is_a_stop_too():
    """Seen reported on arms (a controller listed active after the component went unconfigured): the component's
    state alone says the robot stopped."""
    state = ManagerState({HW: UNCONFIGURED}, {name: ACTIVE for name in WATCHED})
    stop = assess(state, HW, WATCHED)
    assert stop is not None and stop.inactive == () and "FrankaHardwareInterface unconfigured" in stop.message()
    # no component of that name (a simulator's system): the controllers alone decide
    assert assess(ManagerState({"GazeboSimSystem": ACTIVE}, {n: ACTIVE for n in WATCHED}), HW, WATCHED) is None
    stop = assess(ManagerState({}, {**{n: ACTIVE for n in WATCHED}, "fr3_arm_controller": INACTIVE}), HW, WATCHED)
    assert stop is not None and "FrankaHardwareInterface not listed" in stop.message()


# ---- recovery ------------------------------------------------------------------------------------------------
class Robot:
    """The emulation behind fakes of the ROS calls, recording their order; ``moves`` says whether joint states
    move again once the arm controller runs."""

    def __init__(self, moves: bool = True, fail: str = "") -> None:
        self.cm, self.calls, self.moves, self.fail = emulation(), [], moves, fail
        self.t = 0.0

    def steps(self) -> RecoverySteps:
        def step(name, answer):
            def call(*args):
                self.calls.append(name)
                return (False, "failed on purpose") if name == self.fail else answer(*args)
            return call

        return RecoverySteps(
            step("error_recovery", lambda: self.cm.error_recovery()),
            step("set_hardware_component_state",
                 lambda name: (self.cm.set_hardware_state(name, STATE_IDS[ACTIVE])[0], self.cm.hardware_state)),
            step("switch_controller", lambda names: self.cm.switch(names, [], STRICT)),
            lambda: snapshot(self.cm),
            lambda since: self.moves and self.cm.active("joint_state_broadcaster"),
            lambda since: tuple(sorted(self.cm.last_motion_errors)))

    def clock(self) -> float:
        self.t += 0.01
        return self.t


def test_recovery_runs_the_three_steps_in_order_and_says_what_it_did():
    robot = Robot()
    robot.cm.reflex({LIMIT_REFLEX})
    report = recover(robot.steps(), HW, WATCHED, clock=robot.clock, sleep=lambda s: None)
    assert report.ok, report.problem
    assert robot.calls == ["error_recovery", "set_hardware_component_state", "switch_controller"]
    text = report.message
    assert text.startswith("recovered in ") and "1. error recovery" in text and "2. FrankaHardwareInterface active" \
        in text and "3. activated joint_state_broadcaster, franka_robot_state_broadcaster, fr3_arm_controller" in text
    assert "last_motion_errors joint_position_limits_violation" in text
    assert all(c.state == ACTIVE for c in robot.cm.controllers.values())


def test_a_robot_that_is_not_stopped_is_left_alone():
    robot = Robot()
    report = recover(robot.steps(), HW, WATCHED, clock=robot.clock, sleep=lambda s: None)
    assert report.ok and robot.calls == [] and "nothing to recover" in report.message


@pytest.mark.parametrize("fail", ["error_recovery", "set_hardware_component_state", "switch_controller"])
def test_the_first_failing_step_ends_recovery_naming_it_and_nothing_after_it_runs(fail):
    robot = Robot(fail=fail)
    robot.cm.reflex({LIMIT_REFLEX})
    report = recover(robot.steps(), HW, WATCHED, clock=robot.clock, sleep=lambda s: None)
    order = ["error_recovery", "set_hardware_component_state", "switch_controller"]
    assert not report.ok and robot.calls == order[:order.index(fail) + 1]
    assert report.message.startswith("recovery failed: ") and "failed on purpose" in report.message
    assert not robot.cm.active("fr3_arm_controller")


def test_controllers_active_but_joint_states_still_stale_is_not_recovered():
    robot = Robot(moves=False)
    robot.cm.reflex({LIMIT_REFLEX})
    report = recover(robot.steps(), HW, WATCHED, timeout_s=0.5, clock=robot.clock, sleep=lambda s: None)
    assert not report.ok and "joint states did not change" in report.problem


def test_only_loaded_controllers_are_activated():
    robot = Robot()
    del robot.cm.controllers["franka_robot_state_broadcaster"]  # a controllers file without it
    robot.cm.reflex({LIMIT_REFLEX})
    report = recover(robot.steps(), HW, WATCHED, clock=robot.clock, sleep=lambda s: None)
    assert report.ok and "activated joint_state_broadcaster, fr3_arm_controller" in report.message


def test_best_effort_starts_what_it_can_and_recovery_names_what_stayed_inactive():
    """BEST_EFFORT (what the client sends: a request asked twice is harmless) activates the broadcasters of a robot
    whose error was not cleared, not the arm controller; recovery then fails naming it, without waiting."""
    from step_planner.execution.sim.controller_manager_emulation import BEST_EFFORT

    cm = emulation()
    cm.reflex({LIMIT_REFLEX})
    cm.set_hardware_state(HW, STATE_IDS[ACTIVE])
    ok, message = cm.switch(list(WATCHED), [], BEST_EFFORT)
    assert ok and "Reflex" in message and cm.active("joint_state_broadcaster") and not cm.active("fr3_arm_controller")
    robot = Robot()
    robot.cm.reflex({LIMIT_REFLEX})
    steps = robot.steps()
    steps.error_recovery = lambda: (True, "pretended")  # the error stays: the arm controller cannot start
    steps.switch = lambda names: robot.cm.switch(names, [], BEST_EFFORT)
    report = recover(steps, HW, WATCHED, timeout_s=60.0, clock=robot.clock, sleep=lambda s: None)
    assert not report.ok and report.problem.startswith("switch_controller could not activate fr3_arm_controller: ")


@pytest.mark.parametrize("change, words", [
    ({"controller_manager": "controller_manager"}, "absolute ROS name"),
    ({"hardware_component": ""}, "hardware_component"),
    ({"hardware_component": "a/b"}, "hardware_component"),
    ({"controllers": []}, "franka_hardware.controllers: should have at least 1 item"),
    ({"controllers": "fr3_arm_controller"}, "franka_hardware.controllers"),
    ({"error_recovery": None}, "error_recovery"),
    ({"robot_state": 3}, "robot_state"),
    ({"surprise": 1}, "franka_hardware.surprise: unknown key"),
])
def test_a_malformed_franka_hardware_entry_is_refused_naming_the_key(change, words):
    import yaml

    from step_planner.execution.controllers.config import BoundaryConfig, BoundaryConfigError
    from step_planner.resources import config_path

    data = yaml.safe_load(config_path("robot_boundary.yaml").read_text())
    entry = data["robots"]["fr3"]["franka_hardware"]
    data["robots"]["fr3"]["franka_hardware"] = {**entry, **change}
    with pytest.raises(BoundaryConfigError, match="franka_hardware") as caught:
        BoundaryConfig.from_dict(data, "fr3")
    assert words in str(caught.value)
    good = data | {"robots": {**data["robots"], "fr3": {**data["robots"]["fr3"], "franka_hardware": entry}}}
    assert BoundaryConfig.from_dict(good, "fr3").franka_hardware.controllers[-1] == "fr3_arm_controller"
    assert BoundaryConfig.from_dict(good, "panda").franka_hardware is None  # the Panda has none
    with pytest.raises(BoundaryConfigError, match="franka_hardware"):  # every robot's entry is checked, not only
        BoundaryConfig.from_dict(data, "panda")                         # the one selected


def test_the_reflexes_one_may_inject_are_the_errors_franka_msgs_reports_in_its_order():
    """`step-planner fault reflex NAME` takes exactly franka_msgs/msg/Errors's fields (franka_ros2@29cb85a jazzy,
    Errors.msg:1-36; the test interfaces rebuild it field for field), so a rehearsed reflex is one the FR3 reports."""
    from franka_msgs.msg import Errors

    from step_planner.execution.sim.faults import DEFAULT_REFLEX, REFLEXES

    assert tuple(Errors.get_fields_and_field_types()) == REFLEXES
    assert DEFAULT_REFLEX in REFLEXES and len(REFLEXES) == 36
