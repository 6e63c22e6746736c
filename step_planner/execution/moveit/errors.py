"""MoveIt outcomes -> the planner's :class:`ExecCode` (pure; no ROS imports).

Values are ``moveit_msgs/msg/MoveItErrorCodes`` (moveit/moveit_msgs, ``msg/MoveItErrorCodes.msg``)
and the ``status`` strings of moveit_py's ``ExecutionStatus`` (``asString()`` of
``moveit_controller_manager::ExecutionStatus``). The split that matters to the planner: "cannot
reach / cannot find a path" (NO_IK, PLAN_FAILED: try something else) versus "the system is not
working" (BACKEND_ERROR: stop and tell the operator).
"""

from __future__ import annotations

from step_planner.execution.base import ExecCode

# moveit_msgs/MoveItErrorCodes (moveit/moveit_msgs@ec3ba4b, branch ros2, msg/MoveItErrorCodes.msg:1-50: int32 val,
# these constants, string message, string source)
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
GOAL_IN_COLLISION = -12
GOAL_VIOLATES_PATH_CONSTRAINTS = -13
GOAL_CONSTRAINTS_VIOLATED = -14
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
START_STATE_INVALID = -26
GOAL_STATE_INVALID = -27
UNRECOGNIZED_GOAL_TYPE = -28
CRASH = -29
ABORT = -30
NO_IK_SOLUTION = -31

_NAMES = {v: k for k, v in globals().items() if k.isupper() and isinstance(v, int)}

_PLAN_CODES: dict[int, ExecCode] = {
    SUCCESS: ExecCode.SUCCESS,
    NO_IK_SOLUTION: ExecCode.NO_IK,
    PLANNING_FAILED: ExecCode.PLAN_FAILED,
    INVALID_MOTION_PLAN: ExecCode.PLAN_FAILED,
    MOTION_PLAN_INVALIDATED_BY_ENVIRONMENT_CHANGE: ExecCode.PLAN_FAILED,
    GOAL_IN_COLLISION: ExecCode.PLAN_FAILED,
    GOAL_VIOLATES_PATH_CONSTRAINTS: ExecCode.PLAN_FAILED,
    GOAL_CONSTRAINTS_VIOLATED: ExecCode.PLAN_FAILED,
    GOAL_STATE_INVALID: ExecCode.PLAN_FAILED,
    INVALID_GOAL_CONSTRAINTS: ExecCode.PLAN_FAILED,
    START_STATE_VIOLATES_PATH_CONSTRAINTS: ExecCode.PLAN_FAILED,
    START_STATE_IN_COLLISION: ExecCode.COLLISION,  # the arm already touches something: replanning won't help
    START_STATE_INVALID: ExecCode.COLLISION,
    TIMED_OUT: ExecCode.TIMEOUT,
    PREEMPTED: ExecCode.CANCELED,
    # configuration / system faults: an operator must look
    UNDEFINED: ExecCode.BACKEND_ERROR,
    INVALID_GROUP_NAME: ExecCode.BACKEND_ERROR,
    INVALID_LINK_NAME: ExecCode.BACKEND_ERROR,
    INVALID_OBJECT_NAME: ExecCode.BACKEND_ERROR,
    INVALID_ROBOT_STATE: ExecCode.BACKEND_ERROR,
    UNRECOGNIZED_GOAL_TYPE: ExecCode.BACKEND_ERROR,
    FRAME_TRANSFORM_FAILURE: ExecCode.BACKEND_ERROR,
    COLLISION_CHECKING_UNAVAILABLE: ExecCode.BACKEND_ERROR,
    ROBOT_STATE_STALE: ExecCode.BACKEND_ERROR,
    SENSOR_INFO_STALE: ExecCode.BACKEND_ERROR,
    UNABLE_TO_AQUIRE_SENSOR_DATA: ExecCode.BACKEND_ERROR,
    COMMUNICATION_FAILURE: ExecCode.BACKEND_ERROR,
    CONTROL_FAILED: ExecCode.BACKEND_ERROR,
    CRASH: ExecCode.BACKEND_ERROR,
    ABORT: ExecCode.BACKEND_ERROR,
    FAILURE: ExecCode.BACKEND_ERROR,
}

# moveit_controller_manager::ExecutionStatus::asString()
_EXECUTION_STATUS: dict[str, ExecCode] = {
    "SUCCEEDED": ExecCode.SUCCESS,
    "PREEMPTED": ExecCode.CANCELED,
    "TIMED_OUT": ExecCode.TIMEOUT,
    "ABORTED": ExecCode.BACKEND_ERROR,
    "FAILED": ExecCode.BACKEND_ERROR,
    "UNKNOWN": ExecCode.BACKEND_ERROR,
    "RUNNING": ExecCode.BACKEND_ERROR,
}


def code_name(val: int) -> str:
    return _NAMES.get(val, f"UNKNOWN_CODE_{val}")


def plan_code(val: int) -> ExecCode:
    """A planning error code as the planner's outcome code (unknown codes are backend errors)."""
    return _PLAN_CODES.get(int(val), ExecCode.BACKEND_ERROR)


def execution_code(status: object) -> tuple[ExecCode, str]:
    """``MoveItPy.execute``'s return (an ExecutionStatus, or a bool in older releases)."""
    if isinstance(status, bool):
        return (ExecCode.SUCCESS, "SUCCEEDED") if status else (ExecCode.BACKEND_ERROR, "FAILED")
    text = str(getattr(status, "status", "UNKNOWN")).upper()
    return _EXECUTION_STATUS.get(text, ExecCode.BACKEND_ERROR), text
