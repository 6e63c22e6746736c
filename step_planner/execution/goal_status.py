"""A goal whose "accepted" answer was lost on the way, found on the action's status topic and taken up.

An action server answers a new goal over a service, and rmw_fastrtps drops that answer when the server has not
yet matched the client's response reader within 100 ms (rmw_fastrtps_shared_cpp/src/rmw_response.cpp, jazzy:
"workaround for the race on the discovery of services"); the server only logs "failed to send response
(timeout)" and runs the goal anyway (rclpy action/server.py, _execute_goal_request: the status is published and
the goal executed after the response). The client would wait for an answer that never comes while the arm
moves. Every accepted goal is also listed on ``<action>/_action/status`` (transient local), so a client that
named its goal's id can see it there and carry on with a goal handle of its own: results, feedback, status and
cancel work as for any goal (they go by goal id).
"""

from __future__ import annotations

import threading
import uuid
import weakref
from typing import Any

from action_msgs.msg import GoalStatusArray
from rclpy.action.client import ActionClient, ClientGoalHandle
from rclpy.qos import qos_profile_action_status_default
from unique_identifier_msgs.msg import UUID

ACCEPT_PROBE_S = 0.5  # no answer this long after sending: look for the goal on the status topic


def new_goal_id() -> UUID:
    return UUID(uuid=list(uuid.uuid4().bytes))


class StatusWatch:
    """The latest status of every goal listed on an action's status topic (the action's own subscription keeps
    only the goals its client knows of)."""

    def __init__(self, node: Any, action_name: str, callback_group: Any = None) -> None:
        self._lock = threading.Lock()
        self._goals: dict[bytes, Any] = {}  # goal id -> action_msgs/GoalStatus
        self.subscription = node.create_subscription(GoalStatusArray, f"{action_name}/_action/status",
                                                     self._on_status, qos_profile_action_status_default,
                                                     callback_group=callback_group)

    def _on_status(self, msg: GoalStatusArray) -> None:
        with self._lock:
            self._goals = {bytes(s.goal_info.goal_id.uuid): s for s in msg.status_list}

    def status_of(self, goal_id: UUID) -> Any | None:
        with self._lock:
            return self._goals.get(bytes(goal_id.uuid))


def adopt_if_listed(client: ActionClient, future: Any, goal_id: UUID, watch: StatusWatch) -> bool:
    """If the goal ``future`` waits for is listed as accepted, complete ``future`` with a goal handle for it (as
    rclpy's client does on the answer: action/client.py, _goal_handles and the status loop of execute). Call it on
    the thread that spins the client's node."""
    status = watch.status_of(goal_id)
    if status is None or future.done():
        return False
    response = client._action_type.Impl.SendGoalService.Response(accepted=True, stamp=status.goal_info.stamp)
    handle = ClientGoalHandle(client, goal_id, response)
    handle._status = status.status
    client._goal_handles[bytes(goal_id.uuid)] = weakref.ref(handle)  # later status messages reach it
    future.set_result(handle)
    return True


def adopt_on_spin_thread(executor: Any, client: ActionClient, future: Any, goal_id: UUID, watch: StatusWatch) -> bool:
    """:func:`adopt_if_listed` run by ``executor``'s spinning thread (False if it does not get to it within 1 s)."""
    from step_planner.execution.spin_thread import on_spin_thread

    try:
        return on_spin_thread(executor, lambda: adopt_if_listed(client, future, goal_id, watch), 1.0)
    except TimeoutError:
        return False
