"""An in-process ``complete()`` client for a request handler (the scripted expert), for fast sweeps.

It mirrors :class:`step_planner.llm.client.LLMClient` without HTTP: the same request dict (model,
messages, ``response_format`` with the answer's JSON schema), the same answer parsing
(``parse_answer``), the same single corrective retry with the same correction message, and a usage
ledger of the same shape counted with the same tokenizer. So the scripted expert — whose answers
depend on the exact messages — answers identically here and behind the loopback server (a test
checks this), and a 2,000-run sweep takes seconds instead of minutes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from step_planner.llm.answers import AnswerError, parse_answer
from step_planner.llm.client import BAD_ANSWER_ECHO_CHARS
from step_planner.llm.config import LLMConfig
from step_planner.llm.errors import LLMInvalidAnswer, LLMUnavailable
from step_planner.llm.tokens import count_message_tokens, count_tokens, tokenizer_kind
from step_planner.llm.usage import CallRecord, UsageLedger

Handler = Callable[[dict[str, Any]], str]


def tokenizer_note() -> str:
    return f"counted locally ({tokenizer_kind()})"


class InProcessLLM:
    def __init__(self, handler: Handler, config: LLMConfig | None = None) -> None:
        self.handler = handler
        self.config = config or LLMConfig(model="scripted-expert")
        self.usage = UsageLedger()

    def _ask(self, conversation: list[dict], schema: type[BaseModel], purpose: str, attempt: int) -> str:
        request = {
            "model": self.config.model,
            "messages": conversation,
            "response_format": {"type": "json_schema", "json_schema": {
                "name": schema.__name__[:64], "schema": schema.model_json_schema(), "strict": False}},
            "temperature": self.config.temperature,
            "max_tokens": self.config.max_tokens,
        }
        started = time.perf_counter()
        try:
            text = self.handler(request)
        except Exception as exc:  # over HTTP this is a 500 and, after retries, LLMUnavailable
            raise LLMUnavailable(f"the answer handler failed: {type(exc).__name__}: {exc}") from exc
        self.usage.add(CallRecord(purpose, self.config.model, count_message_tokens(conversation),
                                  count_tokens(text), time.perf_counter() - started, True, None, attempt, True))
        return text

    def complete(self, messages: list[dict], schema: type[BaseModel], purpose: str) -> BaseModel:
        conversation = [dict(m) for m in messages]
        text = self._ask(conversation, schema, purpose, 1)
        try:
            return parse_answer(text, schema, self.config.max_answer_chars)
        except AnswerError as first:
            echoed = text if len(text) <= BAD_ANSWER_ECHO_CHARS else text[:BAD_ANSWER_ECHO_CHARS] + " [...]"
            correction = (f"Your previous answer was invalid: {first}. Reply again with only one JSON "
                          f"object that matches the {schema.__name__} schema.")
            conversation += [{"role": "assistant", "content": echoed}, {"role": "user", "content": correction}]
        text = self._ask(conversation, schema, purpose, 1)
        try:
            return parse_answer(text, schema, self.config.max_answer_chars)
        except AnswerError as second:
            raise LLMInvalidAnswer(purpose, text, str(second)) from None
