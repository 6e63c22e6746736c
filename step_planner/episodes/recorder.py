"""Record a goal as an episode: a TreeListener, an on_step callback, an LLM exchange listener and, on the
simulator, step hooks that sample the robot; on a robot backend (controllers, MoveIt), every joint state its
connection receives (see ``bag.py`` for the topics and types).

Secrets: exchanges carry no headers, and every string written is scrubbed of the API key's value
(read from the environment) as a second line of defence.

Stamps (header and log time alike) are wall-clock time when the record is made, so in a player the arm's
motion lines up with the tree and the LLM exchanges as they happened; joint states are *sampled* at a rate
of simulated time (``joint_rate_hz``), so a fast or slow physics changes the wall-clock spacing only.
On a robot backend the joint states are the robot's own messages, unchanged (its names, its header stamps:
the robot's clock, sim time in a simulator), logged at the wall-clock time they arrived; they are kept on the
connection's spin thread and written on a thread of the recorder's, so a slow disk never delays the robot's
messages to the backend.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
import time
from collections import deque
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


def world_at_start(executor: Any, given: WorldState | None, perceives: bool) -> tuple[WorldState | None, str]:
    """The initial world an episode records, and where it came from: the world the executor perceives now (as
    the planner will first see it) on a backend that ``perceives`` its own world or when none is ``given``;
    else the given one (a scene)."""
    if given is not None and not perceives:
        return given, "given"
    try:
        return executor.observe(), "perceived"
    except Exception:  # noqa: BLE001 - the robot is gone: the goal ends at its own first look, naming why
        return given, "given" if given is not None else "none"


class EpisodeRecorder:
    """Writes ``<folder>/<stamp>_<goal_id>/bag`` (MCAP) and ``summary.json``."""

    def __init__(self, folder: str | Path, goal_id: str, *, instruction: str, scene: str = "",
                 backend: str = "", config: dict[str, Any] | None = None, world: WorldState | None = None,
                 world_source: str = "given",
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
                             "world_source": world_source,  # given (a scene) | perceived (the robot's, at the start)
                             "joint_rate_hz": joint_rate_hz})  # joint states' sample rate in simulated time
        self.goal_id, self.instruction = goal_id, instruction
        self._closed = False
        self._received: ReceivedJoints | None = None

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
        """On the simulator: record the URDF once, then joint states, /tf and object poses from its physics. On a
        robot backend (a ``joint_state_tap``): every joint state its connection receives, as received.

        Returns how to detach (None for a backend with neither: nothing to record).
        """
        if self._closed:
            return None
        if not hasattr(executor, "step_hooks"):
            tap = getattr(executor, "joint_state_tap", None)
            return self._attach_tap(tap) if tap is not None else None
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

    def _attach_tap(self, tap: Any) -> Callable[[], None]:
        self._write("joint_states_source", {"received": True, "topic": tap.topic, "by": tap.source})
        self._received = ReceivedJoints(tap, self._write_received)
        return self._received.stop

    def _write_received(self, received_ns: int, msg: Any) -> None:
        stamp = msg.header.stamp
        self._bag.write("/joint_states", received_ns, messages.make(
            self._store, messages.JOINT_STATE,
            header={"stamp": {"sec": int(stamp.sec), "nanosec": int(stamp.nanosec)}, "frame_id": msg.header.frame_id},
            name=list(msg.name), position=list(msg.position), velocity=list(msg.velocity), effort=list(msg.effort)))
        self.counts["joint_states"] += 1

    def finish(self, result: GoalResult) -> Path:
        if self._closed:
            return self.path
        if self._received is not None:
            self._received.stop()  # every message received so far written, before the result
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
        if self._received is not None and self._received.error:  # the joints stopped being written: say why
            summary["joint_states_error"] = self._received.error
        (self.path / "summary.json").write_text(json.dumps(scrub(summary, self._secrets), indent=2) + "\n")
        return self.path


class ReceivedJoints:
    """A tap's messages, kept as they arrive (the connection's spin thread only appends) and written by a thread
    of its own every ``period_s``; :meth:`stop` stops listening and writes what is left."""

    def __init__(self, tap: Any, write: Callable[[int, Any], None], period_s: float = 0.05) -> None:
        self._queue: deque[tuple[int, Any]] = deque()
        self._write, self._period = write, period_s
        self._stopped = threading.Event()
        self.error: str | None = None
        self._unlisten = tap.listen(lambda msg: self._queue.append((time.time_ns(), msg)))
        self._thread = threading.Thread(target=self._run, name="episode_joint_states", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stopped.wait(self._period):
            self._drain()
        self._drain()

    def _drain(self) -> None:
        while self._queue and self.error is None:
            received_ns, msg = self._queue.popleft()
            try:
                self._write(received_ns, msg)
            except Exception as exc:  # noqa: BLE001 - a full disk stops the joints' recording, never the goal
                self.error = f"{type(exc).__name__}: {exc}"
                self._unlisten()  # nothing more is kept
                self._queue.clear()

    def stop(self) -> None:
        self._unlisten()
        self._stopped.set()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=10.0)


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
