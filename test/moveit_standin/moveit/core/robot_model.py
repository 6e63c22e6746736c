"""``moveit.core.robot_model.RobotModel`` stand-in: the bound properties and methods the backend uses
(moveit2@4d84106 moveit_py/src/moveit/moveit_core/robot_model/robot_model.cpp:90-160)."""

from __future__ import annotations

from typing import Any


class RobotModel:
    def __init__(self, data: Any) -> None:
        self.data = data

    @property
    def name(self) -> str:
        return self.data.name

    @property
    def model_frame(self) -> str:
        return self.data.model_frame

    @property
    def joint_model_group_names(self) -> list[str]:
        return list(self.data.groups)

    def has_joint_model_group(self, joint_model_group_name: str) -> bool:
        return joint_model_group_name in self.data.groups
