"""Instant, deterministic execution on the symbolic world state (tests, benchmarks, dry runs)."""

from __future__ import annotations

import threading

from step_planner.domain.primitives import PrimitiveCall, PrimitiveLibrary
from step_planner.domain.transitions import apply_call, check_call
from step_planner.domain.world import WorldState
from step_planner.execution.base import ExecCode, Outcome


class SymbolicExecutor:
    """Applies a primitive's effects when its preconditions hold in the *true* world.

    ``failures`` lets tests and benchmarks make chosen calls fail once, e.g.
    ``{"pick(object=tape)": ExecCode.GRASP_FAILED}``.
    """

    def __init__(
        self,
        library: PrimitiveLibrary,
        world: WorldState | None = None,
        failures: dict[str, ExecCode] | None = None,
    ) -> None:
        self.library = library
        self.world = world.copy() if world else WorldState()
        self.failures = dict(failures or {})
        self.executed: list[PrimitiveCall] = []

    def reset(self, world: WorldState) -> None:
        self.world = world.copy()
        self.executed = []

    def observe(self) -> WorldState:
        return self.world.copy()

    def execute(self, call: PrimitiveCall, cancel: threading.Event | None = None) -> Outcome:
        if cancel is not None and cancel.is_set():
            return Outcome(ExecCode.CANCELED, "canceled before motion")
        problems = check_call(call, self.library, self.world.observed())
        if problems:
            return Outcome(ExecCode.PRECONDITION_FAILED, "; ".join(p.message for p in problems))
        injected = self.failures.pop(str(call), None)
        if injected is not None:
            return Outcome(injected, f"injected failure {injected.value} for {call}")
        apply_call(call, self.library, self.world)
        self.executed.append(call)
        return Outcome.ok(f"{call} done")
