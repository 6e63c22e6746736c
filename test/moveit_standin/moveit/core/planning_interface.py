"""``moveit.core.planning_interface.MotionPlanResponse`` stand-in."""

from __future__ import annotations

from typing import Any


class MotionPlanResponse:
    def __init__(self, trajectory: Any, error_code: Any, planning_time: float = 0.01) -> None:
        self._trajectory, self._error_code, self._planning_time = trajectory, error_code, planning_time

    @property
    def trajectory(self) -> Any:
        return self._trajectory

    @property
    def error_code(self) -> Any:
        return self._error_code

    @property
    def planning_time(self) -> float:
        return self._planning_time

    def __bool__(self) -> bool:
        return self._error_code.val == 1
