"""The step_planner ROS 2 node: an ExecuteTask action server around ``run_goal``.

All planning goes through :func:`step_planner.planner.runner.run_goal`, exactly as for the CLI; what one
goal needs is built and released by :mod:`step_planner.ros.goal_session`. This module only translates
goals, cancels, tree events and results to and from ROS.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from rcl_interfaces.msg import SetParametersResult
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.node import Node
from std_msgs.msg import String

import step_planner
from step_planner.domain.primitives import PrimitiveLibrary
from step_planner.domain.safety import SafetyEnvelope
from step_planner.domain.scene import SceneError, load_scene
from step_planner.domain.world import WorldState
from step_planner.execution.factory import BackendUnavailable, check_libraries, make_executor
from step_planner.planner.person import Ask, AskKind, Desk, Reply, ReplyKind
from step_planner.planner.result import GoalError, GoalResult
from step_planner.planner.runner import validate_instruction
from step_planner.resources import config_dir
from step_planner.ros import parameters as params
from step_planner.ros.approval import ApprovalGate
from step_planner.ros.conversions import error_result, result_msg, tree_to_msg
from step_planner.ros.goal_policy import GoalArbiter, Ticket
from step_planner.ros.goal_session import EpisodicMemories, GoalRequest, GoalSession, SessionError
from step_planner.ros.markers import MarkerPublisher
from step_planner.ros.perception import ObjectReport, PerceivedExecutor, PerceptionBuffer, TrackedFrames
from step_planner.ros.progress import GoalProgress
from step_planner.ros.qos import feedback_stream, latched, perception
from step_planner.ros.shutdown import run_node
from step_planner_interfaces.action import ExecuteTask
from step_planner_interfaces.msg import ObjectPoses, SubgoalTree
from step_planner_interfaces.srv import AnswerQuestion, ApproveStep, ConfirmGoal

ROBOT_BACKENDS = ("controllers", "moveit")  # the robot's own world, one connection kept across goals

RESULT_TAKE_S = 1.0  # after a stop canceled goals: time for their clients to take the results


def robot_namespace(own: str, given: str) -> str:
    """The robot's namespace for the controllers.namespace parameter: empty = the node's own, an absolute name as
    it is, a relative one under the node's own (as ROS resolves a relative name)."""
    if not given:
        return own
    if given.startswith("/"):
        return given
    return f"{own.rstrip('/')}/{given}"


class StepPlannerNode(Node):
    """Plans and executes natural-language goals with a STEP subgoal tree.

    Parameters (declared from ``step_planner.ros.parameters.PARAMETERS``; see ``config/step_planner.yaml`` and
    ``ros2 param describe``; one given for the node that it does not declare stops it at start, naming it):
        backend (str, read-only): symbolic | sim | controllers | moveit
        controllers.robot, controllers.boundary_file (str, read-only): backend controllers' robot boundary
        controllers.namespace (str, read-only): the robot's namespace ("" = this node's): its actions, gripper,
            controller manager, joint states and poses resolve under it; the backend's own node is
            <this node's name>_controllers beside this node (moveit: <name>_moveit and <name>_moveit_io)
        controllers.fake_hardware (bool, read-only): the robot is franka_ros2's fake hardware (homing said at start)
        moveit.robot, moveit.config_file (str, read-only): backend moveit's robot and config/franka.yaml
        scene (str): scene for symbolic/sim goals that name none
        goal_policy (str, read-only): reject | preempt | queue; max_queue (int, read-only)
        heartbeat_period_s (float, read-only); approval_mode (bool); approval_timeout_s (float)
        confirm_goal (bool): wait for ~/confirm_goal before any motion; person_timeout_s (float)
        auto_recover (bool): FR3: run ~/recover by itself after a reflex (default false)
        episodes.* (record, folder, max_episodes, max_megabytes, max_age_days): one episode per goal
        episodic.store (str): episodic memory store, when planner.features has episodic_memory
        sim.joint_state_rate_hz, sim.object_pose_rate_hz (float, read-only): backend sim publishers
        markers.frame (str, read-only): the robot base frame of ~/markers
        llm.offline (bool): serve the shipped answers (a scripted expert, NOT an LLM) from a loopback server
        llm.* (model, base_url, api_key_env [read-only], timeout_s, max_retries, temperature, max_tokens,
        structured) and planner.* (budgets, features): read at the start of each goal

    Actions:
        ~/execute_task (step_planner_interfaces/ExecuteTask): cancel accepted; feedback on every tree change

    Publishers:
        ~/tree (step_planner_interfaces/SubgoalTree, latched): on every change and every heartbeat
        ~/tree_json (std_msgs/String, latched): the same snapshot as JSON (schema step_planner/tree/v2, with the
            person dialogue and the goal's readings of the instruction)
        ~/pending_step (std_msgs/String, latched): the primitive waiting for approval ("" when none)
        ~/pending_goal (std_msgs/String, latched): confirm_goal: the interpreted goal waiting for a person, one
            fact a line with its words ("" when none)
        ~/pending_question (std_msgs/String, latched): the model's question waiting for an answer ("" when none)
        ~/markers (visualization_msgs/MarkerArray, latched): the world model, the goal's facts and the plan for
            RViz (step_planner.ros.markers), on every world or tree change
        ~/scene_json (std_msgs/String, latched): the snapshot those markers are drawn from, as JSON (what is
            where, the goal's facts, the active target); `step-planner hmi` draws the table from it
        (a goal waits for a person only while someone subscribes to the topic that shows what it waits for)
        ~/sim/camera/image/compressed (sensor_msgs/CompressedImage, JPEG, latched): backend sim only, MuJoCo's
            rendered view while a goal runs, sim.camera_rate_hz (step_planner.ros.sim_camera; step-planner hmi)
        backend sim only (see step_planner.ros.sim_bridge): joint_states (sensor_msgs/JointState),
        robot_description (std_msgs/String, latched), clock (/joint_states ... in the root namespace, under the
        node's namespace otherwise), ~/sim/object_poses (ObjectPoses), /tf (the robot's links and the objects)

    Subscribers:
        ~/object_poses (step_planner_interfaces/ObjectPoses): perception; applied between primitives (a report
        without a container is placed from its position by the fact deriver)
        perception.tf_topic (tf2_msgs/TFMessage), when set: TF frames of tracked objects and drawers

    Services:
        ~/approve_step (step_planner_interfaces/ApproveStep): approve or refuse the waiting primitive
        ~/confirm_goal (step_planner_interfaces/ConfirmGoal): accept, correct or refuse the interpreted goal
        ~/answer_question (step_planner_interfaces/AnswerQuestion): answer the model's question
        ~/recover (std_srvs/Trigger): FR3 after a reflex: franka_ros2's three recovery steps in order (error
            recovery action, hardware component active, controllers activated), waiting until the controllers are
            active and the joint states move again; the message says what it did (step-planner recover). Until then
            every goal is refused, saying why
    """

    def __init__(self, node_name: str = "step_planner", **kwargs: Any) -> None:
        super().__init__(node_name, **kwargs)
        try:
            params.declare_all(self)  # a parameter it does not take stops the node here, naming it
        except params.ParameterError:
            Node.destroy_node(self)  # nothing of ours exists yet
            raise
        self.add_on_set_parameters_callback(self._on_set_parameters)
        values = params.read_all(self)
        cfg = config_dir()
        self.library = PrimitiveLibrary.load(values["primitives_file"] or cfg / "primitives.yaml")
        self.envelope = SafetyEnvelope.load(values["safety_file"] or cfg / "safety.yaml")
        self.backend = values["backend"]
        check_libraries(self.backend)  # a backend whose modules are missing stops the node here, not at the first goal
        self.arbiter = GoalArbiter(values["goal_policy"], values["max_queue"])
        self.perception = PerceptionBuffer()
        self._tickets: dict[bytes, Ticket] = {}
        self._stopping: str | None = None  # why the node stops (stop_goals): new goals are refused
        self._persistent_executor: Any = None  # the robot backends keep their connection across goals
        self._last_tree: SubgoalTree | None = None
        self._memories = EpisodicMemories()  # loaded at the first goal with the episodic_memory feature
        self.sim_bridge = None
        if self.backend == "sim":
            from step_planner.execution.sim.telemetry import robot_description
            from step_planner.ros.sim_bridge import SimBridge

            self.sim_bridge = SimBridge(self, values["sim.joint_state_rate_hz"], values["sim.object_pose_rate_hz"],
                                        robot_description())
        self.sim_camera = None
        if self.backend == "sim" and values["sim.camera_rate_hz"] > 0:
            from step_planner.ros.sim_camera import SimCamera

            self.sim_camera = SimCamera(self, values["sim.camera_rate_hz"])

        goals = ReentrantCallbackGroup()  # goals run concurrently only to wait, preempt or be refused
        self._io = MutuallyExclusiveCallbackGroup()
        self._tree_pub = self.create_publisher(SubgoalTree, "~/tree", latched())
        self._json_pub = self.create_publisher(String, "~/tree_json", latched())
        self._pending_pub = self.create_publisher(String, "~/pending_step", latched())
        self.approval = ApprovalGate(lambda: float(self.get_parameter("approval_timeout_s").value),
                                     on_pending=lambda text: self._pending_pub.publish(String(data=text)))
        self._pending_goal_pub = self.create_publisher(String, "~/pending_goal", latched())
        self._pending_question_pub = self.create_publisher(String, "~/pending_question", latched())
        self.markers = MarkerPublisher(self, values["markers.frame"])
        if self.backend not in ROBOT_BACKENDS:  # the scene goals start from, shown before the first goal
            self._show_scene(values["scene"])
        self.person = Desk(lambda: float(self.get_parameter("person_timeout_s").value), on_pending=self._on_person,
                           unheard=self._unheard)
        self._action = ActionServer(
            self, ExecuteTask, "~/execute_task", execute_callback=self._execute, goal_callback=self._on_goal,
            cancel_callback=self._on_cancel, callback_group=goals, feedback_pub_qos_profile=feedback_stream(),
        )
        self.create_subscription(ObjectPoses, "~/object_poses", self._on_object_poses, perception(),
                                 callback_group=self._io)
        self.frames: TrackedFrames | None = None
        if values["perception.tf_topic"]:
            from tf2_msgs.msg import TFMessage

            from step_planner.execution.controllers.messages import poses_from_msg

            self.frames = TrackedFrames(values["perception.max_age_s"], values["perception.frame_prefix"])
            self.create_subscription(TFMessage, values["perception.tf_topic"],
                                     lambda msg: self.frames.put(poses_from_msg(msg)), perception(),
                                     callback_group=self._io)
        self.create_service(ApproveStep, "~/approve_step", self._on_approve, callback_group=goals)
        self.create_service(ConfirmGoal, "~/confirm_goal", self._on_confirm_goal, callback_group=goals)
        self.create_service(AnswerQuestion, "~/answer_question", self._on_answer_question, callback_group=goals)
        from std_srvs.srv import Trigger

        self.create_service(Trigger, "~/recover", self._on_recover, callback_group=goals)
        self.create_timer(values["heartbeat_period_s"], self._heartbeat, callback_group=self._io)
        llm = "OFFLINE scripted answers" if values["llm.offline"] else \
            f"{values['llm.model']}@{values['llm.base_url'] or 'api.openai.com'}"
        self.get_logger().info(
            f"ready: backend={self.backend} goal_policy={values['goal_policy']} llm={llm} "
            f"(step_planner from {Path(step_planner.__file__).parent}, data from {config_dir()})"
        )
        if values["llm.offline"]:
            from step_planner.llm.offline import notice

            self.get_logger().warning(notice(config_dir() / "replay"))

    # ---- parameters --------------------------------------------------------------------------
    def _on_set_parameters(self, changes) -> SetParametersResult:
        problems = params.check({p.name: p.value for p in changes})
        return SetParametersResult(successful=not problems, reason="; ".join(problems))

    # ---- action ------------------------------------------------------------------------------
    def _on_goal(self, request: ExecuteTask.Goal) -> GoalResponse:
        # Accept everything: a refused goal ends at once with INVALID_GOAL or BUSY and a reason in the
        # result, which a plain rejection could not carry. Only a stopping node rejects (it could not run it).
        return GoalResponse.REJECT if self._stopping else GoalResponse.ACCEPT

    def _on_cancel(self, goal_handle) -> CancelResponse:
        ticket = self._tickets.get(bytes(goal_handle.goal_id.uuid))
        if ticket is not None:
            ticket.cancel.set()
        return CancelResponse.ACCEPT

    def _execute(self, goal_handle) -> ExecuteTask.Result:
        key = bytes(goal_handle.goal_id.uuid)
        goal_id = uuid.UUID(bytes=key).hex[:8]
        goal = goal_handle.request
        ticket = Ticket(goal_id)
        self._tickets[key] = ticket
        if self._stopping:  # accepted just before stop_goals looked at the tickets
            ticket.stop(self._stopping)
        try:
            world, problem = self._check_goal(goal)
            if problem:
                self.get_logger().warning(f"goal {goal_id} refused: {problem}")
                goal_handle.abort()
                return error_result(GoalError.INVALID_GOAL, problem)
            if not goal.dry_run and (stopped := self._robot_stopped()):
                self.get_logger().warning(f"goal {goal_id} refused: {stopped}")
                goal_handle.abort()
                return error_result(GoalError.EXECUTION_FAILED, stopped)
            admission = self.arbiter.admit(ticket)
            if not admission.admitted:
                self.get_logger().warning(f"goal {goal_id} refused: {admission.reason}")
                goal_handle.abort()
                return error_result(GoalError.BUSY, admission.reason)
            try:
                if not self.arbiter.wait_turn(ticket):
                    return self._end(goal_handle, GoalResult(False, GoalError.CANCELED, ticket.cancel_reason))
                self.get_logger().info(f"goal {goal_id}: {goal.instruction!r}")
                result = self._run(goal, goal_id, world, ticket, goal_handle)
                if not goal.dry_run and bool(self.get_parameter("auto_recover").value) \
                        and (stopped := self._robot_stop_now(refresh=False)):
                    result.message += f"; auto_recover: {self._recover(stopped)}"
            finally:
                self.arbiter.finish(ticket)
            if result.error is GoalError.CANCELED:
                result.message = f"{ticket.cancel_reason}: {result.message}"
            return self._end(goal_handle, result)
        finally:
            self._tickets.pop(key, None)

    def _end(self, goal_handle, result: GoalResult) -> ExecuteTask.Result:
        msg = result_msg(result, stamp=self.get_clock().now().to_msg())
        if result.success:
            goal_handle.succeed()
        elif result.error is GoalError.CANCELED and goal_handle.is_cancel_requested:
            goal_handle.canceled()
        else:
            goal_handle.abort()
        primitives = f"({len(result.executed)} primitives)"
        if result.success:  # rclpy loggers cache one severity per call site: two calls, not one variable
            self.get_logger().info(f"goal succeeded: {result.message} {primitives}")
        else:
            self.get_logger().warning(f"goal ended: {result.error.value}: {result.message} {primitives}")
        return msg

    def _check_goal(self, goal: ExecuteTask.Goal) -> tuple[WorldState | None, str | None]:
        """The world the goal starts from (None: the backend's own), or why the goal is invalid."""
        if problem := validate_instruction(goal.instruction):
            return None, problem
        if self.backend in ROBOT_BACKENDS and goal.scene and not goal.dry_run:
            return None, f"the {self.backend} backend plans in the robot's own world: give a scene only with dry_run"
        scene = goal.scene or (None if self.backend in ROBOT_BACKENDS else self.get_parameter("scene").value)
        if scene is None:
            return None, None
        path = resolve_scene(scene)
        if path is None:
            return None, f"no scene {scene!r} (neither a file nor a name in {config_dir() / 'scenes'})"
        try:
            return load_scene(path), None
        except SceneError as exc:
            return None, f"scene {scene!r}: {exc}"

    def _run(self, goal, goal_id: str, world: WorldState | None, ticket: Ticket, goal_handle) -> GoalResult:
        values = params.read_all(self)
        gates = []
        if values["approval_mode"] and not goal.dry_run:
            gates.append(lambda call: self.approval.check(call, ticket.cancel))
        log = self.get_logger()
        session = GoalSession(
            GoalRequest(goal.instruction, goal_id, scene=goal.scene, dry_run=goal.dry_run, world=world,
                        success_when=list(goal.success_when)), values,
            library=self.library, envelope=self.envelope, cancel=ticket.cancel, backend=self.backend,
            lease=lambda: self._lease(goal, world), gates=gates, memories=self._memories,
            attachments=[a.attach for a in (self.sim_bridge, self.sim_camera) if a] if not goal.dry_run else [],
            info=log.info, warn=log.warning, person=self.person,
            confirm_goal=values["confirm_goal"] and not goal.dry_run,
        )
        try:
            session.open()
        except SessionError as exc:
            return GoalResult(False, exc.error, exc.message)
        result = None
        try:
            progress = GoalProgress(self._publish_tree, goal_handle.publish_feedback, llm_calls=session.llm_calls)
            self._show_world(world, session.executor)

            def on_step(call, outcome, world_after) -> None:
                progress.on_step(call, outcome, world_after)
                self.markers.observe(world_after)

            result = session.run([progress, self.markers], on_step)
            return result
        finally:
            session.close(result)

    def _lease(self, goal, world: WorldState | None) -> tuple[PerceivedExecutor, Any]:
        """The goal's executor, and how to give it back: per-goal backends are closed, the MoveIt one is kept."""
        executor = self._executor(goal, world)
        inner = executor.inner
        if inner is self._persistent_executor or not hasattr(inner, "close"):
            return executor, lambda: None
        return executor, inner.close

    def _executor(self, goal, world: WorldState | None) -> PerceivedExecutor:
        log = self.get_logger()
        refused = lambda note: log.warning(f"perception report ignored: {note}")  # noqa: E731
        if goal.dry_run:
            from step_planner.execution.symbolic import SymbolicExecutor

            base = world or self._persistent().observe()
            return PerceivedExecutor(SymbolicExecutor(self.library, base), self.perception, on_refused=refused,
                                     frames=self.frames)
        if self.backend in ROBOT_BACKENDS:  # the controllers backend perceives the robot's world itself
            return PerceivedExecutor(self._persistent(), self.perception, on_refused=refused,
                                     sync=self.backend == "moveit", frames=self.frames)
        options = {"realtime": bool(self.get_parameter("sim.realtime").value)} if self.backend == "sim" else {}
        inner = make_executor(self.backend, self.library, world, **options)
        return PerceivedExecutor(inner, self.perception, sync=self.backend == "symbolic", on_refused=refused,
                                 frames=self.frames)

    def _persistent(self):
        """The robot backends' one executor, connected at the first goal and kept (a failed connection is tried
        again at the next goal); other backends get a symbolic world of the scene for dry runs."""
        path = resolve_scene(self.get_parameter("scene").value)
        world = load_scene(path) if path else WorldState()
        if self.backend not in ROBOT_BACKENDS:
            return make_executor("symbolic", self.library, world)
        if self._persistent_executor is None:
            config_file = "controllers.boundary_file" if self.backend == "controllers" else "moveit.config_file"
            options = {"robot": self.get_parameter(f"{self.backend}.robot").value or None,
                       "config_path": self.get_parameter(config_file).value or None}
            options["namespace"] = self.get_namespace()  # the robot's names resolve in the node's namespace
            # the helper node beside this one, named after it: two planners never make two of a name
            options["node_name"] = f"{self.get_name()}_{'controllers' if self.backend == 'controllers' else 'moveit'}"
            if self.backend == "controllers":
                options["fake_hardware"] = bool(self.get_parameter("controllers.fake_hardware").value)
                options["robot_namespace"] = robot_namespace(self.get_namespace(),
                                                             str(self.get_parameter("controllers.namespace").value))
            self._persistent_executor = make_executor(self.backend, self.library, world, **options)
        return self._persistent_executor

    # ---- the FR3's reflex and recovery --------------------------------------------------------------
    def _robot_stop_now(self, refresh: bool = True) -> str | None:
        """Why the robot backend's robot is stopped (a reflex), or None; nothing is connected for it."""
        executor = self._persistent_executor
        check = getattr(executor, "robot_stop", None)
        return check(refresh=refresh) if callable(check) else None

    def _robot_stopped(self) -> str | None:
        """Why a goal cannot run now because the robot is stopped (with auto_recover, after trying ~/recover)."""
        stopped = self._robot_stop_now()
        if stopped is None:
            return None
        if bool(self.get_parameter("auto_recover").value):
            report = self._recover(stopped)
            if (stopped := self._robot_stop_now()) is None:
                return None
            return f"{stopped}; auto_recover failed: {report}"
        return f"{stopped}; recover first: `step-planner recover` (calls {self.get_fully_qualified_name()}/recover)"

    def _recover(self, why: str) -> str:
        self.get_logger().warning(f"recovering: {why}")
        report = self._persistent_executor.recover()
        self._log_recovery(report)
        return report.message

    def _log_recovery(self, report) -> None:
        if report.ok:  # rclpy loggers cache one severity per call site: two calls
            self.get_logger().info(f"~/recover: {report.message}")
        else:
            self.get_logger().error(f"~/recover: {report.message}")

    def _on_recover(self, _request, response):
        """std_srvs/Trigger: recover the FR3 after a reflex (see the class docstring)."""
        from step_planner.execution.errors import BackendUnavailable

        if self.backend not in ROBOT_BACKENDS:
            response.success, response.message = False, f"backend {self.backend} drives no robot: nothing to recover"
            return response
        running = self.arbiter.running
        if running is not None:
            response.success, response.message = False, f"goal {running.goal_id} is running; recover after it ends"
            return response
        try:
            executor = self._persistent()
        except BackendUnavailable as exc:
            response.success, response.message = False, f"no robot connection: {exc}"
            return response
        if not callable(getattr(executor, "recover", None)):
            response.success, response.message = False, f"the {self.backend} backend cannot recover a robot"
            return response
        report = executor.recover()
        self._log_recovery(report)
        response.success, response.message = report.ok, report.message
        return response

    # ---- RViz ---------------------------------------------------------------------------------
    def _show_scene(self, scene: str) -> None:
        path = resolve_scene(scene)
        try:
            if path is not None:
                self.markers.reset(load_scene(path))
        except SceneError as exc:
            self.get_logger().warning(f"~/markers: scene {scene!r} not shown: {exc}")

    def _show_world(self, world: WorldState | None, executor: Any) -> None:
        """The goal's start on ~/markers: its scene, else what the backend observes (never the perception
        buffer: reading it would take reports from the planner)."""
        try:
            self.markers.reset(world if world is not None else getattr(executor, "inner", executor).observe())
        except Exception as exc:  # a viewer's problem must not stop the goal
            self.get_logger().warning(f"~/markers: the goal's world not shown: {exc}")

    # ---- shutdown ------------------------------------------------------------------------------
    def stop_goals(self, reason: str, timeout_s: float) -> bool:
        """Refuse new goals and cancel the running and waiting ones with ``reason`` (their clients get a
        CANCELED result saying so; the arm stops as for a cancel). True when all ended within ``timeout_s``."""
        self._stopping = reason
        tickets = list(self._tickets.values())
        for ticket in tickets:
            ticket.stop(reason)
        if tickets:
            self.get_logger().warning(f"{reason}: canceling goal(s) {', '.join(t.goal_id for t in tickets)}")
        deadline = time.monotonic() + timeout_s
        while self._tickets and time.monotonic() < deadline:
            time.sleep(0.01)
        if tickets and not self._tickets:
            # Fast DDS drops the samples a client has not taken yet when their writer goes away
            # (eProsima/Fast-DDS#1647): the results just sent need the node alive until the clients took them.
            time.sleep(RESULT_TAKE_S)
        return not self._tickets

    def destroy_node(self) -> None:
        """Close the robot connection (its own DDS participant and spin thread) before the node goes."""
        self.markers.close()
        executor, self._persistent_executor = self._persistent_executor, None
        if executor is not None and callable(close := getattr(executor, "close", None)):
            close()
        super().destroy_node()

    # ---- topics and services -------------------------------------------------------------------
    def _publish_tree(self, snapshot: dict[str, Any]) -> None:
        msg = tree_to_msg(snapshot, changed=True, stamp=self.get_clock().now().to_msg())
        self._last_tree = msg
        self._tree_pub.publish(msg)
        self._json_pub.publish(String(data=json.dumps(snapshot, default=str)))

    def _heartbeat(self) -> None:
        if self.sim_bridge is not None:
            self.sim_bridge.heartbeat()
        last = self._last_tree
        if last is None:
            return
        beat = SubgoalTree(stamp=self.get_clock().now().to_msg(), goal_id=last.goal_id, instruction=last.instruction,
                           revision=last.revision, changed=False, root_id=last.root_id, active_id=last.active_id,
                           nodes=last.nodes)
        self._tree_pub.publish(beat)

    def _on_object_poses(self, msg: ObjectPoses) -> None:
        reports = []
        for o in msg.objects:
            p, q = o.pose.pose.position, o.pose.pose.orientation
            reports.append(ObjectReport(name=o.name, category=o.class_name, container=o.container,
                                        position=(p.x, p.y, p.z), orientation=(q.x, q.y, q.z, q.w),
                                        frame=o.pose.header.frame_id))
        self.perception.put(reports)

    def _on_approve(self, request: ApproveStep.Request, response: ApproveStep.Response) -> ApproveStep.Response:
        accepted, primitive = self.approval.answer(request.approve, request.reason)
        response.accepted, response.primitive = accepted, primitive
        if not accepted:
            response.message = "no primitive is waiting for approval"
        else:
            response.message = f"{'approved' if request.approve else 'refused'} {primitive}"
        return response


    # ---- the person: goal confirmation and the model's questions ---------------------------------------
    def _on_person(self, request: Ask | None) -> None:
        """Publish what a goal waits for from a person (latched), and clear it when it is answered."""
        goal = question = ""
        if request is not None and request.kind is AskKind.GOAL:
            goal = "\n".join(f"{f}: {w}" for f, w in zip(request.facts, request.words, strict=True))
            self.get_logger().warning(f"goal {request.goal_id} waits for ~/confirm_goal: {', '.join(request.facts)}")
        elif request is not None:
            question = request.text
            self.get_logger().warning(f"goal {request.goal_id} waits for ~/answer_question: {question}")
        self._pending_goal_pub.publish(String(data=goal))
        self._pending_question_pub.publish(String(data=question))

    def _unheard(self, request: Ask) -> str | None:
        """Why no person can see ``request`` (None when someone can): nobody subscribes to the topic that shows
        it. A goal then ends at once instead of waiting person_timeout_s for nobody."""
        goal = request.kind is AskKind.GOAL
        publisher = self._pending_goal_pub if goal else self._pending_question_pub
        if publisher.get_subscription_count() > 0:
            return None
        topic = "pending_goal" if goal else "pending_question"
        return (f"nobody is listening on {self.get_fully_qualified_name()}/{topic} (answer with `step-planner send`, "
                f"or show that topic and call ~/{'confirm_goal' if goal else 'answer_question'})")

    def _on_confirm_goal(self, request: ConfirmGoal.Request, response: ConfirmGoal.Response) -> ConfirmGoal.Response:
        kinds = {ConfirmGoal.Request.ACCEPT: ReplyKind.ACCEPT, ConfirmGoal.Request.CORRECT: ReplyKind.CORRECT,
                 ConfirmGoal.Request.REFUSE: ReplyKind.REFUSE}
        kind = kinds.get(request.decision)
        if kind is None:
            response.accepted, response.message = False, f"decision must be ACCEPT, CORRECT or REFUSE, got " \
                f"{request.decision}"
            return response
        reply = Reply(kind, request.reason, tuple(request.goal) if kind is ReplyKind.CORRECT else ())
        response.accepted, response.message = self.person.reply(AskKind.GOAL, reply)
        return response

    def _on_answer_question(self, request: AnswerQuestion.Request,
                            response: AnswerQuestion.Response) -> AnswerQuestion.Response:
        pending = self.person.pending
        response.accepted, response.message = self.person.reply(AskKind.QUESTION,
                                                                 Reply(ReplyKind.ANSWER, request.answer))
        response.question = pending.text if pending is not None and response.accepted else ""
        return response


def resolve_scene(value: str) -> Path | None:
    path = Path(value)
    if path.is_file():
        return path
    candidate = config_dir() / "scenes" / (value if value.endswith(".yaml") else f"{value}.yaml")
    return candidate if candidate.is_file() and "/" not in value else None


def build_parser(prog: str = "step_planner_node") -> argparse.ArgumentParser:
    """``--help`` of the node: what it is and every parameter (set them with ``--ros-args -p name:=value``)."""
    lines = [f"  {p.name} = {p.default!r}{' (read-only)' if p.read_only else ''}: {p.description}"
             for p in params.PARAMETERS]
    return argparse.ArgumentParser(
        prog=prog, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="The step_planner ROS 2 node: ExecuteTask action server, latched tree topics "
                    "(see StepPlannerNode). Same as `step-planner node` and `ros2 run step_planner step_planner_node`.",
        epilog="ROS arguments: --ros-args [-p name:=value] [--params-file config/step_planner.yaml] "
               "[-r __node:=name]\n\nparameters (defaults; config/step_planner.yaml):\n" + "\n".join(lines),
    )


def main_node(argv: list[str] | None = None) -> int:
    """``step-planner node [--ros-args ...]`` and ``ros2 run step_planner step_planner_node``."""
    from rclpy.utilities import remove_ros_args

    args = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser("step_planner_node" if argv is None else "step-planner node")
    try:
        own = remove_ros_args(["step_planner_node", *args])[1:]
    except Exception as exc:  # rclpy's UnknownROSArgsError: say it like any other bad argument
        parser.error(f"bad ROS arguments: {exc}")
    parser.parse_args(own)  # --help prints and exits here, before any ROS context exists
    try:
        return run_node(StepPlannerNode, ["step_planner_node", *args], quiesce=StepPlannerNode.stop_goals)
    except params.ParameterError as exc:  # a misspelt or mistyped parameter: its name and source, no traceback
        print(exc.located(params.given_where(args, exc.node)), file=sys.stderr)
        return 2
    except BackendUnavailable as exc:  # at start (check_libraries): one line, no traceback, exit code 1
        print(f"step_planner_node: {exc}", file=sys.stderr)
        return 1


def main() -> None:
    sys.exit(main_node())
