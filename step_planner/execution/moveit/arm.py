"""The thin layer over moveit_py: plan a segment, execute it (stoppable), edit the collision scene, grip.

Each method is one *segment* of a primitive. A segment that does not succeed raises :class:`SegmentFailed` with
the planner's outcome code; the cancel event is checked before every segment and watched during planning and
execution, which is stopped through the TrajectoryExecutionManager. moveit_py, moveit_msgs and shape_msgs are
imported here only, when the backend is built. What moveit_py does is cited from moveit/moveit2 branch jazzy,
commit 4d84106 (moveit_py 2.12.4): ``MC`` moveit_ros/planning/moveit_cpp/src/moveit_cpp.cpp, ``PC``
.../planning_component.cpp, ``PYC`` moveit_py/src/moveit/moveit_ros/moveit_cpp/moveit_cpp.cpp, ``PYPC``
.../planning_component.cpp, ``PSM`` moveit_ros/planning/planning_scene_monitor/src/planning_scene_monitor.cpp,
``PS`` moveit_core/planning_scene/src/planning_scene.cpp.

Start-up (everything that can be wrong before the first motion, each a :class:`BackendUnavailable` saying what
to fix): MoveIt's parameters reached the node (MoveItPy raises RuntimeError otherwise, MC:55-77); the arm group
exists (PC:56-62 would throw later); the end-effector link, base frame and touch links are frames of the robot;
the arm controller's FollowJointTrajectory server and the gripper's servers answer, the fingers' joint states arrive.
"""

from __future__ import annotations

import importlib
import math
import sys
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
    "`STEP_PLANNER_MOVEIT=1 rosdep install --from-paths src --ignore-src -y` (ros-jazzy-moveit-py, "
    "ros-jazzy-moveit-resources-panda-moveit-config for the Panda demo; franka_ros2 jazzy with "
    "franka_fr3_moveit_config for an FR3), `source /opt/ros/jazzy/setup.bash`, then "
    "`ros2 launch step_planner franka.launch.py robot_type:=fr3 robot_ip:=<ip>` (or robot_type:=panda), which passes "
    "MoveIt's parameters to the node. See docs/moveit_backend.md."
)
PARAMS_HINT = ("MoveIt's parameters did not reach the node: start it with `ros2 launch step_planner franka.launch.py` "
               "(under a namespace too), which writes them for every node of the process, MoveItPy's included")
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


def launch_params_files(argv: list[str] | None = None) -> list[str]:
    """The ``--params-file`` arguments of this process: what ``ros2 launch`` gave the node, MoveIt's among them
    (moveit_py's own default does the same, moveit_py/moveit/utils.py:52-61)."""
    args = sys.argv if argv is None else argv
    return [args[i + 1] for i, a in enumerate(args[:-1]) if a == "--params-file"]


class MoveItArm:
    def __init__(self, config: FrankaConfig, *, node_name: str = "step_planner_moveit", namespace: str = "/",
                 launch_params_filepaths: list[str] | None = None) -> None:
        self.config = config
        self.ros = load_ros()
        self.robot = self._moveit_py(node_name, namespace, launch_params_filepaths)
        self.link: Any = None
        try:
            self._check_model()
            self.arm = self.robot.get_planning_component(config.variant.arm_group)
            self.psm = self.robot.get_planning_scene_monitor()
            self.tem = self.robot.get_trajectory_execution_manager()
            self.free_params = self._params(config.free_space)
            self.line_params = self._params(config.cartesian)
            self._connect(namespace, f"{node_name}_io")
        except BaseException:
            self.close()
            raise
        self.cancel: threading.Event | None = None
        self.segments: list[str] = []
        self.attached_id: str | None = None
        self.last_grip: Any = None

    # ---- start-up -------------------------------------------------------------------------------------------
    def _moveit_py(self, node_name: str, namespace: str, files: list[str] | None) -> Any:
        """MoveItPy in the node's namespace with the process's parameter files. Its constructor reads only the
        files it is given (PYC:72-89) and names its node ``name_space/node_name`` (PYC:124), so a namespaced
        launch reaches it only through a file whose key matches that name (franka.launch.py writes ``/**``)."""
        files = list(files if files is not None else launch_params_files())
        kwargs: dict[str, Any] = {"node_name": node_name, "launch_params_filepaths": files}
        if namespace.strip("/"):
            kwargs["name_space"] = namespace  # PYC:151 (moveit_py >= 2.11, in Jazzy's 2.12)
        try:
            return self.ros.planning.MoveItPy(**kwargs)
        except TypeError as exc:
            raise BackendUnavailable(f"this moveit_py cannot run in a namespace ({exc}): update ros-jazzy-moveit-py "
                                     "(2.11 added name_space) or run the node without a namespace") from exc
        except RuntimeError as exc:  # MC:55-77: scene monitor, robot model, planning pipelines
            raise BackendUnavailable(f"MoveIt did not start ({exc}): {PARAMS_HINT}") from exc

    def _check_model(self) -> None:
        v = self.config.variant
        model = self.robot.get_robot_model()
        if not model.has_joint_model_group(v.arm_group):
            raise BackendUnavailable(
                f"the robot model ({model.name}) has no group '{v.arm_group}' (config/franka.yaml "
                f"variants.{self.config.robot}.arm_group); its groups: {', '.join(model.joint_model_group_names)}. "
                f"Is robot_type:={self.config.robot} the robot MoveIt was started for?")
        frames = [("ee_link", v.ee_link), ("base_frame", v.base_frame)] + [("touch_links", t) for t in v.touch_links]
        with self.robot.get_planning_scene_monitor().read_only() as scene:
            unknown = [f"{key} '{frame}'" for key, frame in frames if not scene.knows_frame_transform(frame_id=frame)]
        if unknown:  # a pose goal for an unknown link is accepted and fails only in planning (PC:302-306)
            raise BackendUnavailable(f"the robot model ({model.name}) has no frame {', '.join(unknown)} "
                                     f"(config/franka.yaml variants.{self.config.robot})")

    def _connect(self, namespace: str, node_name: str = "step_planner_moveit_io") -> None:
        """The arm controller MoveIt executes through, and the gripper, must answer before anything moves."""
        from control_msgs.action import FollowJointTrajectory

        from step_planner.execution.moveit.gripper import Gripper
        from step_planner.execution.moveit.ros_link import RosLink

        cfg, v = self.config, self.config.variant
        self.link = RosLink(namespace, v.finger_joints, cfg.joint_states, node_name=node_name)
        arm = {v.arm_controller: self.link.action_client(FollowJointTrajectory, v.arm_controller)}
        self.link.wait_for_servers(arm, cfg.server_wait_s, "is the arm controller spawned? (config/franka.yaml "
                                   f"variants.{cfg.robot}.arm_controller; franka.launch.py spawns it)")
        if self.link.fingers_after(0.0, cfg.server_wait_s) is None:
            raise BackendUnavailable(f"no joint state of {' and '.join(v.finger_joints)} on {self.link.joint_states} "
                                     f"within {cfg.server_wait_s:.0f} s: the gripper is judged by them (config/franka."
                                     "yaml joint_states; franka_ros2 merges franka_gripper/joint_states into it)")
        self.gripper = Gripper(self.link, v.gripper, cfg.gripper, cfg.gripper_timeout_s)
        self.gripper.start(cfg.server_wait_s)

    def _params(self, s: PlannerSettings) -> Any:
        p = self.ros.planning.PlanRequestParameters(self.robot, s.params_namespace)
        p.planning_pipeline = s.pipeline
        p.planner_id = s.planner_id
        p.planning_time = s.planning_time
        p.planning_attempts = s.attempts
        p.max_velocity_scaling_factor = self.config.velocity_scaling
        p.max_acceleration_scaling_factor = self.config.acceleration_scaling
        return p

    # ---- motion segments ----------------------------------------------------------------------------------
    def check_cancel(self, label: str) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise SegmentFailed(ExecCode.CANCELED, f"canceled before {label}")

    def to_named(self, state: str, label: str) -> None:
        self.check_cancel(label)
        self.arm.set_start_state_to_current_state()  # returns None (PYPC:288, PC:259-262)
        # False keeps the previous goal in place (PC:308-315): never plan to it
        if not self.arm.set_goal_state(configuration_name=state):
            raise SegmentFailed(ExecCode.BACKEND_ERROR,
                                f"{label}: group {self.config.variant.arm_group} has no named state '{state}'")
        self._run(self._plan(self.free_params, label), label)

    def to_pose(self, tcp: Pose, label: str, *, cartesian: bool) -> None:
        """Move the tool centre point to ``tcp``: free-space plan, or a straight Pilz LIN line. A pose goal is
        always accepted (PC:302-306); the link was checked at start-up."""
        self.check_cancel(label)
        self.arm.set_start_state_to_current_state()
        goal = self.pose_stamped(flange_pose(tcp, self.config.variant.tcp_offset))
        self.arm.set_goal_state(pose_stamped_msg=goal, pose_link=self.config.variant.ee_link)
        self._run(self._plan(self.line_params if cartesian else self.free_params, label), label)

    def _plan(self, params: Any, label: str) -> Any:
        """Plan on a worker thread, never on the thread that called (an executor thread of the node). moveit_py's
        plan() keeps Python's GIL for the whole planning time (PYPC:332 has no gil_scoped_release, unlike execute
        at PYC:159-162), so no Python thread runs meanwhile; planning_time bounds that."""
        self.check_cancel(label)
        result = self._in_worker(lambda: self.arm.plan(single_plan_parameters=params), f"plan {label}")
        if not result:
            val = int(result.error_code.val)
            text = result.error_code.message
            raise SegmentFailed(plan_code(val), f"{label}: planning failed ({code_name(val)}"
                                + (f": {text})" if text else ")"))
        return result.trajectory

    def _in_worker(self, work: Any, label: str) -> Any:
        box: dict[str, Any] = {}

        def run() -> None:
            try:
                box["value"] = work()
            except Exception as exc:  # noqa: BLE001 - re-raised in the caller's thread
                box["error"] = exc

        worker = threading.Thread(target=run, name=f"moveit-{label}", daemon=True)
        worker.start()
        worker.join()
        if "error" in box:
            raise box["error"]
        return box["value"]

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
        if code is not ExecCode.SUCCESS:  # MC:207-220: no trajectory, or no controller for the group: ABORTED
            raise SegmentFailed(code, f"{label}: trajectory execution {text}")

    def stop(self) -> str:
        self.tem.stop_execution()
        return "trajectory execution stopped"

    # ---- the gripper ----------------------------------------------------------------------------------------
    def open_gripper(self, label: str) -> None:
        self._grip(lambda: self.gripper.open(self.cancel), label)

    def close_gripper(self, label: str) -> None:
        self._grip(lambda: self.gripper.close(self.cancel), label)

    def grasp(self, width: float, label: str) -> bool:
        """Close on something ``width`` wide: True if held, False if the close ended without holding it (the
        caller reopens and fails the primitive); any other failure raises."""
        grip = self._grip(lambda: self.gripper.grasp(width, self.cancel), label, allow=(ExecCode.GRASP_FAILED,))
        self.last_grip = grip
        return grip.ok

    def _grip(self, command: Any, label: str, allow: tuple[ExecCode, ...] = ()) -> Any:
        self.check_cancel(label)
        grip = command()
        self.segments.append(label)
        if not grip.ok and grip.code not in allow:
            raise SegmentFailed(grip.code, f"{label}: {grip.message}")
        return grip

    # ---- collision scene ----------------------------------------------------------------------------------
    # Every edit goes through the monitor, which triggers a scene update (PSM:821-858) that its publisher sends on
    # monitored_planning_scene (MC:103-104): RViz shows what the backend plans around. An edit made inside
    # read_write() is not published (its exit only unlocks, moveit_py planning_scene_monitor.cpp:95-100).
    def _apply(self, msg: Any, what: str) -> None:
        if not self.psm.process_collision_object(collision_object_msg=msg):
            raise SegmentFailed(ExecCode.BACKEND_ERROR, f"MoveIt refused to {what} (PS:1887-1951)")

    def set_bodies(self, bodies: list[Body], attached: Body | None) -> None:
        """Replace the world collision objects (and the attached one) with ``bodies``."""
        if self.attached_id is not None and (attached is None or attached.id != self.attached_id):
            self.detach(self.attached_id)  # a stale attachment from before (it drops into the world...)
        self._apply(self.collision_object(Body("", ()), "REMOVE"), "clear the scene")  # ...and goes (PS:1931-1936)
        for body in bodies:
            self._apply(self.collision_object(body, "ADD"), f"add '{body.id}'")
        if attached is not None:
            self.attach(attached)

    def add_body(self, body: Body) -> None:
        self._apply(self.collision_object(body, "ADD"), f"add '{body.id}'")

    def remove_body(self, body_id: str) -> None:
        self._apply(self.collision_object(Body(body_id, ()), "REMOVE"), f"remove '{body_id}'")

    def attach(self, body: Body) -> None:
        """Attach ``body`` (given in the base frame) to the end-effector link; fingers may touch it."""
        msg = self.ros.msg_moveit.AttachedCollisionObject()
        msg.link_name = self.config.variant.ee_link
        msg.object = self.collision_object(body, "ADD")
        msg.touch_links = list(self.config.variant.touch_links)
        if not self.psm.process_attached_collision_object(attached_collision_object_msg=msg):
            raise SegmentFailed(ExecCode.BACKEND_ERROR, f"MoveIt refused to attach '{body.id}' (PS:1536-1693)")
        self.attached_id = body.id

    def detach(self, body_id: str) -> None:
        """Detach from the hand; MoveIt puts the object back into the world where it is (PS:1694-1760)."""
        msg = self.ros.msg_moveit.AttachedCollisionObject()
        msg.link_name = self.config.variant.ee_link
        msg.object = self.collision_object(Body(body_id, ()), "REMOVE")
        self.psm.process_attached_collision_object(attached_collision_object_msg=msg)
        self.attached_id = None

    # ---- messages -----------------------------------------------------------------------------------------
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
        if self.link is not None:
            self.link.close()
            self.link = None
