"""``moveit.core.robot_state.RobotState`` stand-in."""

from __future__ import annotations

from typing import Any

from geometry_msgs.msg import Pose


class RobotState:
    def __init__(self, robot_model: Any) -> None:
        self._robot_model = robot_model
        self._positions: dict[str, list[float]] = {
            g: list(robot_model.data.states.get(g, {}).get("ready", robot_model.data.states.get(g, {}).get(
                "open", [0.0] * len(joints))))
            for g, joints in robot_model.data.groups.items()
        }

    @property
    def robot_model(self) -> Any:
        return self._robot_model

    def get_joint_group_positions(self, joint_model_group_name: str) -> list[float]:
        if joint_model_group_name not in self._positions:
            raise RuntimeError(f"Invalid group name {joint_model_group_name}")
        return list(self._positions[joint_model_group_name])

    def set_joint_group_positions(self, joint_model_group_name: str, position_values: list[float]) -> None:
        if joint_model_group_name not in self._positions:
            raise RuntimeError(f"Invalid group name {joint_model_group_name}")
        self._positions[joint_model_group_name] = list(position_values)

    def set_from_ik(self, joint_model_group_name: str, geometry_pose: Pose, tip_name: str,
                    timeout: float = 0.0) -> bool:
        from moveit._standin import LOG

        if not isinstance(geometry_pose, Pose):
            raise TypeError("set_from_ik(): geometry_pose must be a geometry_msgs.msg.Pose")
        if joint_model_group_name not in self._positions:
            raise RuntimeError(f"Invalid group name {joint_model_group_name}")
        LOG.add("set_from_ik", group=joint_model_group_name, tip=tip_name)
        return tip_name in self._robot_model.data.links

    def update(self, force: bool = False) -> None:
        return None

    def copy(self) -> RobotState:
        other = RobotState(self._robot_model)
        other._positions = {g: list(v) for g, v in self._positions.items()}
        return other
