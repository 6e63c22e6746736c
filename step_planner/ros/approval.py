"""Approval mode: a person approves each primitive before it can move the arm.

The gate sits in ``run_goal``'s gate chain (after the safety envelope). It parks the call, waits for an
answer from the ``~/approve_step`` service, and refuses the call (REJECTED, never executed) on a
refusal, a timeout or a cancel. Plain threading, so it is tested without ROS.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from step_planner.domain.primitives import PrimitiveCall
from step_planner.execution.base import ExecCode, Outcome


class ApprovalGate:
    def __init__(self, timeout_s: Callable[[], float], on_pending: Callable[[str], None] = lambda text: None) -> None:
        self._timeout_s = timeout_s
        self._on_pending = on_pending
        self._cond = threading.Condition()
        self._pending: str | None = None
        self._answer: tuple[bool, str] | None = None
        self.asked = 0  # how many steps have waited for approval (tells two identical requests apart)

    @property
    def pending(self) -> str | None:
        return self._pending

    def check(self, call: PrimitiveCall, cancel: threading.Event | None) -> Outcome | None:
        """None when approved, else the refusal as an Outcome."""
        deadline = threading.Event()
        timer = threading.Timer(self._timeout_s(), deadline.set)
        timer.daemon = True
        with self._cond:
            self._pending, self._answer = str(call), None
            self.asked += 1
        self._on_pending(str(call))
        timer.start()
        try:
            with self._cond:
                while self._answer is None:
                    if cancel is not None and cancel.is_set():
                        return Outcome(ExecCode.CANCELED, "canceled while waiting for approval")
                    if deadline.is_set():
                        return Outcome(ExecCode.REJECTED, f"no approval within {self._timeout_s():g} s")
                    self._cond.wait(0.05)
                approved, reason = self._answer
        finally:
            timer.cancel()
            with self._cond:
                self._pending = None
            self._on_pending("")
        if approved:
            return None
        return Outcome(ExecCode.REJECTED, f"refused by the operator: {reason or 'no reason given'}")

    def answer(self, approve: bool, reason: str) -> tuple[bool, str]:
        """Answer the waiting step: (accepted, primitive); accepted is False when nothing waits."""
        with self._cond:
            if self._pending is None or self._answer is not None:
                return False, ""
            self._answer = (approve, reason)
            self._cond.notify_all()
            return True, self._pending
