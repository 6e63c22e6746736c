"""``step-planner hmi`` (also ``ros2 run step_planner hmi``): serve the page for the person at the robot.

    step-planner hmi [--node /step_planner] [--port 8765]       # http://127.0.0.1:8765/, this machine only
    step-planner hmi --host 0.0.0.0 --port 8765                  # other machines: a token is required
    step-planner hmi --camera /camera/color/image_raw/compressed # a robot camera's view on the page

Binds 127.0.0.1 unless ``--host`` names another address; then every request and the WebSocket must carry a
token: ``$STEP_PLANNER_HMI_TOKEN`` when set (on loopback too), else a new one printed once at start with the
address to open. Cross-origin requests and WebSocket upgrades are refused.
"""

from __future__ import annotations

import argparse
import os
import secrets
import socket
import sys

LOOPBACK = ("127.0.0.1", "localhost", "::1")
TOKEN_ENV = "STEP_PLANNER_HMI_TOKEN"
MAX_WS_BYTES = 64 * 1024  # uvicorn drops a WebSocket message larger than this


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="step-planner hmi", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--node", default="/step_planner", help="the planner node's name")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1; any other "
                        f"needs a token: ${TOKEN_ENV}, or one printed at start)")
    parser.add_argument("--port", type=int, default=8765, help="port (0: any free one, printed at start)")
    parser.add_argument("--camera", default="", metavar="TOPIC",
                        help="a sensor_msgs/CompressedImage topic the page shows (the ROS parameter camera_topic; "
                        "default: the node's ~/sim/camera/image/compressed, published on backend sim)")
    return parser


def main_hmi(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    import uvicorn

    from step_planner.hmi.ros_link import RosLink
    from step_planner.hmi.server import Access, create_app, loopback_hosts
    from step_planner.hmi.session import HmiState

    loopback = args.host in LOOPBACK
    token = os.environ.get(TOKEN_ENV) or None
    printed_token = False
    if token is None and not loopback:
        token, printed_token = secrets.token_urlsafe(24), True
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("::1" if args.host == "::1" else "127.0.0.1" if args.host == "localhost" else args.host,
                   args.port))
    except OSError as exc:
        print(f"step-planner hmi: cannot bind {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 2
    sock.listen(128)  # from here on a client may connect (it waits until the server below accepts)
    port = sock.getsockname()[1]
    # On loopback without a token the Host header must name loopback (DNS rebinding); with a token, any name
    access = Access(loopback_hosts(port) if loopback and token is None else frozenset(), token)
    state = HmiState(args.node)
    link = RosLink(state, args.node, args.camera)
    shown = "[::1]" if args.host == "::1" else "127.0.0.1" if loopback else args.host
    url = f"http://{shown}:{port}/"
    if printed_token:
        url += f"?token={token}"
    print(f"step-planner hmi: open {url}  (client of {args.node}; Ctrl-C stops)", flush=True)
    if printed_token:
        print(f"step-planner hmi: the token above is printed once; set ${TOKEN_ENV} to choose it", flush=True)
    config = uvicorn.Config(create_app(state, link, access), log_level="warning", ws_max_size=MAX_WS_BYTES,
                            ws="websockets-sansio", lifespan="off")
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        link.close()
    return 0


def main() -> None:
    sys.exit(main_hmi())
