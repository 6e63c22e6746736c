"""``shape_msgs.msg.SolidPrimitive`` (ros2/common_interfaces ``shape_msgs/msg/SolidPrimitive.msg``):
uint8 type (BOX=1 SPHERE=2 CYLINDER=3 CONE=4), float64[<=3] dimensions with the index constants
BOX_X=0 BOX_Y=1 BOX_Z=2, CYLINDER_HEIGHT=0 CYLINDER_RADIUS=1. The ``polygon`` field is omitted.
"""

from __future__ import annotations

from _msg import Field, Message


class SolidPrimitive(Message):
    BOX = 1
    SPHERE = 2
    CYLINDER = 3
    CONE = 4
    PRISM = 5
    BOX_X = 0
    BOX_Y = 1
    BOX_Z = 2
    SPHERE_RADIUS = 0
    CYLINDER_HEIGHT = 0
    CYLINDER_RADIUS = 1
    FIELDS = {
        "type": Field(int, 0),
        "dimensions": Field(list, seq_of=float),
    }

    def __setattr__(self, name, value):
        if name == "dimensions" and len(value) > 3:
            raise AssertionError("SolidPrimitive.dimensions holds at most 3 values")
        if name == "type" and not 0 <= value <= 255:
            raise AssertionError("SolidPrimitive.type is a uint8")
        super().__setattr__(name, value)
