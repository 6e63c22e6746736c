"""Settings of the LLM endpoint connection (data, loadable from YAML/JSON dicts).

WHY the key is not a field: configs get printed, logged, recorded and committed. The config only names
the environment variable (`api_key_env`); the client reads the key from the environment when it connects.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from step_planner.config_schema import ConfigFileError, ConfigModel, read_yaml, validate

STRUCTURED_MODES = ("auto", "json_schema", "json_object")


class LLMConfigError(ConfigFileError):
    """A bad LLM config value, naming the key and what is wrong with it."""


class LLMConfig(ConfigModel):
    """How to reach an OpenAI-compatible chat-completions endpoint and how hard to try."""

    model: str = Field("gpt-4o-mini", min_length=1, description="The model name the endpoint serves.")
    base_url: str | None = Field(None, description="The endpoint, e.g. http://localhost:11434/v1 (Ollama); null: "
                                 "the openai package default (api.openai.com or $OPENAI_BASE_URL).")
    api_key_env: str = Field("OPENAI_API_KEY", description="Name of the environment variable holding the key "
                             "(never the key itself).")
    timeout_s: float = Field(30.0, gt=0, description="s: one request.")
    max_retries: int = Field(3, ge=0, description="Transport-level retries after the first attempt.")
    backoff_s: float = Field(0.5, ge=0, description="s: base of the exponential backoff between retries.")
    backoff_cap_s: float = Field(8.0, ge=0, description="s: the longest backoff.")
    retry_after_cap_s: float = Field(30.0, ge=0, description="s: a 429's Retry-After is honoured up to this.")
    temperature: float = Field(0.0, ge=0, description="Sampling temperature.")
    max_tokens: int = Field(800, gt=0, description="Tokens per answer.")
    structured: Literal[STRUCTURED_MODES] = Field("auto", description="auto | json_schema | json_object (servers "
                                                  "without structured outputs).")
    strict: bool = Field(True, description="json_schema with strict=true where the server accepts it.")
    max_answer_chars: int = Field(20000, gt=0, description="A longer answer is rejected as invalid, never parsed.")

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None, source: str = "llm") -> LLMConfig:
        """Build from a plain dict (e.g. the `llm:` section of a YAML file), rejecting unknown keys."""
        data = dict(data or {})
        if "api_key" in data:
            raise LLMConfigError(f"{source}: llm.api_key: never in a file; put the key itself in the environment "
                                 "variable named by api_key_env")
        return validate(cls, data, source, LLMConfigError, prefix=("llm",))

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for reports and recordings (contains no secret by construction)."""
        return self.model_dump()

    def read_api_key(self) -> str | None:
        """The key from the environment, or None when the variable is unset or empty."""
        return os.environ.get(self.api_key_env) or None


class LLMFile(ConfigModel):
    """``config/llm.yaml``: the LLM endpoint (command-line flags and STEP_PLANNER_* variables override it)."""

    llm: LLMConfig = Field(LLMConfig(), description="The endpoint and how hard to try.")


def load_llm_file(path: str | Path) -> dict[str, Any]:
    """The ``llm:`` section of an LLM config file as the settings it states (for overrides to be merged into)."""
    data = read_yaml(path, LLMConfigError)
    if isinstance(data, dict) and "api_key" in (data.get("llm") or {}):
        LLMConfig.from_dict(data["llm"], str(path))
    validate(LLMFile, data or {}, str(path), LLMConfigError)
    return dict(data["llm"] or {}) if isinstance(data, dict) and data.get("llm") else {}
