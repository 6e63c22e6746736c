"""Running a ROS node process until SIGINT or SIGTERM, then stopping it in order: no traceback, exit code 0.

Why not rclpy's own signal handlers (rclpy 7.1.6, Jazzy). ``rclpy.init`` installs a C++ handler for both
signals that first calls the handler it replaced -- Python's, which raises KeyboardInterrupt in the main
thread wherever it is, cleanup included -- and then wakes a thread that shuts every context down
(ros2/rclpy jazzy, rclpy/src/rclpy/signal_handler.cpp:138-147 and :297-312) while the executor's worker
threads may still be publishing a goal's tree or joint states. That race gave the tracebacks (InvalidHandle,
"feedback publisher is invalid") and the SIGSEGV inside librcl of issue 23; a second Ctrl-C raised
KeyboardInterrupt again in the middle of ``destroy_node``. Here rclpy installs no handler
(``SignalHandlerOptions.NO``); ours only records the signal, and the main thread stops things in order:

1. the node's own work (``quiesce``: refuse new goals, cancel running ones, wait until their execute
   callbacks returned) -- bounded by ``STOP_TIMEOUT_S``;
2. the executor, then its spin thread and its worker threads are joined (rclpy sends a goal's result from
   the worker thread, after the execute callback returned). rclpy 7.1.6's
   ``Executor.shutdown`` does not wait for running callbacks (executors.py:232-236 tests ``_is_shutdown``
   right after setting it) and ``MultiThreadedExecutor`` never shuts its thread pool down (rolling added
   that: ros2/rclpy#1309), so :class:`JoiningExecutor` does;
3. ``destroy_node``, then ``rclpy.try_shutdown``: nothing is using the context any more.

How ``ros2 launch`` stops a node (ros2/launch jazzy, launch/launch/):
- Ctrl-C in a terminal reaches every process of the foreground process group, the node included: launch
  starts its processes without a session of their own (execute_local.py:569 calls osrf_pycommon's
  async_execute_process, which calls loop.subprocess_exec with no start_new_session: osrf/osrf_pycommon,
  process_utils/async_execute_process_asyncio/impl.py:45-47 and :78-80). launch itself sends SIGINT too only
  when it runs non-interactively (``ros2 launch -n``, or stdin not a TTY): execute_local.py:444-449
  (``send_sigint=not due_to_sigint or context.noninteractive``), so a node can get SIGINT twice for one Ctrl-C.
- A second Ctrl-C is ignored by launch ("... again, ignoring...", launch_service.py:191-202) but the terminal
  still delivers it to the node: a repeated signal here is logged and ignored, the stop already under way.
- If the process still runs ``sigterm_timeout`` (default 5 s) after the SIGINT, launch sends SIGTERM, and
  SIGKILL ``sigkill_timeout`` (5 s) later (execute_local.py:85-88 and :465-491). A stop normally ends well
  before the SIGTERM (a canceled goal ends in well under a second, writing its episode can take a second or
  two on the sim backend); a SIGTERM that still comes is a repeat, ignored. ``STOP_TIMEOUT_S`` gives up on
  goals that do not end before the SIGKILL would come. SIGTERM on its own is the same clean stop as SIGINT.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

import rclpy
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.logging import get_logger
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions

from step_planner.config_schema import ConfigFileError

STOP_TIMEOUT_S = 7.0  # for the node's goals to end; launch sends SIGTERM after 5 s, SIGKILL after 10 s
JOIN_TIMEOUT_S = 1.0  # for the spin thread once the executor is shut down
POLL_S = 0.05


class StopSignals:
    """SIGINT and SIGTERM recorded as a stop request. The handler only appends to a list: Python runs it in
    the main thread between two bytecodes, where taking a lock or writing to a stream could deadlock or fail
    with a reentrant call; the main thread reports what arrived (:meth:`report`)."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.received: list[str] = []
        self._reported = 0

    def install(self) -> StopSignals:
        for signum in self.SIGNALS:
            signal.signal(signum, self._on_signal)
        return self

    def ignore_from_now(self) -> None:
        """Once everything is stopped: a signal arriving while the interpreter exits (a second Ctrl-C, launch's
        SIGTERM) must not kill the process (exit code -2 or -15). Python's own handlers would not do: the
        interpreter's finalisation resets signals with a Python handler to the default action, but leaves
        ignored ones ignored (CPython Modules/signalmodule.c, _PySignal_Fini)."""
        for signum in self.SIGNALS:
            signal.signal(signum, signal.SIG_IGN)

    def _on_signal(self, signum: int, frame: Any) -> None:
        self.received.append(signal.Signals(signum).name)

    @property
    def requested(self) -> bool:
        return bool(self.received)

    @property
    def reason(self) -> str:
        return f"the node is shutting down ({self.received[0]})" if self.received else "the node is shutting down"

    def report(self, log: Callable[[str], Any]) -> None:
        """Log the signals that arrived since the last call (from the main thread, not from the handler)."""
        while self._reported < len(self.received):
            name = self.received[self._reported]
            log(f"{name} received: stopping" if self._reported == 0
                else f"{name} received again: already stopping, ignored")
            self._reported += 1


class JoiningExecutor(MultiThreadedExecutor):
    """A MultiThreadedExecutor whose worker threads can be joined (see the module docstring): call
    :meth:`join_workers` after ``shutdown`` and after the spin thread ended, so nothing submits any more."""

    def join_workers(self) -> None:
        self._executor.shutdown(wait=True)  # rclpy's ThreadPoolExecutor: running callbacks finish first


class Spinner:
    """``executor.spin()`` in a thread of its own, so the main thread stays free to receive signals."""

    def __init__(self, executor: MultiThreadedExecutor) -> None:
        self.executor = executor
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._spin, name="ros-spin")

    def _spin(self) -> None:
        try:
            self.executor.spin()
        except ExternalShutdownException:
            pass
        except BaseException as exc:  # a callback raised: reported by the main thread, which then stops
            self.error = exc

    def start(self) -> Spinner:
        self._thread.start()
        return self

    def is_alive(self) -> bool:
        return self._thread.is_alive()

    def join(self, timeout: float) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()


def run_node(make_node: Callable[[], Node], args: list[str], *, num_threads: int = 4,
             quiesce: Callable[[Node, str, float], bool] | None = None,
             stop_timeout_s: float = STOP_TIMEOUT_S) -> int:
    """Initialise rclpy with ``args``, spin ``make_node()`` until SIGINT or SIGTERM, stop in order.

    ``quiesce(node, reason, timeout_s)`` ends the node's own work and says whether it ended in time. Returns
    the exit code: 0 for a stop on a signal, 1 when a callback raised. When the node's work does not end in
    time, the process exits at once with code 1 (destroying a node that a thread still uses could crash).
    """
    stop = StopSignals().install()  # before rclpy.init: a Ctrl-C during start-up is a stop request too
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    logger = get_logger(os.path.basename(args[0]) if args else "node")
    node: Node | None = None
    executor: JoiningExecutor | None = None
    spinner: Spinner | None = None
    code = 0
    try:
        try:
            node = make_node()
        except ConfigFileError as exc:  # a bad config file: its problems, the node never starts, nothing moves
            logger.fatal(f"cannot start: {exc}")
            return 2
        logger = node.get_logger()
        executor = JoiningExecutor(num_threads=num_threads)
        executor.add_node(node)
        if not stop.requested:
            spinner = Spinner(executor).start()
            while not stop.requested and spinner.is_alive():
                time.sleep(POLL_S)  # a signal interrupts the sleep and runs the handler at once
        if spinner is not None and spinner.error is not None:
            error = spinner.error
            logger.error("a callback raised; stopping:\n" + "".join(traceback.format_exception(error)).rstrip())
            code = 1
        stop.report(logger.info)
        if quiesce is not None and not quiesce(node, stop.reason, stop_timeout_s):
            stop.report(logger.info)
            logger.error(f"the node's work did not end within {stop_timeout_s:g} s of the stop request; "
                         "exiting without cleanup")
            _exit_now(1)
        stop.report(logger.info)
    finally:
        if executor is not None:
            executor.shutdown()
            if spinner is not None and not spinner.join(JOIN_TIMEOUT_S):
                logger.error("the spin thread did not stop; exiting without cleanup")
                _exit_now(1)
            executor.join_workers()
        stop.report(logger.info)
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
        stop.ignore_from_now()
    return code


def _exit_now(code: int) -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)
