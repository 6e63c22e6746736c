"""Choose an executor backend by name; heavy backends are imported only when chosen."""

from __future__ import annotations

from typing import Any

from step_planner.domain.primitives import PrimitiveLibrary
from step_planner.domain.world import WorldState
from step_planner.execution.base import Executor
from step_planner.execution.errors import BackendUnavailable

BACKENDS = ("symbolic", "sim", "controllers", "moveit")
__all__ = ["BACKENDS", "BackendUnavailable", "make_executor"]


def make_executor(name: str, library: PrimitiveLibrary, world: WorldState, **options: Any) -> Executor:
    if name == "symbolic":
        from step_planner.execution.symbolic import SymbolicExecutor

        return SymbolicExecutor(library, world)
    if name == "sim":
        try:
            from step_planner.execution.sim.executor import SimExecutor
        except ImportError as exc:
            raise BackendUnavailable(
                f"the MuJoCo backend needs mujoco, mink, ompl and toppra ({exc}); run `make venv`"
            ) from exc
        return SimExecutor(library, world, **options)
    if name == "controllers":
        try:
            from step_planner.execution.controllers.backend import make_controllers_executor
        except ImportError as exc:
            raise BackendUnavailable(
                f"the controllers backend needs rclpy, control_msgs, trajectory_msgs and tf2_msgs ({exc}); on a robot "
                f"`rosdep install --from-paths src` brings them, here `make venv`"
            ) from exc
        return make_controllers_executor(library, world, **options)
    if name == "moveit":
        from step_planner.execution.moveit import make_moveit_executor

        return make_moveit_executor(library, world, **options)
    raise BackendUnavailable(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}")
