"""The planner's one way to the model: the budget in front of it, prepared answers first, every answer logged.

An answer prepared while the arm was moving (``planner/overlap.py``) is used when its request is the one the
planner makes now, and was charged when it was sent; otherwise the request is charged and sent. Either way
the answer (or the invalid answer) goes into the :class:`AnswerLog` a shadow planner replays, and the time
spent waiting is counted (the model on the critical path).
"""

from __future__ import annotations

import time

from pydantic import BaseModel

from step_planner.llm.errors import LLMCanceled, LLMInvalidAnswer
from step_planner.planner.budget import Budget, Canceled
from step_planner.planner.overlap import AnswerLog, Prefetcher, answer_key
from step_planner.planner.termination import CompletionLLM


class LLMGate:
    def __init__(self, llm: CompletionLLM, budget: Budget) -> None:
        self.llm = llm
        self.budget = budget
        self.answers = AnswerLog()  # every answer by request: what a shadow planner replays (overlap)
        self.prefetcher: Prefetcher | None = None  # set by run_goal when the overlap feature is on
        self.wait_s = 0.0  # time spent waiting for answers (the LLM on the critical path)
        self.was_prepared = False  # the last answer was prepared while the arm was moving

    def complete(self, messages: list[dict[str, str]], schema: type[BaseModel], purpose: str) -> BaseModel:
        key = answer_key(messages, schema, purpose)
        self.was_prepared = False
        if self.prefetcher is not None:
            self.budget.check()
            prepared, outcome = self.prefetcher.take(messages, schema, purpose)
            if prepared:  # charged when it was sent
                self.was_prepared = True
                return self._settle(key, outcome)
        self.budget.charge_llm()
        started = time.monotonic()
        try:
            answer = self.llm.complete(messages, schema, purpose)
        except LLMInvalidAnswer as exc:
            self.answers.record(key, exc)
            raise
        except LLMCanceled:  # the client gave up waiting because of our own cancel event
            raise Canceled() from None
        finally:
            self.wait_s += time.monotonic() - started
        self.answers.record(key, answer)
        return answer

    def _settle(self, key: str, outcome: object) -> BaseModel:
        """A prepared outcome, as the call itself would have ended."""
        if isinstance(outcome, LLMCanceled):
            raise Canceled()
        if isinstance(outcome, LLMInvalidAnswer):
            self.answers.record(key, outcome)
        if isinstance(outcome, Exception):
            raise outcome
        assert isinstance(outcome, BaseModel)
        self.answers.record(key, outcome)
        return outcome
