"""The goal's budgets and cancel, checked in one place before every LLM call and every primitive."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from step_planner.planner.config import PlannerConfig


class BudgetExceeded(Exception):
    """A goal-wide budget ran out; the message says which."""


class Canceled(Exception):
    """The goal was canceled."""


class Budget:
    """LLM calls, primitives and wall clock for one goal; sizes scale once the task is known."""

    def __init__(self, config: PlannerConfig, cancel: threading.Event | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.cancel = cancel or threading.Event()
        self._config = config
        self._clock = clock
        self.started = clock()
        self.llm_calls = 0
        self.primitives = 0
        self.size = 0
        self.max_llm_calls, self.max_primitives, self.wall_clock_s = config.goal_budgets(0)

    def scale(self, size: int) -> None:
        """Size the budgets for a task of ``size`` facts (the instruction's goal)."""
        self.size = max(0, size)
        self.max_llm_calls, self.max_primitives, self.wall_clock_s = self._config.goal_budgets(self.size)

    def check(self) -> None:
        if self.cancel.is_set():
            raise Canceled()
        if self._clock() - self.started > self.wall_clock_s:
            raise BudgetExceeded(f"wall-clock limit of {self.wall_clock_s:.0f} s reached")

    def charge_llm(self) -> None:
        self.check()
        if self.llm_calls >= self.max_llm_calls:
            raise BudgetExceeded(f"LLM call budget of {self.max_llm_calls} used up")
        self.llm_calls += 1

    def charge_primitive(self) -> None:
        self.check()
        if self.primitives >= self.max_primitives:
            raise BudgetExceeded(f"primitive budget of {self.max_primitives} used up")
        self.primitives += 1

    def pause(self, seconds: float) -> None:
        """Leave ``seconds`` out of the wall clock (the time a person took to answer: not planning)."""
        self.started += max(0.0, seconds)

    def elapsed(self) -> float:
        return self._clock() - self.started
