"""What happens to a goal that arrives while another one runs: reject, preempt or queue.

One arm runs one goal at a time. The arbiter is plain threading (no rclpy) so the three policies are
tested without a ROS graph; the action server asks it to ``admit`` each goal, waits for its turn, and
tells it when the goal is ``finish``-ed.

- ``reject``: a goal arriving while busy ends at once with BUSY.
- ``preempt``: the running goal (and any waiting one) is canceled; the newest goal runs next.
- ``queue``: goals wait in arrival order, up to ``max_queue`` waiting; beyond that BUSY.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from enum import Enum

POLICIES = ("reject", "preempt", "queue")


class GoalPolicy(str, Enum):
    REJECT = "reject"
    PREEMPT = "preempt"
    QUEUE = "queue"

    @classmethod
    def parse(cls, value: str) -> GoalPolicy:
        try:
            return cls(value)
        except ValueError:
            raise ValueError(f"goal_policy must be one of {', '.join(POLICIES)}, got {value!r}") from None


@dataclass(eq=False)
class Ticket:
    """One goal's place in line; ``cancel`` is the event handed to ``run_goal``."""

    goal_id: str
    cancel: threading.Event = field(default_factory=threading.Event)
    preempted_by: str | None = None
    stopped_by: str | None = None  # the node is shutting down

    def stop(self, reason: str) -> None:
        self.stopped_by = reason
        self.cancel.set()

    @property
    def cancel_reason(self) -> str:
        if self.stopped_by:
            return self.stopped_by
        if self.preempted_by:
            return f"preempted by goal {self.preempted_by}"
        return "canceled by the client"


@dataclass(frozen=True)
class Admission:
    admitted: bool
    reason: str = ""


class GoalArbiter:
    def __init__(self, policy: GoalPolicy | str, max_queue: int = 4) -> None:
        self.policy = policy if isinstance(policy, GoalPolicy) else GoalPolicy.parse(policy)
        self.max_queue = max_queue
        self._cond = threading.Condition()
        self._running: Ticket | None = None
        self._waiting: list[Ticket] = []

    @property
    def running(self) -> Ticket | None:
        return self._running

    @property
    def waiting(self) -> list[Ticket]:
        with self._cond:
            return list(self._waiting)

    def admit(self, ticket: Ticket) -> Admission:
        with self._cond:
            if self._running is None and not self._waiting:
                self._running = ticket
                return Admission(True)
            busy_with = self._running.goal_id if self._running else self._waiting[-1].goal_id
            if self.policy is GoalPolicy.REJECT:
                return Admission(False, f"busy with goal {busy_with} (goal_policy: reject)")
            if self.policy is GoalPolicy.PREEMPT:
                for other in ([self._running] if self._running else []) + self._waiting:
                    other.preempted_by = ticket.goal_id
                    other.cancel.set()
                self._waiting = [ticket]
                self._cond.notify_all()
                return Admission(True)
            if len(self._waiting) >= self.max_queue:
                return Admission(False, f"busy: {len(self._waiting)} goals already wait (max_queue {self.max_queue})")
            self._waiting.append(ticket)
            return Admission(True)

    def wait_turn(self, ticket: Ticket, poll_s: float = 0.05) -> bool:
        """Block until ``ticket`` may run (True) or is canceled while waiting (False)."""
        with self._cond:
            while self._running is not ticket:
                if ticket.cancel.is_set():
                    if ticket in self._waiting:
                        self._waiting.remove(ticket)
                    return False
                self._cond.wait(poll_s)  # cancel events are set elsewhere: poll them
            return True

    def finish(self, ticket: Ticket) -> None:
        """The goal ended (or gave up waiting): hand the arm to the next waiting goal."""
        with self._cond:
            if ticket in self._waiting:
                self._waiting.remove(ticket)
            if self._running is ticket:
                self._running = self._waiting.pop(0) if self._waiting else None
            self._cond.notify_all()
