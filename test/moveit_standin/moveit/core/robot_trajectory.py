"""``moveit.core.robot_trajectory.RobotTrajectory`` (stand-in: made by ``PlanningComponent.plan``)."""

from __future__ import annotations

from typing import Any


class RobotTrajectory:
    def __init__(self, robot_model: Any) -> None:
        self._robot_model = robot_model
        self.joint_model_group_name = ""
        self._goal: dict[str, Any] = {}
        self._end: list[float] | None = None
        self._plan_index = -1

    @property
    def duration(self) -> float:
        return 1.0

    @property
    def robot_model(self) -> Any:
        return self._robot_model

    def __len__(self) -> int:
        return 10

    def apply_totg_time_parameterization(self, velocity_scaling_factor: float, acceleration_scaling_factor: float,
                                         path_tolerance: float = 0.1, resample_dt: float = 0.1,
                                         min_angle_change: float = 0.001) -> bool:
        return True
