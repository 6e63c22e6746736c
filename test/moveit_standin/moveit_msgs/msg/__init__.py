"""``moveit_msgs.msg`` stand-ins: the fields of the ROS 2 (Jazzy) message definitions.

Sources (moveit/moveit_msgs, read through the search tool): ``msg/CollisionObject.msg``
(ROS 2 layout: ``std_msgs/Header header``, ``geometry_msgs/Pose pose``, ``string id``, primitives,
``byte`` operation constants ADD=0 REMOVE=1 APPEND=2 MOVE=3), ``msg/AttachedCollisionObject.msg``
(link_name, object, touch_links, weight) and ``msg/MoveItErrorCodes.msg`` (moveit/moveit_msgs@ec3ba4b, branch
ros2, :1-50: ``int32 val``, the constants, ``string message``, ``string source``).
Meshes, planes, subframes and ``type`` are left out: nothing here uses them, and setting them
fails loudly instead of passing silently.
"""

from __future__ import annotations

from _msg import Field, Message
from geometry_msgs.msg import Pose
from shape_msgs.msg import SolidPrimitive
from std_msgs.msg import Header


class CollisionObject(Message):
    ADD = b"\x00"
    REMOVE = b"\x01"
    APPEND = b"\x02"
    MOVE = b"\x03"
    FIELDS = {
        "header": Field(Header, Header),
        "pose": Field(Pose, Pose),
        "id": Field(str, ""),
        "primitives": Field(list, seq_of=SolidPrimitive),
        "primitive_poses": Field(list, seq_of=Pose),
        "operation": Field("byte", b"\x00"),
    }


class AttachedCollisionObject(Message):
    FIELDS = {
        "link_name": Field(str, ""),
        "object": Field(CollisionObject, CollisionObject),
        "touch_links": Field(list, seq_of=str),
        "weight": Field(float, 0.0),
    }


class MoveItErrorCodes(Message):
    SUCCESS = 1
    UNDEFINED = 0
    FAILURE = 99999
    PLANNING_FAILED = -1
    INVALID_MOTION_PLAN = -2
    MOTION_PLAN_INVALIDATED_BY_ENVIRONMENT_CHANGE = -3
    CONTROL_FAILED = -4
    UNABLE_TO_AQUIRE_SENSOR_DATA = -5
    TIMED_OUT = -6
    PREEMPTED = -7
    START_STATE_IN_COLLISION = -10
    START_STATE_VIOLATES_PATH_CONSTRAINTS = -11
    START_STATE_INVALID = -26
    GOAL_IN_COLLISION = -12
    GOAL_VIOLATES_PATH_CONSTRAINTS = -13
    GOAL_CONSTRAINTS_VIOLATED = -14
    GOAL_STATE_INVALID = -27
    UNRECOGNIZED_GOAL_TYPE = -28
    INVALID_GROUP_NAME = -15
    INVALID_GOAL_CONSTRAINTS = -16
    INVALID_ROBOT_STATE = -17
    INVALID_LINK_NAME = -18
    INVALID_OBJECT_NAME = -19
    FRAME_TRANSFORM_FAILURE = -21
    COLLISION_CHECKING_UNAVAILABLE = -22
    ROBOT_STATE_STALE = -23
    SENSOR_INFO_STALE = -24
    COMMUNICATION_FAILURE = -25
    CRASH = -29
    ABORT = -30
    NO_IK_SOLUTION = -31
    FIELDS = {
        "val": Field(int, 0),
        "message": Field(str, ""),
        "source": Field(str, ""),
    }
