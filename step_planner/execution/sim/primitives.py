"""The Franka primitives of ``config/primitives.yaml`` carried out in the physics simulation.

Each primitive is a short script of arm motions (:mod:`motion`) with physical checks at the
points a real robot would check: fingers closed on something (GRASP_FAILED), object still
between the fingers while moving (OBJECT_SLIPPED), drawer slide actually moved. Failures raise
:class:`MotionInterrupted`; the executor turns them into Outcomes.
"""

from __future__ import annotations

import threading

import mujoco
import numpy as np

from step_planner.domain.placement import Resting
from step_planner.domain.primitives import PrimitiveCall
from step_planner.domain.rest_areas import too_tall_for
from step_planner.execution.base import ExecCode
from step_planner.execution.sim import perception as perc
from step_planner.execution.sim import place_targets as targets
from step_planner.execution.sim.control import MotionInterrupted
from step_planner.execution.sim.handles import HandleMotions
from step_planner.execution.sim.ik import topdown_rotation
from step_planner.execution.sim.model import FINGER_MAX, HOME_Q
from step_planner.execution.sim.motion import Arm
from step_planner.execution.sim.planning import Attachment
from step_planner.execution.sim.scene_info import SceneInfo

APPROACH = 0.12  # pre-grasp / pre-place height above the grasp point
FINGERTIP_BELOW_GRASP = 0.008  # fingertips reach this far below the grasp frame
MAX_GRASP_WIDTH = 0.075
PUSH_DISTANCE = 0.06
RELEASE_GAP = 0.01  # fingers open this much to let go, not wide (neighbours, walls)
PICK_GAP = 0.01  # each finger opens this far beyond the object before a pick (as placement assumes)
DIRECTIONS = {"forward": (1.0, 0.0), "backward": (-1.0, 0.0), "left": (0.0, 1.0), "right": (0.0, -1.0)}


def _wrap(angle: float) -> float:
    return float((angle + np.pi) % (2 * np.pi) - np.pi)


class SimPrimitives(HandleMotions):
    def __init__(self, model: mujoco.MjModel, data: mujoco.MjData, info: SceneInfo, arm: Arm) -> None:
        self.model, self.data, self.info, self.arm = model, data, info, arm
        self.index = arm.controller.index
        self.ctl = arm.controller
        self.held: str | None = None
        self.grasp_angle = np.pi / 2
        self.grasp_dz = 0.0  # object centre minus grasp frame height at grasp time
        self.descent: list[np.ndarray] | None = None  # joint path of the last straight descent
        self.robot_at = "home"

    # ---- helpers ------------------------------------------------------------------------
    def _location(self, name: str) -> str | None:
        """Where an object is, with "held" judged by what the fingers feel (the controller's sensing)."""
        return perc.object_location(self.model, self.data, self.index, self.info, name,
                                    held=lambda n: self.ctl.holds(self.info, n))

    def _angles(self, preferred: list[float]) -> list[float]:
        """Candidate hand yaws in order, each with its 180-degree twin (closer to the hand first)."""
        y_axis = self.data.xmat[self.index.grasp_body].reshape(3, 3)[:, 1]
        current = np.arctan2(y_axis[1], y_axis[0])
        out: list[float] = []
        for angle in preferred:
            twins = [_wrap(angle), _wrap(angle + np.pi)]
            out += sorted(twins, key=lambda a: abs(_wrap(a - current)))
        return out

    def _move_above(
        self, point: np.ndarray, angles: list[float], what: str, cancel, monitor=None, descend: bool = False
    ) -> float:
        """Plan to APPROACH above ``point`` with the first feasible hand yaw; returns the yaw used.

        With ``descend`` the straight-line descent to ``point`` must be collision-free too (it is
        checked before moving, so a yaw whose descent would hit something is skipped), and runs.
        """
        last: MotionInterrupted | None = None
        for a in self._angles(angles):
            try:
                q, descent = self._pose_with_entry(
                    point + [0, 0, APPROACH],
                    topdown_rotation(a),
                    point if descend else None,
                    what,
                    f"descent to {what}",
                )
                self.arm.move_joints(q, what, cancel, monitor)
            except MotionInterrupted as exc:
                if exc.code is ExecCode.CANCELED or exc.code is ExecCode.OBJECT_SLIPPED:
                    raise
                last = exc
                continue
            if descent is not None:
                self.arm.run_path(descent, cancel, monitor)
            self.descent = descent
            return a
        assert last is not None
        raise last

    def _rise(self, target: np.ndarray, what: str, cancel, monitor=None) -> None:
        """Straight up after a descent, along the descent's own joint path run backwards (it was
        checked on the way down, and a fresh straight-line IK from where the fingers closed can
        land on another branch, near the base close to a singularity or the arm itself); a
        straight line when there was no descent."""
        if self.descent and np.max(np.abs(self.ctl.q - self.descent[-1])) < 0.05:
            self.arm.run_path([self.ctl.q, *self.descent[::-1]], cancel, monitor)
            return
        self.arm.move_linear(target, what, cancel, monitor)

    def _yaws_for(self, name: str, preferred: float) -> list[float]:
        """A cylinder can be held at any yaw; a box only across its narrow side."""
        if self.info.objects[name].shape == "cylinder":
            return [np.pi / 2, 0.0, np.pi / 4, -np.pi / 4]
        return [preferred]

    def _clear_yaws(self, name: str, yaws: list[float]) -> list[float]:
        """The hand yaws whose open fingers come down clear of neighbours and container walls (the
        descent check lets fingers touch, and fingers landing on a block or a wall upset the
        physics); none: GRASP_FAILED before anything moves."""
        where = self._location(name)
        clear = targets.pick_yaws(self.data, self.info, name, where, yaws)
        if not clear:
            raise MotionInterrupted(ExecCode.GRASP_FAILED, f"no room for the fingers beside {name} in/on {where}")
        return clear

    def _slip_monitor(self, name: str):
        def check():
            if not self.ctl.holds(self.info, name):
                return ExecCode.OBJECT_SLIPPED, f"{name} slipped out of the gripper during the motion"
            return None

        return check

    def _attachment(self, name: str) -> Attachment:
        obj = self.info.objects[name]
        g = self.index.grasp_body
        rot = self.data.xmat[g].reshape(3, 3)
        rel_pos = rot.T @ (self.data.xpos[obj.body_id] - self.data.xpos[g])
        inv = np.zeros(4)
        mujoco.mju_negQuat(inv, self.data.xquat[g])
        rel_quat = np.zeros(4)
        mujoco.mju_mulQuat(rel_quat, inv, self.data.xquat[obj.body_id])
        return Attachment(obj.body_id, obj.qpos_adr, rel_pos, rel_quat)

    # ---- primitives -----------------------------------------------------------------------
    def run(self, call: PrimitiveCall, cancel: threading.Event | None) -> str:
        kw = call.kwargs
        handler = {
            "pick": lambda: self.pick(kw["object"], cancel),
            "place": lambda: self.place(kw["object"], kw["target"], cancel),
            "open_drawer": lambda: self.open_drawer(kw["drawer"], cancel),
            "close_drawer": lambda: self.close_drawer(kw["drawer"], cancel),
            "push": lambda: self.push(kw["object"], kw["direction"], cancel),
            "move_to": lambda: self.move_to(kw["target"], cancel),
            "home": lambda: self.home(cancel),
        }.get(call.name)
        if handler is None:
            raise MotionInterrupted(ExecCode.BACKEND_ERROR, f"the simulator has no primitive '{call.name}'")
        return handler()

    def pick(self, name: str, cancel) -> str:
        obj = self.info.objects[name]
        pos = perc.object_position(self.data, self.info, name)
        yaw = perc.object_yaw(self.data, self.info, name)
        if obj.shape == "cylinder":
            angle, width = np.pi / 2, 2 * obj.half[0]
        elif obj.half[0] >= obj.half[1]:
            angle, width = yaw + np.pi / 2, 2 * obj.half[1]
        else:
            angle, width = yaw, 2 * obj.half[0]
        if width > MAX_GRASP_WIDTH:
            raise MotionInterrupted(
                ExecCode.GRASP_FAILED, f"{name} is {width * 100:.1f} cm wide; the gripper opens to 8 cm"
            )
        grasp = pos.copy()
        grasp[2] = max(pos[2], pos[2] + obj.half[2] - 0.03, pos[2] - obj.half[2] + FINGERTIP_BELOW_GRASP + 0.004)
        opening = min(FINGER_MAX, width / 2 + PICK_GAP)  # not wide open: neighbours, drawer and tray walls
        self.ctl.gripper(opening, cancel)
        self.arm.checker.attach(None)
        yaws = self._clear_yaws(name, self._yaws_for(name, angle))  # a yaw and its twin share fingers
        self.grasp_angle = self._move_above(grasp, yaws, name, cancel, descend=True)
        self.ctl.gripper(0.0, cancel, grasp_width=width)
        if not self.ctl.holds(self.info, name):
            closed = self.ctl.finger_opening
            self.ctl.gripper(opening, cancel)
            self._rise(grasp + [0, 0, APPROACH], "retreat", cancel)
            raise MotionInterrupted(
                ExecCode.GRASP_FAILED,
                f"fingers closed on nothing at {name}'s position (opening {closed * 1000:.1f} mm)",
            )
        self.grasp_dz = float(pos[2] - self.arm.grasp_position()[2])
        attachment = self._attachment(name)
        self.held = name
        self._rise(grasp + [0, 0, APPROACH], f"lift {name}", cancel, self._slip_monitor(name))
        lifted = perc.object_position(self.data, self.info, name)[2] - pos[2]
        if not self.ctl.holds(self.info, name) or lifted < 0.5 * APPROACH:
            self.held = None
            raise MotionInterrupted(ExecCode.OBJECT_SLIPPED, f"{name} was not lifted with the gripper")
        self.arm.checker.attach(attachment)
        self.robot_at = name
        opening_mm = self.ctl.finger_opening * 1000
        return f"picked {name} (lifted {lifted * 100:.1f} cm, finger opening {opening_mm:.1f} mm)"

    def _resting_on(self, name: str, support_z: float) -> list[Resting]:
        """The other objects resting at that height (the held one excluded)."""
        return targets.resting_objects(self.data, self.info, support_z, exclude={name, self.held})

    def _place_spots(self, name: str, target: str) -> tuple[list[tuple[np.ndarray, float]], float]:
        """Candidate (centre, hand yaw) spots, best first, and the support height."""
        y_axis = self.data.xmat[self.index.grasp_body].reshape(3, 3)[:, 1]
        spots = targets.place_spots(self.data, self.info, name, target, float(np.arctan2(y_axis[1], y_axis[0])))
        if spots is None:
            raise MotionInterrupted(ExecCode.PLAN_FAILED, f"the simulator cannot place onto {target}")
        return spots

    def place(self, name: str, target: str, cancel) -> str:
        if not self.ctl.holds(self.info, name):
            self.held = None
            raise MotionInterrupted(ExecCode.OBJECT_SLIPPED, f"{name} is no longer in the gripper")
        obj = self.info.objects[name]
        if target in self.info.drawers and (why := too_tall_for(self.info.drawers[target], obj.half)):
            raise MotionInterrupted(ExecCode.PLAN_FAILED, f"{name} is {why}")
        spots, support_z = self._place_spots(name, target)
        if not spots:
            raise MotionInterrupted(ExecCode.PLAN_FAILED, f"no room for {name} in/on {target}")
        monitor = self._slip_monitor(name)
        last: MotionInterrupted | None = None
        for xy, hand_yaw in spots:  # the motion planner decides among the free spots
            spot = np.array([xy[0], xy[1], support_z + obj.half[2] + targets.PLACE_LIFT - self.grasp_dz])
            try:
                self._move_above(spot, [hand_yaw], target, cancel, monitor, descend=True)
                break
            except MotionInterrupted as exc:
                if exc.code not in (ExecCode.NO_IK, ExecCode.PLAN_FAILED):
                    raise
                last = exc
        else:
            assert last is not None
            raise MotionInterrupted(last.code, f"none of {len(spots)} free spots reachable; last: {last}")
        self.ctl.gripper(min(FINGER_MAX, self.ctl.finger_opening + RELEASE_GAP), cancel)
        self.held = None
        self.arm.checker.attach(None)
        self._rise(spot + [0, 0, APPROACH], "retreat", cancel)
        self.ctl.settle(0.3, cancel)
        where = self._location(name)
        self.robot_at = target
        if where != target:
            raise MotionInterrupted(ExecCode.OBJECT_SLIPPED, f"{name} ended at {where}, not in/on {target}")
        return f"placed {name} at {np.round(perc.object_position(self.data, self.info, name), 3).tolist()}"

    def push(self, name: str, direction: str, cancel) -> str:
        obj = self.info.objects[name]
        pos = perc.object_position(self.data, self.info, name)
        yaw = perc.object_yaw(self.data, self.info, name)
        u = np.array([*DIRECTIONS[direction], 0.0])
        local = np.array([np.cos(yaw) * u[0] + np.sin(yaw) * u[1], -np.sin(yaw) * u[0] + np.cos(yaw) * u[1]])
        extent = abs(local[0]) * obj.half[0] + abs(local[1]) * obj.half[1]
        bottom = pos[2] - obj.half[2]
        z = bottom + max(FINGERTIP_BELOW_GRASP + 0.012, 2 * obj.half[2] - 0.03)
        gap = 0.02
        start = np.array([*(pos[:2] - u[:2] * (extent + 0.011 + gap)), z])
        self.ctl.gripper(0.0, cancel)
        self.arm.checker.attach(None)
        self._move_above(start, [float(np.arctan2(u[1], u[0]) + np.pi / 2)], f"behind {name}", cancel, descend=True)
        self.arm.move_linear(start + u * (gap + PUSH_DISTANCE), f"push {name} {direction}", cancel, speed=0.15)
        self.arm.move_linear(self.arm.grasp_position() + [0, 0, 0.1], "retreat", cancel)
        self.ctl.gripper(FINGER_MAX, cancel)
        moved = perc.object_position(self.data, self.info, name) - pos
        along = float(moved @ u)
        self.robot_at = name
        if along < 0.5 * PUSH_DISTANCE:
            raise MotionInterrupted(ExecCode.OBJECT_SLIPPED, f"{name} moved only {along * 100:.1f} cm {direction}")
        return f"pushed {name} {along * 100:.1f} cm {direction}"

    def move_to(self, target: str, cancel) -> str:
        if target == "home":
            return self.home(cancel)
        if target in self.info.objects:
            point = perc.object_position(self.data, self.info, target) + [0, 0, 0.08]
        elif target in self.info.drawers and self.held is None:
            self._to_handle(target, cancel)
            self.robot_at = target
            return f"gripper in front of the {target} handle"
        elif target in self.info.drawers:
            point = self.data.site_xpos[self.info.drawers[target].handle_site] + [0, 0, 0.12]
        elif target in self.info.trays:
            point = self.info.trays[target].position + [0, 0, 0.1]
        elif target == self.info.table:
            point = np.array([0.45, 0.0, 0.1])
        else:
            raise MotionInterrupted(ExecCode.PLAN_FAILED, f"the simulator has no pose for '{target}'")
        monitor = self._slip_monitor(self.held) if self.held else None
        yaws = self._yaws_for(self.held, self.grasp_angle) if self.held else [np.pi / 2, 0.0]
        self._move_above(point, yaws, target, cancel, monitor)
        self.robot_at = target
        return f"gripper above {target}"

    def home(self, cancel) -> str:
        monitor = self._slip_monitor(self.held) if self.held else None
        self.arm.move_joints(HOME_Q, "home", cancel, monitor)
        self.robot_at = "home"
        return "at home"
