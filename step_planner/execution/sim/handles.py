"""Drawer primitives with front handle grasps, and the motion helpers the primitives share.

A drawer handle is a vertical bar grasped from the front: the hand horizontal, pointing into the
cabinet (straight in first, then turned up to 26 degrees toward the robot's side), fingers closing
across the bar. The hand comes in and backs out horizontally, so a drawer stacked above may be
open. Everything a Cartesian segment would touch is checked before the arm moves.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import mujoco
import numpy as np

from step_planner.domain.cabinets import HANDLE_HALF
from step_planner.execution.base import ExecCode
from step_planner.execution.sim import perception as perc
from step_planner.execution.sim import place_targets as targets
from step_planner.execution.sim.control import Controller, MotionInterrupted
from step_planner.execution.sim.ik import front_rotation
from step_planner.execution.sim.model import PandaIndex
from step_planner.execution.sim.motion import Arm
from step_planner.execution.sim.scene_info import SceneInfo

HANDLE_OPENING = 0.028  # each finger, around a 1.4 cm bar
HANDLE_WIDTH = 2 * HANDLE_HALF[1]  # the bar between the closing fingers: what a grasp of it expects
HANDLE_YAWS = (0.0, 0.3, -0.3, 0.45, -0.45)  # approach directions to a handle: straight in, then turned


@dataclass
class HandleMotion:
    """A drawer motion planned in full before the arm moves (joint waypoints of each segment)."""

    pre: np.ndarray  # in front of the handle
    entry: list[np.ndarray]  # straight in around the bar
    stroke: list[np.ndarray]  # the pull or push
    retreat: list[np.ndarray]  # back out
    direction: np.ndarray  # approach direction


class HandleMotions:
    """Base of :class:`~step_planner.execution.sim.primitives.SimPrimitives`: drawer primitives and
    the IK-with-entry and grip-monitor helpers."""

    model: mujoco.MjModel
    data: mujoco.MjData
    info: SceneInfo
    arm: Arm
    ctl: Controller
    index: PandaIndex
    robot_at: str

    def _location(self, name: str) -> str | None: ...

    def _pose_with_entry(
        self, pose: np.ndarray, rotation: np.ndarray, entry_to: np.ndarray | None, what: str, entry_what: str
    ) -> tuple[np.ndarray, list[np.ndarray] | None]:
        """IK for ``pose`` whose straight line on to ``entry_to`` (if given) is feasible too; both
        are checked before anything moves. Raises the entry's own error when no seed gives one."""
        found: dict[str, list[np.ndarray]] = {}
        errors: list[MotionInterrupted] = []

        def entry_ok(q: np.ndarray) -> bool:
            try:
                found["path"] = self.arm.plan_linear(q, entry_to, entry_what)
                return True
            except MotionInterrupted as exc:
                errors.append(exc)
                return False

        try:
            q = self.arm.solve_ik(pose, rotation, what, then=entry_ok if entry_to is not None else None)
        except MotionInterrupted:
            if errors:
                raise errors[0] from None
            raise
        return q, found.get("path")

    def _grip_monitor(self, drawer: str, what: str):
        d = self.info.drawers[drawer]

        def check():
            if not self.ctl.grips(d.body_id, self.data.site_xpos[d.handle_site]):
                return ExecCode.GRASP_FAILED, f"lost the grip on {what}"
            return None

        return check

    def _handle_approaches(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """(hand rotation, approach direction) for a front grasp of a vertical handle bar: straight
        into the cabinet first, then turned toward the robot's side; both rolls of the hand."""
        out = []
        for yaw in HANDLE_YAWS:
            direction = np.array([np.cos(yaw), np.sin(yaw), 0.0])
            out += [(front_rotation(yaw, sign), direction) for sign in (1.0, -1.0)]
        return out

    def _to_handle(self, drawer: str, cancel) -> np.ndarray:
        """Move the open hand in front of the handle (``move_to``); returns the approach direction."""
        handle = self.data.site_xpos[self.info.drawers[drawer].handle_site].copy()
        what = f"the {drawer} handle"
        last: MotionInterrupted | None = None
        for rotation, direction in self._handle_approaches():
            try:
                self.arm.move_joints(
                    self.arm.solve_ik(handle - targets.FRONT_APPROACH * direction, rotation, what), what, cancel
                )
            except MotionInterrupted as exc:
                if exc.code is ExecCode.CANCELED:
                    raise
                last = exc
                continue
            return direction
        assert last is not None
        raise last

    def _handle_motions(self, drawer: str, stroke: float) -> Iterator[HandleMotion]:
        """Whole drawer motions, each checked before the arm moves: IK in front of the handle, the
        straight entry around the bar, the pull (``stroke`` < 0) or push along x, and a way back
        out (straight back first: a drawer above may be open; else back and up). A pose whose
        stroke would end with the wrist folded onto the arm, or with no way out, is skipped (the
        next IK seed is tried); one motion per approach direction, best first. Raises the first
        reason when no direction gives one."""
        handle = self.data.site_xpos[self.info.drawers[drawer].handle_site].copy()
        moving = self._moving_with(drawer)  # the drawer and its contents move with the hand
        what = f"the {drawer} handle"
        errors: list[MotionInterrupted] = []
        given = 0
        for rotation, direction in self._handle_approaches():
            found: dict[str, list[np.ndarray]] = {}

            def whole_motion(q: np.ndarray, direction=direction, found=found) -> bool:
                try:
                    found["entry"] = self.arm.plan_linear(q, handle, f"approach to {what}")
                    end = handle + [stroke, 0.0, 0.0]
                    found["stroke"] = self.arm.plan_linear(found["entry"][-1], end, f"stroke of {what}", moving)
                    found["retreat"] = self._plan_retreat(found["stroke"][-1], end, direction, moving)
                    return True
                except MotionInterrupted as exc:
                    errors.append(exc)
                    return False

            try:
                q = self.arm.solve_ik(handle - targets.FRONT_APPROACH * direction, rotation, what, then=whole_motion)
            except MotionInterrupted as exc:
                errors.append(exc)
                continue
            given += 1
            yield HandleMotion(q, found["entry"], found["stroke"], found["retreat"], direction)
        if not given:
            raise errors[0] if errors else MotionInterrupted(ExecCode.NO_IK, f"no way to reach {what}")

    def _plan_retreat(self, q: np.ndarray, at: np.ndarray, direction: np.ndarray, moving) -> list[np.ndarray]:
        back = targets.FRONT_APPROACH * direction
        last: MotionInterrupted | None = None
        for offset in (-back, -0.5 * back, -0.5 * back + [0, 0, 0.06], np.array([0.0, 0.0, 0.08])):
            try:
                return self.arm.plan_linear(q, at + offset, "retreat from the handle", moving)
            except MotionInterrupted as exc:
                last = exc
        assert last is not None
        raise last

    def _moving_with(self, drawer: str) -> frozenset[int]:
        """Geoms that move with a drawer being pulled or pushed: its own and those of its contents."""
        d = self.info.drawers[drawer]
        inside = [
            o
            for o in self.info.objects
            if self._location(o) == drawer
        ]
        ids = {int(g) for o in inside for g in np.where(self.model.geom_bodyid == self.info.objects[o].body_id)[0]}
        return d.geom_ids | ids

    def _slide_drawer(self, drawer: str, stroke: float, cancel) -> None:
        """Grasp the handle from the front, pull or push it by ``stroke`` along x, let go, back out."""
        d = self.info.drawers[drawer]
        self.ctl.gripper(HANDLE_OPENING, cancel)
        self.arm.checker.attach(None)
        last: MotionInterrupted | None = None
        for motion in self._handle_motions(drawer, stroke):
            try:  # the free-space path in front of the handle decides among the motions
                self.arm.move_joints(motion.pre, f"the {drawer} handle", cancel)
                break
            except MotionInterrupted as exc:
                if exc.code is ExecCode.CANCELED:
                    raise
                last = exc
        else:
            assert last is not None
            raise last
        self.arm.run_path(motion.entry, cancel)
        self.ctl.gripper(0.0, cancel, grasp_width=HANDLE_WIDTH)
        if not self.ctl.grips(d.body_id, self.data.site_xpos[d.handle_site]):
            self.ctl.gripper(HANDLE_OPENING, cancel)
            self.arm.run_path([self.ctl.q, *motion.entry[::-1]], cancel)
            raise MotionInterrupted(ExecCode.GRASP_FAILED, f"fingers missed the {drawer} handle")
        # a pull needs the grip all the way; a push is judged by where the drawer ends (the bar
        # may slide in the fingers near the end stop without harm)
        grip = self._grip_monitor(drawer, f"the {drawer} handle") if stroke < 0 else None
        self.arm.run_path([self.ctl.q, *motion.stroke], cancel, grip, speed=0.15)
        self.ctl.gripper(HANDLE_OPENING, cancel)
        self.arm.run_path([self.ctl.q, *motion.retreat], cancel)
        self.robot_at = drawer

    def open_drawer(self, drawer: str, cancel) -> str:
        d = self.info.drawers[drawer]
        self._slide_drawer(drawer, perc.drawer_opening(self.data, self.info, drawer) - d.open_position, cancel)
        opening = perc.drawer_opening(self.data, self.info, drawer)
        if not perc.drawer_is_pulled_open(self.data, self.info, drawer):
            raise MotionInterrupted(ExecCode.GRASP_FAILED, f"{drawer} only opened {opening * 100:.1f} cm")
        return f"{drawer} open {opening * 100:.1f} cm"

    def close_drawer(self, drawer: str, cancel) -> str:
        self._slide_drawer(drawer, perc.drawer_opening(self.data, self.info, drawer) - 0.003, cancel)
        opening = perc.drawer_opening(self.data, self.info, drawer)
        if opening > perc.DRAWER_CLOSED_TOL:
            raise MotionInterrupted(ExecCode.GRASP_FAILED, f"{drawer} still open {opening * 100:.1f} cm")
        return f"{drawer} closed ({opening * 1000:.1f} mm)"
