"""The FR3's reflex over ROS: the MuJoCo robot (robot:=fr3) stops as franka_ros2 on Jazzy stops (its hardware component
unconfigured, its controllers inactive, /joint_states republished stale), serves the controller manager's services
and franka_hardware's error recovery with the real types, and the controllers backend notices the stop from them,
names it, refuses to move, and recovers in upstream's three steps. A module of its own: its robot must not share the
ROS graph with another MuJoCo robot."""

from __future__ import annotations

import time

import numpy as np
import pytest
from reflex_support import assert_recovered_in_three_steps
from robot_support import RobotProcess, inject_fault, load_world

from step_planner.domain.primitives import PrimitiveLibrary
from step_planner.domain.scene import load_scene
from step_planner.execution.base import ExecCode
from step_planner.execution.controllers.backend import RobotStopped
from step_planner.execution.factory import make_executor
from step_planner.resources import config_path

pytestmark = [pytest.mark.ros, pytest.mark.sim, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def lib() -> PrimitiveLibrary:
    return PrimitiveLibrary.load(config_path("primitives.yaml"))


@pytest.fixture(scope="module")
def robot():
    with RobotProcess(scene="drawer_desk", robot="fr3") as process:
        yield process


@pytest.fixture(scope="module")
def executor(robot, lib):
    ex = make_executor("controllers", lib, load_scene(config_path("scenes", "drawer_desk.yaml")), robot="fr3",
                       load_scene="/mujoco_robot/load_scene")
    yield ex
    ex.close()


def past_joint6_limit(executor):
    """A goal sent past the backend's own check (which never sends it): joint 6 below the FR3's 0.5445."""
    from step_planner.execution.controllers.trajectory import waypoints
    from step_planner.execution.sim.model import HOME_Q
    from step_planner.execution.sim.timing import time_parameterize

    q_end = HOME_Q.copy()
    q_end[5] = 0.3
    wp = waypoints(time_parameterize(np.array([HOME_Q, q_end]), 0.002, speed=0.5), 0.02)
    return executor.connection.run_trajectory(wp)


def arm_positions(executor) -> tuple[float, ...]:
    joints = executor.connection.joints()
    return tuple(joints.position[f"panda_joint{i}"] for i in range(1, 8))


def test_a_limit_reflex_is_noticed_named_refused_and_recovered_in_three_steps(executor, lib):
    from controller_manager_msgs.srv import ListControllers, ListHardwareComponents

    connection = executor.connection
    assert executor.robot_stop(refresh=True) is None
    outcome = past_joint6_limit(executor)
    assert outcome.status == "aborted" and "deactivate" in outcome.result.error_string  # JTC.cpp:1255-1268
    why = executor.robot_stop(refresh=True)
    assert why is not None and why.startswith("the FR3 stopped: joint_position_limits_violation (reflex; inferred: "
                                              "fr3_joint6 at 0.5")
    assert "the controllers are inactive (joint_state_broadcaster, franka_robot_state_broadcaster, " \
           "fr3_arm_controller, FrankaHardwareInterface unconfigured)" in why

    # what the controller manager says, over its real service types
    components = connection.call_service(ListHardwareComponents, "/controller_manager/list_hardware_components",
                                         ListHardwareComponents.Request()).component
    assert [(c.name, c.state.id, c.state.label) for c in components] == [("FrankaHardwareInterface", 1,
                                                                            "unconfigured")]
    controllers = connection.call_service(ListControllers, "/controller_manager/list_controllers",
                                          ListControllers.Request()).controller
    assert {c.name: c.state for c in controllers} == {"fr3_arm_controller": "inactive",
                                                      "joint_state_broadcaster": "inactive",
                                                      "franka_robot_state_broadcaster": "inactive"}

    # /joint_states looks alive: fresh messages, the arm's positions repeated (joint_state_publisher)
    assert connection.lost() is None
    since = time.monotonic()
    first = arm_positions(executor)
    connection.wait_fresh(time.monotonic(), 1.0)
    assert connection.joints().received > since and arm_positions(executor) == first

    # nothing moves until recovery; the world is not reported either
    refused = executor.execute(lib.parse_call_text("home()"))
    assert refused.code is ExecCode.BACKEND_ERROR and refused.message.startswith("not run: the FR3 stopped: ")
    assert "step-planner recover" in refused.message
    with pytest.raises(RobotStopped, match="the FR3 stopped"):
        executor.observe()

    assert_recovered_in_three_steps(executor.recover(), "joint_position_limits_violation")
    assert executor.robot_stop(refresh=True) is None
    moving = arm_positions(executor)
    connection.wait_fresh(time.monotonic(), 1.0)
    assert arm_positions(executor) != moving or connection.joints().velocity  # live joint states again
    # the arm stands at joint 6's limit: the motion stack plans only inside the limits less joint_limit_margin, so it
    # refuses to start from there (a person moves the joint back in, e.g. in the FR3's guiding mode)
    outcome = executor.execute(lib.parse_call_text("home()"))
    assert outcome.code is ExecCode.PLAN_FAILED and "beyond joint limits" in outcome.message
    load_world(connection, load_scene(config_path("scenes", "drawer_desk.yaml")))  # the arm at home again
    executor.controller.sync(fresh=True)


def test_switching_the_controllers_back_without_clearing_the_error_fails_as_on_the_arm(executor, lib):
    """Upstream's order matters (franka_hardware/doc/index.rst:142-145): the controllers do not start a motion on a
    robot whose error was not cleared; the backend's recovery then does it in order."""
    inject_fault(executor.connection, "reflex", "cartesian_reflex")
    from step_planner.execution.controllers.trajectory import waypoints
    from step_planner.execution.sim.model import HOME_Q
    from step_planner.execution.sim.timing import time_parameterize

    q = HOME_Q.copy()
    q[0] += 0.3
    wp = waypoints(time_parameterize(np.array([HOME_Q, q]), 0.002, speed=0.5), 0.02)
    assert executor.connection.run_trajectory(wp).status == "aborted"
    link = executor.franka
    stop = link.check()
    assert stop is not None and stop.errors == ()  # not published while the broadcaster is inactive, not inferable
    assert "an error it did not name" in stop.message()
    assert link.set_component_active("FrankaHardwareInterface") == (True, "active")
    ok, message = link.switch(["joint_state_broadcaster", "franka_robot_state_broadcaster", "fr3_arm_controller"])
    assert "Reflex" in message and link.manager().controllers["fr3_arm_controller"] == "inactive"
    report = executor.recover()
    assert report.ok, report.message
    assert "last_motion_errors cartesian_reflex" in report.message
    assert executor.robot_stop(refresh=True) is None
    outcome = executor.execute(lib.parse_call_text("home()"))  # stopped mid-way to joint 1 at +0.3: back home
    assert outcome.success, outcome.message
    assert arm_positions(executor)[0] == pytest.approx(0.0, abs=0.02)
