"""Collision-free joint-space planning: OMPL RRTConnect with MuJoCo collision checks.

The checker works on a scratch copy of the live physics state: it moves the arm (and a held
object, rigidly attached to the grasp frame) and asks MuJoCo for contacts closer than a small
safety margin. Measured pitfall: OMPL's default motion-check resolution (~0.065 rad) steps
through a 2 cm wall, so the resolution is 0.2 % of the space extent and every timed trajectory
is re-checked densely before it runs (:meth:`CollisionChecker.first_collision`).
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass

import mujoco
import numpy as np

from step_planner.execution.sim.model import PandaIndex

SAFETY_MARGIN = 0.006
SELF_MARGIN = 0.0  # two links of the arm may come close, not overlap: their shapes are known exactly
# (front handle grasps low near the base bring link 5 within a millimetre of link 7)
RESOLUTION = 0.002


@dataclass
class Attachment:
    """A held object, fixed in the grasp frame for collision checking."""

    body_id: int
    qpos_adr: int
    rel_pos: np.ndarray
    rel_quat: np.ndarray


class CollisionChecker:
    def __init__(self, model: mujoco.MjModel, index: PandaIndex, margin: float = SAFETY_MARGIN) -> None:
        self.model = copy.deepcopy(model)
        self.index = index
        self.data = mujoco.MjData(self.model)
        self.robot_geoms = np.isin(self.model.geom_bodyid, list(index.arm_bodies))
        self.finger_geoms = np.isin(self.model.geom_bodyid, list(index.finger_bodies))
        self.model.geom_margin[self.robot_geoms] = margin
        self.model.geom_gap[self.robot_geoms] = margin
        # Only contacts of the robot (and what it holds) are asked for, so this copy does not generate the others
        # (objects resting on the table or in a drawer: most of mj_collision's work in a cluttered scene). A pair
        # collides when contype1 & conaffinity2 or contype2 & conaffinity1; with every geom's contype equal to its
        # conaffinity (the scenes' 1/1 and 0/0), clearing the contype of the geoms not the robot's keeps every pair with
        # a robot geom exactly as it was and drops the pairs of two other geoms.
        self._contype = self.model.geom_contype.copy()
        self._scene_only = ~self.robot_geoms if np.array_equal(self._contype, self.model.geom_conaffinity) else None
        if self._scene_only is not None:
            self.model.geom_contype[self._scene_only] = 0
        self.attachment: Attachment | None = None
        self.attached_geoms = np.zeros(self.model.ngeom, dtype=bool)
        self._tables: dict[bool, tuple[np.ndarray, np.ndarray]] = {}
        self.ignored_geoms = np.zeros(self.model.ngeom, dtype=bool)
        self.margin = margin
        self.checks = 0

    def sync(self, live: mujoco.MjData) -> None:
        """Take the current positions of everything (objects, drawers, fingers) from the physics."""
        self.data.qpos[:] = live.qpos
        self.data.qvel[:] = 0.0

    def attach(self, attachment: Attachment | None) -> None:
        self.attachment = attachment
        self.model.geom_margin[self.attached_geoms] = 0.0
        self.model.geom_gap[self.attached_geoms] = 0.0
        if self._scene_only is not None:
            self.model.geom_contype[self.attached_geoms & self._scene_only] = 0
        self.attached_geoms[:] = False
        if attachment is not None:
            self.attached_geoms = self.model.geom_bodyid == attachment.body_id
            self.model.geom_margin[self.attached_geoms] = self.margin
            self.model.geom_gap[self.attached_geoms] = self.margin
            self.model.geom_contype[self.attached_geoms] = self._contype[self.attached_geoms]  # held: the robot's
        self._tables.clear()

    def ignore(self, geom_ids) -> None:
        """Geoms allowed to touch the robot (e.g. a handle during a Cartesian move)."""
        self.ignored_geoms[:] = False
        for g in geom_ids:
            self.ignored_geoms[g] = True
        self._tables.clear()

    def _pairs(self, allow_fingers: bool) -> tuple[np.ndarray, np.ndarray]:
        """(counted, limit) over geom pairs: whether a contact of the pair is the robot's to report, and the distance
        under which it is (the arm's own links are known exactly: the world-model margin does not apply to them)."""
        if allow_fingers not in self._tables:
            robot, held, fingers, ignored = self.robot_geoms, self.attached_geoms, self.finger_geoms, self.ignored_geoms
            mine = robot | held
            counted = (mine[:, None] | mine[None, :]) & ~ignored[:, None] & ~ignored[None, :]
            counted &= ~((fingers[:, None] & held[None, :]) | (fingers[None, :] & held[:, None]))
            counted &= ~(held[:, None] & held[None, :])
            if allow_fingers:
                hand = fingers | held
                counted &= ~(hand[:, None] | hand[None, :])
            limit = np.where(robot[:, None] & robot[None, :], SELF_MARGIN, self.margin)
            self._tables[allow_fingers] = counted, limit
        return self._tables[allow_fingers]

    def _place_attached(self) -> None:
        a = self.attachment
        pos = self.data.xpos[self.index.grasp_body]
        quat = self.data.xquat[self.index.grasp_body]
        obj_pos = pos + self.data.xmat[self.index.grasp_body].reshape(3, 3) @ a.rel_pos
        obj_quat = np.zeros(4)
        mujoco.mju_mulQuat(obj_quat, quat, a.rel_quat)
        self.data.qpos[a.qpos_adr : a.qpos_adr + 3] = obj_pos
        self.data.qpos[a.qpos_adr + 3 : a.qpos_adr + 7] = obj_quat

    def contacts(self, q: np.ndarray, allow_fingers: bool = False) -> list[tuple[str, str, float]]:
        """Robot contacts (names and distance) closer than the margin at arm configuration ``q``.

        ``allow_fingers`` ignores contacts of the fingers and the held object: used for Cartesian
        approaches whose purpose is to bring exactly those close to something.
        """
        self.checks += 1
        self.data.qpos[self.index.arm_qpos] = q
        mujoco.mj_kinematics(self.model, self.data)
        if self.attachment is not None:
            self._place_attached()
            mujoco.mj_kinematics(self.model, self.data)
        mujoco.mj_collision(self.model, self.data)
        if not self.data.ncon:
            return []
        # which pairs count, and their distance limit, are tables over geom pairs (remade after attach/ignore): the
        # tests a loop over data.contact's items made (a sixth of a sim run's CPU: each item is a Python view)
        contact = self.data.contact
        g1, g2 = contact.geom[:, 0], contact.geom[:, 1]
        counted, limit = self._pairs(allow_fingers)
        dist = contact.dist
        keep = counted[g1, g2] & (dist < limit[g1, g2])
        hits = []
        for k in np.flatnonzero(keep):
            a, b = int(g1[k]), int(g2[k])
            hits.append((self.model.geom(a).name or self.model.body(self.model.geom_bodyid[a]).name,
                         self.model.geom(b).name or self.model.body(self.model.geom_bodyid[b]).name,
                         float(dist[k])))
        return hits

    def is_free(self, q: np.ndarray) -> bool:
        return not self.contacts(q)

    def first_collision(self, qs: np.ndarray, step: float = 0.01) -> int | None:
        """Index of the first colliding configuration along a densely re-sampled joint path."""
        for i in range(len(qs)):
            if i > 0:
                gap = np.max(np.abs(qs[i] - qs[i - 1]))
                n = int(np.ceil(gap / step))
                for s in np.linspace(0, 1, n + 1)[1:-1]:
                    if not self.is_free(qs[i - 1] + s * (qs[i] - qs[i - 1])):
                        return i
            if not self.is_free(qs[i]):
                return i
        return None


class PlanningError(Exception):
    """No collision-free path was found (start/goal in collision, or planner timeout)."""


class PlanningCanceled(Exception):
    """The cancel event was set while the planner ran."""


_OMPL_READY = False


def _init_ompl(seed: int) -> None:
    """OMPL's RNG can be seeded once per process, before its first use."""
    global _OMPL_READY
    if not _OMPL_READY:
        from ompl import util as ou

        ou.setLogLevel(ou.LogLevel.LOG_WARN)
        ou.RNG.setSeed(int(seed) + 1)
        _OMPL_READY = True


LIMIT_OVERSHOOT = 0.03  # rad a measured start may sit past a joint limit (servo settling)


def plan_rrt_connect(
    checker: CollisionChecker,
    q_start: np.ndarray,
    q_goal: np.ndarray,
    timeout: float = 3.0,
    seed: int = 0,
    cancel=None,
) -> tuple[np.ndarray, float]:
    """A simplified collision-free joint path (waypoints) and the planning time in seconds.

    ``cancel`` (a threading.Event) also stops the planner; that raises :class:`PlanningCanceled`.
    """
    from ompl import base as ob
    from ompl import geometric as og

    _init_ompl(seed)
    t0 = time.perf_counter()
    if hits := checker.contacts(q_start):
        raise PlanningError(f"start configuration in collision: {hits[:3]}")
    if hits := checker.contacts(q_goal):
        raise PlanningError(f"goal configuration in collision: {hits[:3]}")
    idx = checker.index
    over = np.maximum(idx.lower - q_start, q_start - idx.upper)
    if np.any(over > LIMIT_OVERSHOOT):
        raise PlanningError(f"start configuration beyond joint limits by {np.round(np.maximum(over, 0), 3).tolist()}")
    # the servos can settle a few mrad past a limit the plan touched; OMPL rejects such a start
    q_start = np.clip(q_start, idx.lower, idx.upper)
    space = ob.RealVectorStateSpace(7)
    bounds = ob.RealVectorBounds(7)
    for i in range(7):
        bounds.setLow(i, float(idx.lower[i]))
        bounds.setHigh(i, float(idx.upper[i]))
    space.setBounds(bounds)
    setup = og.SimpleSetup(space)
    setup.setStateValidityChecker(lambda s: checker.is_free(np.array([s[i] for i in range(7)])))
    info = setup.getSpaceInformation()
    info.setStateValidityCheckingResolution(RESOLUTION)
    start, goal = space.allocState(), space.allocState()
    for i in range(7):
        start[i], goal[i] = float(q_start[i]), float(q_goal[i])
    setup.setStartAndGoalStates(start, goal)
    setup.setPlanner(og.RRTConnect(info))
    deadline = time.perf_counter() + timeout
    stop = ob.PlannerTerminationCondition(
        lambda: time.perf_counter() > deadline or (cancel is not None and cancel.is_set())
    )
    status = setup.solve(stop)
    if cancel is not None and cancel.is_set():
        raise PlanningCanceled("canceled while planning")
    if not (bool(status) and setup.haveExactSolutionPath()):
        raise PlanningError(f"RRTConnect found no path in {timeout:.1f} s ({status})")
    setup.simplifySolution(0.5)
    path = setup.getSolutionPath()
    qs = np.array([[path.getState(k)[i] for i in range(7)] for k in range(path.getStateCount())])
    return qs, time.perf_counter() - t0
