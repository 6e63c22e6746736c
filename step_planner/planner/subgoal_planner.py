"""STEP Algorithm 1 as a generator: decomposition, checking and execution interleave depth first.

``StepPlanner.run(world)`` yields the next :class:`PrimitiveCall` and is sent back a
:class:`StepReport` (the outcome and the new world). The caller owns execution, which is why the
ROS action server, the CLI and the benchmark all drive this same code (see ``runner.run_goal``).

Re-planning (STEP): an inconsistent child, a failed execution or a failed subtree sends the
reason back to the parent, which proposes a different next child with that reason as feedback.
Finished siblings stay finished. After ``max_replans_per_node`` rejections in one round the
parent itself fails and its own parent re-plans.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Generator, Iterable
from dataclasses import dataclass

from pydantic import BaseModel

from step_planner.domain.primitives import DomainError, PrimitiveCall, PrimitiveLibrary
from step_planner.domain.validation import check_call
from step_planner.domain.world import WorldState
from step_planner.execution.base import ExecCode, Outcome
from step_planner.llm.errors import LLMCanceled, LLMInvalidAnswer, LLMUnavailable
from step_planner.llm.schemas import CompletionAnswer, DecompositionAnswer
from step_planner.planner.config import PlannerConfig
from step_planner.planner.learning import revise_pending, summarize, world_facts
from step_planner.planner.memory import EpisodicMemory, WorkingMemory
from step_planner.planner.prompts import PromptBook
from step_planner.planner.result import GoalError, GoalResult
from step_planner.planner.terminate import DECOMPOSE, EXECUTE, CompletionLLM, TerminationChecker
from step_planner.planner.tree import NodeStatus, SubgoalTree, TreeListener


@dataclass
class StepReport:
    """What the caller sends back after executing a yielded call."""

    outcome: Outcome
    world: WorldState  # the world after the call (truth or observation; the planner filters)


class BudgetExceeded(Exception):
    pass


class Canceled(Exception):
    pass


Plan = Generator[PrimitiveCall, StepReport, GoalResult]
Expansion = Generator[PrimitiveCall, StepReport, tuple[bool, str]]


class StepPlanner:
    def __init__(
        self,
        instruction: str,
        *,
        library: PrimitiveLibrary,
        llm: CompletionLLM,
        config: PlannerConfig,
        goal_id: str = "",
        listeners: Iterable[TreeListener] = (),
        prompts: PromptBook | None = None,
        cancel: threading.Event | None = None,
        episodic: EpisodicMemory | None = None,
    ) -> None:
        self.library = library
        self.config = config
        self.llm = llm
        self.cancel = cancel or threading.Event()
        self.tree = SubgoalTree(instruction, goal_id)
        for listener in listeners:
            self.tree.add_listener(listener)
        self.prompts = prompts or PromptBook.load(library, config.prompts_dir)
        self.checker = TerminationChecker(library, self.prompts, self)
        self.llm_calls = 0
        self.primitives = 0
        self.started = time.monotonic()
        self.world = WorldState()
        self._last_failure = GoalError.PLANNING_FAILED
        self.features = config.features
        self.working_memory = WorkingMemory() if "working_memory" in self.features else None
        self.episodic = episodic if "episodic_memory" in self.features else None
        self._examples: dict[int, str] = {}
        self._learned: dict[int, list[str]] = {}
        self.planned_skips = 0  # LLM calls saved by plan-ahead

    def _observe(self, world: WorldState) -> None:
        self.world = world.observed()
        if self.working_memory is not None:
            self.working_memory.update(self.world)

    # ---- the LLM, with the budget in front of it ---------------------------------------------
    def complete(self, messages: list[dict[str, str]], schema: type[BaseModel], purpose: str) -> BaseModel:
        self._check_budgets()
        if self.llm_calls >= self.config.max_llm_calls:
            raise BudgetExceeded(f"LLM call budget of {self.config.max_llm_calls} used up")
        self.llm_calls += 1
        try:
            return self.llm.complete(messages, schema, purpose)
        except LLMCanceled:  # the client gave up waiting because of our own cancel event
            raise Canceled() from None

    def _check_budgets(self) -> None:
        if self.cancel.is_set():
            raise Canceled()
        elapsed = time.monotonic() - self.started
        if elapsed > self.config.wall_clock_s:
            raise BudgetExceeded(f"wall-clock limit of {self.config.wall_clock_s:.0f} s reached")

    # ---- Algorithm 1 -------------------------------------------------------------------------
    def run(self, world: WorldState) -> Plan:
        self._observe(world)
        root = self.tree.root
        try:
            ok, reason = yield from self._expand(root)
        except BudgetExceeded as exc:
            return self._end(GoalError.BUDGET_EXCEEDED, str(exc), "budget")
        except LLMUnavailable as exc:
            return self._end(GoalError.LLM_UNAVAILABLE, f"LLM endpoint unavailable: {exc}", "llm")
        except Canceled:
            return self._end(GoalError.CANCELED, "goal canceled", "cancel")
        if ok:
            self.tree.set_active(None)
            return GoalResult(True, GoalError.NONE, "the instruction is achieved", tree=self.tree.snapshot())
        return self._end(self._last_failure, reason, None)

    def abort(self, error: GoalError, message: str) -> GoalResult:
        """End the goal from outside the loop (the executor failed): close every open node."""
        if self.tree.active is not None:
            self.tree.set_status(self.tree.active, NodeStatus.FAILED)
        return self._end(error, message, "executor")

    def _end(self, error: GoalError, message: str, source: str | None) -> GoalResult:
        if source is not None and self.tree.active is not None:
            self.tree.add_verdict(self.tree.active, "stopped", message, source)
        interrupted = self.tree.active
        self.tree.abandon_open(self.tree.root)
        if interrupted is not None and error is GoalError.CANCELED:
            self.tree.set_status(interrupted, NodeStatus.FAILED)
        self.tree.set_active(None)
        return GoalResult(False, error, message, tree=self.tree.snapshot())

    def _extra_sections(self, node_id: int, pending: list[str]) -> str:
        """Prompt sections contributed by the depth cap and the switched-on features."""
        node = self.tree.node(node_id)
        parts = []
        if node.depth + 1 >= self.config.max_depth:
            parts.append("## Depth limit\nThis subgoal is at the deepest level allowed: its children must each "
                         "be a single primitive call.")
        if "control_flow" in self.features and not node.children:
            parts.append("## Control flow\nSet `control` for the children of this subgoal: \"sequence\" (all, in "
                         "order, stop at a failure), \"fallback\" (alternatives: stop at the first success, e.g. "
                         "look in drawer 1, then drawer 2) or \"parallel\" (all of them, even if one fails).")
        elif node.control != "sequence":
            parts.append(f"## Control flow\nThe children of this subgoal are combined as: {node.control}.")
        if self.working_memory is not None and (wm := self.working_memory.render(self.world)):
            parts.append(f"## Working memory (where objects were last seen)\n{wm}")
        if self.episodic is not None:
            if node_id not in self._examples:
                found = self.episodic.retrieve(node.text)
                self._examples[node_id] = "\n".join(e.render() for e in found)
            if self._examples[node_id]:
                parts.append(f"## Examples of similar subgoals solved before\n{self._examples[node_id]}")
        if "self_revision" in self.features and self._learned.get(node_id):
            parts.append("## Learned from finished children\n" + "\n".join(f"- {f}" for f in self._learned[node_id]))
        if "plan_ahead" in self.features:
            if pending:
                plan = "\n".join(f"{i}. {p}" for i, p in enumerate(pending, 1))
                parts.append(f"## Remaining plan (from your previous answer)\n{plan}\nRefine it with the outcomes "
                             "above: give the next child as `subgoal` and the full remaining list as `plan`.")
            else:
                parts.append("## Plan ahead\nGive the next child as `subgoal` and, in `plan`, the full ordered list "
                             "of the remaining children starting with it.")
        return "\n\n".join(parts)

    def _planned_next(self, pending: list[str]) -> DecompositionAnswer | None:
        """Plan-ahead (ReCAP): a planned child that already is a valid call runs without an LLM call."""
        if not pending:
            return None
        try:
            call = self.library.parse_call_text(pending[0])
        except DomainError:
            return None
        if call is None or check_call(call, self.library, self.world):
            return None
        self.planned_skips += 1
        return DecompositionAnswer(done=False, subgoal=pending[0], plan=pending)

    def _decompose(self, node_id: int, feedback: list[str], pending: list[str]) -> DecompositionAnswer | str:
        """The next child proposal, or the reason the answer was unusable."""
        node = self.tree.node(node_id)
        if "plan_ahead" in self.features and not feedback and (planned := self._planned_next(pending)):
            return planned
        messages = self.prompts.decomposition(
            self.tree, node_id, self.world.describe(), feedback, self._extra_sections(node_id, pending),
            collapse="summaries" in self.features,
        )
        try:
            answer = self.complete(messages, DecompositionAnswer, "decomposition")
        except LLMInvalidAnswer as exc:
            return f"the decomposition answer was invalid: {exc.error}"
        assert isinstance(answer, DecompositionAnswer)
        if answer.done:
            return answer
        text = " ".join((answer.subgoal or "").split())
        if not text:
            return "the answer neither gave a subgoal nor said done"
        lineage = {a.text.lower() for a in self.tree.ancestors(node_id)} | {node.text.lower()}
        if text.lower() in lineage:
            return f"'{text}' repeats the subgoal it should decompose"
        return answer.model_copy(update={"subgoal": text})

    def _verify_done(self, node_id: int) -> str:
        """verify_done: a second opinion on a 'done' claim; returns what is missing ("" = achieved).

        A 'done' one step early is the commonest way a tree planner fails quietly (the scripted
        expert's missing-step mistake); the check costs one LLM call per finished subgoal.
        """
        if "verify_done" not in self.features:
            return ""
        messages = self.prompts.verification(self.tree, node_id, self.world.describe())
        try:
            answer = self.complete(messages, CompletionAnswer, "verification")
        except LLMInvalidAnswer:
            return ""  # an unusable second opinion does not overrule the first
        assert isinstance(answer, CompletionAnswer)
        if answer.achieved:
            return ""
        return f"'{self.tree.node(node_id).text}' is not achieved yet: {answer.missing or answer.reasoning}"

    def _finish(self, node_id: int, failures: list[str], succeeded_any: bool) -> tuple[bool, str]:
        """The decomposer said done: aggregate the children by the node's control flow."""
        tree = self.tree
        control = tree.node(node_id).control
        if control == "parallel" and failures:
            reason = f"{len(failures)} parallel children failed: " + "; ".join(failures)
        elif control == "fallback" and not succeeded_any:
            reason = "no alternative succeeded" + (": " + "; ".join(failures) if failures else "")
        else:
            tree.set_status(node_id, NodeStatus.SUCCEEDED)
            return True, ""
        tree.add_verdict(node_id, "done", reason, "control_flow")
        tree.set_status(node_id, NodeStatus.FAILED)
        return False, reason

    def _expand(self, node_id: int) -> Expansion:
        tree, cfg = self.tree, self.config
        tree.set_status(node_id, NodeStatus.EXPANDING)
        tree.set_active(node_id)
        feedback: list[str] = []
        rejections = 0
        pending: list[str] = []  # plan-ahead: the remaining planned children, head first
        failures: list[str] = []  # parallel / fallback children that ran and failed
        while True:
            answer = self._decompose(node_id, feedback, pending)
            if isinstance(answer, str):
                tree.add_verdict(node_id, "rejected", answer, "validation")
                self._last_failure = GoalError.PLANNING_FAILED
                reason = answer
            elif answer.done and (missing := self._verify_done(node_id)):
                tree.add_verdict(node_id, "rejected", missing, "verification")
                self._last_failure = GoalError.PLANNING_FAILED
                reason = missing
            elif answer.done:
                tree.add_verdict(node_id, "done", answer.reasoning or "its children achieve it", "llm")
                succeeded_any = any(c.status is NodeStatus.SUCCEEDED for c in tree.children(node_id))
                return self._finish(node_id, failures, succeeded_any)
            else:
                if "control_flow" in self.features and not tree.node(node_id).children:
                    tree.set_control(node_id, answer.control)
                if "plan_ahead" in self.features:
                    plan = [" ".join(p.split()) for p in answer.plan if p and p.strip()]
                    pending = plan if plan and plan[0] == answer.subgoal else [answer.subgoal or ""]
                live = [c for c in tree.children(node_id) if c.status is not NodeStatus.ABANDONED]
                if len(live) >= cfg.max_children:
                    raise BudgetExceeded(
                        f"'{tree.node(node_id).text}' would need more than {cfg.max_children} children"
                    )
                assert answer.subgoal is not None
                child = tree.add_node(answer.subgoal, node_id).id
                before = self.world
                ok, reason = yield from self._handle_child(child)
                tree.set_active(node_id)
                ran = tree.node(child).status is not NodeStatus.ABANDONED
                self._after_child(node_id, child, before, ok, reason, ran)
                control = tree.node(node_id).control
                if pending and ran and (ok or control != "sequence"):  # a failed head is re-planned in place
                    pending = revise_pending(pending[1:], self._learned.get(node_id, []))
                if ok:
                    feedback, rejections = [], 0
                    if control == "fallback":
                        tree.set_status(node_id, NodeStatus.SUCCEEDED)
                        return True, ""
                    continue
                if ran and control in ("fallback", "parallel"):
                    failures.append(reason)
                    feedback = [f"'{tree.node(child).text}' failed ({reason}); continue with the other children"]
                    continue
            rejections += 1
            if rejections > cfg.max_replans_per_node:
                message = f"gave up after {rejections} rejected proposals; last: {reason}"
                tree.add_verdict(node_id, "replan", message, "budget")
                tree.set_status(node_id, NodeStatus.FAILED)
                return False, message
            feedback.append(reason)

    def _after_child(self, node_id: int, child: int, before: WorldState, ok: bool, reason: str, ran: bool) -> None:
        """Summaries (HiAgent) and self-revision (TDP) from what the child changed."""
        if not ran:
            return
        facts = world_facts(before, self.world)
        if "self_revision" in self.features and facts:
            self._learned.setdefault(node_id, []).extend(facts)
        if "summaries" in self.features and self.tree.node(child).children:
            actions = sum(1 for n in self.tree.nodes.values() if n.call is not None and n.outcome is not None
                          and self._descends(n.id, child))
            self.tree.set_summary(child, summarize(ok, facts, actions, reason))

    def _descends(self, node_id: int, ancestor: int) -> bool:
        parent = self.tree.node(node_id).parent
        while parent is not None:
            if parent == ancestor:
                return True
            parent = self.tree.node(parent).parent
        return False

    def _handle_child(self, child: int) -> Expansion:
        """Judge a new child and run it (execute or expand). Returns (ok, reason-if-not)."""
        tree = self.tree
        verdict = self.checker.judge(tree, child, self.world)
        tree.add_verdict(child, verdict.kind, verdict.reason, verdict.source)
        if verdict.kind == EXECUTE:
            assert verdict.call is not None
            tree.set_call(child, verdict.call)
            outcome = yield from self._execute(child, verdict.call)
            if outcome.success:
                tree.set_status(child, NodeStatus.SUCCEEDED)
                return True, ""
            tree.set_status(child, NodeStatus.FAILED)
            self._last_failure = (
                GoalError.SAFETY_VIOLATION
                if outcome.code is ExecCode.SAFETY_VIOLATION
                else GoalError.EXECUTION_FAILED
            )
            return False, f"'{tree.node(child).text}' failed: {outcome.code.value}: {outcome.message}"
        if verdict.kind == DECOMPOSE:
            if tree.node(child).depth >= self.config.max_depth:
                reason = (
                    f"'{tree.node(child).text}' needs decomposing but the depth limit "
                    f"({self.config.max_depth}) is reached; propose a single primitive call"
                )
                tree.add_verdict(child, "replan", reason, "budget")
                tree.set_status(child, NodeStatus.ABANDONED)
                return False, reason
            ok, reason = yield from self._expand(child)
            return ok, ("" if ok else f"'{tree.node(child).text}' failed: {reason}")
        tree.set_status(child, NodeStatus.ABANDONED)
        self._last_failure = GoalError.PLANNING_FAILED
        return False, verdict.reason

    def _execute(self, node_id: int, call: PrimitiveCall) -> Generator[PrimitiveCall, StepReport, Outcome]:
        self._check_budgets()
        if self.primitives >= self.config.max_primitives:
            raise BudgetExceeded(f"primitive budget of {self.config.max_primitives} used up")
        self.tree.set_status(node_id, NodeStatus.EXECUTING)
        self.tree.set_active(node_id)
        report = yield call
        self.primitives += 1
        self.tree.set_outcome(node_id, report.outcome.to_dict())
        self._observe(report.world)
        if report.outcome.code is ExecCode.CANCELED:
            raise Canceled()
        return report.outcome
