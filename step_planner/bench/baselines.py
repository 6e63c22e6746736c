"""The planners the benchmark compares, all on the same executor, LLM client and budgets.

- ``step``            the full STEP loop (``run_goal``).
- ``step_no_tree``    STEP's ablation "w/o tree structure": the same loop, but every prompt's parent
                      is followed by ALL primitives executed so far in any branch (the condensing
                      effect of the tree is removed, the contextual gap comes back).
- ``step_no_subgoal`` STEP's ablation "w/o subgoal tree": the root's children must be primitives
                      (depth 1), so each action is generated from the task plus every executed
                      leaf; the termination checker still maps phrases and checks calls.
- ``react``           flat step-by-step: one call per step, the prompt carries the full history
                      (successes, failures, rejections with reasons); no termination checker.
- ``oneshot``         the whole plan in one answer (``plan``), then executed without re-planning.
- ``step+F1+F2``      STEP with planner features switched on (``plan_ahead``, ``summaries``,
                      ``self_revision``, ``working_memory``, ``control_flow``; see PlannerConfig).

Every call from every planner passes ``check_call`` before it reaches the executor.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from step_planner.domain.primitives import DomainError, PrimitiveCall, PrimitiveLibrary
from step_planner.domain.validation import check_call
from step_planner.domain.world import WorldState
from step_planner.execution.base import ExecCode, Executor, Outcome
from step_planner.llm.errors import LLMInvalidAnswer, LLMUnavailable
from step_planner.llm.schemas import DecompositionAnswer
from step_planner.planner.config import KNOWN_FEATURES, PlannerConfig
from step_planner.planner.memory import EpisodicMemory, minilm_embedder
from step_planner.planner.prompts import PromptBook, describe_outcome
from step_planner.planner.result import GoalError, GoalResult
from step_planner.planner.runner import run_goal
from step_planner.planner.subgoal_planner import StepPlanner, StepReport
from step_planner.planner.terminate import CompletionLLM
from step_planner.planner.tree import NodeStatus, SubgoalTree
from step_planner.resources import config_path

PLANNERS = ("step", "step_no_tree", "step_no_subgoal", "react", "oneshot")
StepCallback = Callable[[PrimitiveCall, Outcome, WorldState], None]  # as run_goal's: the world after the call

DEPTH_LIMIT = ("## Depth limit\nThis subgoal is at the deepest level allowed: its children must each be a "
               "single primitive call.")
CALLS_ONLY = "## Answer format\nWrite the subgoal as one primitive call such as pick(tape), never as a sentence."
PLAN_AHEAD = ("## Plan ahead\nGive the next child as `subgoal` and, in `plan`, the full ordered list of the "
              "remaining children starting with it.")


class HistoryPromptBook(PromptBook):
    """Prompts of the 'w/o tree structure' ablation: the parent plus every executed leaf."""

    @staticmethod
    def _history(tree: SubgoalTree) -> str:
        leaves = [n for n in sorted(tree.nodes.values(), key=lambda n: n.id) if n.outcome is not None]
        lines = [f"{i}. {n.call or n.text} -> {describe_outcome(n)}" for i, n in enumerate(leaves, 1)]
        return "Actions executed so far (whole task):\n" + ("\n".join(lines) if lines else "(none yet)")

    def _inject(self, messages: list[dict[str, str]], header: str, parent: str, tree: SubgoalTree) -> None:
        old = f"{header}\n{parent}\n"
        messages[-1]["content"] = messages[-1]["content"].replace(old, f"{old}{self._history(tree)}\n", 1)

    def decomposition(self, tree, node_id, observation, feedback, extra="", collapse=False):
        messages = super().decomposition(tree, node_id, observation, feedback, extra, collapse)
        self._inject(messages, "## Subgoal to decompose", tree.node(node_id).text, tree)
        return messages

    def termination(self, tree, node_id, observation):
        messages = super().termination(tree, node_id, observation)
        parent = tree.node(tree.node(node_id).parent).text  # type: ignore[arg-type]
        self._inject(messages, "## Parent subgoal", parent, tree)
        return messages


def _drive(planner: StepPlanner, executor: Executor, on_step: StepCallback | None) -> GoalResult:
    """The run_goal loop for a StepPlanner built here (run_goal builds its own prompts)."""
    executed: list[tuple[PrimitiveCall, Outcome]] = []
    plan = planner.run(executor.observe())
    try:
        call = next(plan)
        while True:
            outcome = _execute(executor, call)
            executed.append((call, outcome))
            world = executor.observe()
            if on_step:
                on_step(call, outcome, world)
            call = plan.send(StepReport(outcome, world))
    except StopIteration as stop:
        result = stop.value
    result.executed = executed
    result.usage = {"llm_calls": planner.llm_calls, "primitives": planner.primitives}
    return result


def _execute(executor: Executor, call: PrimitiveCall) -> Outcome:
    try:
        return executor.execute(call, None)
    except Exception as exc:  # a backend bug ends the step, not the benchmark
        return Outcome(ExecCode.BACKEND_ERROR, f"{type(exc).__name__}: {exc}")


class _Budget:
    def __init__(self, config: PlannerConfig) -> None:
        self.config, self.calls, self.primitives, self.started = config, 0, 0, time.monotonic()

    def llm(self, llm: CompletionLLM, messages, schema, purpose):
        if self.calls >= self.config.max_llm_calls:
            raise _OutOfBudget(f"LLM call budget of {self.config.max_llm_calls} used up")
        if time.monotonic() - self.started > self.config.wall_clock_s:
            raise _OutOfBudget(f"wall-clock limit of {self.config.wall_clock_s:.0f} s reached")
        self.calls += 1
        return llm.complete(messages, schema, purpose)


class _OutOfBudget(Exception):
    pass


def _flat_step(tree: SubgoalTree, text: str, status: NodeStatus, reason: str, outcome: Outcome | None) -> None:
    node = tree.add_node(text, tree.root)
    if outcome is not None:
        tree.set_outcome(node.id, outcome.to_dict())
    elif reason:
        tree.add_verdict(node.id, "replan", reason, "validation")
    tree.set_status(node.id, status)


def _flat(instruction: str, library: PrimitiveLibrary, executor: Executor, llm: CompletionLLM,
          config: PlannerConfig, on_step: StepCallback | None, oneshot: bool) -> GoalResult:
    """ReAct (one call per step, full history) and one-shot (whole plan, no re-planning)."""
    prompts = PromptBook.load(library, config.prompts_dir)
    tree = SubgoalTree(instruction)
    budget = _Budget(config)
    executed: list[tuple[PrimitiveCall, Outcome]] = []
    extra = "\n\n".join([DEPTH_LIMIT, CALLS_ONLY] + ([PLAN_AHEAD] if oneshot else []))
    failures_in_a_row = 0
    queue: list[str] = []

    def end(ok: bool, error: GoalError, message: str) -> GoalResult:
        return GoalResult(ok, error, message, executed=executed, tree=tree.snapshot(),
                          usage={"llm_calls": budget.calls, "primitives": budget.primitives})

    try:
        while True:
            world = executor.observe().observed()
            if not queue:
                if oneshot and budget.calls:
                    return end(True, GoalError.NONE, "the one-shot plan was executed")
                messages = prompts.decomposition(tree, tree.root, world.describe(), [], extra)
                try:
                    answer = budget.llm(llm, messages, DecompositionAnswer, "decomposition")
                except LLMInvalidAnswer as exc:
                    if oneshot:
                        return end(False, GoalError.PLANNING_FAILED, f"invalid plan answer: {exc.error}")
                    _flat_step(tree, "(invalid answer)", NodeStatus.ABANDONED, exc.error, None)
                    failures_in_a_row += 1
                    if failures_in_a_row > config.max_replans_per_node:
                        return end(False, GoalError.PLANNING_FAILED, f"gave up after invalid answers: {exc.error}")
                    continue
                assert isinstance(answer, DecompositionAnswer)
                if answer.done:
                    return end(True, GoalError.NONE, "the model said the task is done")
                queue = [p for p in answer.plan if p.strip()] if oneshot and answer.plan else [answer.subgoal or ""]
            text = " ".join(queue.pop(0).split())
            try:
                call = library.parse_call_text(text)
            except DomainError as exc:
                call, reason = None, str(exc)
            else:
                reason = "" if call else f"'{text}' is not a primitive call"
            if call is not None and (problems := check_call(call, library, world)):
                reason = f"{call} cannot run now: " + "; ".join(p.message for p in problems)
            if reason:
                _flat_step(tree, text or "(empty)", NodeStatus.ABANDONED, reason, None)
                failures_in_a_row += 1
                if oneshot:
                    return end(False, GoalError.PLANNING_FAILED, reason)
                if failures_in_a_row > config.max_replans_per_node:
                    message = f"gave up after {failures_in_a_row} failures: {reason}"
                    return end(False, GoalError.PLANNING_FAILED, message)
                continue
            assert call is not None
            if budget.primitives >= config.max_primitives:
                return end(False, GoalError.BUDGET_EXCEEDED, f"primitive budget of {config.max_primitives} used up")
            outcome = _execute(executor, call)
            budget.primitives += 1
            executed.append((call, outcome))
            if on_step:
                on_step(call, outcome, executor.observe())
            _flat_step(tree, text, NodeStatus.SUCCEEDED if outcome.success else NodeStatus.FAILED, "", outcome)
            if outcome.success:
                failures_in_a_row = 0
            else:
                failures_in_a_row += 1
                if oneshot or failures_in_a_row > config.max_replans_per_node:
                    return end(False, GoalError.EXECUTION_FAILED, f"{call} failed: {outcome.message}")
    except _OutOfBudget as exc:
        return end(False, GoalError.BUDGET_EXCEEDED, str(exc))
    except LLMUnavailable as exc:
        return end(False, GoalError.LLM_UNAVAILABLE, f"LLM endpoint unavailable: {exc}")


_EPISODIC: EpisodicMemory | None = None


def sweep_episodic_memory() -> EpisodicMemory:
    """One episodic store per process (a sweep), seeded from config and grown by the sweep's successes."""
    global _EPISODIC
    if _EPISODIC is None:
        import tempfile

        store = Path(tempfile.mkdtemp(prefix="step_planner_episodic_")) / "episodic.jsonl"
        seed = config_path("episodic_seed.yaml")
        _EPISODIC = EpisodicMemory(store, minilm_embedder(), seed=seed)
    return _EPISODIC


def is_known(name: str) -> bool:
    """A planner name :func:`run_planner` accepts (``step+feature`` variants included)."""
    if name in PLANNERS:
        return True
    base, *features = name.split("+")
    return base == "step" and bool(features) and set(features) <= KNOWN_FEATURES


def run_planner(name: str, instruction: str, *, library: PrimitiveLibrary, executor: Executor,
                llm: CompletionLLM, config: PlannerConfig, on_step: StepCallback | None = None) -> GoalResult:
    """Run planner ``name`` (one of :data:`PLANNERS`) on one instruction."""
    if name.startswith("step+") and is_known(name):
        featured = config.with_features(set(config.features) | set(name.split("+")[1:]))
        episodic = sweep_episodic_memory() if "episodic_memory" in featured.features else None
        return run_goal(instruction, library=library, executor=executor, llm=llm, config=featured, on_step=on_step,
                        episodic=episodic)
    if name == "step":
        return run_goal(instruction, library=library, executor=executor, llm=llm, config=config, on_step=on_step)
    if name == "step_no_tree":
        prompts = HistoryPromptBook.load(library, config.prompts_dir)
        planner = StepPlanner(instruction, library=library, llm=llm, config=config, prompts=prompts)
        return _drive(planner, executor, on_step)
    if name == "step_no_subgoal":
        flat = PlannerConfig.from_dict({**config.to_dict(), "max_depth": 1,
                                        "max_children": max(config.max_children, config.max_primitives)})
        return run_goal(instruction, library=library, executor=executor, llm=llm, config=flat, on_step=on_step)
    if name in ("react", "oneshot"):
        return _flat(instruction, library, executor, llm, config, on_step, oneshot=name == "oneshot")
    raise ValueError(f"unknown planner {name!r}; known: {', '.join(PLANNERS)}")
