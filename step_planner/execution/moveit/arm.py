"""The thin layer over moveit_py: plan a segment, execute it (stoppable), edit the collision scene.

Each method is one *segment* of a primitive. A segment that does not succeed raises
:class:`SegmentFailed` with the planner's outcome code; the cancel event is checked before every
segment and watched during execution, which is stopped through the TrajectoryExecutionManager.
moveit_py, moveit_msgs and shape_msgs are imported here only, when the backend is built.
"""

from __future__ import annotations

import importlib
import math
import threading
import time
from types import SimpleNamespace
from typing import Any

from step_planner.execution.base import ExecCode
from step_planner.execution.errors import BackendUnavailable
from step_planner.execution.moveit.config import FrankaConfig, PlannerSettings
from step_planner.execution.moveit.errors import code_name, execution_code, plan_code
from step_planner.execution.moveit.scene_model import Body
from step_planner.execution.moveit.tool_poses import Pose, flange_pose

INSTALL_HINT = (
    "The MoveIt backend needs ROS 2 Jazzy with MoveIt 2's Python bindings: "
    "`sudo apt install ros-jazzy-moveit-py ros-jazzy-moveit-resources-panda-moveit-config` "
    "(Panda demo), or for an FR3 franka_ros2 (franka_description, franka_fr3_moveit_config); then "
    "`source /opt/ros/jazzy/setup.bash` and start step_planner from a launch file that passes the "
    "moveit_py parameters (MoveItConfigsBuilder(...).moveit_cpp(...)), with move_group / ros2_control "
    "running (e.g. `ros2 launch moveit_resources_panda_moveit_config demo.launch.py`). "
    "See docs/moveit_backend.md."
)
_MODULES = {
    "planning": "moveit.planning",
    "msg_moveit": "moveit_msgs.msg",
    "msg_shape": "shape_msgs.msg",
    "msg_geometry": "geometry_msgs.msg",
}


class SegmentFailed(Exception):
    def __init__(self, code: ExecCode, message: str) -> None:
        super().__init__(message)
        self.code = code


def load_ros() -> SimpleNamespace:
    """Import moveit_py and the message packages, or raise BackendUnavailable saying what to install."""
    loaded: dict[str, Any] = {}
    for key, module in _MODULES.items():
        try:
            loaded[key] = importlib.import_module(module)
        except ImportError as exc:
            raise BackendUnavailable(f"cannot import {module} ({exc}). {INSTALL_HINT}") from exc
    return SimpleNamespace(**loaded)


class MoveItArm:
    def __init__(self, config: FrankaConfig, *, node_name: str = "step_planner_moveit",
                 launch_params_filepaths: list[str] | None = None) -> None:
        self.config = config
        self.ros = load_ros()
        kwargs: dict[str, Any] = {"node_name": node_name}
        if launch_params_filepaths:
            kwargs["launch_params_filepaths"] = list(launch_params_filepaths)
        self.robot = self.ros.planning.MoveItPy(**kwargs)
        v = config.variant
        self.arm = self.robot.get_planning_component(v.arm_group)
        self.hand = self.robot.get_planning_component(v.hand_group) if config.gripper.mode == "hand_group" else None
        self.psm = self.robot.get_planning_scene_monitor()
        # the binding is get_trajectory_execution_manager; some releases shipped it misspelt
        getter = getattr(self.robot, "get_trajectory_execution_manager", None) or getattr(
            self.robot, "get_trajactory_execution_manager", None)
        self.tem = getter() if getter else None
        self.free_params = self._params(config.free_space)
        self.line_params = self._params(config.cartesian)
        self.action_gripper = None
        if config.gripper.mode == "gripper_action":
            from step_planner.execution.moveit.gripper import GripperActionClient

            self.action_gripper = GripperActionClient(config.gripper.action_name, config.gripper_timeout_s)
        self.cancel: threading.Event | None = None
        self.segments: list[str] = []
        self.attached_id: str | None = None

    def _params(self, s: PlannerSettings) -> Any:
        p = self.ros.planning.PlanRequestParameters(self.robot, s.params_namespace)
        p.planning_pipeline = s.pipeline
        p.planner_id = s.planner_id
        p.planning_time = s.planning_time
        p.planning_attempts = s.attempts
        p.max_velocity_scaling_factor = self.config.velocity_scaling
        p.max_acceleration_scaling_factor = self.config.acceleration_scaling
        return p

    # ---- motion segments ----------------------------------------------------------------------
    def check_cancel(self, label: str) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise SegmentFailed(ExecCode.CANCELED, f"canceled before {label}")

    def to_named(self, state: str, label: str) -> None:
        self.check_cancel(label)
        self.arm.set_start_state_to_current_state()
        if not self.arm.set_goal_state(configuration_name=state):
            raise SegmentFailed(ExecCode.BACKEND_ERROR,
                                f"{label}: group {self.config.variant.arm_group} has no named state '{state}'")
        self._run(self._plan(self.arm, self.free_params, label), label)

    def to_pose(self, tcp: Pose, label: str, *, cartesian: bool) -> None:
        """Move the tool centre point to ``tcp``: free-space plan, or a straight Pilz LIN line."""
        self.check_cancel(label)
        self.arm.set_start_state_to_current_state()
        goal = self.pose_stamped(flange_pose(tcp, self.config.tcp_offset))
        if not self.arm.set_goal_state(pose_stamped_msg=goal, pose_link=self.config.variant.ee_link):
            raise SegmentFailed(ExecCode.BACKEND_ERROR, f"{label}: MoveIt refused a pose goal for link "
                                f"'{self.config.variant.ee_link}' in frame '{self.config.variant.base_frame}'")
        params = self.line_params if cartesian else self.free_params
        self._run(self._plan(self.arm, params, label), label)

    def grip(self, close: bool, label: str) -> float | None:
        """Open or close the gripper; returns the finger gap afterwards when it can be measured."""
        self.check_cancel(label)
        g = self.config.gripper
        if self.action_gripper is not None:
            width = g.closed_width if close else g.open_width
            position = width / 2 if g.position_per_finger else width
            code, message, result_position = self.action_gripper.command(position, g.max_effort, self.cancel)
            self.segments.append(label)
            if code is not ExecCode.SUCCESS and not (close and code is ExecCode.GRASP_FAILED):
                raise SegmentFailed(code, f"{label}: {message}")
            if result_position is None:
                return None
            return 2 * result_position if g.position_per_finger else result_position
        state = self.config.hand_closed_state if close else self.config.hand_open_state
        self.hand.set_start_state_to_current_state()
        if not self.hand.set_goal_state(configuration_name=state):
            raise SegmentFailed(ExecCode.BACKEND_ERROR,
                                f"{label}: group {self.config.variant.hand_group} has no named state '{state}'")
        trajectory = self._plan(self.hand, self.free_params, label)
        try:
            self._run(trajectory, label)
        except SegmentFailed as exc:
            # fingers stopped by the object: the controller may report ABORTED; the gap decides
            if not close or exc.code is not ExecCode.BACKEND_ERROR:
                raise
        return self.finger_gap()

    def finger_gap(self) -> float | None:
        with self.psm.read_only() as scene:
            positions = list(scene.current_state.get_joint_group_positions(self.config.variant.hand_group))
        return 2 * float(positions[0]) if positions else None

    def _plan(self, component: Any, params: Any, label: str) -> Any:
        result = component.plan(single_plan_parameters=params)
        if not result:
            val = int(result.error_code.val)
            raise SegmentFailed(plan_code(val), f"{label}: planning failed ({code_name(val)})")
        return result.trajectory

    def _run(self, trajectory: Any, label: str) -> None:
        """Execute one trajectory in a worker thread; stop it if ``cancel`` is set or it overruns."""
        self.check_cancel(label)
        box: dict[str, Any] = {}

        def work() -> None:
            try:
                box["status"] = self.robot.execute(trajectory, controllers=[])
            except Exception as exc:  # noqa: BLE001 - reported as BACKEND_ERROR below
                box["error"] = exc

        worker = threading.Thread(target=work, name=f"moveit-execute-{label}", daemon=True)
        worker.start()
        deadline = time.monotonic() + self.config.execute_timeout_s
        while worker.is_alive():
            if self.cancel is not None and self.cancel.wait(0.02):
                how = self.stop()
                worker.join(5.0)
                raise SegmentFailed(ExecCode.CANCELED, f"canceled during {label}; {how}")
            worker.join(0.02)
            if worker.is_alive() and time.monotonic() > deadline:
                how = self.stop()
                worker.join(5.0)
                raise SegmentFailed(ExecCode.TIMEOUT, f"{label} took over {self.config.execute_timeout_s} s; {how}")
        self.segments.append(label)
        if "error" in box:
            raise SegmentFailed(ExecCode.BACKEND_ERROR, f"{label}: execute raised {box['error']!r}")
        code, text = execution_code(box.get("status"))
        if code is not ExecCode.SUCCESS:
            raise SegmentFailed(code, f"{label}: trajectory execution {text}")

    def stop(self) -> str:
        if self.tem is None:
            return "this moveit_py has no trajectory execution manager to stop the motion"
        self.tem.stop_execution()
        return "trajectory execution stopped"

    # ---- collision scene ----------------------------------------------------------------------
    def set_bodies(self, bodies: list[Body], attached: Body | None) -> None:
        """Replace the world collision objects (and the attached one) with ``bodies``."""
        if self.attached_id is not None and (attached is None or attached.id != self.attached_id):
            self.detach(self.attached_id)  # a stale attachment from before (it drops into the world...)
        with self.psm.read_write() as scene:  # ...and is removed here with everything else
            scene.remove_all_collision_objects()
            for body in bodies:
                scene.apply_collision_object(self.collision_object(body, "ADD"))
            scene.current_state.update()
        if attached is not None:
            self.attach(attached)

    def add_body(self, body: Body) -> None:
        with self.psm.read_write() as scene:
            scene.apply_collision_object(self.collision_object(body, "ADD"))
            scene.current_state.update()

    def remove_body(self, body_id: str) -> None:
        with self.psm.read_write() as scene:
            scene.apply_collision_object(self.collision_object(Body(body_id, ()), "REMOVE"))
            scene.current_state.update()

    def attach(self, body: Body) -> None:
        """Attach ``body`` (given in the base frame) to the end-effector link; fingers may touch it."""
        msg = self.ros.msg_moveit.AttachedCollisionObject()
        msg.link_name = self.config.variant.ee_link
        msg.object = self.collision_object(body, "ADD")
        msg.touch_links = list(self.config.variant.touch_links)
        with self.psm.read_write() as scene:
            scene.process_attached_collision_object(msg)
            scene.current_state.update()
        self.attached_id = body.id

    def detach(self, body_id: str) -> None:
        """Detach from the hand; MoveIt puts the object back into the world where it is."""
        msg = self.ros.msg_moveit.AttachedCollisionObject()
        msg.link_name = self.config.variant.ee_link
        msg.object = self.collision_object(Body(body_id, ()), "REMOVE")
        with self.psm.read_write() as scene:
            scene.process_attached_collision_object(msg)
            scene.current_state.update()
        self.attached_id = None

    # ---- messages -----------------------------------------------------------------------------
    def pose_msg(self, pose: Pose) -> Any:
        msg = self.ros.msg_geometry.Pose()
        msg.position.x, msg.position.y, msg.position.z = (float(v) for v in pose.position)
        o = pose.orientation
        msg.orientation.x, msg.orientation.y, msg.orientation.z, msg.orientation.w = (float(v) for v in o)
        return msg

    def pose_stamped(self, pose: Pose) -> Any:
        msg = self.ros.msg_geometry.PoseStamped()
        msg.header.frame_id = self.config.variant.base_frame
        msg.pose = self.pose_msg(pose)
        return msg

    def collision_object(self, body: Body, operation: str) -> Any:
        CollisionObject = self.ros.msg_moveit.CollisionObject  # noqa: N806 - a message class
        SolidPrimitive = self.ros.msg_shape.SolidPrimitive  # noqa: N806
        msg = CollisionObject()
        msg.header.frame_id = self.config.variant.base_frame
        msg.id = body.id
        msg.operation = getattr(CollisionObject, operation)
        primitives, poses = [], []
        for prim in body.primitives:
            solid = SolidPrimitive()
            solid.type = SolidPrimitive.CYLINDER if prim.kind == "cylinder" else SolidPrimitive.BOX
            solid.dimensions = [float(d) for d in prim.dimensions]
            primitives.append(solid)
            yaw_q = (0.0, 0.0, math.sin(prim.yaw / 2), math.cos(prim.yaw / 2))
            poses.append(self.pose_msg(Pose(prim.center, yaw_q)))
        msg.primitives = primitives
        msg.primitive_poses = poses
        return msg

    def close(self) -> None:
        if self.action_gripper is not None:
            self.action_gripper.close()
