"""One goal's resources: built from the node's settings before the goal, released after it. No rclpy here.

WHY a module of its own: the node's action callback should only translate (goal in, feedback and
result out). What a goal needs besides the planner -- the LLM client (and, with ``llm.offline``, the
loopback server of the shipped answers), the executor, the gates every call passes, the episode
recording, episodic memory -- is built here in one order and released in the reverse order, whatever
happens in between. It is plain Python, so it is tested without a ROS graph.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from step_planner.domain.primitives import PrimitiveCall, PrimitiveLibrary
from step_planner.domain.safety import SafetyEnvelope
from step_planner.domain.world import WorldState
from step_planner.episodes.recorder import world_at_start
from step_planner.execution.base import Executor, Outcome
from step_planner.execution.errors import BackendUnavailable
from step_planner.planner.memory import EpisodicMemory
from step_planner.planner.person import Person
from step_planner.planner.result import GoalError, GoalResult
from step_planner.planner.runner import CallGate, StepCallback, run_goal, safety_gate
from step_planner.planner.tree import TreeListener
from step_planner.resources import config_dir
from step_planner.ros import parameters as params
from step_planner.ros.recording import GoalRecording

Lease = tuple[Executor, Callable[[], None]]  # the executor and how to give it back (close it, or keep it)
Attachment = Callable[[Any], Callable[[], None] | None]  # sees the backend executor; returns how to detach
DEFAULT_EPISODIC_STORE = Path.home() / ".step_planner" / "episodic.jsonl"


class SessionError(Exception):
    """The goal cannot start; ``error`` is the result code, the message says why."""

    def __init__(self, error: GoalError, message: str) -> None:
        super().__init__(message)
        self.error = error
        self.message = message


@dataclass(frozen=True)
class GoalRequest:
    instruction: str
    goal_id: str
    scene: str = ""
    dry_run: bool = False
    world: WorldState | None = None  # None: the backend's own world
    success_when: list[str] = field(default_factory=list)  # the goal's facts as the client states them


def chain(gates: Iterable[CallGate]) -> CallGate:
    """One gate from several: the first refusal wins."""
    gates = list(gates)

    def gate(call: PrimitiveCall) -> Outcome | None:
        for g in gates:
            if (outcome := g(call)) is not None:
                return outcome
        return None

    return gate


def episodic_store(values: dict[str, Any]) -> Path:
    """``episodic.store``, else ``$STEP_PLANNER_EPISODIC``, else ``~/.step_planner/episodic.jsonl`` (as the CLI)."""
    return Path(values["episodic.store"] or os.environ.get("STEP_PLANNER_EPISODIC") or DEFAULT_EPISODIC_STORE)


class EpisodicMemories:
    """Episodic memory for the node's goals: one store, loaded once (the embedding model is slow to load)."""

    def __init__(self, embedder_factory: Callable[[], Any] | None = None) -> None:
        self._factory = embedder_factory
        self._lock = threading.Lock()
        self._memory: EpisodicMemory | None = None

    def get(self, store: Path) -> EpisodicMemory:
        with self._lock:
            if self._memory is None or self._memory.store != store:
                if self._factory is None:
                    from step_planner.planner.memory import minilm_embedder

                    self._factory = minilm_embedder
                self._memory = EpisodicMemory(store, self._factory(), seed=config_dir() / "episodic_seed.yaml")
            return self._memory


class GoalSession:
    """Everything one goal uses besides the planner. ``open()``, then ``run()``, then always ``close()``.

    ``lease`` builds the executor (the node decides which: dry run, persistent MoveIt, per-goal sim);
    ``gates`` run after the safety envelope (approval mode); ``attachments`` see the backend executor
    once it exists (the simulator's ROS publishers) and are detached before it is released; ``person``
    answers the model's questions and, with ``confirm_goal``, confirms the goal (the node's services).
    """

    def __init__(self, request: GoalRequest, values: dict[str, Any], *, library: PrimitiveLibrary,
                 envelope: SafetyEnvelope, cancel: threading.Event, lease: Callable[[], Lease], backend: str,
                 gates: Iterable[CallGate] = (), attachments: Iterable[Attachment] = (),
                 memories: EpisodicMemories | None = None, info: Callable[[str], None] = print,
                 warn: Callable[[str], None] = print, person: Person | None = None,
                 confirm_goal: bool = False) -> None:
        self.request, self.values = request, values
        self.library, self.envelope, self.cancel, self.backend = library, envelope, cancel, backend
        self._lease, self._gates, self._attachments = lease, list(gates), list(attachments)
        self._memories = memories
        self._info, self._warn = info, warn
        self.person, self.confirm_goal = person, confirm_goal
        self._stack = ExitStack()
        self.config: Any = None
        self.llm: Any = None
        self.executor: Executor | None = None
        self.recording: GoalRecording | None = None
        self.episodic: EpisodicMemory | None = None
        self._first_record = 0

    # ---- building -----------------------------------------------------------------------------------
    def open(self) -> GoalSession:
        """Build everything, or release what was built and raise SessionError."""
        try:
            self._open()
        except BaseException:
            self._stack.close()
            raise
        return self

    def _open(self) -> None:
        from step_planner.llm.config import LLMConfigError
        from step_planner.planner.config import ConfigError

        values, request = self.values, self.request
        try:
            self.config = params.planner_config(values)
            settings = self._llm_settings()
            self.llm = self._client(settings)
        except (ConfigError, LLMConfigError) as exc:
            raise SessionError(GoalError.INVALID_GOAL, f"node configuration: {exc}") from exc
        self._stack.callback(self.llm.close)
        self._first_record = len(self.llm.usage.records)
        if "episodic_memory" in self.config.features and self._memories is not None:
            try:
                self.episodic = self._memories.get(episodic_store(values))
            except Exception as exc:  # a missing model or an unreadable store: plan without examples
                self._warn(f"goal {request.goal_id}: episodic memory unavailable, planning without it: {exc}")
        try:
            self.executor, release = self._lease()
        except BackendUnavailable as exc:
            raise SessionError(GoalError.EXECUTION_FAILED, str(exc)) from exc
        self._stack.callback(release)
        backend_executor = getattr(self.executor, "inner", self.executor)
        for attach in self._attachments:
            if (detach := attach(backend_executor)) is not None:
                self._stack.callback(detach)
        # a robot backend's goal has no world given (None): its episode starts from the world it perceives,
        # and the scene its world model came from (the node's scene parameter), so it can be replayed
        world, source = world_at_start(self.executor, request.world, perceives=False) \
            if values["episodes.record"] else (request.world, "given")
        self.recording = GoalRecording(values, self._warn, goal_id=request.goal_id, instruction=request.instruction,
                                       scene=request.scene or values["scene"], backend=self.backend,
                                       config=self.config.to_dict(), world=world, world_source=source)
        self.recording.attach(self.llm)
        if (detach := self.recording.attach_executor(backend_executor)) is not None:
            self._stack.callback(detach)

    def _llm_settings(self) -> dict[str, Any]:
        settings = params.llm_settings(self.values)
        if not self.values["llm.offline"]:
            return settings
        from step_planner.llm.offline import OfflineAnswers

        try:
            answers = self._stack.enter_context(OfflineAnswers(config_dir() / "replay"))
        except (FileNotFoundError, OSError) as exc:
            raise SessionError(GoalError.LLM_UNAVAILABLE, f"llm.offline: {exc}") from exc
        settings, changed = answers.settings(settings)
        self._warn(f"goal {self.request.goal_id}: {answers.notice()}")
        if changed:
            self._warn(f"goal {self.request.goal_id}: offline answers need {', '.join(changed)}")
        return settings

    def _client(self, settings: dict[str, Any]) -> Any:
        from step_planner.llm.client import LLMClient
        from step_planner.llm.config import LLMConfig

        # the goal's cancel also abandons an LLM request in flight: a cancel never waits for an answer
        return LLMClient(LLMConfig.from_dict(settings), cancel=self.cancel)

    # ---- using ----------------------------------------------------------------------------------------
    def llm_calls(self) -> int:
        """LLM exchanges of this goal so far (the client may be shared by nothing else, but count from open)."""
        return len(self.llm.usage.records) - self._first_record if self.llm is not None else 0

    def run(self, listeners: Iterable[TreeListener] = (), on_step: StepCallback | None = None) -> GoalResult:
        assert self.executor is not None and self.recording is not None, "open() first"
        recording = self.recording

        def step(call: PrimitiveCall, outcome: Outcome, world_after: WorldState) -> None:
            if on_step is not None:
                on_step(call, outcome, world_after)
            recording.on_step(call, outcome, world_after)

        gates = [safety_gate(self.envelope, self.library, self.executor), *self._gates]
        return run_goal(self.request.instruction, library=self.library, executor=self.executor, llm=self.llm,
                        config=self.config, listeners=[*listeners, *recording.listeners], cancel=self.cancel,
                        goal_id=self.request.goal_id, on_step=step, gate=chain(gates), episodic=self.episodic,
                        goal=self.request.success_when or None, person=self.person, confirm_goal=self.confirm_goal)

    # ---- releasing ------------------------------------------------------------------------------------
    def close(self, result: GoalResult | None) -> Path | None:
        """Finish the recording (when the goal ran), then release everything in reverse order of building."""
        path = None
        try:
            if result is not None and self.recording is not None and (path := self.recording.finish(result)):
                self._info(f"goal {self.request.goal_id} recorded in {path}")
        finally:
            self._stack.close()
        return path
