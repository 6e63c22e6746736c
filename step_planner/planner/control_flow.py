"""What a child's result means for its parent: sequence, fallback, parallel (ReAcTree).

Each kind is one small class (the shape of py_trees' composites): ``after_child`` says whether
the parent goes on, is finished, or must re-plan; ``when_done`` says whether a parent whose
children are all proposed succeeded. With conditions (the grounded profile) the parent's facts
decide success instead, and control flow only decides whether a failed child means re-planning.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from step_planner.planner.kinds import Control


class Next(str, Enum):
    CONTINUE = "continue"  # propose the next child
    FINISHED = "finished"  # the parent is achieved (fallback: an alternative succeeded)
    REPLAN = "replan"  # the failed child's reason goes back to the decomposer as feedback


@dataclass
class ControlFlow:
    failures: list[str] = field(default_factory=list)
    succeeded: int = 0
    kind = Control.SEQUENCE

    def after_child(self, ok: bool, reason: str) -> Next:
        raise NotImplementedError

    def when_done(self) -> tuple[bool, str]:
        return True, ""

    def feedback(self, child: str, reason: str) -> str:
        return f"'{child}' failed ({reason}); continue with the other children"


class Sequence(ControlFlow):
    """All children, in order; a failure is re-planned."""

    kind = Control.SEQUENCE

    def after_child(self, ok: bool, reason: str) -> Next:
        if ok:
            self.succeeded += 1
            return Next.CONTINUE
        return Next.REPLAN


class Fallback(ControlFlow):
    """Alternatives: the first success finishes the parent; a failure moves to the next alternative."""

    kind = Control.FALLBACK

    def after_child(self, ok: bool, reason: str) -> Next:
        if ok:
            self.succeeded += 1
            return Next.FINISHED
        self.failures.append(reason)
        return Next.CONTINUE

    def when_done(self) -> tuple[bool, str]:
        if self.succeeded:
            return True, ""
        return False, "no alternative succeeded" + (": " + "; ".join(self.failures) if self.failures else "")


class Parallel(ControlFlow):
    """All children, even after a failure; the parent fails if any child failed."""

    kind = Control.PARALLEL

    def after_child(self, ok: bool, reason: str) -> Next:
        if ok:
            self.succeeded += 1
        else:
            self.failures.append(reason)
        return Next.CONTINUE

    def when_done(self) -> tuple[bool, str]:
        if self.failures:
            return False, f"{len(self.failures)} parallel children failed: " + "; ".join(self.failures)
        return True, ""


def control_flow(kind: Control) -> ControlFlow:
    return {Control.SEQUENCE: Sequence, Control.FALLBACK: Fallback, Control.PARALLEL: Parallel}[kind]()
