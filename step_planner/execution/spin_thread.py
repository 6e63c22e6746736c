"""Action-client requests made on the thread that spins their node, and goals given up on canceled.

rclpy's ActionClient (7.1, Jazzy) sends a request first and registers the future waiting for its response
afterwards (rclpy/action/client.py, ``send_goal_async`` :440-452, ``_get_result_async``, ``_cancel_goal_async``).
When another thread spins the node, a response that arrives in between is handled there as "unexpected" and
dropped ("Ignoring unexpected goal response. There may be more than one action server ..."), and the future never
completes: a goal the controller accepted and runs looks unanswered. Seen here in 1 of 645 goals of a Table III
replay on a loaded machine. rclpy's service client holds a lock across the two steps; its action client does not.
Making the request on the spinning thread itself closes the window: no response is handled until it returns.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def on_spin_thread(executor: Any, request: Callable[[], T], timeout: float) -> T:
    """Run ``request`` (e.g. ``lambda: client.send_goal_async(goal)``) as a task of ``executor``, which another
    thread spins, and return what it returned. TimeoutError if the executor did not get to it within ``timeout``;
    the request is then never made (a goal is not sent after its sender gave up on it)."""
    lock = threading.Lock()
    done = threading.Event()
    abandoned = False
    box: dict[str, Any] = {}

    def run() -> None:
        with lock:
            if abandoned:
                return
            try:
                box["value"] = request()
            except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
                box["error"] = exc
            finally:
                done.set()

    executor.create_task(run)
    if not done.wait(timeout):
        with lock:
            if not done.is_set():
                abandoned = True
                raise TimeoutError(f"the node's executor did not get to the request within {timeout:.1f} s")
    if "error" in box:
        raise box["error"]
    return box["value"]


def cancel_if_accepted(future: Any) -> None:
    """Done callback for the future of a goal its sender gave up on before the server answered: should the server
    accept it after all, cancel it at once (dropping the future would leave the server running a motion the
    caller counts as failed)."""
    handle = future.result() if not future.cancelled() else None
    if handle is not None and handle.accepted:
        handle.cancel_goal_async()
