"""The real-arm backend (MoveIt 2 through moveit_py) for a Franka Panda / FR3.

Importing this package needs no ROS: moveit_py and the message packages are imported only when
an executor is built, and their absence raises ``BackendUnavailable`` saying what to install.
Pure parts: :mod:`.config` (config/franka.yaml), :mod:`.tool_poses` (poses from scene geometry),
:mod:`.scene_model` (collision bodies), :mod:`.errors` (MoveIt codes -> ExecCode). With ROS: :mod:`.arm`
(moveit_py), :mod:`.gripper` (the gripper server's conventions), :mod:`.ros_link` (the backend's rclpy node).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from step_planner.execution.errors import BackendUnavailable

if TYPE_CHECKING:
    from step_planner.domain.primitives import PrimitiveLibrary
    from step_planner.domain.world import WorldState
    from step_planner.execution.moveit.backend import MoveItExecutor



def make_moveit_executor(library: PrimitiveLibrary, world: WorldState, *, robot: str | None = None,
                         config_path: str | Path | None = None, safety_path: str | Path | None = None,
                         node_name: str = "step_planner_moveit", namespace: str = "/",
                         launch_params_filepaths: list[str] | None = None,
                         boundary_path: str | Path | None = None, **unsupported: Any) -> MoveItExecutor:
    """Load and check ``config/franka.yaml`` (``robot`` overrides its robot) against ``config/safety.yaml``, then
    connect to MoveIt, the arm controller and the gripper, in ``namespace`` (the node's).

    Every refusal is a ``BackendUnavailable`` whose message says what is wrong; nothing moves: limits beyond the
    safety envelope (the gripper force among them) are refused before anything is sent anywhere.

    The FR3's reflex is watched through ``robots.fr3.franka_hardware`` of ``boundary_path`` (default
    config/robot_boundary.yaml, the controllers backend's file): the same names, read by the same loader.
    """
    from step_planner.domain.safety import SafetyConfigError, SafetyEnvelope
    from step_planner.execution.moveit.config import FrankaConfig, FrankaConfigError
    from step_planner.execution.moveit.tool_poses import GeometryError
    from step_planner.resources import config_path as config_file

    if unsupported:
        raise BackendUnavailable(f"the moveit backend does not take the option(s) {', '.join(sorted(unsupported))}")
    try:
        config = FrankaConfig.load(config_path or config_file("franka.yaml"), robot)
        envelope = SafetyEnvelope.load(safety_path or config_file("safety.yaml"))
    except (FrankaConfigError, SafetyConfigError) as exc:
        raise BackendUnavailable(str(exc)) from exc
    limits = envelope.check_motion_limits(config.velocity_scaling, config.acceleration_scaling,
                                          config.gripper.max_effort)
    if limits:
        raise BackendUnavailable(f"{config.source} exceeds config/safety.yaml: {'; '.join(limits)}")
    from step_planner.execution.moveit.arm import SegmentFailed
    from step_planner.execution.moveit.backend import MoveItExecutor

    reflex = reflex_watch(config.robot, boundary_path or config_file("robot_boundary.yaml"))
    try:
        return MoveItExecutor(library, world, config, node_name=node_name, namespace=namespace,
                              launch_params_filepaths=launch_params_filepaths, reflex=reflex)
    except (GeometryError, SegmentFailed) as exc:
        raise BackendUnavailable(f"the scene cannot be given to MoveIt: {exc}") from exc


def reflex_watch(robot: str, boundary_path: str | Path):
    """The FR3's franka_hardware names and arm limits from the robot boundary file, or None (another robot, or an FR3
    entry without franka_hardware: reflexes are then not noticed). A malformed file is a BackendUnavailable."""
    if robot != "fr3":
        return None
    from step_planner.execution.controllers.config import BoundaryConfig, BoundaryConfigError
    from step_planner.execution.moveit.backend import ReflexWatch

    try:
        boundary = BoundaryConfig.load(boundary_path, "fr3")
    except BoundaryConfigError as exc:
        raise BackendUnavailable(f"the FR3's reflex watch: {exc}") from exc
    if boundary.franka_hardware is None:
        return None
    arm = boundary.arm
    return ReflexWatch(boundary.franka_hardware, tuple(arm.joints), tuple(arm.lower), tuple(arm.upper))


__all__ = ["BackendUnavailable", "make_moveit_executor"]
