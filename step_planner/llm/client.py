"""The one way the planner talks to an LLM: structured chat completions over the official `openai` client.

WHY retries are done here (the openai client runs with max_retries=0): they must be bounded, visible
in the usage ledger and in exchange listeners, and must classify faults — a transport fault (timeout,
refused connection, 429, 5xx, broken body) is retried with backoff and finally raises LLMUnavailable;
a bad answer gets exactly one corrective retry with the validation error fed back, then LLMInvalidAnswer.

The API key is read from the environment variable named by `LLMConfig.api_key_env`. When it is unset,
the placeholder "not-needed" is sent instead: local OpenAI-compatible servers (llama.cpp, vLLM, Ollama,
the loopback server) accept any key, and a real API answers 401, which is reported as LLMUnavailable.
The key never enters records, exchange dicts, logs, exception messages or the answer text handed back.

Cancel: with `LLMClient(config, cancel=event)` a set event ends the call at once with LLMCanceled —
before a request, during the retry backoff, or while a request is in flight (it runs on a worker
thread that is abandoned; its late answer is dropped). Without an event the call blocks as before.

In process: `LLMClient(config, handler=fn)` sends the very same request dicts to `fn(request) -> text`
instead of over HTTP (the benchmark's fast sweeps with the scripted expert). Parsing, the corrective
retry, the ledger and the listeners are this class's, so the two paths cannot drift apart; a handler
that raises ends the call with LLMUnavailable at once (its faults are bugs, not transient).
"""

from __future__ import annotations

import email.utils
import functools
import json
import logging
import ssl
import threading
import time
from collections.abc import Callable
from types import SimpleNamespace

import openai
from pydantic import BaseModel

from .answers import AnswerError, parse_answer
from .config import LLMConfig
from .errors import LLMCanceled, LLMInvalidAnswer, LLMReplayMiss, LLMUnavailable
from .schemas import answer_schema
from .tokens import count_message_tokens, count_tokens
from .usage import CallRecord, UsageLedger

log = logging.getLogger(__name__)

PLACEHOLDER_KEY = "not-needed"
BAD_ANSWER_ECHO_CHARS = 2000  # how much of a rejected answer is echoed back in the corrective retry
RETRYABLE_STATUS = {408, 409, 429}
CANCEL_POLL_S = 0.02  # how often a call in flight looks at the cancel event
Listener = Callable[[dict], None]


class _Transient(Exception):
    """A retryable transport fault; `retry_after` is the server's requested wait, if any."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class _SchemaRejected(Exception):
    """The endpoint refused response_format json_schema (e.g. llama.cpp)."""


@functools.cache
def _tls_context() -> ssl.SSLContext | None:
    """One TLS context for every endpoint client of this process: the HTTP library builds its default one per
    client, loading the system's CA certificates (about 25 ms of CPU), and the node makes a client per goal, a
    benchmark one per run. The same default context, its trust settings read once (None: the library's own)."""
    try:
        import httpx2  # openai's HTTP library (requirements.txt)
    except ImportError:
        return None
    return httpx2.create_ssl_context()


class LLMClient:
    """Structured completions with bounded, observable retries, usage accounting and exchange listeners."""

    def __init__(self, config: LLMConfig | None = None, cancel: threading.Event | None = None,
                 handler: Callable[[dict], object] | None = None) -> None:
        self.config = config or LLMConfig()
        self.cancel = cancel  # when set: the call in flight is abandoned and LLMCanceled raised
        self.handler = handler
        key = None if handler is not None else self.config.read_api_key()
        self._secret = key  # kept only to scrub it from any text that leaves this class
        tls = _tls_context() if handler is None else None
        self._openai = None if handler is not None else openai.OpenAI(
            base_url=self.config.base_url, api_key=key or PLACEHOLDER_KEY, timeout=self.config.timeout_s,
            max_retries=0, http_client=openai.DefaultHttpxClient(verify=tls) if tls is not None else None)
        self._json_object_mode = self.config.structured == "json_object"
        self._strict = self.config.strict and not self._json_object_mode
        self._listeners: list[Listener] = []
        self.usage = UsageLedger()

    def __repr__(self) -> str:
        return (f"LLMClient(model={self.config.model!r}, endpoint={self.endpoint!r}, "
                f"mode={self.structured_mode!r})")

    @property
    def endpoint(self) -> str:
        return "in-process handler" if self._openai is None else str(self._openai.base_url)

    @property
    def structured_mode(self) -> str:
        """"json_schema" (structured outputs) or "json_object" (JSON mode + schema in the prompt)."""
        return "json_object" if self._json_object_mode else "json_schema"

    def add_listener(self, listener: Listener) -> None:
        """Call `listener(exchange)` after every HTTP exchange, failed ones included.

        exchange = {purpose, attempt, request: {model, messages, response_format, temperature, max_tokens},
        answer_text (None on failure), usage: {prompt_tokens, completion_tokens, counted_locally} | None,
        latency_s, error (None on success), finish_reason}. No headers, no key.
        """
        self._listeners.append(listener)

    def close(self) -> None:
        if self._openai is not None:
            self._openai.close()

    def fork(self) -> LLMClient:
        """A client to the same endpoint with the same settings and cancel, its own ledger, no listeners
        (speculative requests: their exchanges are adopted only when their answer is used)."""
        twin = LLMClient(self.config, cancel=self.cancel, handler=self.handler)
        twin._json_object_mode, twin._strict = self._json_object_mode, self._strict
        return twin

    def adopt(self, records: list[CallRecord], exchanges: list[dict]) -> None:
        """Book a forked client's exchanges as this client's own (a speculative answer that was used)."""
        for record in records:
            self.usage.add(record)
        for exchange in exchanges:
            for listener in list(self._listeners):
                try:
                    listener(exchange)
                except Exception:  # a broken recorder must not break planning, but must be visible
                    log.exception("LLM exchange listener %r failed", listener)

    def complete(self, messages: list[dict], schema: type[BaseModel], purpose: str) -> BaseModel:
        """Ask for one `schema` instance; raises LLMUnavailable or LLMInvalidAnswer, never returns junk."""
        conversation = [dict(m) for m in messages]
        text, cut_off = self._request_text(conversation, schema, purpose)
        try:
            return self._parse(text, cut_off, schema)
        except AnswerError as first:
            log.info("LLM answer for %s invalid (%s); one corrective retry", purpose, first)
            echoed = self._scrub(text if len(text) <= BAD_ANSWER_ECHO_CHARS
                                 else text[:BAD_ANSWER_ECHO_CHARS] + " [...]")
            correction = (f"Your previous answer was invalid: {first}. Reply again with only one JSON "
                          f"object that matches the {schema.__name__} schema.")
            conversation += [{"role": "assistant", "content": echoed},
                             {"role": "user", "content": correction}]
        text, cut_off = self._request_text(conversation, schema, purpose)
        try:
            return self._parse(text, cut_off, schema)
        except AnswerError as second:
            raise LLMInvalidAnswer(purpose, self._scrub(text), self._scrub(str(second))) from None

    def _parse(self, text: str, cut_off: bool, schema: type[BaseModel]) -> BaseModel:
        try:
            return parse_answer(text, schema, self.config.max_answer_chars)
        except AnswerError as exc:
            if cut_off:  # say why the JSON is broken: the model ran out of max_tokens
                raise AnswerError(f"{exc} (the answer was cut off at max_tokens={self.config.max_tokens}; "
                                  "answer more briefly)") from None
            raise

    # ---- one logical request: transport retries, json_schema fallback ----

    def _request_text(self, conversation: list[dict], schema: type[BaseModel],
                      purpose: str) -> tuple[str, bool]:
        """(answer text, cut off at max_tokens) after transport retries and the json_schema fallback."""
        attempts = self.config.max_retries + 1
        attempt = 0
        last_error = ""
        while attempt < attempts:
            self._check_cancel(purpose)
            attempt += 1
            try:
                return self._one_exchange(conversation, schema, purpose, attempt)
            except _SchemaRejected as exc:
                attempt -= 1  # the fallback is a protocol switch, not a transport retry
                if self._strict:
                    log.warning("endpoint %s rejects strict json_schema; retrying without strict", self.endpoint)
                    self._strict = False
                    continue
                if self.config.structured == "json_schema":
                    raise LLMUnavailable(
                        f"{self.endpoint} rejects response_format json_schema ({exc}); "
                        "set llm.structured to 'auto' or 'json_object'") from None
                log.warning("endpoint %s rejects json_schema; falling back to json_object", self.endpoint)
                self._json_object_mode = True
            except _Transient as exc:
                last_error = str(exc)
                if attempt < attempts:
                    delay = retry_delay(self.config, attempt, exc.retry_after)
                    log.warning("LLM %s attempt %d/%d failed (%s); retrying in %.2fs",
                                purpose, attempt, attempts, last_error, delay)
                    if self.cancel is None:
                        time.sleep(delay)
                    elif self.cancel.wait(delay):
                        raise LLMCanceled(f"canceled while waiting to retry the {purpose} request") from None
        raise LLMUnavailable(f"LLM endpoint {self.endpoint} unavailable for {purpose!r} after "
                             f"{attempts} attempt(s): {last_error}")

    def _one_exchange(self, conversation: list[dict], schema: type[BaseModel], purpose: str,
                      attempt: int) -> tuple[str, bool]:
        """One HTTP exchange: (text, cut_off), or raises _Transient/_SchemaRejected/LLMUnavailable."""
        request = {
            "model": self.config.model,
            "messages": self._messages_for_mode(conversation, schema),
            "response_format": self._response_format(schema),
            "temperature": self.config.temperature,
            "max_tokens": self.config.max_tokens,
        }
        started = time.monotonic()
        text, usage, error, finish = None, None, None, None
        try:
            response = self._create(request, purpose)
            text, usage, finish = self._read_response(response, request["messages"])
            # an endpoint that echoes the key (in reasoning, a reason) must not carry it into the tree
            return self._scrub(text), finish == "length"
        except (_Transient, _SchemaRejected, LLMUnavailable, LLMCanceled) as exc:
            error = self._scrub(str(exc))
            raise
        except openai.APIStatusError as exc:
            error = self._scrub(f"HTTP {exc.status_code}: {_status_message(exc)}")
            raise self._classify_status(exc, error) from None
        except openai.APITimeoutError:
            error = f"timed out after {self.config.timeout_s:g}s"
            raise _Transient(error) from None
        except openai.APIConnectionError as exc:
            error = self._scrub(f"connection failed: {exc.__cause__ or exc}")
            raise _Transient(error) from None
        except (ValueError, TypeError, AttributeError, KeyError) as exc:  # openai parsing a broken body
            error = self._scrub(f"invalid response body: {type(exc).__name__}: {exc}")
            raise _Transient(error) from None
        finally:
            latency = time.monotonic() - started
            self._account(purpose, attempt, request, text, usage, latency, error, finish)

    def _check_cancel(self, purpose: str) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise LLMCanceled(f"canceled before the {purpose} request")

    def _create(self, request: dict, purpose: str):
        """The openai call. With a cancel event it runs on a worker thread that a cancel abandons: the
        worker ends by itself within timeout_s (sooner once close() shuts the connection pool), and
        its late answer is dropped, never accounted or parsed."""
        if self.handler is not None:
            return self._in_process(request)
        assert self._openai is not None
        if self.cancel is None:
            return self._openai.chat.completions.create(**request)
        box: dict = {}
        done = threading.Event()

        def work() -> None:
            try:
                box["response"] = self._openai.chat.completions.create(**request)
            except BaseException as exc:  # handed to the caller's thread below
                box["error"] = exc
            finally:
                done.set()

        threading.Thread(target=work, name=f"llm-{purpose}", daemon=True).start()
        while not done.wait(CANCEL_POLL_S):
            if self.cancel.is_set():
                raise LLMCanceled(f"canceled while waiting for the {purpose} answer")
        if "error" in box:
            raise box["error"]
        return box["response"]

    def _in_process(self, request: dict) -> SimpleNamespace:
        """The handler's answer in the shape of an openai response (usage counted locally)."""
        assert self.handler is not None
        try:
            reply = self.handler(json.loads(json.dumps(request)))
        except Exception as exc:
            raise LLMUnavailable(f"the answer handler failed: {type(exc).__name__}: {exc}") from exc
        text = getattr(reply, "text", reply)
        if not isinstance(text, str):
            raise LLMUnavailable(f"the answer handler returned {type(reply).__name__}, not text")
        message = SimpleNamespace(content=text)
        finish = getattr(reply, "finish_reason", "stop")
        return SimpleNamespace(choices=[SimpleNamespace(message=message, finish_reason=finish)], usage=None)

    def _read_response(self, response, sent: list[dict]) -> tuple[str, dict, str | None]:
        choices = getattr(response, "choices", None)
        if not choices or getattr(choices[0], "message", None) is None:
            raise _Transient("invalid response body: no choices[0].message")
        text = choices[0].message.content or ""
        reported = getattr(response, "usage", None)
        if reported is not None and reported.prompt_tokens is not None:
            # some servers send prompt_tokens 0: count the prompt here, it is never 0 tokens
            prompt = int(reported.prompt_tokens) or count_message_tokens(sent)
            usage = {"prompt_tokens": prompt, "completion_tokens": int(reported.completion_tokens or 0),
                     "counted_locally": not reported.prompt_tokens}
        else:
            usage = {"prompt_tokens": count_message_tokens(sent), "completion_tokens": count_tokens(text),
                     "counted_locally": True}
        return text, usage, getattr(choices[0], "finish_reason", None)

    def _classify_status(self, exc: openai.APIStatusError, error: str) -> Exception:
        status = exc.status_code
        message = _status_message(exc)
        if status in (400, 422) and not self._json_object_mode and (
                "response_format" in message or "json_schema" in message):
            return _SchemaRejected(error)
        if status == 429:
            return _Transient(error, _retry_after(exc.response))
        if status in RETRYABLE_STATUS or status >= 500:
            return _Transient(error)
        if status == 404 and _error_code(exc) == "replay_miss":
            return LLMReplayMiss(f"replay miss at {self.endpoint}: {message}", key=_replay_key(exc))
        if status in (401, 403):
            return LLMUnavailable(f"{self.endpoint} refused the credentials ({error}); "
                                  f"check the key in ${self.config.api_key_env}")
        return LLMUnavailable(f"{self.endpoint} rejected the request ({error})")

    # ---- request shaping ----

    def _response_format(self, schema: type[BaseModel]) -> dict:
        if self._json_object_mode:
            return {"type": "json_object"}
        spec = {"name": schema.__name__[:64], "schema": answer_schema(schema), "strict": self._strict}
        return {"type": "json_schema", "json_schema": spec}

    def _messages_for_mode(self, conversation: list[dict], schema: type[BaseModel]) -> list[dict]:
        """In json_object mode the schema travels in the (first) system message instead."""
        if not self._json_object_mode:
            return conversation
        shown = json.dumps(answer_schema(schema), separators=(",", ":"))
        messages = [dict(m) for m in conversation]
        if any(shown in str(m.get("content", "")) for m in messages if m.get("role") == "system"):
            hint = "Answer with exactly one JSON object, no prose and no code fences, matching the schema above."
        else:
            hint = ("Answer with exactly one JSON object, no prose and no code fences, that validates against "
                    f"this JSON schema:\n{shown}")
        if messages and messages[0].get("role") == "system" and isinstance(messages[0].get("content"), str):
            messages[0]["content"] = f"{messages[0]['content']}\n\n{hint}"
        else:
            messages.insert(0, {"role": "system", "content": hint})
        return messages

    # ---- accounting ----

    def _account(self, purpose: str, attempt: int, request: dict, text: str | None, usage: dict | None,
                 latency: float, error: str | None, finish_reason: str | None) -> None:
        """Ledger record + listeners. Failed exchanges book 0 tokens: nothing usable was returned."""
        ok = error is None
        self.usage.add(CallRecord(
            purpose=purpose, model=self.config.model,
            prompt_tokens=usage["prompt_tokens"] if usage else 0,
            completion_tokens=usage["completion_tokens"] if usage else 0,
            latency_s=latency, ok=ok, error=error, attempt=attempt,
            tokens_counted_locally=bool(usage and usage["counted_locally"])))
        exchange = {"purpose": purpose, "attempt": attempt, "request": request,
                    "answer_text": self._scrub(text) if text is not None else None,
                    "usage": usage, "latency_s": latency, "error": error, "finish_reason": finish_reason}
        for listener in list(self._listeners):
            try:
                listener(exchange)
            except Exception:  # a broken recorder must not break planning, but must be visible
                log.exception("LLM exchange listener %r failed", listener)

    def _scrub(self, text: str) -> str:
        if self._secret and self._secret in text:
            return text.replace(self._secret, "[REDACTED]")
        return text


def retry_delay(config: LLMConfig, attempt: int, retry_after: float | None) -> float:
    """Seconds to wait after failed attempt `attempt` (1-based): the server's Retry-After up to
    retry_after_cap_s, else backoff_s * 2**(attempt-1) up to backoff_cap_s."""
    if retry_after is not None:
        return min(max(retry_after, 0.0), config.retry_after_cap_s)
    return min(config.backoff_s * 2 ** (attempt - 1), config.backoff_cap_s)


def _status_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
    return str(exc.message)


def _error_code(exc: openai.APIStatusError) -> str | None:
    body = exc.body if isinstance(exc.body, dict) else {}
    inner = body.get("error", body)
    return inner.get("code") if isinstance(inner, dict) else None


def _replay_key(exc: openai.APIStatusError) -> str | None:
    body = exc.body if isinstance(exc.body, dict) else {}
    inner = body.get("error", body)
    return inner.get("key") if isinstance(inner, dict) else None


def _retry_after(response) -> float | None:
    """Seconds from Retry-After (delta-seconds or HTTP date) or retry-after-ms; None when absent/garbled."""
    headers = getattr(response, "headers", None) or {}
    if headers.get("retry-after-ms"):
        try:
            return float(headers["retry-after-ms"]) / 1000.0
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, when.timestamp() - time.time())
