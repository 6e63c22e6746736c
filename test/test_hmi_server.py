"""`step-planner hmi`'s web side refuses what must not steer the arm: another Host (DNS rebinding), another
Origin (requests and WebSocket upgrades), cross-site fetches, other methods, a missing or wrong token when one is
required, and inputs the node would refuse or that are too long -- each before the ROS client sees anything.
A real uvicorn server on loopback, real HTTP and WebSocket clients; the ROS client is a recorder here (the
browser tests drive the real one)."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hmi_support import RecordingLink, Served
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from step_planner.hmi.server import COOKIE, Access, create_app, loopback_hosts
from step_planner.hmi.session import MAX_MESSAGE_CHARS, HmiState
from step_planner.planner.runner import MAX_INSTRUCTION_CHARS

TOKEN = "s3cret-token-for-tests"


def serve(token: str | None = None, loopback: bool = True):
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    state = HmiState("/step_planner_test")
    link = RecordingLink(state)
    access = Access(loopback_hosts(port) if loopback else frozenset(), token)
    return Served(create_app(state, link, access), sock), state, link


@pytest.fixture
def local():
    served, state, link = serve()
    yield served, state, link
    served.close()


@pytest.fixture
def guarded():
    served, state, link = serve(TOKEN, loopback=False)
    yield served, state, link
    served.close()


def get(served: Served, path: str = "/", method: str = "GET", **headers) -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection("127.0.0.1", served.port, timeout=10)
    conn.request(method, path, headers={k.replace("_", "-"): v for k, v in headers.items()})
    response = conn.getresponse()
    response.body = response.read()
    conn.close()
    return response


def ws(served: Served, origin: str | None = "same", **headers):
    origin = f"http://{served.base}" if origin == "same" else origin
    return connect(f"ws://{served.base}/ws", origin=origin, additional_headers=headers or None, open_timeout=10)


def command(sock, message) -> dict:
    """Send one message; the reply to it (state pushes in between are skipped)."""
    sock.send(message if isinstance(message, str) else json.dumps(message))
    while True:
        data = json.loads(sock.recv(timeout=10))
        if data["type"] == "reply":
            return data


# ---- who may connect -----------------------------------------------------------------------------------
def test_the_page_and_its_files_are_served_same_origin_with_a_strict_policy(local):
    served, _, _ = local
    page = get(served, Host=served.base)
    assert page.status == 200 and b'<script src="/hmi.js"' in page.body
    assert "frame-ancestors 'none'" in page.headers["Content-Security-Policy"]
    assert get(served, "/hmi.js", Host=served.base).status == 200
    assert get(served, "/", Host=served.base, Origin=f"http://{served.base}").status == 200
    assert get(served, "/", Host=f"localhost:{served.port}", Sec_Fetch_Site="same-origin").status == 200


def test_the_camera_frame_is_served_once_a_camera_sent_one_and_guarded_like_the_rest(local, guarded):
    served, state, _ = local
    assert get(served, "/camera.jpg", Host=served.base).status == 404  # no camera: the page shows no panel
    assert state.snapshot()["camera"] is None
    version = state.version
    state.on_camera(b"\xff\xd8first", "/step_planner_test/sim/camera/image/compressed", "jpeg")
    state.on_camera(b"\xff\xd8second", "/step_planner_test/sim/camera/image/compressed", "jpeg")
    assert state.version == version + 1  # the pages learn of the camera once; frames are fetched, not pushed
    assert state.snapshot()["camera"] == {"source": "/step_planner_test/sim/camera/image/compressed",
                                          "format": "jpeg"}
    frame = get(served, "/camera.jpg", Host=served.base)
    assert frame.status == 200 and frame.body == b"\xff\xd8second" and frame.headers["Content-Type"] == "image/jpeg"
    assert frame.headers["Cache-Control"] == "no-store"
    assert get(served, "/camera.jpg", Host=f"rebound.example:{served.port}").status == 403
    assert get(served, "/camera.jpg", Host=served.base, Origin="http://evil.example").status == 403
    served, state, _ = guarded
    state.on_camera(b"\x89PNG...", "/camera/image/compressed", "rgb8; png compressed bgr8")
    assert get(served, "/camera.jpg", Host=served.base).status == 401
    png = get(served, f"/camera.jpg?token={TOKEN}", Host=served.base)
    assert png.status == 200 and png.headers["Content-Type"] == "image/png"


def test_another_host_name_is_refused_on_loopback(local):
    served, _, _ = local
    response = get(served, Host=f"rebound.example:{served.port}")
    assert response.status == 403 and b"not this server's address" in response.body


def test_a_cross_origin_request_is_refused(local):
    served, _, _ = local
    response = get(served, "/state", Host=served.base, Origin="http://evil.example")
    assert response.status == 403 and b"cross-origin" in response.body
    assert get(served, "/state", Host=served.base, Sec_Fetch_Site="cross-site").status == 403


def test_other_methods_are_refused(local):
    served, _, link = local
    assert get(served, "/", method="POST", Host=served.base).status == 403
    assert link.calls == []


def test_a_cross_origin_websocket_upgrade_is_refused(local):
    served, _, _ = local
    for origin in ("http://evil.example", None, f"http://localhost:{served.port + 1}"):
        with pytest.raises(InvalidStatus) as refused:
            ws(served, origin=origin)
        assert refused.value.response.status_code == 403, origin
    with ws(served) as sock:  # the same origin is served the state at once
        assert json.loads(sock.recv(timeout=10))["type"] == "state"


def test_with_a_token_every_request_and_the_websocket_must_carry_it(guarded):
    served, _, _ = guarded
    assert get(served, Host=served.base).status == 401
    assert get(served, "/hmi.js", Host=served.base).status == 401
    assert get(served, f"/?token={TOKEN}x", Host=served.base).status == 401
    assert get(served, "/", Host=served.base, Authorization="Bearer wrong").status == 401
    opened = get(served, f"/?token={TOKEN}", Host=served.base)  # the address printed at start
    assert opened.status == 303 and opened.headers["Location"] == "/"
    cookie = opened.headers["Set-Cookie"]
    assert cookie.startswith(f"{COOKIE}={TOKEN}") and "HttpOnly" in cookie and "SameSite=strict" in cookie
    assert get(served, "/", Host=served.base, Cookie=f"{COOKIE}={TOKEN}").status == 200
    assert get(served, "/state", Host=served.base, Authorization=f"Bearer {TOKEN}").status == 200
    with pytest.raises(InvalidStatus) as refused:
        ws(served)
    assert refused.value.response.status_code == 403
    with pytest.raises(InvalidStatus):
        ws(served, Cookie=f"{COOKIE}=wrong")
    with pytest.raises(InvalidStatus):  # the token does not excuse another origin
        ws(served, origin="http://evil.example", Cookie=f"{COOKIE}={TOKEN}")
    with ws(served, Cookie=f"{COOKIE}={TOKEN}") as sock:
        assert json.loads(sock.recv(timeout=10))["type"] == "state"


# ---- what may be sent -----------------------------------------------------------------------------------
@pytest.mark.parametrize(("message", "reason"), [
    ({"type": "send", "instruction": "x" * (MAX_INSTRUCTION_CHARS + 1)}, "longer than 2000"),
    ({"type": "send", "instruction": "   "}, "empty"),
    ({"type": "send", "instruction": "put the tape\x00 away"}, "control characters"),
    ({"type": "send", "instruction": ["a list"]}, "must be a string"),
    ({"type": "answer", "answer": "y" * 501}, "longer than 500"),
    ({"type": "answer", "answer": "two\nlines"}, "control characters"),
    ({"type": "confirm", "decision": "correct", "facts": "in(tape drawer"}, "cannot read"),
    ({"type": "confirm", "decision": "correct", "facts": "fly(tape)"}, "unknown predicate"),
    ({"type": "confirm", "decision": "correct", "facts": ["in(tape, drawer)"] * 21}, "at most 20"),
    ({"type": "confirm", "decision": "correct", "facts": ""}, "at least one fact"),
    ({"type": "confirm", "decision": "maybe"}, "decision must be"),
    ({"type": "confirm", "decision": "refuse", "reason": "r" * 501}, "longer than 500"),
    ({"type": "move_arm", "joint": 3}, "unknown message type"),
    ("not json", "JSON object"),
    ("x" * (MAX_MESSAGE_CHARS + 1), f"at most {MAX_MESSAGE_CHARS}"),
])
def test_bad_inputs_are_refused_with_a_reason_and_never_reach_the_node(local, message, reason):
    served, _, link = local
    with ws(served) as sock:
        reply = command(sock, message)
    assert not reply["ok"] and reason in reply["message"], reply
    assert link.calls == []


def test_a_message_over_the_frame_limit_closes_the_socket(local):
    served, _, link = local
    with ws(served) as sock, pytest.raises(ConnectionClosed) as closed:
        sock.send("z" * (70 * 1024))
        while True:
            sock.recv(timeout=10)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009  # message too big
    assert link.calls == []


def test_one_goal_at_a_time_and_good_inputs_pass_through(local):
    served, state, link = local
    with ws(served) as sock, ws(served) as other:
        assert command(sock, {"type": "send", "instruction": "put the tape in the drawer"})["ok"]
        busy = command(other, {"type": "send", "instruction": "put the cup on the tray"})
        assert not busy["ok"] and "already running" in busy["message"]
        assert command(other, {"type": "confirm", "decision": "correct",
                               "facts": "in(tape, drawer); closed(drawer)"})["ok"]
        assert command(sock, {"type": "answer", "answer": "the green one"})["ok"]
        assert command(sock, {"type": "cancel"})["ok"]
        state.on_result("ab" * 16, {"status": "CANCELED", "success": False})
        assert command(other, {"type": "send", "instruction": "put the cup on the tray"})["ok"]
    assert link.calls == [("send", "put the tape in the drawer"),
                          ("confirm", "correct", ("in(tape, drawer)", "closed(drawer)"), ""),
                          ("answer", "the green one"), ("cancel",), ("send", "put the cup on the tray")]


def test_several_pages_watch_the_same_state(local):
    served, state, _ = local
    with ws(served) as a, ws(served) as b:
        for sock in (a, b):
            json.loads(sock.recv(timeout=10))
        state.on_pending("question", "which blue block?")
        for sock in (a, b):
            assert json.loads(sock.recv(timeout=10))["waiting"] == {"question": "which blue block?"}


# ---- the command: binding and the token ------------------------------------------------------------------
def _start_hmi(*args: str, env: dict | None = None) -> tuple[subprocess.Popen, str]:
    pytest.importorskip("step_planner_interfaces", reason="build the interfaces first: make interfaces")
    proc = subprocess.Popen([sys.executable, "-m", "step_planner.cli", "hmi", "--node", "/nobody_here", "--port", "0",
                             *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})})
    line = proc.stdout.readline()
    if not line:
        proc.kill()
        pytest.fail(f"step-planner hmi did not start: {proc.stderr.read()}")
    return proc, line


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()


def _status(url: str, **headers) -> int:
    rest = url.split("//", 1)[1]
    hostport, path = rest.split("/", 1)
    conn = http.client.HTTPConnection("127.0.0.1", int(hostport.rsplit(":", 1)[1]), timeout=10)
    conn.request("GET", "/" + path, headers={"Host": hostport, **headers})
    status = conn.getresponse().status
    conn.close()
    return status


def test_the_command_binds_loopback_by_default_and_needs_no_token_there():
    proc, line = _start_hmi(env={"STEP_PLANNER_HMI_TOKEN": ""})
    try:
        url = line.split("open ", 1)[1].split()[0]
        assert url.startswith("http://127.0.0.1:") and "token" not in url
        assert _status(url) == 200
    finally:
        _stop(proc)


def test_another_address_gets_a_token_printed_once_and_refuses_requests_without_it():
    proc, line = _start_hmi("--host", "0.0.0.0", env={"STEP_PLANNER_HMI_TOKEN": ""})
    try:
        url = line.split("open ", 1)[1].split()[0]
        assert url.startswith("http://0.0.0.0:") and "?token=" in url
        token = url.split("?token=", 1)[1]
        assert len(token) >= 24
        bare = url.split("?", 1)[0]
        assert _status(bare) == 401 and _status(url) == 303
        assert _status(bare, Authorization=f"Bearer {token}") == 200
        time.sleep(0.5)
    finally:
        _stop(proc)
    assert proc.stdout.read().count(token) == 0  # printed once: only in the first line


def test_a_token_from_the_environment_is_required_and_not_printed():
    proc, line = _start_hmi("--host", "0.0.0.0", env={"STEP_PLANNER_HMI_TOKEN": TOKEN})
    try:
        url = line.split("open ", 1)[1].split()[0]
        assert TOKEN not in line and "token" not in url
        assert _status(url) == 401 and _status(url, Authorization=f"Bearer {TOKEN}") == 200
    finally:
        _stop(proc)


def test_ros2_run_and_step_planner_both_start_the_hmi():
    from step_planner.cli import DELEGATED
    from step_planner.hmi import main as hmi_main

    setup = (Path(__file__).resolve().parents[1] / "setup.py").read_text()
    assert '"hmi = step_planner.hmi.main:main"' in setup  # ros2 run step_planner hmi
    assert DELEGATED["hmi"] == ("step_planner.hmi.main", "main_hmi") and callable(hmi_main.main)
