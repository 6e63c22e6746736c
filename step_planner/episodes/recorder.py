"""Record a goal as an episode: a TreeListener, an on_step callback, an LLM exchange listener and, on the
simulator, step hooks that sample the robot (see ``bag.py`` for the topics and types).

Secrets: exchanges carry no headers, and every string written is scrubbed of the API key's value
(read from the environment) as a second line of defence.

Stamps (header and log time alike) are wall-clock time when the record is made, so in a player the arm's
motion lines up with the tree and the LLM exchanges as they happened; joint states are *sampled* at a rate
of simulated time (``joint_rate_hz``), so a fast or slow physics changes the wall-clock spacing only.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from step_planner.domain.primitives import PrimitiveCall
from step_planner.domain.world import WorldState
from step_planner.episodes import messages
from step_planner.episodes.bag import BagWriter
from step_planner.execution.base import Outcome
from step_planner.planner.result import GoalResult
from step_planner.planner.tree import SubgoalTree, TreeEvent

REDACTED = "***REDACTED***"
PREFIX = "/step_planner/"
_SNAPSHOT_EVENTS = {"status", "verdict", "outcome"}


def _secrets(env_names: tuple[str, ...]) -> list[str]:
    return [v for n in env_names if (v := os.environ.get(n)) and len(v) >= 8]


def scrub(document: Any, secrets: list[str]) -> Any:
    if not secrets:
        return document
    text = json.dumps(document, default=str)
    for secret in secrets:
        text = text.replace(secret, REDACTED)
    return json.loads(text)


class EpisodeRecorder:
    """Writes ``<folder>/<stamp>_<goal_id>/bag`` (MCAP) and ``summary.json``."""

    def __init__(self, folder: str | Path, goal_id: str, *, instruction: str, scene: str = "",
                 backend: str = "", config: dict[str, Any] | None = None, world: WorldState | None = None,
                 secret_env: tuple[str, ...] = ("OPENAI_API_KEY", "STEP_PLANNER_API_KEY"),
                 joint_rate_hz: float = 50.0, object_rate_hz: float = 10.0) -> None:
        safe_id = re.sub(r"[^A-Za-z0-9_-]", "_", goal_id)[:40] or "goal"
        self.path = Path(folder) / f"{time.strftime('%Y%m%d-%H%M%S')}_{safe_id}"
        suffix = 1
        while self.path.exists():
            self.path = self.path.with_name(f"{self.path.name}-{suffix}")
            suffix += 1
        self.path.mkdir(parents=True)
        self._secrets = _secrets(secret_env)
        self._bag = BagWriter(self.path / "bag")
        self._store = self._bag.store
        self._world = world.copy() if world else None
        self.joint_rate_hz, self.object_rate_hz = joint_rate_hz, object_rate_hz
        self.counts = {"tree": 0, "llm_exchange": 0, "primitive": 0, "joint_states": 0}
        self._write("goal", {"goal_id": goal_id, "instruction": instruction, "scene": scene, "backend": backend,
                             "config": config or {}, "world": world.to_dict() if world else None,
                             "joint_rate_hz": joint_rate_hz})  # joint states' sample rate in simulated time
        self.goal_id, self.instruction = goal_id, instruction
        self._closed = False

    def _write(self, topic: str, document: Any) -> None:
        self._bag.write_json(PREFIX + topic, time.time_ns(), scrub(document, self._secrets))

    def _write_tree(self, snapshot: dict[str, Any]) -> None:
        snapshot, now = scrub(snapshot, self._secrets), time.time_ns()
        self._bag.write(PREFIX + "tree", now, messages.tree(self._store, snapshot, now))
        self._bag.write_json(PREFIX + "tree_json", now, snapshot)

    # listener interfaces -----------------------------------------------------------------
    def on_tree_event(self, event: TreeEvent, tree: SubgoalTree) -> None:
        if event.kind in _SNAPSHOT_EVENTS:
            self._write_tree(tree.snapshot())
            self.counts["tree"] += 1

    def on_exchange(self, exchange: dict[str, Any]) -> None:
        self._write("llm_exchange", exchange)
        self.counts["llm_exchange"] += 1

    def on_step(self, call: PrimitiveCall, outcome: Outcome, world_after: WorldState | None = None) -> None:
        doc = scrub({"call": call.to_dict(), "outcome": outcome.to_dict(),
                     "world_before": self._world.to_dict() if self._world else None,
                     "world_after": world_after.to_dict() if world_after else None}, self._secrets)
        now = time.time_ns()
        self._bag.write(PREFIX + "primitive", now, messages.primitive_step(
            self._store, self.counts["primitive"], doc["call"], doc["outcome"], doc["world_before"],
            doc["world_after"], now))
        self._world = world_after.copy() if world_after else None
        self.counts["primitive"] += 1

    def attach_executor(self, executor: Any) -> Callable[[], None] | None:
        """On the simulator: record the URDF once, then joint states, /tf and object poses from its physics.

        Returns how to detach (None for a backend without ``step_hooks``: nothing to sample).
        """
        if not hasattr(executor, "step_hooks") or self._closed:
            return None
        from step_planner.execution.sim import telemetry

        self._bag.write("/robot_description", time.time_ns(),
                        messages.string(self._store, telemetry.robot_description()))

        def joints() -> None:
            if self._closed:
                return
            now = time.time_ns()
            self._bag.write("/joint_states", now, messages.joint_state(self._store, telemetry.joint_sample(executor),
                                                                        now))
            self._bag.write("/tf", now, messages.transforms(self._store, telemetry.link_transforms(executor), now))
            self.counts["joint_states"] += 1

        def objects() -> None:
            if self._closed:
                return
            now = time.time_ns()
            self._bag.write("/step_planner/sim/object_poses", now, messages.object_poses(
                self._store, telemetry.object_samples(executor), executor.observe(), telemetry.BASE_FRAME, now))

        hooks = [telemetry.Sampler(1.0 / self.joint_rate_hz, joints),
                 telemetry.Sampler(1.0 / self.object_rate_hz, objects)]
        executor.step_hooks.extend(hooks)
        joints()
        objects()

        def detach() -> None:
            for hook in hooks:
                if hook in executor.step_hooks:
                    executor.step_hooks.remove(hook)

        return detach

    def finish(self, result: GoalResult) -> Path:
        if self._closed:
            return self.path
        document = result.to_dict()
        if result.tree:
            self._write_tree(result.tree)
        self._write("result", {k: v for k, v in document.items() if k != "tree"})
        self._closed = True
        self._bag.close()
        summary = {
            "goal_id": self.goal_id, "instruction": self.instruction, "success": result.success,
            "error": result.error.value, "message": result.message, "primitives": len(result.executed),
            "usage": result.usage, "elapsed_s": round(result.elapsed_s, 3), "records": self.counts,
        }
        (self.path / "summary.json").write_text(json.dumps(scrub(summary, self._secrets), indent=2) + "\n")
        return self.path


@dataclass(frozen=True)
class Retention:
    max_episodes: int = 200
    max_bytes: int = 2_000_000_000
    max_age_days: float = 30.0


def folder_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def prune(folder: str | Path, retention: Retention) -> list[Path]:
    """Delete the oldest episodes until the folder fits the limits; returns what was removed."""
    root = Path(folder)
    if not root.is_dir():
        return []
    episodes = sorted((p for p in root.iterdir() if p.is_dir() and (p / "bag").exists()),
                      key=lambda p: p.stat().st_mtime)
    removed: list[Path] = []
    now = time.time()
    sizes = {p: folder_bytes(p) for p in episodes}
    total = sum(sizes.values())
    for ep in list(episodes):
        too_many = len(episodes) - len(removed) > retention.max_episodes
        too_big = total > retention.max_bytes
        too_old = now - ep.stat().st_mtime > retention.max_age_days * 86400
        if not (too_many or too_big or too_old):
            continue
        shutil.rmtree(ep, ignore_errors=True)
        removed.append(ep)
        total -= sizes[ep]
    return removed
