"""An in-process ``complete()`` client for a request handler (the scripted expert), for fast sweeps.

It builds the same chat-completions request dict the HTTP path sends (model, messages,
``response_format`` with the answer's JSON schema), hands it to the handler, validates the
answer text with pydantic and keeps a usage ledger shaped like the LLM client's (``usage.records``
with prompt/completion tokens and latency), so ``run_goal`` and the benchmark account for it the
same way. An invalid answer gets one retry with the validation error appended — the behaviour of
a real client — and then raises :class:`LLMInvalidAnswer`.

Token counts: the package tokenizer when ``step_planner.llm.tokens`` exists, else chars/4.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from step_planner.llm.errors import LLMInvalidAnswer

try:  # the llm helper's tokenizer, when it has landed
    from step_planner.llm.tokens import count_tokens as _count_tokens  # type: ignore[import-not-found]

    TOKENIZER = "step_planner.llm.tokens"
except ImportError:  # pragma: no cover - depends on the branch state

    def _count_tokens(text: str) -> int:
        return len(text) // 4 + 1

    TOKENIZER = "chars/4 estimate"

Handler = Callable[[dict[str, Any]], str]


def count_tokens(text: str) -> int:
    return int(_count_tokens(text))


@dataclass
class UsageRecord:
    purpose: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    valid: bool = True


@dataclass
class UsageLedger:
    records: list[UsageRecord] = field(default_factory=list)


class InProcessLLM:
    def __init__(self, handler: Handler, model: str = "scripted-expert", retries: int = 1) -> None:
        self.handler = handler
        self.model = model
        self.retries = retries
        self.usage = UsageLedger()

    def complete(self, messages: list[dict[str, str]], schema: type[BaseModel], purpose: str) -> BaseModel:
        convo = [dict(m) for m in messages]
        error = ""
        raw = ""
        for _attempt in range(self.retries + 1):
            request = {
                "model": self.model,
                "messages": convo,
                "temperature": 0.0,
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": schema.__name__, "schema": schema.model_json_schema()},
                },
            }
            t0 = time.perf_counter()
            raw = self.handler(request)
            latency = time.perf_counter() - t0
            prompt_tokens = sum(count_tokens(m.get("content", "")) for m in convo)
            record = UsageRecord(purpose, prompt_tokens, count_tokens(raw), latency)
            self.usage.records.append(record)
            try:
                return schema.model_validate_json(raw)
            except ValidationError as exc:
                record.valid = False
                error = "empty answer" if not raw.strip() else str(exc).splitlines()[0]
                convo = [*convo, {"role": "assistant", "content": raw},
                         {"role": "user", "content": f"Your answer was not valid ({error}). "
                                                     "Answer again with JSON only, matching the schema."}]
        raise LLMInvalidAnswer(purpose, raw, error)
