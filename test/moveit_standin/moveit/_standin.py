"""The stand-in's call log and the knobs tests turn (not part of the real moveit package)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Control:
    # plan() call index (0-based, over all groups) -> MoveItErrorCodes value to fail with
    plan_errors: dict[int, int] = field(default_factory=dict)
    # execute() call index -> ExecutionStatus string ("ABORTED", "PREEMPTED", ...)
    execute_status: dict[int, str] = field(default_factory=dict)
    # called with the execute() index before it "moves" (tests set a cancel event here)
    before_execute: Any = None
    # execute() index that blocks until TrajectoryExecutionManager.stop_execution() is called
    block_execute: int | None = None
    # called with the plan() index while planning (tests check which thread plans)
    during_plan: Any = None


@dataclass
class Log:
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, name: str, **info: Any) -> None:
        with self.lock:
            self.calls.append((name, info))

    def names(self) -> list[str]:
        return [n for n, _ in self.calls]

    def of(self, name: str) -> list[dict[str, Any]]:
        return [i for n, i in self.calls if n == name]


LOG = Log()
CONTROL = Control()


def reset() -> None:
    global LOG, CONTROL
    LOG.calls.clear()
    fresh = Control()
    for key in fresh.__dataclass_fields__:
        setattr(CONTROL, key, getattr(fresh, key))
