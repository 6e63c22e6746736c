"""Choose an executor backend by name; heavy backends are imported only when chosen."""

from __future__ import annotations

from typing import Any

from step_planner.domain.primitives import PrimitiveLibrary
from step_planner.domain.world import WorldState
from step_planner.execution.base import Executor
from step_planner.execution.errors import BackendUnavailable

BACKENDS = ("symbolic", "sim", "controllers", "moveit")
__all__ = ["BACKENDS", "BackendUnavailable", "check_libraries", "make_executor"]
# The Python modules each backend imports when it is built (the robot backends at the first goal): checked when the
# node starts, so a missing one stops it there (issue 38) instead of failing the first goal.
LIBRARIES = {
    "symbolic": (),
    "sim": ("mujoco", "mink", "ompl", "toppra"),
    "controllers": ("rclpy", "control_msgs.action", "trajectory_msgs.msg", "tf2_msgs.msg", "mujoco"),
    "moveit": ("moveit.planning", "moveit_msgs.msg", "shape_msgs.msg", "geometry_msgs.msg", "rclpy"),
}
INSTALL = {
    "sim": "pip install -r requirements-robot.txt (here: make venv)",
    "controllers": "rosdep install --from-paths src brings the ROS messages; pip install -r requirements-robot.txt "
                   "the rest",
    "moveit": "STEP_PLANNER_MOVEIT=1 rosdep install --from-paths src --ignore-src -y (docs/moveit_backend.md)",
}


def check_libraries(name: str) -> None:
    """Raise BackendUnavailable, one line naming every missing module and how to install it, when a module backend
    ``name`` imports is not importable. Nothing is imported: the modules are only looked up."""
    import importlib.util

    def missing(module: str) -> bool:
        try:
            return importlib.util.find_spec(module) is None
        except (ImportError, ValueError):  # a parent package missing, or a module without a spec
            return True

    absent = [m for m in LIBRARIES.get(name, ()) if missing(m)]
    if absent:
        raise BackendUnavailable(f"backend {name} needs Python modules that are not importable here: "
                                 f"{', '.join(absent)}; {INSTALL[name]}")


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
