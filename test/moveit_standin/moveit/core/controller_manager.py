"""``moveit.core.controller_manager.ExecutionStatus``: ``status`` string and ``__bool__``."""

from __future__ import annotations


class ExecutionStatus:
    def __init__(self, status: str) -> None:
        self._status = status

    @property
    def status(self) -> str:
        return self._status

    def __bool__(self) -> bool:
        return self._status == "SUCCEEDED"
