"""Errors of the execution layer, in a module that imports nothing of it (no import cycles)."""

from __future__ import annotations


class BackendUnavailable(RuntimeError):
    """The chosen backend cannot start here (a missing install); the message says what to do."""
