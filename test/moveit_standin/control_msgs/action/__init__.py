"""``control_msgs.action.GripperCommand`` (ros-controls/control_msgs
``control_msgs/action/GripperCommand.action``): goal ``GripperCommand command``; result and
feedback ``position, effort, stalled, reached_goal``.
"""

from __future__ import annotations

from _msg import Field, Message

from control_msgs.msg import GripperCommand as GripperCommandMsg


class GripperCommand:
    class Goal(Message):
        FIELDS = {"command": Field(GripperCommandMsg, GripperCommandMsg)}

    class Result(Message):
        FIELDS = {
            "position": Field(float, 0.0),
            "effort": Field(float, 0.0),
            "stalled": Field(bool, False),
            "reached_goal": Field(bool, False),
        }

    Feedback = Result
