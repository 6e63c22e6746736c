"""How a step and a goal ended: the step report the planner is sent, the error codes the action result
and the CLI report, and whether the goal was checked.

``verified`` is true only when the instruction's conditions were judged against the world at the
end; ``conditions`` lists each with its final truth and where that truth came from. A goal can
only be ``success`` with ``verified`` unless ``require_verified_success`` was turned off.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from step_planner.domain.primitives import PrimitiveCall
from step_planner.domain.world import WorldState
from step_planner.execution.base import Outcome


@dataclass
class StepReport:
    """What the planner is sent back after a call it yielded was executed."""

    outcome: Outcome
    world: WorldState  # the world after the call (truth or observation; the planner filters)


class GoalError(str, Enum):
    NONE = "NONE"
    INVALID_GOAL = "INVALID_GOAL"
    BUSY = "BUSY"
    LLM_UNAVAILABLE = "LLM_UNAVAILABLE"
    PLANNING_FAILED = "PLANNING_FAILED"
    BUDGET_EXCEEDED = "BUDGET_EXCEEDED"
    EXECUTION_FAILED = "EXECUTION_FAILED"
    SAFETY_VIOLATION = "SAFETY_VIOLATION"
    CANCELED = "CANCELED"
    NOTHING_TO_DO = "NOTHING_TO_DO"  # the instruction's conditions held before anything ran
    GOAL_NOT_CONFIRMED = "GOAL_NOT_CONFIRMED"  # confirm_goal: the person refused the goal, or nobody confirmed it
    CLARIFICATION_NEEDED = "CLARIFICATION_NEEDED"  # the model asked the person a question nobody answered


@dataclass
class GoalResult:
    success: bool
    error: GoalError
    message: str
    executed: list[tuple[PrimitiveCall, Outcome]] = field(default_factory=list)
    tree: dict[str, Any] = field(default_factory=dict)
    usage: dict[str, Any] = field(default_factory=dict)
    elapsed_s: float = 0.0
    verified: bool = False
    conditions: list[dict[str, Any]] = field(default_factory=list)  # ConditionRecord.to_dict() of the root
    goal_rejections: list[dict[str, Any]] = field(default_factory=list)  # {"goal": [...], "problems": [...]}
    unresolved_phrases: list[str] = field(default_factory=list)  # phrases of the words no resolution could read

    def to_dict(self) -> dict[str, Any]:
        return {
            "success": self.success,
            "error": self.error.value,
            "message": self.message,
            "verified": self.verified,
            "conditions": list(self.conditions),
            "goal_rejections": list(self.goal_rejections),
            "unresolved_phrases": list(self.unresolved_phrases),
            "executed": [{"call": c.to_dict(), "outcome": o.to_dict()} for c, o in self.executed],
            "tree": self.tree,
            "usage": self.usage,
            "elapsed_s": round(self.elapsed_s, 3),
        }
