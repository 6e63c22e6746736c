"""``run_goal``: the one loop that drives a :class:`StepPlanner` against an executor.

The CLI, the ROS action server and the benchmark all call this, so cancel handling, executor
fault handling and the goal's bookkeeping are written once.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable

from step_planner.domain.primitives import PrimitiveCall, PrimitiveLibrary
from step_planner.domain.world import WorldState
from step_planner.execution.base import ExecCode, Executor, Outcome
from step_planner.execution.reflex import RobotStopped
from step_planner.planner.budget import BudgetExceeded, Canceled
from step_planner.planner.config import PlannerConfig
from step_planner.planner.memory import EpisodicMemory
from step_planner.planner.overlap import Prefetcher, next_request
from step_planner.planner.person import Person, ReplayPerson
from step_planner.planner.result import GoalError, GoalResult
from step_planner.planner.subgoal_planner import CompletionLLM, StepPlanner, StepReport
from step_planner.planner.tree import TreeListener

MAX_INSTRUCTION_CHARS = 2000
_log = logging.getLogger(__name__)

StepCallback = Callable[[PrimitiveCall, Outcome, WorldState], None]  # the world after the call
CallGate = Callable[[PrimitiveCall], Outcome | None]  # returns an Outcome to refuse the call


def validate_instruction(instruction: object) -> str | None:
    """Why an instruction cannot be a goal, or None when it can."""
    if not isinstance(instruction, str):
        return "the instruction must be a string"
    text = instruction.strip()
    if not text:
        return "the instruction is empty"
    if len(text) > MAX_INSTRUCTION_CHARS:
        return f"the instruction is longer than {MAX_INSTRUCTION_CHARS} characters"
    if any(ord(ch) < 32 and ch not in "\n\t" for ch in text):
        return "the instruction contains control characters"
    return None


def unobservable(exc: Exception) -> str:
    """The goal's message when the executor cannot observe the world. A stopped robot (a reflex) says so in its own
    words, ``the FR3 stopped: ...``, as the README shows it: not the executor's failure to observe."""
    return str(exc) if isinstance(exc, RobotStopped) else f"the executor could not observe the world: {exc}"


def _usage(llm: object, first_record: int, planner: StepPlanner) -> dict:
    usage: dict = {"llm_calls": planner.llm_calls, "primitives": planner.primitives,
                   "planned_without_llm": planner.planned_skips, "profile": planner.profile.name,
                   "llm_wait_s": round(planner.gate.wait_s, 4)}
    if planner.gate.prefetcher is not None:
        stats = planner.gate.prefetcher.stats
        usage.update(stats.to_dict(), llm_wait_s=round(planner.gate.wait_s + stats.llm_wait_s, 4))
    ledger = getattr(llm, "usage", None)
    records = list(getattr(ledger, "records", []))[first_record:]
    if records:
        prompt = [getattr(r, "prompt_tokens", 0) or 0 for r in records]
        usage.update(
            prompt_tokens=sum(prompt),
            completion_tokens=sum(getattr(r, "completion_tokens", 0) or 0 for r in records),
            max_prompt_tokens=max(prompt),
            llm_latency_s=round(sum(getattr(r, "latency_s", 0.0) or 0.0 for r in records), 4),
            http_exchanges=len(records),
        )
    return usage


def run_goal(
    instruction: str,
    *,
    library: PrimitiveLibrary,
    executor: Executor,
    llm: CompletionLLM,
    config: PlannerConfig,
    listeners: Iterable[TreeListener] = (),
    cancel: threading.Event | None = None,
    goal_id: str = "",
    on_step: StepCallback | None = None,
    gate: CallGate | None = None,
    episodic: EpisodicMemory | None = None,
    goal: list[str] | None = None,
    person: Person | None = None,
    confirm_goal: bool = False,
) -> GoalResult:
    """Plan and execute one instruction. Never raises for planner, LLM or executor faults.

    ``gate`` sees every call before it runs (the safety envelope, approval mode) and may refuse
    it by returning an Outcome; a refused call is never sent to the executor. ``goal``: facts the
    client states as the instruction's goal (then the model is not asked for them). ``person``
    answers the model's questions and, with ``confirm_goal``, accepts, corrects or refuses the goal
    the model states before anything moves (``planner/person.py``); None: nobody to ask.
    """
    started = time.monotonic()
    if problem := validate_instruction(instruction):
        return GoalResult(False, GoalError.INVALID_GOAL, problem)
    cancel = cancel or threading.Event()
    planner = StepPlanner(
        instruction.strip(), library=library, llm=llm, config=config, goal_id=goal_id,
        listeners=listeners, cancel=cancel, episodic=episodic, goal=goal, person=person, confirm_goal=confirm_goal,
    )
    first_record = len(getattr(getattr(llm, "usage", None), "records", []))
    executed: list[tuple[PrimitiveCall, Outcome]] = []
    try:
        initial = executor.observe()
    except Exception as exc:
        return GoalResult(False, GoalError.EXECUTION_FAILED, unobservable(exc),
                          tree=planner.tree.snapshot(), elapsed_s=time.monotonic() - started)
    speculate = _speculation(planner, initial, library, episodic, goal) if "overlap" in planner.profile.features \
        else None
    history: list[tuple[PrimitiveCall, StepReport]] = []
    last_world = initial
    plan = planner.run(initial)
    try:
        call = next(plan)
        while True:
            try:
                outcome = gate(call) if gate else None
            except Exception as exc:  # a gate that cannot decide refuses
                outcome = Outcome(ExecCode.SAFETY_VIOLATION, f"the safety gate could not check the call: {exc}")
            if outcome is None:
                if cancel.is_set():
                    outcome = Outcome(ExecCode.CANCELED, "canceled before motion")
                else:
                    if speculate is not None and (not executed or executed[-1][1].duration_s
                                                  >= config.overlap_min_motion_s):  # the arm moves: ask ahead
                        speculate(list(history), call, last_world)
                    t0 = time.monotonic()
                    try:
                        outcome = executor.execute(call, cancel)
                    except Exception as exc:  # a backend bug must not kill the goal or the node
                        outcome = Outcome(ExecCode.BACKEND_ERROR, f"{type(exc).__name__}: {exc}")
                    outcome.duration_s = outcome.duration_s or time.monotonic() - t0
            executed.append((call, outcome))
            try:
                world = executor.observe()
            except Exception as exc:
                plan.close()
                result = planner.abort(GoalError.EXECUTION_FAILED, unobservable(exc))
                break
            if on_step:
                try:
                    on_step(call, outcome, world)
                except Exception:  # an observer's bug must not stop the robot's plan
                    _log.exception("on_step callback failed after %s", call)
            report = StepReport(outcome, world)
            history.append((call, report))
            last_world = world
            call = plan.send(report)
    except StopIteration as stop:
        result = stop.value
    finally:
        if planner.gate.prefetcher is not None:
            planner.gate.prefetcher.close()
    result.executed = executed
    if result.success and planner.episodic is not None:
        planner.episodic.add_successes(result.tree)
    result.usage = _usage(llm, first_record, planner)
    result.elapsed_s = time.monotonic() - started
    return result


def _speculation(planner: StepPlanner, initial: WorldState, library: PrimitiveLibrary,
                 episodic: EpisodicMemory | None, goal: list[str] | None):
    """The overlap feature: a function that starts preparing the planner's next request for a call about
    to execute (see ``planner/overlap.py``); None when the client cannot fork."""

    def charge() -> bool:
        try:
            planner.budget.charge_llm()
        except (BudgetExceeded, Canceled):
            return False
        return True

    prefetcher = Prefetcher(planner.llm, charge)
    if not prefetcher.can_fork:
        return None
    planner.gate.prefetcher = prefetcher

    shadow_config = planner.config.with_changes(wall_clock_s=1e9, max_llm_calls=10**6)

    def make_shadow(replay_llm, prompts) -> StepPlanner:  # the person's replies so far are replayed to it
        return StepPlanner(planner.tree.instruction, library=library, llm=replay_llm, config=shadow_config,
                           prompts=prompts, episodic=episodic, goal=goal, goal_id=planner.tree.goal_id,
                           person=ReplayPerson(planner.questions.replies), confirm_goal=planner.intake.confirm_goal)

    def speculate(history: list, call: PrimitiveCall, last_world: WorldState) -> None:
        answers = list(planner.gate.answers.ordered)
        prefetcher.start(lambda prepared, stop: next_request(make_shadow, initial, history, call, answers + prepared,
                                                             planner.prompts, library, last_world, stop))

    return speculate


def safety_gate(envelope, library: PrimitiveLibrary, executor: Executor) -> CallGate:
    """A gate that refuses calls outside ``envelope`` (see ``step_planner.domain.safety``)."""

    def gate(call: PrimitiveCall) -> Outcome | None:
        problems = envelope.violations(call, library, executor.observe().observed())
        if problems:
            return Outcome(ExecCode.SAFETY_VIOLATION, "; ".join(problems))
        return None

    return gate
