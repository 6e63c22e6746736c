"""A service request repeated under the same id is carried out once; the repeats get the first one's answer.

A client whose answer was lost asks again (rmw_fastrtps drops a response when the server has not yet matched a
new client's response reader within its writer's ``max_blocking_time``, 100 ms by default:
rmw_fastrtps_shared_cpp/src/rmw_response.cpp, jazzy, the "race on the discovery of services" block). For a
request that changes the world (a simulator's reset), carrying it out twice would reset the world under a
goal that already started: the id makes the repeat harmless. No ROS here.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

T = TypeVar("T")


@dataclass
class _Call:
    done: threading.Event = field(default_factory=threading.Event)
    answer: object = None


class RequestOnce:
    """Remembers the answers of the last ``keep`` request ids."""

    def __init__(self, keep: int = 32) -> None:
        self.keep = keep
        self._calls: OrderedDict[str, _Call] = OrderedDict()
        self._lock = threading.Lock()

    def run(self, request_id: str, work: Callable[[], T], wait_s: float = 120.0) -> T | None:
        """``work()``'s answer; for an id seen before, the first call's answer (waiting up to ``wait_s`` while it
        is still being carried out; None if it is not done by then). An empty id always runs ``work``."""
        if not request_id:
            return work()
        with self._lock:
            call = self._calls.get(request_id)
            first = call is None
            if first:
                call = self._calls[request_id] = _Call()
                while len(self._calls) > self.keep:
                    self._calls.popitem(last=False)
        if not first:
            return call.answer if call.done.wait(wait_s) else None  # type: ignore[return-value]
        try:
            call.answer = work()
            return call.answer  # type: ignore[return-value]
        finally:
            call.done.set()
