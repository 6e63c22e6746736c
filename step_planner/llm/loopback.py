"""A loopback HTTP server that speaks the OpenAI chat-completions protocol, with injectable faults.

WHY: tests, replay and the scripted expert must exercise the real `openai` client over real HTTP
(request building, status handling, body parsing), not a patched client object. The answers come from a
plain callable `handler(request_json) -> str | Answer | Fault`, so a replay folder, a recorder or a
scripted expert plugs in the same way. Each request is served on its own thread; `close()` joins them.
"""

from __future__ import annotations

import contextlib
import json
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .tokens import count_message_tokens, count_tokens

log = logging.getLogger(__name__)

FAULT_KINDS = ("timeout", "http_429", "http_500", "http_503", "disconnect", "truncated", "malformed", "huge",
               "reject_json_schema", "http_error")
MAX_STALL_S = 30.0  # a "timeout" fault never holds a thread longer than this
LLAMA_CPP_REJECTION = 'response_format type must be one of "text" or "json_object", but got: json_schema'


@dataclass(frozen=True)
class Fault:
    """A misbehaviour of the endpoint instead of an answer.

    timeout: stall `delay_s` (default: the server's stall_s), then close without answering.
    http_429: rate limited, with a Retry-After header of `retry_after` seconds when given.
    http_500 / http_503: server errors. disconnect: close the socket without any response.
    truncated: a 200 whose JSON body stops halfway. malformed: a 200 with JSON that is no chat.completion.
    huge: a multi-MB answer text (the body is fine; the answer is far too long).
    reject_json_schema: 400 the way llama.cpp refuses response_format json_schema.
    http_error: any `status` with `message` (and optional `code`), e.g. a replay miss (404).
    """

    kind: str
    retry_after: float | None = None
    delay_s: float | None = None
    status: int | None = None
    message: str = ""
    code: str | None = None
    extra: dict | None = None  # more fields for the error object, e.g. {"key": ...} on a replay miss

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {self.kind!r}; known: {', '.join(FAULT_KINDS)}")


@dataclass(frozen=True)
class Answer:
    """Answer text plus, optionally, the usage to report (else it is counted with count_tokens)."""

    text: str
    usage: dict | None = None
    finish_reason: str = "stop"  # "length" imitates an answer cut off at max_tokens


HandlerReply = str | Answer | Fault
Handler = Callable[[dict], HandlerReply]


class FaultSchedule:
    """Wrap a handler: the first requests get the given faults in order, later ones the handler's answer."""

    def __init__(self, handler: Handler, faults: Iterable[Fault | str]) -> None:
        self._handler = handler
        self._faults = [f if isinstance(f, Fault) else Fault(f) for f in faults]
        self._lock = threading.Lock()
        self.injected: list[Fault] = []

    def __call__(self, request: dict) -> HandlerReply:
        with self._lock:
            if self._faults:
                fault = self._faults.pop(0)
                self.injected.append(fault)
                return fault
        return self._handler(request)


class RejectJsonSchema:
    """Wrap a handler to behave like llama.cpp: refuse json_schema response_format, serve the rest."""

    def __init__(self, handler: Handler) -> None:
        self._handler = handler

    def __call__(self, request: dict) -> HandlerReply:
        if (request.get("response_format") or {}).get("type") == "json_schema":
            return Fault("reject_json_schema")
        return self._handler(request)


class LoopbackServer:
    """OpenAI-compatible endpoint on loopback: GET /v1/models, POST /v1/chat/completions (JSON or SSE).

    `requests` logs every request as {"method", "path", "body", "t"} (body = parsed JSON, t = arrival
    time.monotonic()); headers, and so
    any Authorization key, are never logged.
    """

    def __init__(self, handler: Handler, host: str = "127.0.0.1", port: int = 0, *,
                 stall_s: float = 5.0, huge_chars: int = 4_000_000, model_ids: Iterable[str] = ("loopback",),
                 report_usage: bool = True):
        self.handler = handler
        self.stall_s = min(stall_s, MAX_STALL_S)
        self.huge_chars = huge_chars
        self.model_ids = list(model_ids)
        self.report_usage = report_usage  # False imitates servers that send no `usage`
        self.requests: list[dict] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._counter = 0
        self._httpd = ThreadingHTTPServer((host, port), _make_request_handler(self))
        self._httpd.daemon_threads = False  # server_close() joins the request threads
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> LoopbackServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="llm-loopback", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving, wake stalled requests and join all threads."""
        self._stop.set()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join()
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    def _log(self, method: str, path: str, body: dict | None) -> int:
        with self._lock:
            self._counter += 1
            self.requests.append({"method": method, "path": path, "body": body, "t": time.monotonic()})
            return self._counter


def chat_completion(request: dict, answer: Answer, number: int) -> dict:
    """The chat.completion object the OpenAI API returns for one answer."""
    usage = answer.usage or _count_usage(request, answer.text)
    return {
        "id": f"chatcmpl-loopback-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model", "loopback"),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": answer.text},
                     "finish_reason": answer.finish_reason, "logprobs": None}],
        "usage": usage,
    }


def _count_usage(request: dict, text: str) -> dict:
    prompt = count_message_tokens(request.get("messages") or [])
    completion = count_tokens(text)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _error_body(status: int, message: str, code: str | None = None, extra: dict | None = None) -> dict:
    kind = "invalid_request_error" if status < 500 else "server_error"
    return {"error": {**(extra or {}), "message": message, "type": kind, "code": code or status}}


def _make_request_handler(server: LoopbackServer) -> type[BaseHTTPRequestHandler]:
    class _Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"  # one request per connection: nothing lingers at shutdown

        def log_message(self, format: str, *args) -> None:  # noqa: A002 - stdlib signature
            log.debug("loopback: " + format, *args)

        def do_GET(self) -> None:  # noqa: N802 - stdlib naming
            server._log("GET", self.path, None)
            if self.path.rstrip("/").endswith("/models"):
                models = [{"id": m, "object": "model", "created": 0, "owned_by": "loopback"}
                          for m in server.model_ids]
                self._send_json(200, {"object": "list", "data": models})
            else:
                self._send_json(404, _error_body(404, f"no route {self.path}"))

        def do_POST(self) -> None:  # noqa: N802 - stdlib naming
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                server._log("POST", self.path, None)
                self._send_json(400, _error_body(400, "request body is not JSON"))
                return
            number = server._log("POST", self.path, body)
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send_json(404, _error_body(404, f"no route {self.path}"))
                return
            try:
                reply = server.handler(body)
            except Exception as exc:  # a broken handler is reported to the client, not swallowed
                log.exception("loopback handler failed")
                self._send_json(500, _error_body(500, f"handler raised {type(exc).__name__}: {exc}"))
                return
            try:
                if isinstance(reply, Fault):
                    self._send_fault(reply, body, number)
                else:
                    answer = reply if isinstance(reply, Answer) else Answer(str(reply))
                    if body.get("stream"):
                        self._send_stream(body, answer, number)
                    else:
                        completion = chat_completion(body, answer, number)
                        if not server.report_usage:
                            del completion["usage"]
                        self._send_json(200, completion)
            except (BrokenPipeError, ConnectionResetError):
                log.debug("loopback: client went away")

        def _send_json(self, status: int, payload: dict, headers: dict | None = None) -> None:
            self._send_bytes(status, json.dumps(payload).encode(), headers)

        def _send_bytes(self, status: int, data: bytes, headers: dict | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def _drop(self) -> None:
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)

        def _send_fault(self, fault: Fault, body: dict, number: int) -> None:
            kind = fault.kind
            if kind == "timeout":
                server._stop.wait(min(fault.delay_s or server.stall_s, MAX_STALL_S))
                self._drop()
            elif kind == "disconnect":
                self._drop()
            elif kind == "http_429":
                headers = {"Retry-After": f"{fault.retry_after:g}"} if fault.retry_after is not None else {}
                self._send_json(429, _error_body(429, fault.message or "rate limit exceeded", "rate_limit"),
                                headers)
            elif kind in ("http_500", "http_503"):
                status = int(kind[-3:])
                self._send_json(status, _error_body(status, fault.message or f"injected {status}"))
            elif kind == "reject_json_schema":
                self._send_json(400, _error_body(400, fault.message or LLAMA_CPP_REJECTION))
            elif kind == "http_error":
                status = fault.status or 500
                self._send_json(status, _error_body(status, fault.message, fault.code, fault.extra))
            elif kind == "truncated":  # a complete HTTP response whose JSON body stops halfway
                data = json.dumps(chat_completion(body, Answer('{"done": true}'), number)).encode()
                self._send_bytes(200, data[: len(data) // 2])
            elif kind == "malformed":  # valid JSON, but not a chat.completion
                self._send_bytes(200, b'{"object": "list", "data": []}')
            elif kind == "huge":  # starts like an answer, goes on for megabytes
                phrase = "the robot should first look at the table, "
                text = '{"reasoning": "' + phrase * (server.huge_chars // len(phrase))
                tokens = len(text) // 4  # counting megabytes with WordPiece would stall the test
                usage = {"prompt_tokens": 0, "completion_tokens": tokens, "total_tokens": tokens}
                self._send_json(200, chat_completion(body, Answer(text, usage), number))

        def _send_stream(self, body: dict, answer: Answer, number: int) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            base = {"id": f"chatcmpl-loopback-{number}", "object": "chat.completion.chunk",
                    "created": int(time.time()), "model": body.get("model", "loopback")}
            pieces = [answer.text[i:i + 16] for i in range(0, len(answer.text), 16)] or [""]
            deltas = [{"role": "assistant", "content": ""}] + [{"content": p} for p in pieces]
            for delta in deltas:
                self._event({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
            self._event({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
            if (body.get("stream_options") or {}).get("include_usage"):
                usage = answer.usage or _count_usage(body, answer.text)
                self._event({**base, "choices": [], "usage": usage})
            self.wfile.write(b"data: [DONE]\n\n")

        def _event(self, payload: dict) -> None:
            self.wfile.write(b"data: " + json.dumps(payload).encode() + b"\n\n")

    return _Handler

