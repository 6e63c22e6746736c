"""Fold perception reports (``~/object_poses``) into the planner's world between primitives.

Reports are buffered as they arrive and applied once, at the next observation (after a primitive,
before the planner's next decision), so the planner never sees the world change in the middle of a
decision. An object the world did not know appears (STEP's hidden objects: e.g. what a camera sees once
a drawer opens); a known object moves to the reported container and pose. Reports that cannot be
placed (an unknown container, a new object without a container) are refused with a reason, never guessed.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from step_planner.domain.world import GRIPPER, ObjectState, WorldState
from step_planner.execution.base import Executor, Outcome


@dataclass(frozen=True)
class ObjectReport:
    name: str
    category: str = ""
    container: str = ""
    position: tuple[float, float, float] | None = None
    orientation: tuple[float, float, float, float] | None = None  # x, y, z, w
    frame: str = ""


def apply_reports(world: WorldState, reports: list[ObjectReport]) -> tuple[WorldState, list[str]]:
    """A new world with the reports applied, and one note per refused report."""
    out = world.copy()
    refused: list[str] = []
    for r in reports:
        if not r.name:
            refused.append("a report without an object name")
            continue
        if r.container and r.container not in out.places and r.container not in out.objects:
            refused.append(f"{r.name}: unknown container {r.container!r}")
            continue
        obj = out.objects.get(r.name)
        if obj is None:
            if not r.container:
                refused.append(f"{r.name}: a new object needs a container (where is it?)")
                continue
            obj = out.objects[r.name] = ObjectState(name=r.name, category=r.category, location=r.container)
        elif obj.location != GRIPPER and r.container:  # what the gripper holds is known better than seen
            obj.location = r.container
        if r.position is not None and obj.location != GRIPPER:
            geometry = dict(obj.geometry)
            geometry["position"] = list(r.position)
            if r.orientation is not None:
                geometry["orientation"] = list(r.orientation)
            if r.frame:
                geometry["frame"] = r.frame
            obj.geometry = geometry
    return out, refused


class PerceptionBuffer:
    """Thread-safe inbox of reports: the subscriber puts, the planning thread takes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: dict[str, ObjectReport] = {}

    def put(self, reports: list[ObjectReport]) -> None:
        with self._lock:
            for r in reports:
                self._pending[r.name] = r  # the latest report of an object wins

    def take(self) -> list[ObjectReport]:
        with self._lock:
            reports, self._pending = list(self._pending.values()), {}
        return reports


class PerceivedExecutor:
    """An Executor wrapper that applies buffered reports to the backend's world at each observation.

    The backend's world is replaced through ``reset`` so that execution and planning agree (the
    symbolic and MoveIt backends keep a world model; ``sync=False`` leaves a physics simulator alone).
    """

    def __init__(self, inner: Executor, buffer: PerceptionBuffer, *, sync: bool = True, on_refused=None) -> None:
        self.inner = inner
        self.buffer = buffer
        self.sync = sync
        self.on_refused = on_refused or (lambda note: None)

    def execute(self, call, cancel: threading.Event | None = None) -> Outcome:
        return self.inner.execute(call, cancel)

    def reset(self, world: WorldState) -> None:
        self.inner.reset(world)

    def observe(self) -> WorldState:
        world = self.inner.observe()
        reports = self.buffer.take()
        if not reports or not self.sync:
            for r in reports:
                self.on_refused(f"{r.name}: this backend observes its own world")
            return world
        merged, refused = apply_reports(world, reports)
        for note in refused:
            self.on_refused(note)
        self.inner.reset(merged)
        return self.inner.observe()
