"""Settings of the LLM endpoint connection (data, loadable from YAML/JSON dicts).

WHY the key is not a field: configs get printed, logged, recorded and committed. The config only names
the environment variable (`api_key_env`); the client reads the key from the environment when it connects.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, fields
from typing import Any

STRUCTURED_MODES = ("auto", "json_schema", "json_object")


class LLMConfigError(ValueError):
    """A bad LLM config value, naming the key and what is wrong with it."""


@dataclass(frozen=True)
class LLMConfig:
    """How to reach an OpenAI-compatible chat-completions endpoint and how hard to try."""

    model: str = "gpt-4o-mini"
    base_url: str | None = None  # None: the openai package default (api.openai.com or $OPENAI_BASE_URL)
    api_key_env: str = "OPENAI_API_KEY"  # name of the env variable holding the key; never the key
    timeout_s: float = 30.0
    max_retries: int = 3  # transport-level retries after the first attempt
    backoff_s: float = 0.5  # base of the exponential backoff between transport retries
    backoff_cap_s: float = 8.0
    retry_after_cap_s: float = 30.0  # a 429's Retry-After is honoured up to this many seconds
    temperature: float = 0.0
    max_tokens: int = 800
    structured: str = "auto"  # auto | json_schema | json_object
    strict: bool = True  # json_schema with strict=true where the server accepts it (else without)
    max_answer_chars: int = 20000  # a longer answer is rejected as invalid, never parsed

    def __post_init__(self) -> None:
        if not self.model:
            raise LLMConfigError("llm.model: must be a non-empty model name")
        if self.structured not in STRUCTURED_MODES:
            modes = ", ".join(STRUCTURED_MODES)
            raise LLMConfigError(f"llm.structured: {self.structured!r} is not one of {modes}")
        for name in ("timeout_s", "max_tokens", "max_answer_chars"):
            if getattr(self, name) <= 0:
                raise LLMConfigError(f"llm.{name}: must be > 0, got {getattr(self, name)!r}")
        for name in ("max_retries", "backoff_s", "backoff_cap_s", "retry_after_cap_s", "temperature"):
            if getattr(self, name) < 0:
                raise LLMConfigError(f"llm.{name}: must be >= 0, got {getattr(self, name)!r}")

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> LLMConfig:
        """Build from a plain dict (e.g. the `llm:` section of a YAML file), rejecting unknown keys."""
        data = dict(data or {})
        known = {f.name: f for f in fields(cls)}
        unknown = sorted(set(data) - set(known))
        if unknown:
            hint = " (put the key itself in the environment variable named by api_key_env)" if (
                "api_key" in unknown) else ""
            raise LLMConfigError(f"llm: unknown key(s) {', '.join(unknown)}; known: {', '.join(known)}{hint}")
        for name, value in data.items():
            data[name] = _check_type(name, value, known[name].type)
        return cls(**data)

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for reports and recordings (contains no secret by construction)."""
        return dataclasses.asdict(self)

    def read_api_key(self) -> str | None:
        """The key from the environment, or None when the variable is unset or empty."""
        return os.environ.get(self.api_key_env) or None


def _check_type(name: str, value: Any, annotation: str) -> Any:
    """Accept a value of the annotated type; ints are fine where floats are expected."""
    allows_none = "None" in annotation
    if value is None:
        if allows_none:
            return None
        raise LLMConfigError(f"llm.{name}: must not be null")
    base = annotation.replace("| None", "").strip()
    if base == "float" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if base == "int" and isinstance(value, int) and not isinstance(value, bool):
        return value
    if base == "str" and isinstance(value, str):
        return value
    if base == "bool" and isinstance(value, bool):
        return value
    raise LLMConfigError(f"llm.{name}: expected {annotation}, got {type(value).__name__} {value!r}")
