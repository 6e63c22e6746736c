"""Helpers for the `step-planner hmi` tests: the web app on a real uvicorn server (a free loopback port), and
a recording stand-in for the ROS client where the test is about the web side only."""

from __future__ import annotations

import socket
import threading
import time

import uvicorn

from step_planner.hmi.main import MAX_WS_BYTES


class RecordingLink:
    """Records what the server passes on to the ROS client; answers as told."""

    def __init__(self, state=None) -> None:
        self.state = state
        self.calls: list[tuple] = []
        self.reply = (True, "ok")

    def send_goal(self, instruction: str) -> None:
        self.calls.append(("send", instruction))
        if self.state is not None:
            self.state.accepted("ab" * 16)

    def cancel(self):
        self.calls.append(("cancel",))
        return self.reply

    def confirm(self, decision, facts, reason):
        self.calls.append(("confirm", decision, facts, reason))
        return self.reply

    def answer(self, text):
        self.calls.append(("answer", text))
        return self.reply


class Served:
    """``app`` served by uvicorn in a thread on 127.0.0.1 (as ``step-planner hmi`` serves it)."""

    def __init__(self, app, sock: socket.socket | None = None) -> None:
        if sock is None:
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
        self.sock = sock
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(app, log_level="warning", ws_max_size=MAX_WS_BYTES, ws="websockets-sansio",
                                lifespan="off")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [sock]}, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 15
        while not self.server.started:
            if time.monotonic() > deadline:
                raise TimeoutError("uvicorn did not start")
            time.sleep(0.02)

    @property
    def base(self) -> str:
        return f"127.0.0.1:{self.port}"

    def close(self) -> None:
        self.server.should_exit = True
        self.thread.join(15)
