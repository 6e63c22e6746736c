"""SimExecutor: the MuJoCo Panda behind the :class:`Executor` protocol.

Calls are checked first against the world as the robot observes it (``check_call``), then run
physically; the symbolic state reported afterwards is derived from the physics, not from the
call's declared effects. Nothing escapes ``execute``: exceptions become BACKEND_ERROR.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import mujoco
import numpy as np

from step_planner.domain.primitives import PrimitiveCall, PrimitiveLibrary
from step_planner.domain.transitions import check_call
from step_planner.domain.world import WorldState
from step_planner.execution.base import ExecCode, Outcome
from step_planner.execution.sim import perception as perc
from step_planner.execution.sim.control import Controller, MotionInterrupted
from step_planner.execution.sim.ik import IkSolver
from step_planner.execution.sim.model import HOME_Q, PandaIndex
from step_planner.execution.sim.motion import Arm
from step_planner.execution.sim.planning import CollisionChecker
from step_planner.execution.sim.primitives import SimPrimitives
from step_planner.execution.sim.scene_builder import scene_at_home
from step_planner.execution.sim.scene_info import SceneInfo


class MotionStackExecutor:
    """The Executor shared by the backends that run the project's own motion stack: each call is checked
    against the world the robot observes (``check_call``), then run as :class:`SimPrimitives` over a
    controller (the in-process physics, or a robot across ROS); failures become Outcomes with their codes.

    A subclass builds ``model``, ``data``, ``index``, ``info``, ``controller``, ``arm`` and ``primitives``
    in ``reset`` and may add work after each call (:meth:`_after`).
    """

    library: PrimitiveLibrary
    template: WorldState
    model: mujoco.MjModel
    data: mujoco.MjData
    index: PandaIndex
    info: SceneInfo
    controller: Controller
    arm: Arm
    primitives: SimPrimitives

    def observe(self) -> WorldState:
        with self.controller.lock:  # safe to call while execute() runs in another thread
            return perc.observe_world(self.model, self.data, self.index, self.info, self.template,
                                      robot_at=self.primitives.robot_at,
                                      held=lambda name: self.controller.holds(self.info, name))

    def execute(self, call: PrimitiveCall, cancel: threading.Event | None = None) -> Outcome:
        wall0, sim0 = time.perf_counter(), self.data.time
        plan0, moving0 = self.arm.stats.planning_s, self.controller.sim_time_moving
        try:
            if cancel is not None and cancel.is_set():
                return Outcome(ExecCode.CANCELED, "canceled before motion")
            problems = check_call(call, self.library, self.observe().observed())
            if problems:
                return Outcome(ExecCode.PRECONDITION_FAILED, "; ".join(p.message for p in problems))
            try:
                message = self.primitives.run(call, cancel)
                code, details = ExecCode.SUCCESS, {}
            except MotionInterrupted as exc:
                code, message, details = exc.code, exc.message, dict(exc.details)
        except Exception as exc:  # a bug or a solver crash: report it, never raise into the planner
            return Outcome(
                ExecCode.BACKEND_ERROR, f"{type(exc).__name__}: {exc}", duration_s=time.perf_counter() - wall0
            )
        details.update(
            planning_s=round(self.arm.stats.planning_s - plan0, 4),
            sim_s=round(self.data.time - sim0, 4),
            moving_sim_s=round(self.controller.sim_time_moving - moving0, 4),
            wall_s=round(time.perf_counter() - wall0, 4),
        )
        self._after(call)
        return Outcome(code, message, duration_s=time.perf_counter() - wall0, details=details)

    def _after(self, call: PrimitiveCall) -> None:
        """Work after each executed call (the simulator saves a keyframe)."""


class SimExecutor(MotionStackExecutor):
    """Physics-simulated Panda. ``seed`` perturbs object poses by a few mm/deg (0 = exact scene).

    ``video_path`` records an MP4 of everything executed until :meth:`close` (across resets);
    ``render`` saves a keyframe PNG after each primitive into ``keyframe_dir`` (default: next to
    the video, ``<video stem>_keyframes/``). ``realtime`` runs the physics at real-time pace, so a
    primitive takes as long in wall time as on the robot (latency benchmarks, live viewers); a number is the pace
    (simulated seconds per wall second: 3.0 three times real time, as the tests run the MuJoCo robot).
    ``velocity_cap`` (rad/s per joint) bounds every planned joint speed, as the controllers backend's
    ``stop_within_s`` does (to compare the two like for like); None: the motion stack's limits alone.
    ``plan_limits``: (lower, upper) arm joint ranges IK and the planner keep to, as the controllers backend plans a
    robot within its own limits (BoundaryConfig.planning_limits); None: the model's. The physics keeps the model's.
    """

    def __init__(
        self,
        library: PrimitiveLibrary,
        scene_world: WorldState,
        seed: int = 0,
        video_path: str | Path | None = None,
        render: bool = False,
        keyframe_dir: str | Path | None = None,
        realtime: bool | float = False,
        velocity_cap: Sequence[float] | None = None,
        plan_limits: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> None:
        self.library = library
        self.velocity_cap = velocity_cap
        self.seed = seed
        self.realtime = realtime
        self.video_path = video_path
        self.render = render
        if keyframe_dir is None and render and video_path is not None:
            keyframe_dir = Path(video_path).with_name(Path(video_path).stem + "_keyframes")
        self.keyframe_dir = Path(keyframe_dir) if keyframe_dir else None
        self.step_hooks: list[Callable[[mujoco.MjData], None]] = []
        self.renderer = None
        self.keyframes: list[Path] = []
        self.plan_limits = plan_limits
        self.ik = IkSolver(seed, plan_limits)
        self.reset(scene_world)

    # ---- Executor protocol -------------------------------------------------------------
    def reset(self, world: WorldState) -> None:
        self.template = world.copy()
        self.model, self.info, self.data, self.index = scene_at_home(world, self.seed)
        if self.renderer is not None:
            self.renderer.set_model(self.model)
        elif self.video_path is not None or self.render:
            from step_planner.execution.sim.render import SceneRenderer

            self.renderer = SceneRenderer(self.model, video_path=self.video_path)
        self.controller = Controller(self.model, self.data, self.index, on_step=self._on_step,
                                     pace=float(self.realtime))
        self.controller.hold(HOME_Q)
        self.controller.settle(0.5)  # let objects come to rest
        if self.plan_limits is not None:  # the planner's bounds only (PandaIndex.lower/upper), not the physics'
            self.index.lower, self.index.upper = (np.array(v, dtype=float) for v in self.plan_limits)
        self.checker = CollisionChecker(self.model, self.index)
        self.arm = Arm(self.controller, self.ik, self.checker, seed=self.seed, velocity_cap=self.velocity_cap)
        self.primitives = SimPrimitives(self.model, self.data, self.info, self.arm)
        self.episode_step = 0

    # ---- pictures -----------------------------------------------------------------------
    def _on_step(self, data: mujoco.MjData) -> None:
        for hook in self.step_hooks:
            hook(data)
        if self.renderer is not None:
            self.renderer.maybe_record(data)

    def _after(self, call: PrimitiveCall) -> None:
        self._keyframe(call)

    def _keyframe(self, call: PrimitiveCall) -> None:
        if not (self.render and self.renderer is not None and self.keyframe_dir is not None):
            return
        self.episode_step += 1
        path = self.keyframe_dir / f"{self.episode_step:02d}_{call.name}.png"
        self.keyframes.append(self.renderer.save_png(self.data, path))

    def close(self) -> None:
        """Finalize the video (if any) and free the renderer."""
        if self.renderer is not None:
            self.renderer.close()
            self.renderer = None
