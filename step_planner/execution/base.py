"""The executor interface every backend implements (symbolic, MuJoCo, MoveIt).

``execute(call) -> Outcome`` runs one primitive; ``observe() -> WorldState`` reports the world
(the full truth where the backend knows it; the planner takes the ``observed()`` view).
Backends never raise for a motion that fails: they return an Outcome with an error code the
planner can reason about. An exception out of a backend is a bug and is turned into
``BACKEND_ERROR`` by the caller.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol, runtime_checkable

from step_planner.domain.primitives import PrimitiveCall
from step_planner.domain.world import WorldState


class ExecCode(str, Enum):
    SUCCESS = "SUCCESS"
    PRECONDITION_FAILED = "PRECONDITION_FAILED"
    NO_IK = "NO_IK"
    PLAN_FAILED = "PLAN_FAILED"
    GRASP_FAILED = "GRASP_FAILED"
    OBJECT_SLIPPED = "OBJECT_SLIPPED"
    COLLISION = "COLLISION"
    TIMEOUT = "TIMEOUT"
    CANCELED = "CANCELED"
    SAFETY_VIOLATION = "SAFETY_VIOLATION"
    REJECTED = "REJECTED"  # refused by an operator in approval mode
    BACKEND_ERROR = "BACKEND_ERROR"


@dataclass
class Outcome:
    code: ExecCode
    message: str = ""
    duration_s: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def success(self) -> bool:
        return self.code is ExecCode.SUCCESS

    @classmethod
    def ok(cls, message: str = "", **details: Any) -> Outcome:
        return cls(ExecCode.SUCCESS, message, details=details)

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code.value,
            "message": self.message,
            "duration_s": round(self.duration_s, 4),
            "details": self.details,
        }


@runtime_checkable
class Executor(Protocol):
    """What the planner driver needs from a backend."""

    def execute(self, call: PrimitiveCall, cancel: threading.Event | None = None) -> Outcome:
        """Run one primitive; stop promptly and return CANCELED if ``cancel`` gets set."""
        ...

    def observe(self) -> WorldState:
        """The current world state (truth where known; callers use ``.observed()``)."""
        ...

    def reset(self, world: WorldState) -> None:
        """Start a new episode from ``world`` (a scene)."""
        ...
