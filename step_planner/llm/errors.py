"""The two ways an LLM call fails, kept apart because the planner reacts differently to each.

LLMUnavailable: the endpoint could not be used (after bounded retries) -> the goal aborts with
LLM_UNAVAILABLE. LLMInvalidAnswer: the endpoint answered, twice, with something that is not a valid
answer -> the planner may treat it as a failed expansion. LLMCanceled: the client's cancel event was
set mid-call -> the goal ends CANCELED at once. Messages never contain the API key.
"""

from __future__ import annotations

RAW_PREVIEW_CHARS = 300


class LLMError(RuntimeError):
    """Base of all LLM-layer errors."""


class LLMUnavailable(LLMError):
    """The endpoint failed (timeouts, refused connections, 429/5xx, broken bodies, auth) after retries."""


class LLMCanceled(LLMError):
    """The goal was canceled while a request was in flight or waiting to be retried: no answer."""


class LLMReplayMiss(LLMUnavailable):
    """A replay endpoint has no recording for this request: the prompt changed or was never recorded."""

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


class LLMInvalidAnswer(LLMError):
    """The answer could not be parsed/validated, even after one corrective retry."""

    def __init__(self, purpose: str, raw: str, error: str) -> None:
        self.purpose = purpose
        self.raw = raw
        self.error = error
        preview = raw[:RAW_PREVIEW_CHARS]
        if len(raw) > RAW_PREVIEW_CHARS:
            preview += f"... [{len(raw)} chars]"
        super().__init__(f"invalid LLM answer for {purpose!r}: {error}; answer was: {preview!r}")
