"""``control_msgs.msg.GripperCommand`` (ros-controls/control_msgs): float64 position, float64 max_effort."""

from __future__ import annotations

from _msg import Field, Message


class GripperCommand(Message):
    FIELDS = {"position": Field(float, 0.0), "max_effort": Field(float, 0.0)}
