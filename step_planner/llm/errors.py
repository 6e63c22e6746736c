"""Errors the planner distinguishes when talking to an LLM endpoint."""

from __future__ import annotations


class LLMError(RuntimeError):
    """Base class of LLM failures."""


class LLMUnavailable(LLMError):
    """The endpoint could not be reached or kept failing after bounded retries; the goal ends."""


class LLMInvalidAnswer(LLMError):
    """The endpoint answered, but not with a valid structured answer (even after one retry)."""

    def __init__(self, purpose: str, raw: str, error: str) -> None:
        super().__init__(f"invalid {purpose} answer: {error}")
        self.purpose = purpose
        self.raw = raw
        self.error = error
