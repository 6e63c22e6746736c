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
    # hand finger joint position (per finger) after executing a close trajectory
    finger_after_close: float = 0.02
    groups: dict[str, dict[str, list[float]]] = field(default_factory=lambda: {
        "panda_arm": {"ready": [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785]},
        "hand": {"open": [0.035, 0.035], "close": [0.0, 0.0]},
        "fr3_arm": {"ready": [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785]},
        "fr3_hand": {"open": [0.035, 0.035], "close": [0.0, 0.0]},
    })
    links: set[str] = field(default_factory=lambda: {
        "panda_link0", "panda_link8", "panda_hand", "panda_leftfinger", "panda_rightfinger",
        "fr3_link0", "fr3_link8", "fr3_hand", "fr3_leftfinger", "fr3_rightfinger",
    })


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
