"""The web server of ``step-planner hmi``: one page, one WebSocket, and who may use them.

The page moves a robot, so every request passes ``Guard`` first (an ASGI middleware, for plain requests and
WebSocket upgrades alike):

- only GET/HEAD (the page's actions travel over the WebSocket, which is checked the same way);
- cross-origin: a request whose ``Origin`` is not this server's own address, or that the browser marks
  ``Sec-Fetch-Site: cross-site``, is refused; a WebSocket upgrade must carry a same-origin ``Origin``;
- bound to loopback without a token: the ``Host`` header must name the loopback address (a DNS-rebinding page
  reaches 127.0.0.1 under its own host name);
- with a token (any other address; or set in the environment): every request and the WebSocket carry it, as
  the cookie the page gets when opened with ``?token=``, an ``Authorization: Bearer`` header or ``?token=``.

What a person sends is checked by :func:`step_planner.hmi.session.parse_command` before the ROS client sees it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
from collections.abc import Iterable
from dataclasses import dataclass
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from step_planner.hmi.session import Command, HmiState, Refused, parse_command

PAGE_DIR = Path(__file__).resolve().parent / "page"  # package data (setup.py): installed with this module
COOKIE = "step_planner_hmi"
PAGE_FILES = {"/": ("index.html", "text/html; charset=utf-8"), "/hmi.js": ("hmi.js", "text/javascript"),
              "/hmi.css": ("hmi.css", "text/css")}
HEADERS = {  # the page loads only its own files, talks only to this server, and is never framed (clickjacking)
    "Content-Security-Policy": "default-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
POLICY_VIOLATION = 1008  # WebSocket close code


class Link(Protocol):
    """What the server asks of the ROS client (``ros_link.RosLink``); each call returns (accepted, message)."""

    def send_goal(self, instruction: str) -> None: ...
    def cancel(self) -> tuple[bool, str]: ...
    def confirm(self, decision: str, facts: tuple[str, ...], reason: str) -> tuple[bool, str]: ...
    def answer(self, text: str) -> tuple[bool, str]: ...


@dataclass(frozen=True)
class Access:
    """Who may connect: ``hosts`` the Host header may name (empty: any, a token guards), the ``token``."""

    hosts: frozenset[str]
    token: str | None = None

    def refusal(self, scope: dict[str, Any]) -> str | None:
        """Why this request or WebSocket upgrade is refused (None: it may pass)."""
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        host = headers.get("host", "")
        if self.hosts and host not in self.hosts:
            return f"host {host!r} is not this server's address"
        origin = headers.get("origin")
        websocket = scope["type"] == "websocket"
        if origin is None and websocket:
            return "a WebSocket upgrade without an Origin header"
        if origin is not None and origin != f"http://{host}":
            return f"cross-origin request from {origin!r}"
        if headers.get("sec-fetch-site") == "cross-site":
            return "cross-site request"
        if not websocket and scope.get("method") not in ("GET", "HEAD"):
            return f"method {scope.get('method')} is not allowed"
        if self.token is not None and not self._carries_token(scope, headers):
            return "no valid token (open the address printed at start, with its ?token=)"
        return None

    def _carries_token(self, scope: dict[str, Any], headers: dict[str, str]) -> bool:
        assert self.token is not None
        offered = []
        cookie = SimpleCookie()
        with contextlib.suppress(Exception):
            cookie.load(headers.get("cookie", ""))
        if COOKIE in cookie:
            offered.append(cookie[COOKIE].value)
        auth = headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            offered.append(auth[7:].strip())
        offered += parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token", [])
        return any(hmac.compare_digest(t.encode(), self.token.encode()) for t in offered)


class Guard:
    """ASGI middleware: refuses what ``Access`` refuses, before any route runs."""

    def __init__(self, app, access: Access) -> None:
        self.app, self.access = app, access

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        reason = self.access.refusal(scope)
        if reason is None:
            return await self.app(scope, receive, send)
        if scope["type"] == "websocket":  # closing before accepting: the server answers the upgrade 403
            await send({"type": "websocket.close", "code": POLICY_VIOLATION, "reason": reason})
            return None
        status = 401 if reason.startswith("no valid token") else 403
        response = PlainTextResponse(f"step-planner hmi: refused: {reason}\n", status_code=status, headers=HEADERS)
        await response(scope, receive, send)
        return None


class Hub:
    """Pushes the state to every open page when it changes (the ROS client's threads call ``poke``)."""

    def __init__(self, state: HmiState) -> None:
        self.state = state
        self.events: set[asyncio.Event] = set()
        self.loop: asyncio.AbstractEventLoop | None = None
        state.on_change = self.poke

    def poke(self) -> None:
        if self.loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop closed: nobody to tell
                self.loop.call_soon_threadsafe(self._wake)

    def _wake(self) -> None:
        for event in self.events:
            event.set()


async def _perform(command: Command, state: HmiState, link: Link) -> tuple[bool, str]:
    if command.kind == "send":
        state.begin(command.instruction)  # Refused while the pages' goal runs
        await asyncio.to_thread(link.send_goal, command.instruction)
        return True, f"sent: {command.instruction}"
    if command.kind == "cancel":
        return await asyncio.to_thread(link.cancel)
    if command.kind == "confirm":
        return await asyncio.to_thread(link.confirm, command.decision, command.facts, command.text)
    return await asyncio.to_thread(link.answer, command.text)


def create_app(state: HmiState, link: Link, access: Access, page_dir: Path | None = None) -> Guard:
    page_dir = page_dir or PAGE_DIR
    hub = Hub(state)

    async def page(request: Request) -> Response:
        name, media = PAGE_FILES[request.url.path]
        if access.token is not None and "token" in request.query_params:  # keep it in a cookie, not the URL
            response = RedirectResponse(request.url.path, status_code=303, headers=HEADERS)
            response.set_cookie(COOKIE, request.query_params["token"], httponly=True, samesite="strict")
            return response
        return Response((page_dir / name).read_bytes(), media_type=media, headers=HEADERS)

    async def camera(request: Request) -> Response:
        frame, info = state.camera_frame, state.camera
        if not frame or info is None:
            return PlainTextResponse("no camera frame\n", status_code=404, headers=HEADERS)
        return Response(frame, media_type=f"image/{info['format']}", headers=HEADERS)

    async def state_json(request: Request) -> Response:
        return Response(json.dumps(state.snapshot(), default=str), media_type="application/json", headers=HEADERS)

    async def socket(ws: WebSocket) -> None:
        await ws.accept()
        hub.loop = asyncio.get_running_loop()
        changed = asyncio.Event()
        hub.events.add(changed)

        async def push() -> None:
            sent = -1
            while True:
                if state.version != sent:
                    snap = state.snapshot()
                    sent = snap["version"]
                    await ws.send_text(json.dumps(snap, default=str))
                changed.clear()
                if state.version == sent:
                    await changed.wait()

        async def serve() -> None:
            while True:
                raw = await ws.receive_text()
                try:
                    ok, message = await _perform(parse_command(raw), state, link)
                except Refused as exc:
                    ok, message = False, str(exc)
                await ws.send_text(json.dumps({"type": "reply", "ok": ok, "message": message}))

        pusher = asyncio.create_task(push())
        try:
            await serve()
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            pusher.cancel()
            hub.events.discard(changed)
            with contextlib.suppress(BaseException):
                await pusher

    routes: Iterable = [*(Route(path, page, methods=["GET"]) for path in PAGE_FILES),
                        Route("/state", state_json, methods=["GET"]), Route("/camera.jpg", camera, methods=["GET"]),
                        WebSocketRoute("/ws", socket)]
    return Guard(Starlette(routes=list(routes)), access)


def loopback_hosts(port: int) -> frozenset[str]:
    return frozenset({f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"})


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"
