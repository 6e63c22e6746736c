"""The planner's closed sets, as enums in one place (mirrored as constants in the ROS messages).

A client switches on every case: a node's status, what a verdict decided, who decided it, how a
subgoal's children combine, and where a condition's truth came from.
"""

from __future__ import annotations

from enum import Enum


class NodeStatus(str, Enum):
    PENDING = "pending"
    EXPANDING = "expanding"
    EXECUTING = "executing"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    ABANDONED = "abandoned"  # rejected by the checker or dropped by a re-plan

    @property
    def finished(self) -> bool:
        return self in (NodeStatus.SUCCEEDED, NodeStatus.FAILED, NodeStatus.ABANDONED)


class VerdictKind(str, Enum):
    EXECUTE = "execute"  # one primitive, consistent: run it
    DECOMPOSE = "decompose"  # consistent, needs several actions
    REPLAN = "replan"  # inconsistent: the parent proposes again
    DONE = "done"  # the subgoal is achieved (or, for control flow, finished)
    REJECTED = "rejected"  # a proposal or a 'done' claim was refused
    STOPPED = "stopped"  # the goal ended here (budget, cancel, endpoint, executor)


class VerdictSource(str, Enum):
    DETERMINISTIC = "deterministic"  # check_call, the call grammar, mapping from conditions
    CONDITIONS = "conditions"  # success_when evaluated on the world
    CONGRUENCE = "congruence"  # the step does not act on what its parent needs
    LLM = "llm"  # the termination or completion model
    VALIDATION = "validation"  # an answer that did not parse or validate
    CONTROL_FLOW = "control_flow"
    EXECUTOR = "executor"
    BUDGET = "budget"
    CANCEL = "cancel"
    PERSON = "person"  # the person refused the interpreted goal or did not answer a question


class Control(str, Enum):
    SEQUENCE = "sequence"
    FALLBACK = "fallback"
    PARALLEL = "parallel"


class JudgedFrom(str, Enum):
    """Where a condition's truth came from."""

    OBSERVATION = "observation"  # every thing it names is seen now
    BELIEF = "belief"  # it names something not visible now, placed by an executed primitive
    UNKNOWN = "unknown"  # it names something never seen: not true (yet)
