"""The joint states a robot backend's connection receives, passed on as they arrived (to an episode's recorder).

WHY: the controllers and MoveIt backends read the robot's ``/joint_states`` for their own use (a merged latest
state, the fingers only) and keep nothing. An episode that is to be replayed on another robot (``step-planner
replay --controllers``) needs the joints as the robot reported them, every message, with its own stamps; the
connection hands each one to the listeners here, on its spin thread, before it reads it. A listener must be
quick (keep the message, write it elsewhere) and a listener's fault never reaches the connection.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

Listener = Callable[[Any], None]


class JointStateTap:
    """Every ``sensor_msgs/JointState`` received on ``topic``, to whoever listens (usually nobody)."""

    def __init__(self, topic: str, source: str) -> None:
        self.topic = topic  # as resolved by the connection's node
        self.source = source  # what receives them: "controllers backend", "moveit backend"
        self._lock = threading.Lock()
        self._listeners: tuple[Listener, ...] = ()

    def listen(self, listener: Listener) -> Callable[[], None]:
        """Pass every message received from now on to ``listener``; returns how to stop."""
        with self._lock:
            self._listeners = (*self._listeners, listener)

        def stop() -> None:
            with self._lock:
                self._listeners = tuple(x for x in self._listeners if x is not listener)

        return stop

    def __call__(self, msg: Any) -> None:
        for listener in self._listeners:
            try:
                listener(msg)
            except Exception:  # noqa: BLE001 - a recorder's fault must not stop the robot's joint states
                pass
