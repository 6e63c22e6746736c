"""Fold perception into the planner's world between primitives: reports on ``~/object_poses`` and, with
``perception.tf_topic``, the TF frames a tracker (or Gazebo's pose bridge) publishes for the objects.

Reports are buffered as they arrive and applied once, at the next observation (after a primitive,
before the planner's next decision), so the planner never sees the world change in the middle of a
decision. An object the world did not know appears (STEP's hidden objects: e.g. what a camera sees once
a drawer opens); a known object moves to the reported container and pose. A report without a container is
placed by the one fact deriver from its position and the scene's geometry (``domain/perceived_facts.py``).
Reports that cannot be placed (an unknown container, a position in no known place, a new object with
neither) are refused with a reason, never guessed. A tracked frame older than ``max_age_s`` says nothing:
the object is left out of the observation (unknown, not where it was last seen).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace

import numpy as np

from step_planner.domain import perceived_facts as facts
from step_planner.domain.pose_tree import ModelPose, PoseTree
from step_planner.domain.scene import SceneError
from step_planner.domain.scene_geometry import scene_geometry
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


def scene_volumes(world: WorldState) -> facts.SceneVolumes | None:
    """The volumes of a world's scene geometry, or None when the scene has none to place objects by."""
    try:
        return facts.volumes_of(scene_geometry(world))
    except (SceneError, KeyError, TypeError, ValueError):
        return None


def openings_of(world: WorldState, volumes: facts.SceneVolumes) -> dict[str, float]:
    """Each drawer's slide position as the world has it (its perceived opening, else open or closed)."""
    out = {}
    for d in volumes.drawers:
        place = world.places.get(d.name)
        if place is not None:
            out[d.name] = float(place.geometry.get("opening", d.travel if place.is_open else 0.0))
    return out


def apply_reports(world: WorldState, reports: list[ObjectReport],
                  volumes: facts.SceneVolumes | None = None) -> tuple[WorldState, list[str]]:
    """A new world with the reports applied, and one note per refused report. A report without a container is
    placed from its position by the fact deriver when ``volumes`` are known."""
    out = world.copy()
    refused: list[str] = []
    openings = openings_of(out, volumes) if volumes is not None else {}
    for r in reports:
        if not r.name:
            refused.append("a report without an object name")
            continue
        if not r.container and r.position is not None and volumes is not None:
            where = facts.location(volumes, np.asarray(r.position, dtype=float), openings)
            if where is None:
                refused.append(f"{r.name}: at {list(r.position)}, in no place of the scene")
                continue
            r = replace(r, container=where)
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


class TrackedFrames:
    """TF frames of tracked objects and drawers (a tag detector, a pose estimator, Gazebo's pose bridge), kept as
    they arrive; composed down to the robot's base frame (a frame nothing reports). Thread-safe."""

    def __init__(self, max_age_s: float, prefix: str = "") -> None:
        self.max_age_s = max_age_s
        self.prefix = prefix
        self._lock = threading.Lock()
        self._tree = PoseTree()

    def put(self, poses: Iterable[ModelPose], received: float | None = None) -> None:
        with self._lock:
            self._tree.update(poses, time.monotonic() if received is None else received)

    def look(self, volumes: facts.SceneVolumes | None, now: float | None = None
             ) -> tuple[list[ObjectReport], set[str], dict[str, float]]:
        """Fresh object reports (no container: placed by the deriver), the names seen before whose frames are
        now stale, and the openings of drawers whose frames are fresh."""
        now = time.monotonic() if now is None else now
        with self._lock:
            poses = self._tree.world_poses()
        drawers = {d.name: d for d in (volumes.drawers if volumes is not None else ())}
        reports, stale, openings = [], set(), {}
        for frame, pose in poses.items():
            name = frame.removeprefix(self.prefix)
            fresh = now - pose.received <= self.max_age_s
            if name in drawers:
                if fresh:
                    d = drawers[name]
                    openings[name] = float((pose.position - np.asarray(d.closed_origin)) @ np.asarray(d.axis))
            elif not fresh:
                stale.add(name)
            else:
                w, x, y, z = pose.quat
                reports.append(ObjectReport(name, position=tuple(map(float, pose.position)),
                                            orientation=(float(x), float(y), float(z), float(w))))
        return reports, stale, openings


class PerceivedExecutor:
    """An Executor wrapper that applies buffered reports to the backend's world at each observation.

    The backend's world is replaced through ``reset`` so that execution and planning agree (the
    symbolic and MoveIt backends keep a world model; ``sync=False`` leaves a physics simulator alone).
    """

    def __init__(self, inner: Executor, buffer: PerceptionBuffer, *, sync: bool = True, on_refused=None,
                 frames: TrackedFrames | None = None) -> None:
        self.inner = inner
        self.buffer = buffer
        self.sync = sync
        self.on_refused = on_refused or (lambda note: None)
        self.frames = frames
        self._volumes: facts.SceneVolumes | None = None
        self._volumes_of: int | None = None

    def execute(self, call, cancel: threading.Event | None = None) -> Outcome:
        return self.inner.execute(call, cancel)

    def reset(self, world: WorldState) -> None:
        self.inner.reset(world)

    def _scene_volumes(self, world: WorldState) -> facts.SceneVolumes | None:
        key = id(self.inner)  # one executor, one scene: computed once
        if self._volumes_of != key:
            self._volumes, self._volumes_of = scene_volumes(world), key
        return self._volumes

    def observe(self) -> WorldState:
        world = self.inner.observe()
        reports = self.buffer.take()
        stale: set[str] = set()
        openings: dict[str, float] = {}
        volumes = self._scene_volumes(world) if (reports or self.frames is not None) and self.sync else None
        if self.frames is not None and self.sync:
            tracked, stale, openings = self.frames.look(volumes)
            reports = [*reports, *tracked]
        if not (reports or openings) or not self.sync:
            for r in reports:
                self.on_refused(f"{r.name}: this backend observes its own world")
            return world
        merged, refused = apply_reports(self._opened(world, openings, volumes), reports, volumes)
        for note in refused:
            self.on_refused(note)
        self.inner.reset(merged)
        seen = self.inner.observe()
        for name in stale - {seen.held}:  # a frame gone stale says nothing: unknown, not where it was
            seen.objects.pop(name, None)
        return seen

    @staticmethod
    def _opened(world: WorldState, openings: dict[str, float], volumes: facts.SceneVolumes | None) -> WorldState:
        """The world with the drawers' perceived openings (open or closed by the deriver's rule)."""
        if not openings or volumes is None:
            return world
        out = world.copy()
        for d in volumes.drawers:
            if d.name in openings and d.name in out.places:
                place = out.places[d.name]
                place.is_open = d.is_open(openings[d.name])
                place.geometry = {**place.geometry, "opening": round(openings[d.name], 4)}
        return out
