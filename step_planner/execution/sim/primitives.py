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

from step_planner.domain.primitives import PrimitiveCall
from step_planner.execution.base import ExecCode
from step_planner.execution.sim import perception as perc
from step_planner.execution.sim.control import MotionInterrupted
from step_planner.execution.sim.ik import topdown_rotation
from step_planner.execution.sim.model import FINGER_MAX, HOME_Q
from step_planner.execution.sim.motion import Arm
from step_planner.execution.sim.placement import (
    PALM_ABOVE_GRASP,
    Area,
    Footprint,
    Resting,
    free_spots,
    grasp_height,
    palm_zone,
)
from step_planner.execution.sim.planning import Attachment
from step_planner.execution.sim.scene_builder import COVERED_SLOTS_DY, WALL, SceneInfo

APPROACH = 0.12  # pre-grasp / pre-place height above the grasp point
FINGERTIP_BELOW_GRASP = 0.008  # fingertips reach this far below the grasp frame
MAX_GRASP_WIDTH = 0.075
HANDLE_OPENING = 0.028
PUSH_DISTANCE = 0.06
RELEASE_GAP = 0.01  # fingers open this much to let go, not wide (neighbours, walls)
CONTAINER_GAP = 0.003  # between objects set down side by side in a container
DIRECTIONS = {"forward": (1.0, 0.0), "backward": (-1.0, 0.0), "left": (0.0, 1.0), "right": (0.0, -1.0)}


def _wrap(angle: float) -> float:
    return float((angle + np.pi) % (2 * np.pi) - np.pi)


class SimPrimitives:
    def __init__(self, model: mujoco.MjModel, data: mujoco.MjData, info: SceneInfo, arm: Arm) -> None:
        self.model, self.data, self.info, self.arm = model, data, info, arm
        self.index = arm.controller.index
        self.ctl = arm.controller
        self.held: str | None = None
        self.grasp_angle = np.pi / 2
        self.grasp_dz = 0.0  # object centre minus grasp frame height at grasp time
        self.robot_at = "home"

    # ---- helpers ------------------------------------------------------------------------
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
                q = self.arm.solve_ik(point + [0, 0, APPROACH], topdown_rotation(a), what)
                descent = self.arm.plan_linear(q, point, f"descent to {what}") if descend else None
                self.arm.move_joints(q, what, cancel, monitor)
            except MotionInterrupted as exc:
                if exc.code is ExecCode.CANCELED or exc.code is ExecCode.OBJECT_SLIPPED:
                    raise
                last = exc
                continue
            if descent is not None:
                self.arm.run_path(descent, cancel, monitor)
            return a
        assert last is not None
        raise last

    def _yaws_for(self, name: str, preferred: float) -> list[float]:
        """A cylinder can be held at any yaw; a box only across its narrow side."""
        if self.info.objects[name].shape == "cylinder":
            return [np.pi / 2, 0.0, np.pi / 4, -np.pi / 4]
        return [preferred]

    def _slip_monitor(self, name: str):
        def check():
            if not perc.is_held(self.model, self.data, self.index, self.info, name):
                return ExecCode.OBJECT_SLIPPED, f"{name} slipped out of the gripper during the motion"
            return None

        return check

    def _grip_monitor(self, body_id: int, what: str):
        def check():
            if len(perc.finger_contacts(self.model, self.data, self.index, body_id)) < 2:
                return ExecCode.GRASP_FAILED, f"lost the grip on {what}"
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
        self.ctl.gripper(FINGER_MAX, cancel)
        self.arm.checker.attach(None)
        yaws = self._yaws_for(name, angle)
        self.grasp_angle = self._move_above(grasp, yaws, name, cancel, descend=True)
        self.ctl.gripper(0.0, cancel)
        if not perc.is_held(self.model, self.data, self.index, self.info, name):
            opening = self.ctl.finger_opening
            self.ctl.gripper(FINGER_MAX, cancel)
            self.arm.move_linear(grasp + [0, 0, APPROACH], "retreat", cancel)
            raise MotionInterrupted(
                ExecCode.GRASP_FAILED,
                f"fingers closed on nothing at {name}'s position (opening {opening * 1000:.1f} mm)",
            )
        self.grasp_dz = float(pos[2] - self.arm.grasp_position()[2])
        attachment = self._attachment(name)
        self.held = name
        self.arm.move_linear(grasp + [0, 0, APPROACH], f"lift {name}", cancel, self._slip_monitor(name))
        lifted = perc.object_position(self.data, self.info, name)[2] - pos[2]
        if not perc.is_held(self.model, self.data, self.index, self.info, name) or lifted < 0.5 * APPROACH:
            self.held = None
            raise MotionInterrupted(ExecCode.OBJECT_SLIPPED, f"{name} was not lifted with the gripper")
        self.arm.checker.attach(attachment)
        self.robot_at = name
        opening_mm = self.ctl.finger_opening * 1000
        return f"picked {name} (lifted {lifted * 100:.1f} cm, finger opening {opening_mm:.1f} mm)"

    def _resting_on(self, name: str, support_z: float) -> list[Resting]:
        """The other objects resting at that height (the held one excluded)."""
        out = []
        for o, info in self.info.objects.items():
            pos = perc.object_position(self.data, self.info, o)
            if o != name and o != self.held and abs(pos[2] - info.half[2] - support_z) < 0.03:
                yaw = perc.object_yaw(self.data, self.info, o)
                fp = Footprint(pos[:2], info.half[:2].copy(), yaw, round=info.shape == "cylinder")
                palm = palm_zone(info.shape, info.half, yaw, pos[:2])
                out.append(Resting(fp, 2 * float(info.half[2]), grasp_height(info.half) + PALM_ABOVE_GRASP, palm))
        return out

    def _place_yaws(self, name: str) -> list[tuple[float, float]]:
        """(hand yaw, resulting object yaw) pairs: the grasp yaw first, then the wrist turned."""
        obj_yaw = perc.object_yaw(self.data, self.info, name)
        y_axis = self.data.xmat[self.index.grasp_body].reshape(3, 3)[:, 1]
        hand_now = float(np.arctan2(y_axis[1], y_axis[0]))
        if self.info.objects[name].shape == "cylinder":
            return [(a, obj_yaw) for a in self._yaws_for(name, self.grasp_angle)]
        return [(_wrap(hand_now + t), _wrap(obj_yaw + t)) for t in (0.0, np.pi / 2, np.pi / 4, -np.pi / 4)]

    def _place_spots(self, name: str, target: str) -> tuple[list[tuple[np.ndarray, float]], float]:
        """Candidate (centre, hand yaw) spots, best first, and the support height."""
        obj = self.info.objects[name]
        yaws = self._place_yaws(name)
        if target in self.info.drawers:
            d = self.info.drawers[target]
            frame = self.data.xpos[d.body_id]
            opening = perc.drawer_opening(self.data, self.info, target)
            cabinet_front = frame[0] + opening - (d.inner[0] / 2 + WALL)
            # exposed part of the drawer; a drawer below another one also loses the strip under
            # the upper drawer's handle bar and keeps to the side away from that handle
            back = min(frame[0] + d.inner[0] / 2, cabinet_front - 0.01 - (0.06 if d.covered else 0.0))
            y_lo = frame[1] + (COVERED_SLOTS_DY[-1] - 0.03 if d.covered else -d.inner[1] / 2)
            area = Area(np.array([frame[0] - d.inner[0] / 2, y_lo]), np.array([back, frame[1] + d.inner[1] / 2]))
            spots = free_spots(
                area,
                obj.shape,
                obj.half,
                yaws,
                self._resting_on(name, d.floor_z),
                CONTAINER_GAP,
                area.fill_order,
                pack=True,
            )
            return spots, d.floor_z
        if target in self.info.trays:
            t = self.info.trays[target]
            inner = t.size[:2] / 2 - 0.008
            area = Area(t.position[:2] - inner, t.position[:2] + inner)
            z = float(t.position[2] + 0.005)
            spots = free_spots(
                area,
                obj.shape,
                obj.half,
                yaws,
                self._resting_on(name, z),
                CONTAINER_GAP,
                area.fill_order,
                pack=True,
            )
            return spots, z
        if target == self.info.table:
            here = perc.object_position(self.data, self.info, name)[:2]
            area = Area(np.array([0.25, -0.35]), np.array([0.68, 0.35]))  # within top-down reach
            others = self._resting_on(name, 0.0) + self._fixtures()
            spots = free_spots(
                area, obj.shape, obj.half, yaws, others, 0.015, lambda c: float(np.linalg.norm(c - here)), spread=0.05
            )
            return spots, 0.0
        raise MotionInterrupted(ExecCode.PLAN_FAILED, f"the simulator cannot place onto {target}")

    def _fixtures(self) -> list[Resting]:
        """Trays and cabinets (with an open drawer and the handle zone in front) as table obstacles."""
        boxes = [Footprint(t.position[:2], t.size[:2] / 2 + 0.02, 0.0) for t in self.info.trays.values()]
        for dr in self.info.drawers.values():
            handle_x = self.data.site_xpos[dr.handle_site][0]
            back = dr.closed_center[0] + dr.inner[0] / 2 + 2 * WALL
            x0 = handle_x - 0.05
            half = np.array([(back - x0) / 2, dr.inner[1] / 2 + 2 * WALL + 0.03])
            boxes.append(Footprint(np.array([(back + x0) / 2, dr.closed_center[1]]), half, 0.0))
        return [Resting(b, 0.0, 0.0, None) for b in boxes]

    def place(self, name: str, target: str, cancel) -> str:
        if not perc.is_held(self.model, self.data, self.index, self.info, name):
            self.held = None
            raise MotionInterrupted(ExecCode.OBJECT_SLIPPED, f"{name} is no longer in the gripper")
        obj = self.info.objects[name]
        spots, support_z = self._place_spots(name, target)
        if not spots:
            raise MotionInterrupted(ExecCode.PLAN_FAILED, f"no room for {name} in/on {target}")
        monitor = self._slip_monitor(name)
        last: MotionInterrupted | None = None
        for xy, hand_yaw in spots:  # the motion planner decides among the free spots
            spot = np.array([xy[0], xy[1], support_z + obj.half[2] + 0.006 - self.grasp_dz])
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
        self.arm.move_linear(spot + [0, 0, APPROACH], "retreat", cancel)
        self.ctl.settle(0.3, cancel)
        where = perc.object_location(self.model, self.data, self.index, self.info, name)
        self.robot_at = target
        if where != target:
            raise MotionInterrupted(ExecCode.OBJECT_SLIPPED, f"{name} ended at {where}, not in/on {target}")
        return f"placed {name} at {np.round(perc.object_position(self.data, self.info, name), 3).tolist()}"

    def _grasp_handle(self, drawer: str, cancel) -> np.ndarray:
        d = self.info.drawers[drawer]
        handle = self.data.site_xpos[d.handle_site].copy()
        self.ctl.gripper(HANDLE_OPENING, cancel)
        self.arm.checker.attach(None)
        self._move_above(handle, [0.0], f"the {drawer} handle", cancel, descend=True)
        self.ctl.gripper(0.0, cancel)
        if len(perc.finger_contacts(self.model, self.data, self.index, d.body_id)) < 2:
            self.ctl.gripper(HANDLE_OPENING, cancel)
            self.arm.move_linear(handle + [0, 0, APPROACH], "retreat", cancel)
            raise MotionInterrupted(ExecCode.GRASP_FAILED, f"fingers missed the {drawer} handle")
        return handle

    def _release_handle(self, cancel) -> None:
        self.ctl.gripper(HANDLE_OPENING, cancel)
        self.arm.move_linear(self.arm.grasp_position() + [0, 0, 0.1], "retreat from the handle", cancel)

    def _blocking_upper(self, drawer: str) -> str | None:
        """An open drawer stacked above ``drawer``: it sits over this drawer's handle and contents,
        where a top-down grasp cannot reach (a real limit of this hand's top-down grasps)."""
        d = self.info.drawers[drawer]
        for name, other in self.info.drawers.items():
            above = d.covered and not other.covered and np.allclose(other.closed_center, d.closed_center)
            if above and perc.drawer_opening(self.data, self.info, name) > perc.DRAWER_CLOSED_TOL:
                return name
        return None

    def open_drawer(self, drawer: str, cancel) -> str:
        d = self.info.drawers[drawer]
        if upper := self._blocking_upper(drawer):
            raise MotionInterrupted(
                ExecCode.PLAN_FAILED,
                f"the open {upper} covers the {drawer} handle; top-down grasps cannot reach it (close {upper} first)",
            )
        handle = self._grasp_handle(drawer, cancel)
        travel = d.slide - perc.drawer_opening(self.data, self.info, drawer) - 0.01
        grip = self._grip_monitor(d.body_id, f"the {drawer} handle")
        self.arm.move_linear(
            handle - [travel, 0, 0], f"pull the {drawer} open", cancel, grip, speed=0.15, moving=d.geom_ids
        )
        self._release_handle(cancel)
        self.robot_at = drawer
        opening = perc.drawer_opening(self.data, self.info, drawer)
        if not perc.drawer_is_open(self.data, self.info, drawer):
            raise MotionInterrupted(ExecCode.GRASP_FAILED, f"{drawer} only opened {opening * 100:.1f} cm")
        return f"{drawer} open {opening * 100:.1f} cm"

    def close_drawer(self, drawer: str, cancel) -> str:
        d = self.info.drawers[drawer]
        handle = self._grasp_handle(drawer, cancel)
        travel = perc.drawer_opening(self.data, self.info, drawer) - 0.003
        grip = self._grip_monitor(d.body_id, f"the {drawer} handle")
        self.arm.move_linear(
            handle + [travel, 0, 0], f"push the {drawer} closed", cancel, grip, speed=0.15, moving=d.geom_ids
        )
        self._release_handle(cancel)
        self.robot_at = drawer
        opening = perc.drawer_opening(self.data, self.info, drawer)
        if opening > perc.DRAWER_CLOSED_TOL:
            raise MotionInterrupted(ExecCode.GRASP_FAILED, f"{drawer} still open {opening * 100:.1f} cm")
        return f"{drawer} closed ({opening * 1000:.1f} mm)"

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
        elif target in self.info.drawers:
            point = self.data.site_xpos[self.info.drawers[target].handle_site] + [0, 0, 0.08]
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
