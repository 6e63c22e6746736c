"""Episode recording for the node: one :class:`EpisodeRecorder` per goal, pruned by :class:`Retention`.

WHY a module of its own: the node stays a translator. This decides where episodes go (the
``episodes.*`` parameters, else ``$STEP_PLANNER_EPISODES``, else ``~/.step_planner/episodes`` like the
CLI), wires the recorder into the goal's listeners, and makes sure a recording problem (a full disk, a
read-only folder) is logged and never fails the goal or moves the arm differently.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from step_planner.episodes.bag import EpisodeError
from step_planner.episodes.recorder import EpisodeRecorder, Retention, prune
from step_planner.planner.result import GoalResult
from step_planner.resources import ResourceError

DEFAULT_FOLDER = Path.home() / ".step_planner" / "episodes"


def episode_folder(values: dict[str, Any]) -> Path | None:
    """Where this goal is recorded, or None when recording is off."""
    if not values["episodes.record"]:
        return None
    return Path(values["episodes.folder"] or os.environ.get("STEP_PLANNER_EPISODES") or DEFAULT_FOLDER)


def retention(values: dict[str, Any]) -> Retention:
    return Retention(max_episodes=int(values["episodes.max_episodes"]),
                     max_bytes=int(values["episodes.max_megabytes"]) * 1_000_000,
                     max_age_days=float(values["episodes.max_age_days"]))


class GoalRecording:
    """The recorder of one goal (or nothing, when off or when the folder cannot be written)."""

    def __init__(self, values: dict[str, Any], warn: Callable[[str], None], **episode: Any) -> None:
        self.folder = episode_folder(values)
        self.retention = retention(values)
        self._warn = warn
        self.recorder: EpisodeRecorder | None = None
        if self.folder is not None:
            try:
                self.recorder = EpisodeRecorder(self.folder, joint_rate_hz=float(values["sim.joint_state_rate_hz"]),
                                                object_rate_hz=float(values["sim.object_pose_rate_hz"]), **episode)
            except OSError as exc:
                warn(f"episode not recorded: cannot write {self.folder}: {exc}")
            except (ResourceError, EpisodeError) as exc:  # the message types cannot be found: a broken install
                warn(f"episode not recorded: {exc}")

    @property
    def listeners(self) -> list[Any]:
        return [self.recorder] if self.recorder else []

    def attach(self, llm: Any) -> None:
        if self.recorder is not None:
            llm.add_listener(self.recorder.on_exchange)

    def attach_executor(self, executor: Any) -> Callable[[], None] | None:
        """Record what the backend streams (the simulator's joints); returns how to detach."""
        if self.recorder is None:
            return None
        return self.recorder.attach_executor(executor)

    def on_step(self, call, outcome, world_after) -> None:
        if self.recorder is not None:
            self.recorder.on_step(call, outcome, world_after)

    def finish(self, result: GoalResult) -> Path | None:
        """Close the episode and prune the folder; returns the episode's path (None when not recorded)."""
        if self.recorder is None or self.folder is None:
            return None
        try:
            path = self.recorder.finish(result)
            prune(self.folder, self.retention)
            return path
        except OSError as exc:
            self._warn(f"episode {self.recorder.path} incomplete: {exc}")
            return None
