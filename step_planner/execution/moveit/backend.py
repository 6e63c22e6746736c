"""The real-arm executor: each primitive of ``config/primitives.yaml`` as MoveIt segments.

Poses come from :mod:`tool_poses` (pure geometry over the scene's object geometry); motions, gripper
and collision-scene edits go through :class:`MoveItArm`. ``observe()`` returns the world state
*tracked from executed effects* starting at the scene file -- there is no perception yet (object
poses from the ROS node come later), so the scene geometry must match the real table.

A primitive commits its symbolic effects at the moment they become physically true (holding after
the gripper reports the object held, released after it opens, open/closed after the pull/push), so a
failure in a later segment (e.g. the lift) still leaves ``observe()`` describing the real state. A grasp
expects the object's width from the scene geometry (the handle bar's for a drawer); a close that does not
hold it is a failed grasp (GRASP_FAILED, the fingers reopen), never a held object (see gripper.py).

Contact phases: the body the fingers touch (object, drawer) is taken out of MoveIt's collision
scene for the straight segments in contact and put back, at its new pose, once the fingers have
retreated. Those short straight segments are therefore not collision-checked against that one body.
After any failure the whole collision scene is rebuilt from the tracked world.

The FR3's reflex (robot_boundary.yaml's ``robots.fr3.franka_hardware``): franka_hardware deactivates itself and its
controllers, joint_state_publisher goes on republishing the arm's last positions, and MoveIt's execution fails with
what the inactive fr3_arm_controller answers (it rejects the goal, JTC.cpp:1407-1412; moveit_simple_controller_manager
then fails sendTrajectory and the TrajectoryExecutionManager ends ABORTED, "Failed to send trajectory part"). After a
failed primitive the backend asks the controller manager (execution/franka_link.py) and names the stop; until
:meth:`MoveItExecutor.recover` runs upstream's three steps, primitives are refused and ``observe()`` raises
RobotStopped, as the controllers backend does.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from step_planner.domain.primitives import PrimitiveCall, PrimitiveLibrary
from step_planner.domain.transitions import apply_call, check_call
from step_planner.domain.world import GRIPPER, WorldState
from step_planner.execution.base import ExecCode, Outcome
from step_planner.execution.errors import BackendUnavailable
from step_planner.execution.moveit import tool_poses as g
from step_planner.execution.moveit.arm import MoveItArm, SegmentFailed
from step_planner.execution.moveit.config import FrankaConfig
from step_planner.execution.moveit.scene_model import Body, object_body, place_body, world_bodies
from step_planner.execution.reflex import RECOVER_HINT, RecoveryReport, RobotStopped


@dataclass(frozen=True)
class ReflexWatch:
    """What the FR3's reflex is noticed and recovered through: robot_boundary.yaml's ``franka_hardware`` names (a
    controllers.config.FrankaHardwareBoundary) and the arm's controller joint names with their position limits (a
    limit reflex is inferred from them while franka_robot_state_broadcaster is inactive)."""

    names: Any
    joints: tuple[str, ...]
    lower: tuple[float, ...]
    upper: tuple[float, ...]

    @property
    def limits(self) -> tuple[Sequence[str], Sequence[float], Sequence[float]] | None:
        return (self.joints, self.lower, self.upper) if self.lower else None


class MoveItExecutor:
    """``Executor`` on a Franka through moveit_py (see docs/moveit_backend.md)."""

    def __init__(self, library: PrimitiveLibrary, world: WorldState, config: FrankaConfig, *,
                 node_name: str = "step_planner_moveit", namespace: str = "/",
                 launch_params_filepaths: list[str] | None = None, reflex: ReflexWatch | None = None) -> None:
        self.library = library
        self.config = config
        self.arm = MoveItArm(config, node_name=node_name, namespace=namespace,
                             launch_params_filepaths=launch_params_filepaths)
        self.world = world.copy()
        self._committed = False
        self.reflex = reflex
        self.franka: Any = None  # franka_link.FrankaLink on the backend's own node (the FR3 with franka_hardware)
        try:
            if reflex is not None:
                self.franka = self._franka_link(reflex)
            self.reset(world)
        except BaseException:
            self.arm.close()
            raise

    # ---- Executor protocol --------------------------------------------------------------------
    def reset(self, world: WorldState) -> None:
        """Track ``world`` from now on and rebuild MoveIt's collision scene from it (no motion).

        The named poses of ``locations`` in config/franka.yaml join the world's locations, so the
        planner may ``move_to`` them.
        """
        self.world = world.copy()
        self.world.locations = list(dict.fromkeys([*self.world.locations, *self.config.locations]))
        self._sync_scene()
        if self.franka is not None and (why := self.robot_stop(refresh=True)) is not None \
                and self.franka.stop is None:  # no answer: say so once; the next failure asks again
            self.arm.link.node.get_logger().warning(f"reflexes cannot be noticed now: {why}")

    def observe(self) -> WorldState:
        """The tracked world; RobotStopped while a reflex stops the FR3 (found by the last check)."""
        if (stopped := self.robot_stop()) is not None:
            raise RobotStopped(f"{stopped}; {RECOVER_HINT}")
        return self.world.copy()

    def execute(self, call: PrimitiveCall, cancel: threading.Event | None = None) -> Outcome:
        start = time.monotonic()
        self.arm.cancel = cancel
        self.arm.segments = []
        self._committed = False
        if self.franka is not None and self.franka.stop is not None and (why := self.robot_stop(refresh=True)):
            return Outcome(ExecCode.BACKEND_ERROR, f"not run: {why}; {RECOVER_HINT}",
                           details={"segments": [], "effects_applied": False})
        try:
            outcome = self._execute(call)
        except SegmentFailed as exc:
            outcome = Outcome(exc.code, str(exc))
        except g.GeometryError as exc:
            outcome = Outcome(exc.code, str(exc))
        except Exception as exc:  # noqa: BLE001 - execute() never raises (base.py contract)
            outcome = Outcome(ExecCode.BACKEND_ERROR, f"{type(exc).__name__}: {exc}")
        if not outcome.success:
            self._name_a_stop(outcome)
            self._resync_after_failure(outcome)
        outcome.duration_s = time.monotonic() - start
        outcome.details.setdefault("segments", list(self.arm.segments))
        outcome.details.setdefault("effects_applied", self._committed)
        return outcome

    @property
    def joint_state_tap(self):
        """The robot's joint states as the backend's ROS link receives them (an episode records them)."""
        return self.arm.link.joint_tap if self.arm.link is not None else None

    def close(self) -> None:
        self.arm.close()

    # ---- the FR3's reflex ---------------------------------------------------------------------------
    def _franka_link(self, reflex: ReflexWatch) -> Any:
        from step_planner.execution.franka_link import FrankaLink
        from step_planner.execution.service_call import RESEND_S

        link = self.arm.link
        # every request FrankaLink makes may be asked twice: an answer lost to a new client's discovery race is asked
        # for again
        return FrankaLink(link.node, link._executor,
                          lambda kind, name, request, timeout: link.call_service(kind, name, request, timeout,
                                                                                 resend_s=RESEND_S),
                          reflex.names, self.config.joint_states, reflex.joints)

    def robot_stop(self, refresh: bool = False) -> str | None:
        """Why the FR3 is stopped (a reflex: its hardware component or controllers not active), or None. The answer
        found when a primitive failed or at the last ``refresh`` (which asks the controller manager now)."""
        if self.franka is None:
            return None
        return self.franka.stop_reason(self.config.robot, refresh, self.reflex.limits, BackendUnavailable)

    def _name_a_stop(self, outcome: Outcome) -> None:
        """A primitive that failed after it may have moved: was it a reflex? Then the outcome names it (MoveIt only
        says ABORTED)."""
        if self.franka is None or outcome.code is ExecCode.PRECONDITION_FAILED:
            return
        why = self.robot_stop(refresh=True)
        if why is not None and self.franka.stop is not None:
            outcome.code, outcome.message = ExecCode.BACKEND_ERROR, f"{why} ({outcome.message})"

    def recover(self) -> RecoveryReport:
        """Upstream's three recovery steps (franka_link.FrankaLink.recover). The tracked world is kept: a reflex
        stops the arm where it is, and what the last primitive committed was true when it was committed."""
        if self.franka is None:
            return RecoveryReport(False, problem=f"the moveit backend's {self.config.robot} has no franka_hardware "
                                                 "entry in robot_boundary.yaml: nothing to recover through")
        try:
            return self.franka.recover()
        except BackendUnavailable as exc:
            return RecoveryReport(False, problem=str(exc))

    # ---- dispatch -----------------------------------------------------------------------------
    def _execute(self, call: PrimitiveCall) -> Outcome:
        if self.arm.cancel is not None and self.arm.cancel.is_set():
            return Outcome(ExecCode.CANCELED, "canceled before motion")
        problems = check_call(call, self.library, self.world.observed())
        if problems:
            return Outcome(ExecCode.PRECONDITION_FAILED, "; ".join(p.message for p in problems))
        handlers: dict[str, Callable[..., None]] = {
            "move_to": self._move_to, "pick": self._pick, "place": self._place, "open_drawer": self._open_drawer,
            "close_drawer": self._close_drawer, "push": self._push, "home": self._home,
        }
        handler = handlers.get(call.name)
        if handler is None:
            return Outcome(ExecCode.PRECONDITION_FAILED, f"the MoveIt backend has no motion for '{call.name}'")
        handler(call, **call.kwargs)
        self._commit(call)
        return Outcome.ok(f"{call} done")

    def _commit(self, call: PrimitiveCall) -> None:
        """Apply the call's symbolic effects once, when they became physically true."""
        if not self._committed:
            apply_call(call, self.library, self.world)
            self._committed = True

    # ---- primitives ---------------------------------------------------------------------------
    def _home(self, call: PrimitiveCall) -> None:
        self.arm.to_named(self.config.ready_state, "home: to the ready state")

    def _move_to(self, call: PrimitiveCall, target: str) -> None:
        if target == "home":
            self.arm.to_named(self.config.ready_state, "move_to: ready state")
            return
        self.arm.to_pose(self._above(target), f"move_to: above {target}", cartesian=False)

    def _above(self, target: str) -> g.Pose:
        cfg = self.config
        if target in cfg.locations:
            return g.Pose(cfg.locations[target], g.top_down(0.0))
        if target in self.world.objects:
            shape = self._shape(target)
            return g.Pose((shape.center[0], shape.center[1], shape.top + cfg.grasp.pre_grasp_height), g.top_down(0.0))
        place = self.world.places.get(target)
        if place is not None and place.kind == "drawer":
            d = g.drawer_model(target, place.geometry, cfg.drawer)
            poses = g.close_drawer_poses if place.is_open else g.open_drawer_poses
            return poses(d, cfg.drawer, cfg.grasp).pre
        if place is not None:
            s = g.support_of(place.kind, target, place.geometry, cfg.drawer, place.is_open)
            return g.Pose((s.center[0], s.center[1], s.center[2] + cfg.grasp.pre_grasp_height), g.top_down(0.0))
        raise g.GeometryError(f"move_to: no pose known for '{target}' (add it to locations in config/franka.yaml)",
                              ExecCode.PRECONDITION_FAILED)

    def _pick(self, call: PrimitiveCall, object: str) -> None:  # noqa: A002 - the primitive's argument
        shape = self._shape(object)
        grasp = g.top_grasp(shape, self.config.grasp)
        arm = self.arm
        arm.open_gripper("pick: open gripper")
        arm.to_pose(grasp.pre, f"pick: above {object}", cartesian=False)
        arm.remove_body(object)  # the fingers straddle it: it is attached (with touch links) after closing
        arm.to_pose(grasp.grasp, f"pick: down to {object}", cartesian=True)
        if not arm.grasp(grasp.width, f"pick: grasp {object} ({grasp.width * 1000:.0f} mm)"):
            missed = arm.last_grip.message
            arm.open_gripper("pick: reopen after a missed grasp")
            raise SegmentFailed(ExecCode.GRASP_FAILED, f"pick: {object} not held: {missed}")
        arm.attach(object_body(object, shape))
        self._commit(call)
        arm.to_pose(grasp.lift, f"pick: lift {object}", cartesian=True)

    def _place(self, call: PrimitiveCall, object: str, target: str) -> None:  # noqa: A002
        cfg = self.config
        shape = self._shape(object)
        grasp = g.top_grasp(shape, cfg.grasp)
        place = self.world.places.get(target)
        if place is None:
            raise g.GeometryError(f"place: '{target}' is not a place", ExecCode.PRECONDITION_FAILED)
        support = g.support_of(place.kind, target, place.geometry, cfg.drawer, place.is_open)
        occupied = [g.footprint_circle(self._shape(o)) for o in self.world.contents(target) if o != object]
        spot = g.free_spot(support, 2 * g.footprint_circle(shape)[2], occupied, cfg.grasp.place_spacing)
        placement = g.place_at(spot, grasp, shape.extents, cfg.grasp)
        arm = self.arm
        arm.to_pose(placement.pre, f"place: above {target}", cartesian=False)
        arm.to_pose(placement.release, f"place: lower {object} onto {target}", cartesian=True)
        arm.open_gripper(f"place: release {object}")
        arm.detach(object)
        arm.remove_body(object)  # still between the open fingers: back in the scene after the retreat
        obj = self.world.objects[object]
        obj.geometry = {**obj.geometry, "position": list(placement.object_center)}
        self._commit(call)
        arm.to_pose(placement.retreat, f"place: retreat from {target}", cartesian=True)
        arm.add_body(object_body(object, self._shape(object)))

    def _open_drawer(self, call: PrimitiveCall, drawer: str) -> None:
        d, place = self._drawer(drawer)
        m = g.open_drawer_poses(d, self.config.drawer, self.config.grasp)
        arm = self.arm
        arm.open_gripper("open_drawer: open gripper")
        arm.to_pose(m.pre, f"open_drawer: above the {drawer} handle", cartesian=False)
        arm.remove_body(drawer)  # contact phase: the fingers close around the handle at the drawer front
        arm.to_pose(m.start, f"open_drawer: down to the {drawer} handle", cartesian=True)
        if not arm.grasp(self.config.drawer.handle_width, f"open_drawer: grasp the {drawer} handle"):
            missed = arm.last_grip.message
            arm.open_gripper("open_drawer: reopen after missing the handle")
            raise SegmentFailed(ExecCode.GRASP_FAILED, f"open_drawer: the {drawer} handle not held: {missed}")
        arm.to_pose(m.end, f"open_drawer: pull {drawer} open", cartesian=True)
        self._slide_drawer(call, d, opening=True)
        arm.open_gripper(f"open_drawer: release the {drawer} handle")
        arm.to_pose(m.retreat, f"open_drawer: retreat from {drawer}", cartesian=True)
        self._add_place_body(drawer)  # only now: the fingers were at the drawer front until the retreat

    def _close_drawer(self, call: PrimitiveCall, drawer: str) -> None:
        d, place = self._drawer(drawer)
        m = g.close_drawer_poses(d, self.config.drawer, self.config.grasp)
        arm = self.arm
        arm.close_gripper("close_drawer: close gripper")
        arm.to_pose(m.pre, f"close_drawer: above the front of {drawer}", cartesian=False)
        arm.to_pose(m.start, f"close_drawer: down in front of {drawer}", cartesian=True)
        arm.remove_body(drawer)  # contact phase: the closed fingers push the drawer front
        arm.to_pose(m.end, f"close_drawer: push {drawer} closed", cartesian=True)
        self._slide_drawer(call, d, opening=False)
        arm.to_pose(m.retreat, f"close_drawer: retreat from {drawer}", cartesian=True)
        self._add_place_body(drawer)

    def _push(self, call: PrimitiveCall, object: str, direction: str) -> None:  # noqa: A002
        shape = self._shape(object)
        p = g.push_poses(shape, direction, self.config.push, self.config.grasp)
        arm = self.arm
        arm.close_gripper("push: close gripper")
        arm.to_pose(p.pre, f"push: above the {direction} start behind {object}", cartesian=False)
        arm.to_pose(p.start, f"push: down behind {object}", cartesian=True)
        arm.remove_body(object)  # contact phase
        arm.to_pose(p.end, f"push: push {object} {direction}", cartesian=True)
        obj = self.world.objects[object]
        obj.geometry = {**obj.geometry, "position": list(p.new_center)}
        self._commit(call)
        arm.to_pose(p.retreat, f"push: retreat from {object}", cartesian=True)
        arm.add_body(object_body(object, self._shape(object)))  # after the fingers left it

    # ---- world / scene helpers ----------------------------------------------------------------
    def _shape(self, name: str) -> g.Shape:
        return g.object_shape(name, self.world.objects[name].geometry)

    def _drawer(self, name: str) -> tuple[g.DrawerModel, object]:
        place = self.world.places[name]
        return g.drawer_model(name, place.geometry, self.config.drawer), place

    def _slide_drawer(self, call: PrimitiveCall, d: g.DrawerModel, opening: bool) -> None:
        """The drawer moved: its contents move with it, then the effects are committed."""
        sign = 1.0 if opening else -1.0
        dx, dy = sign * d.pull[0] * d.slide, sign * d.pull[1] * d.slide
        drawer = call.kwargs["drawer"]
        for name in self.world.contents(drawer):
            obj = self.world.objects[name]
            if "position" in obj.geometry:
                x, y, z = obj.geometry["position"]
                obj.geometry = {**obj.geometry, "position": [x + dx, y + dy, z]}
                self.arm.add_body(object_body(name, self._shape(name)))
        self._commit(call)

    def _add_place_body(self, name: str) -> None:
        place = self.world.places[name]
        self.arm.add_body(place_body(name, place.kind, place.geometry, self.config.drawer, place.is_open))

    def _held_body(self) -> Body | None:
        held = self.world.held
        if held is None or self.world.objects[held].location != GRIPPER:
            return None
        return object_body(held, self._shape(held))

    def _sync_scene(self) -> None:
        self.arm.set_bodies(world_bodies(self.world, self.config.drawer), self._held_body())

    def _resync_after_failure(self, outcome: Outcome) -> None:
        """Make MoveIt's scene match the tracked world again after a primitive stopped half-way."""
        try:
            self._sync_scene()
        except Exception as exc:  # noqa: BLE001 - the outcome already says what failed
            outcome.message += f" (and the collision scene could not be restored: {exc})"
