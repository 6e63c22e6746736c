"""Record real LLM exchanges once, replay them byte-for-byte in tests and benchmarks.

WHY keyed by a hash of what shapes the answer: a replayed answer is only valid for the exact request it
was recorded for. Any change to the prompt, the schema, the model or the sampling settings changes the
key, and the replay endpoint answers 404 naming the key (the client raises LLMReplayMiss) instead of
silently returning an answer to a different question.

One reviewable JSON file per exchange: `<key>.json` = {"key", "request", "answer", "usage", ...}.
Both handlers plug into LoopbackServer; the API key (read by RecordingHandler from the environment)
is never written.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from .loopback import Answer, Fault, HandlerReply

if TYPE_CHECKING:
    from .config import LLMConfig

KEY_FIELDS = ("model", "messages", "response_format", "temperature", "max_tokens")
PLACEHOLDER_KEY = "not-needed"


def shaping_fields(request: dict) -> dict:
    """The request fields that determine the answer (absent ones as None)."""
    return {name: request.get(name) for name in KEY_FIELDS}


def request_key(request: dict) -> str:
    """sha256 hex of the canonical JSON (sorted keys, no whitespace) of the shaping fields."""
    canonical = json.dumps(shaping_fields(request), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def last_user_line(request: dict) -> str:
    """First line of the last user message, to make a miss recognisable without opening files.

    Markdown section headers (`## Task`) say nothing about which request it was, so the first line
    that is not a header is used when there is one.
    """
    for message in reversed(request.get("messages") or []):
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            lines = [line.strip() for line in message["content"].splitlines() if line.strip()]
            text = [line for line in lines if not line.startswith("#")]
            return (text or lines or [""])[0][:200]
    return ""


class ReplayHandler:
    """Answer from `<folder>/<key>.json`; an unknown request is a loud 404 (code "replay_miss")."""

    def __init__(self, folder: str | Path, miss_hint: str = "record it, or fix the prompt") -> None:
        self.folder = Path(folder)
        self.miss_hint = miss_hint  # what a miss tells the user to do
        self.hits: list[str] = []
        self.misses: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, request: dict) -> HandlerReply:
        key = request_key(request)
        path = self.folder / f"{key}.json"
        if not path.is_file():
            with self._lock:
                self.misses.append(key)
            return Fault("http_error", status=404, code="replay_miss", extra={"key": key},
                         message=f"no recording {key}.json in {self.folder} for the request whose last user "
                                 f"message starts {last_user_line(request)!r} ({self.miss_hint})")
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            stored_key = request_key(record["request"])
            answer = record["answer"]
        except (ValueError, KeyError, TypeError) as exc:
            return Fault("http_error", status=422, code="replay_corrupt",
                         message=f"recording {path} is unreadable: {type(exc).__name__}: {exc}")
        if stored_key != key:
            return Fault("http_error", status=422, code="replay_corrupt",
                         message=f"recording {path} was edited: its request hashes to {stored_key}, "
                                 f"not {key}")
        with self._lock:
            self.hits.append(key)
        return Answer(answer, record.get("usage"))


class RecordingHandler:
    """Forward each request to a real upstream (official openai client) and store the exchange.

    Upstream failures are passed back as faults (same status; 502 when unreachable) and not recorded,
    so the calling LLMClient applies its normal retry policy: one upstream call per client attempt, so the
    client's ``max_retries`` bounds the upstream calls and this handler never retries by itself. ``timeout_s``
    must be the client's ``llm.timeout_s`` (``for_config``): shorter, a slow model that the config allows is
    cut off here; longer, an answer the client already gave up on would still be recorded.
    """

    @classmethod
    def for_config(cls, upstream_base_url: str | None, folder: str | Path, config: LLMConfig) -> RecordingHandler:
        """The recorder in front of ``config``'s client: its timeout and its API key variable."""
        return cls(upstream_base_url, folder, api_key_env=config.api_key_env, timeout_s=config.timeout_s)

    def __init__(self, upstream_base_url: str | None, folder: str | Path,
                 api_key_env: str = "OPENAI_API_KEY", timeout_s: float = 60.0) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.upstream_base_url = upstream_base_url
        self.recorded: list[str] = []
        # imported here, not at the top: the offline answers (a node's llm.offline) load this module and never record,
        # and openai takes about 0.25 s of CPU to import, in every node process, idle ones too
        import openai

        self._client = openai.OpenAI(base_url=upstream_base_url,
                                     api_key=os.environ.get(api_key_env) or PLACEHOLDER_KEY,
                                     timeout=timeout_s, max_retries=0)

    def __call__(self, request: dict) -> HandlerReply:
        import openai

        fields = {k: v for k, v in shaping_fields(request).items() if v is not None}
        try:
            response = self._client.chat.completions.create(**fields)
            text = response.choices[0].message.content or ""
        except openai.APIStatusError as exc:
            if exc.status_code == 429:
                after = exc.response.headers.get("retry-after")
                return Fault("http_429", retry_after=_float_or_none(after), message="upstream rate limit")
            return Fault("http_error", status=exc.status_code, message=f"upstream: {exc.message}")
        except openai.APIConnectionError as exc:
            return Fault("http_error", status=502, message=f"upstream unreachable: {type(exc).__name__}")
        except (ValueError, TypeError, AttributeError, IndexError, KeyError) as exc:
            return Fault("http_error", status=502,
                         message=f"upstream sent an invalid body: {type(exc).__name__}")
        usage = None
        if response.usage is not None:
            usage = {"prompt_tokens": response.usage.prompt_tokens,
                     "completion_tokens": response.usage.completion_tokens,
                     "total_tokens": response.usage.total_tokens}
        key = request_key(request)
        upstream = {"base_url": str(self._client.base_url), "model": getattr(response, "model", None)}
        record = {"key": key, "request": shaping_fields(request), "answer": text, "usage": usage,
                  "upstream": upstream, "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        text_out = json.dumps(record, indent=2, ensure_ascii=False) + "\n"
        _write_atomically(self.folder / f"{key}.json", text_out)
        self.recorded.append(key)
        return Answer(text, usage)

    def close(self) -> None:
        self._client.close()


def _float_or_none(value: str | None) -> float | None:
    try:
        return float(value) if value else None
    except ValueError:
        return None


def _write_atomically(path: Path, text: str) -> None:
    """A reader (or a crash) never sees half a recording."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, path)
