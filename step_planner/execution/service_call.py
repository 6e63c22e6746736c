"""One service request waited for by polling its future, asked again when its answer may be lost.

Shared by the controllers backend's RobotConnection and the MoveIt backend's RosLink: both call services from a
thread other than the one spinning their node (franka_link.FrankaLink's controller-manager calls among them).
"""

from __future__ import annotations

import time
from typing import Any

POLL_S = 0.005
RESEND_S = 2.0  # a repeatable request unanswered this long is sent again (see call_service)


def call_service(node: Any, client: Any, name: str, request: Any, timeout: float, resend_s: float | None,
                 unavailable: type[Exception]) -> Any:
    """The service's answer, or ``unavailable`` after ``timeout``. ``resend_s``: ask again after that long without an
    answer, for requests that are safe to repeat (idempotent, or carrying an id the server answers once): a new
    client's first answer can be lost, since rmw_fastrtps's server waits only 100 ms for the client's response reader
    to be matched and then drops the answer (rmw_fastrtps_shared_cpp/src/rmw_response.cpp, jazzy, "workaround for the
    race on the discovery of services")."""
    if not client.wait_for_service(timeout_sec=timeout):
        raise unavailable(f"no service {name}")
    deadline = time.monotonic() + timeout
    futures: list[Any] = []
    ask_at = time.monotonic()
    try:
        while True:
            if (done := next((f for f in futures if f.done()), None)) is not None:
                return done.result()
            now = time.monotonic()
            if now > deadline:
                raise unavailable(f"{name} did not answer within {timeout:.0f} s"
                                  + (f" ({len(futures)} requests)" if len(futures) > 1 else ""))
            if now >= ask_at:
                if futures:
                    node.get_logger().warning(f"{name}: no answer after {resend_s:.1f} s, asking again")
                futures.append(client.call_async(request))
                ask_at = now + resend_s if resend_s else float("inf")
            time.sleep(POLL_S)
    finally:
        for future in futures:
            future.cancel()  # an answer still owed is dropped, not kept pending in the client
