"""STEP Algorithm 1 as a generator: decomposition, checking and execution interleave depth first.

``StepPlanner.run(world)`` yields the next :class:`PrimitiveCall` and is sent back a
:class:`StepReport` (the outcome and the new world). The caller owns execution, which is why the
ROS action server, the CLI and the benchmark all drive this same code (``runner.run_goal``).

With conditions (the ``grounded`` profile) the world decides, not the model's word: the root
carries the instruction's goal facts, every child its ``success_when`` (or, for a call, the
call's effects); after each child the parent's facts are judged on the believed world, and a
subgoal whose facts hold is done without asking anyone. A model's "done" whose facts do not hold
becomes feedback naming them.

The parts it directs: the goal's intake (``planner/goal_intake.py``: stated by the client, the model or the
person, checked against the words, provisional names, confirmation), the person's questions
(``planner/person.py``: the model's, or the planner's own when only the person can say which thing is meant),
each node's facts (``planner/node_conditions.py``) and the model behind its budget (``planner/llm_gate.py``).
``_expand`` decides what happens next, as ``update`` does in a behaviour tree's composite.

Re-planning (STEP): an inconsistent child, a failed execution or a failed subtree sends the
reason back to the parent, which proposes a different next child with that reason as feedback.
Finished siblings stay finished. After ``max_replans_per_node`` rejections in one round the
parent itself fails and its own parent re-plans.
"""

from __future__ import annotations

import threading
from collections.abc import Generator, Iterable
from dataclasses import dataclass, field

from pydantic import BaseModel

from step_planner.domain.conditions import Condition
from step_planner.domain.primitives import PrimitiveCall, PrimitiveLibrary
from step_planner.domain.world import WorldState
from step_planner.execution.base import ExecCode, Outcome
from step_planner.llm.errors import LLMInvalidAnswer, LLMUnavailable
from step_planner.llm.schemas import CompletionAnswer, decomposition_schema
from step_planner.planner.beliefs import Beliefs
from step_planner.planner.budget import Budget, BudgetExceeded, Canceled
from step_planner.planner.children import ChildSpec, check_child
from step_planner.planner.config import PlannerConfig
from step_planner.planner.control_flow import ControlFlow, Next, control_flow
from step_planner.planner.features import ChildFinished, make_features
from step_planner.planner.goal_checks import UNRESOLVED
from step_planner.planner.goal_intake import RECHECK, ClientGoalError, GoalIntake, Intake, IntakeKind, RefusalLoop
from step_planner.planner.grounding import kind_mentions, named_entities
from step_planner.planner.kinds import Control, NodeStatus, VerdictKind, VerdictSource
from step_planner.planner.llm_gate import LLMGate
from step_planner.planner.memory import EpisodicMemory
from step_planner.planner.node_conditions import NodeConditions, effect_facts
from step_planner.planner.person import Person, PersonStop, Questions, Reply
from step_planner.planner.prompts import PromptBook
from step_planner.planner.result import GoalError, GoalResult, StepReport
from step_planner.planner.termination import Candidate, CompletionLLM, TerminationChecker
from step_planner.planner.tree import SubgoalTree, TreeListener
from step_planner.planner.world_changes import revise_pending

__all__ = ["BudgetExceeded", "Canceled", "CompletionLLM", "StepPlanner", "StepReport"]


@dataclass
class _Round:
    """One node's expansion: the feedback of the current child position and what is planned."""

    node_id: int
    flow: ControlFlow
    feedback: list[str] = field(default_factory=list)
    rejections: int = 0
    pending: list[ChildSpec] = field(default_factory=list)  # plan-ahead: head first
    challenged: set[str] = field(default_factory=set)
    asked: int = 0


class _DoneClaim:
    def __init__(self, reasoning: str) -> None:
        self.reasoning = reasoning


class _NothingToDo(Exception):
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
        goal: list[str] | None = None,
        person: Person | None = None,
        confirm_goal: bool = False,
    ) -> None:
        self.library = library
        self.config = config
        self.profile = config.planner_profile
        self.llm = llm
        self.budget = Budget(config, cancel)
        self.cancel = self.budget.cancel
        self.tree = SubgoalTree(instruction, goal_id)
        for listener in listeners:
            self.tree.add_listener(listener)
        self.prompts = prompts or PromptBook.load(library, config.prompts_dir, self.profile.history)
        self.checker = TerminationChecker(library, self.prompts, self, self.profile.termination)
        self.beliefs = Beliefs()
        self.episodic = episodic if self.has("episodic_memory") else None
        self.plugins = make_features(self.profile.features, self.episodic)
        self.planned_skips = 0  # LLM calls saved by plan-ahead
        self._failure = GoalError.PLANNING_FAILED
        self._moved: set[str] = set()  # objects the robot held or whose place changed across its actions
        self.gate = LLMGate(llm, self.budget)
        self.conditions = NodeConditions(self.tree, self.beliefs, self.budget)
        self.questions = Questions(person, self.tree, self.budget, enabled=self.has("questions"))
        self.intake = GoalIntake(self.tree, self.beliefs, library, self.budget, self.questions, self.conditions.judge,
                                 client_goal=goal, confirm_goal=confirm_goal)

    def has(self, feature: str) -> bool:
        return feature in self.profile.features

    @property
    def llm_calls(self) -> int:
        return self.budget.llm_calls

    @property
    def primitives(self) -> int:
        return self.budget.primitives

    @property
    def world(self) -> WorldState:
        return self.beliefs.world

    def complete(self, messages: list[dict[str, str]], schema: type[BaseModel], purpose: str) -> BaseModel:
        """The model's answer, through the gate (budget, prepared answers, the answer log)."""
        return self.gate.complete(messages, schema, purpose)

    def _observe(self, world: WorldState) -> None:
        self.beliefs.update(world.observed())
        for plugin in self.plugins:
            plugin.on_observe(self.beliefs.observed)

    # ---- Algorithm 1 -------------------------------------------------------------------------
    def run(self, world: WorldState) -> Plan:
        self._observe(world)
        root = self.tree.root
        self.budget.scale(self._task_size())
        if self.intake.confirm_goal and not self.profile.conditions and not self.intake.client_goal:
            return self._end(GoalError.INVALID_GOAL, f"confirm_goal needs a profile that states the goal as facts "
                             f"(profile {self.profile.name} states none); nothing was executed", None)
        try:
            self.intake.start()
            ok, reason = yield from self._expand(root)
        except ClientGoalError as exc:
            return self._end(GoalError.INVALID_GOAL, f"the goal's conditions are not usable: {exc}", None)
        except PersonStop as exc:
            return self._end(exc.error, str(exc), VerdictSource.PERSON)
        except RefusalLoop as exc:
            return self._end(GoalError.PLANNING_FAILED, str(exc), VerdictSource.VALIDATION)
        except _NothingToDo:
            return self._end(GoalError.NOTHING_TO_DO, "nothing to do: the instruction's conditions already hold "
                             f"({self.conditions.line(self.tree.root)}); nothing was executed", None)
        except BudgetExceeded as exc:
            return self._end(GoalError.BUDGET_EXCEEDED, str(exc), VerdictSource.BUDGET)
        except LLMUnavailable as exc:
            return self._end(GoalError.LLM_UNAVAILABLE, f"LLM endpoint unavailable: {exc}", VerdictSource.LLM)
        except Canceled:
            return self._end(GoalError.CANCELED, "goal canceled", VerdictSource.CANCEL)
        if not ok:
            return self._end(self._failure, reason, None)
        if not self.tree.node(root).conditions and self.config.require_verified_success:
            return self._end(GoalError.PLANNING_FAILED, "the model says the instruction is achieved, but no condition "
                             f"was checked (profile {self.profile.name} states none); set "
                             "require_verified_success to false to accept the model's word", VerdictSource.CONDITIONS)
        if self.tree.node(root).conditions and not any(self._robot_made(f) for f in self.conditions.facts(root)):
            return self._end(GoalError.NOTHING_TO_DO, "the instruction's conditions hold, but the robot brought none "
                             f"of them about ({self.conditions.line(self.tree.root)}): they held all along",
                             VerdictSource.CONDITIONS)
        self.tree.set_active(None)
        message = "the instruction is achieved"
        message += f": {self.conditions.line(root)}" if self.tree.node(root).conditions else " (the model's word)"
        return self._result(True, GoalError.NONE, message)

    def _robot_made(self, fact: Condition) -> bool:
        """Did the robot bring this goal fact about? (false at the start; an object it names was moved)"""
        if self.intake.at_start.get(str(fact), False):
            return False
        return not fact.objects or any(o in self._moved for o in fact.objects)

    def _task_size(self) -> int:
        """Before the goal's facts are known (or for profiles that state none): the objects the
        instruction mentions, by name or by kind ("every block")."""
        world = self.beliefs.world
        text = self.instruction_text
        mentioned = named_entities(text, world) | kind_mentions(text, world)
        drawers = {n for n in mentioned if n in world.places and world.places[n].openable}  # hidden things
        return len({n for n in mentioned if n in world.objects}) + len(drawers)

    def abort(self, error: GoalError, message: str) -> GoalResult:
        """End the goal from outside the loop (the executor failed): close every open node."""
        if self.tree.active is not None:
            self.tree.set_status(self.tree.active, NodeStatus.FAILED)
        return self._end(error, message, VerdictSource.EXECUTOR)

    def _end(self, error: GoalError, message: str, source: VerdictSource | None) -> GoalResult:
        if source is not None and self.tree.active is not None:
            self.tree.add_verdict(self.tree.active, VerdictKind.STOPPED, message, source)
        interrupted = self.tree.active
        self.tree.abandon_open(self.tree.root)
        if interrupted is not None and error is GoalError.CANCELED:
            self.tree.set_status(interrupted, NodeStatus.FAILED)
        self.tree.set_active(None)
        return self._result(False, error, message)

    def _result(self, success: bool, error: GoalError, message: str) -> GoalResult:
        root = self.tree.node(self.tree.root)
        if root.conditions:
            self.conditions.judge(root.id)
        return GoalResult(success, error, message, tree=self.tree.snapshot(), verified=bool(root.conditions),
                          conditions=[c.to_dict() for c in self.tree.node(self.tree.root).conditions],
                          goal_rejections=list(self.intake.goal_rejections),
                          unresolved_phrases=[r["said"] for r in self.tree.readings if UNRESOLVED in r.get("from", "")])

    @property
    def instruction_text(self) -> str:
        return self.intake.instruction_text

    @property
    def replies(self) -> list[Reply]:
        return self.questions.replies

    # ---- prompts -----------------------------------------------------------------------------
    def _extra_sections(self, rnd: _Round, goal_wanted: bool, question: bool = False,
                        restate: list[str] | None = None, emptied: dict[str, list[str]] | None = None) -> str:
        """The sections that apply to this prompt (texts in ``config/prompts/section_*.txt``)."""
        node = self.tree.node(rnd.node_id)
        book = self.prompts
        parts: list[str] = []
        if goal_wanted and restate:
            inside = ", ".join(self.intake.revealed_since_stated()) or "nothing new"
            parts.append(book.section("goal_restate", names=", ".join(restate), inside=inside))
        elif goal_wanted and emptied:
            held = "; ".join(f"{box} held {', '.join(things)}" for box, things in emptied.items())
            parts.append(book.section("goal_restate_contents", containers=", ".join(emptied), held=held))
        elif goal_wanted:
            parts.append(book.section("goal"))
        if question:  # the fields a question leaves empty: only those this answer's schema has
            unset = ("`next` to null, `done` to false and `goal` to []" if goal_wanted
                     else "`next` to null and `done` to false")
            parts.append(book.section("ambiguity", unset=unset))
        if node.depth + 1 >= self.config.depth_limit():
            parts.append(book.section("depth_limit"))
        if self.has("control_flow") and not node.children:
            parts.append(book.section("control_flow_choose"))
        elif node.control is not Control.SEQUENCE:
            parts.append(book.section("control_flow_fixed", control=node.control.value))
        for plugin in self.plugins:
            parts.extend(plugin.sections(self.tree, rnd.node_id, self.beliefs.observed))
        if self.has("plan_ahead"):
            if rnd.pending:
                plan = "\n".join(f"{i}. {s.line()}" for i, s in enumerate(rnd.pending, 1))
                parts.append(book.section("remaining_plan", plan=plan))
            else:
                parts.append(book.section("plan_ahead"))
        return "\n\n".join(parts)

    # ---- expansion ---------------------------------------------------------------------------
    def _expand(self, node_id: int) -> Expansion:
        tree = self.tree
        tree.set_status(node_id, NodeStatus.EXPANDING)
        tree.set_active(node_id)
        rnd = _Round(node_id, control_flow(tree.node(node_id).control))
        while True:
            conditions = self.conditions
            if tree.node(node_id).conditions and conditions.judge(node_id) and not conditions.half_done(node_id) \
                    and not (node_id == tree.root and self.intake.emptied_unstated()):  # restated first
                if node_id == tree.root and self.budget.primitives == 0:
                    raise _NothingToDo()
                tree.add_verdict(node_id, VerdictKind.DONE, "its conditions hold: " + ", ".join(
                    f"{c.text} ({c.judged_from.value})" for c in tree.node(node_id).conditions),
                    VerdictSource.CONDITIONS)
                tree.set_status(node_id, NodeStatus.SUCCEEDED)
                return True, ""
            proposal = self._propose(rnd)
            if isinstance(proposal, Intake):  # the goal changed: judge it before proposing anything
                continue
            if isinstance(proposal, str):
                tree.add_verdict(node_id, VerdictKind.REJECTED, proposal, VerdictSource.VALIDATION)
                reason = proposal
            elif isinstance(proposal, _DoneClaim):
                finished = self._done_claim(rnd, proposal)
                if isinstance(finished, tuple):
                    return finished
                reason = finished
            else:
                assert isinstance(proposal, ChildSpec)
                live = [c for c in tree.children(node_id) if c.status is not NodeStatus.ABANDONED]
                if len(live) >= (limit := self._children_limit(node_id)):
                    raise BudgetExceeded(f"'{tree.node(node_id).text}' would need more than {limit} children")
                before = self.beliefs.world.copy() if self.plugins else self.beliefs.world  # features diff them
                primitives_before = self.budget.primitives
                child, ok, reason, ran = yield from self._handle_child(rnd, proposal)
                tree.set_active(node_id)
                if ran:
                    self._after_child(rnd, child, before, ok, reason, self.budget.primitives - primitives_before)
                decision = rnd.flow.after_child(ok, reason) if ran else Next.REPLAN
                if ok:
                    rnd.feedback, rnd.rejections = [], 0
                    if decision is Next.FINISHED and not tree.node(node_id).conditions:
                        tree.add_verdict(node_id, VerdictKind.DONE, "an alternative succeeded",
                                         VerdictSource.CONTROL_FLOW)
                        tree.set_status(node_id, NodeStatus.SUCCEEDED)
                        return True, ""
                    continue
                if not self.profile.replan:
                    return self._fail(node_id, f"{reason} (this profile does not re-plan)")
                if decision is Next.CONTINUE:
                    rnd.feedback = [rnd.flow.feedback(tree.node(child).text, reason)]
                    continue
            rnd.rejections += 1
            if rnd.rejections > self.config.max_replans_per_node:
                tree.add_verdict(node_id, VerdictKind.REPLAN, f"gave up after {rnd.rejections} rejected proposals; "
                                 f"last: {reason}", VerdictSource.BUDGET)
                return self._fail(node_id, f"gave up after {rnd.rejections} rejected proposals; last: {reason}",
                                  verdict=False)
            rnd.feedback.append(reason)

    def _children_limit(self, node_id: int) -> int:
        """Live children a node may have: per fact it must achieve; for a root without facts, per thing
        the instruction mentions; in a flat profile (every child a primitive), the primitive budget."""
        if self.config.depth_limit() == 1 and node_id == self.tree.root:
            return self.budget.max_primitives
        facts = len(self.tree.node(node_id).conditions)
        if not facts and node_id == self.tree.root:
            facts = self.budget.size
        return self.config.children_limit(facts)

    def _fail(self, node_id: int, reason: str, verdict: bool = True) -> tuple[bool, str]:
        if verdict:
            self.tree.add_verdict(node_id, VerdictKind.REPLAN, reason, VerdictSource.CONTROL_FLOW)
        self.tree.set_status(node_id, NodeStatus.FAILED)
        return False, reason

    def _done_claim(self, rnd: _Round, claim: _DoneClaim) -> tuple[bool, str] | str:
        """The decomposer said done. With conditions it is checked (and here, wrong: they do not
        hold, or the loop would have finished); without, the profile's completion check decides."""
        node_id = rnd.node_id
        tree = self.tree
        if tree.node(node_id).conditions:
            unmet = self.conditions.unmet_text(node_id)
            if self.beliefs.unmet(self.conditions.facts(node_id)):
                reason = f"you said '{tree.node(node_id).text}' is done, but these facts do not hold: {unmet}"
            else:
                reason = f"you said '{tree.node(node_id).text}' is done, but it is not finished: {unmet}"
            tree.add_verdict(node_id, VerdictKind.REJECTED, reason, VerdictSource.CONDITIONS)
            self._failure = GoalError.PLANNING_FAILED
            return reason
        if missing := self._verify_done(node_id):
            tree.add_verdict(node_id, VerdictKind.REJECTED, missing, VerdictSource.LLM)
            return missing
        ok, why = rnd.flow.when_done()
        if not ok:
            tree.add_verdict(node_id, VerdictKind.DONE, why, VerdictSource.CONTROL_FLOW)
            return self._fail(node_id, why, verdict=False)
        tree.add_verdict(node_id, VerdictKind.DONE, claim.reasoning or "its children achieve it", VerdictSource.LLM)
        tree.set_status(node_id, NodeStatus.SUCCEEDED)
        return True, ""

    def _verify_done(self, node_id: int) -> str:
        """verify_done: the model's second opinion on its own 'done' (profiles without conditions)."""
        if not self.has("verify_done"):
            return ""
        messages = self.prompts.verification(self.tree, node_id, self.beliefs)
        try:
            answer = self.complete(messages, CompletionAnswer, "verification")
        except LLMInvalidAnswer:
            return ""  # an unusable second opinion does not overrule the first
        assert isinstance(answer, CompletionAnswer)
        if answer.achieved:
            return ""
        return f"'{self.tree.node(node_id).text}' is not achieved yet: {answer.reasoning or 'something is missing'}"

    # ---- proposals ---------------------------------------------------------------------------
    def _propose(self, rnd: _Round) -> ChildSpec | _DoneClaim | str | Intake:
        """The next child (planned or asked for), a done claim, or why the answer was unusable."""
        tree = self.tree
        node = tree.node(rnd.node_id)
        if self.has("plan_ahead") and rnd.pending and not rnd.feedback:
            spec = rnd.pending[0]
            spec.planned = True
            self.planned_skips += 1
            return spec
        if not self.profile.replan and rnd.asked:
            return _DoneClaim("the plan is carried out")
        at_root = self.profile.conditions and rnd.node_id == tree.root
        restate = self.intake.provisional_names() if at_root and node.conditions else []
        emptied = self.intake.emptied_unstated() if at_root and node.conditions else {}
        goal_wanted = at_root and (not node.conditions or bool(restate) or bool(emptied))
        question = self.questions.may_ask()
        schema = decomposition_schema(grounded=self.profile.conditions, goal=goal_wanted,
                                      plan_ahead=self.has("plan_ahead"),
                                      control=self.has("control_flow") and not node.children, question=question)
        messages = self.prompts.decomposition(tree, rnd.node_id, self.beliefs, rnd.feedback, schema=schema,
                                              style=self.profile.answer_style,
                                              extra=self._extra_sections(rnd, goal_wanted, question, restate, emptied),
                                              collapse=self.has("summaries"),
                                              unfinished=self.conditions.half_done(node.id) if node.conditions else "")
        try:
            answer = self.complete(messages, schema, "decomposition")
        except LLMInvalidAnswer as exc:
            return f"your answer was invalid: {exc.error}"
        rnd.asked += 1
        data = answer.model_dump()
        if question and (asked := " ".join(str(data.get("question") or "").split())):
            repeated = self.questions.clarify(asked)
            return RECHECK if repeated is None else repeated
        if goal_wanted:
            taken = self.intake.take_answer(list(data.get("goal") or []), restate, moved=bool(self._moved),
                                            emptied=emptied)
            if taken.kind is IntakeKind.RECHECK:
                rnd.pending = []  # the answer's children were planned for another goal
                return taken
            if taken.kind is IntakeKind.REFUSED:
                return taken.feedback
        if "control" in data and not node.children:
            tree.set_control(rnd.node_id, Control(data["control"]))
            rnd.flow = control_flow(Control(data["control"]))
        if data.get("done"):
            return _DoneClaim(str(data.get("reasoning", "")))
        if not data.get("next"):
            return "your answer gave no next child and did not say done"
        specs = [ChildSpec.from_answer(c) for c in [data["next"], *(data.get("then") or [])]]
        if self.intake.waiting and not tree.node(tree.root).conditions and not specs[0].is_search(self.library):
            return ("state the task's goal in `goal` before doing anything else: until it can be stated, only "
                    "opening a closed drawer to look inside may come first")
        specs[0].prepared = self.gate.was_prepared
        if self.has("plan_ahead"):
            rnd.pending = specs
        return specs[0]

    # ---- one child ---------------------------------------------------------------------------
    def _handle_child(self, rnd: _Round, spec: ChildSpec) -> Generator[PrimitiveCall, StepReport,
                                                                        tuple[int, bool, str, bool]]:
        """Judge a new child and run it. Returns (child id, ok, reason if not, whether it ran)."""
        tree = self.tree
        child = tree.add_node(spec.text, rnd.node_id).id
        if spec.prepared and not spec.planned:
            tree.set_prepared(child)
        check = check_child(spec, rnd.node_id, tree, self.beliefs, self.library, conditions=self.profile.conditions,
                            challenged=rnd.challenged)
        facts, problem, challenge = check.facts, check.problem, check.challenge
        if problem:
            if challenge:
                rnd.challenged.add(spec.text)
            source = VerdictSource.CONGRUENCE if challenge else VerdictSource.VALIDATION
            tree.add_verdict(child, VerdictKind.REPLAN, problem, source)
            tree.set_status(child, NodeStatus.ABANDONED)
            self._failure = GoalError.PLANNING_FAILED
            return child, False, f"your proposal '{spec.text}' was not accepted: {problem}", False
        if facts:
            self.conditions.set(child, facts, "model")
        parent = tree.node(rnd.node_id)
        verdict = self.checker.judge(tree, Candidate(
            child, spec.text, spec.call_text, facts, self.conditions.facts(rnd.node_id), parent.text,
            at_depth_limit=tree.node(child).depth >= self.config.depth_limit(), challenged=rnd.challenged,
        ), self.beliefs)
        tree.add_verdict(child, verdict.kind, verdict.reason, verdict.source)
        if verdict.kind is VerdictKind.EXECUTE:
            assert verdict.call is not None
            return (child, *(yield from self._run_call(child, verdict.call)), True)
        if verdict.kind is VerdictKind.DECOMPOSE:
            ok, reason = yield from self._expand(child)
            return child, ok, ("" if ok else f"'{spec.text}' could not be completed: {reason}"), True
        if verdict.source is VerdictSource.CONGRUENCE and verdict.call is not None:
            rnd.challenged.add(str(verdict.call))
        tree.set_status(child, NodeStatus.ABANDONED)
        self._failure = GoalError.PLANNING_FAILED
        return child, False, f"your proposal '{spec.text}' was not accepted: {verdict.reason}", False

    def _run_call(self, child: int, call: PrimitiveCall) -> Generator[PrimitiveCall, StepReport, tuple[bool, str]]:
        tree = self.tree
        tree.set_call(child, call)
        effects = effect_facts(self.library, call)
        if effects:
            self.conditions.set(child, effects, "effects")
        outcome = yield from self._execute(child, call)
        text = tree.node(child).text
        if call.name == "pick" and outcome.success:
            self.conditions.picked_by[call.kwargs.get("object", "")] = child
        if not outcome.success:
            tree.set_status(child, NodeStatus.FAILED)
            self._failure = (GoalError.SAFETY_VIOLATION if outcome.code is ExecCode.SAFETY_VIOLATION
                             else GoalError.EXECUTION_FAILED)
            return False, f"'{text}' was executed and failed: {outcome.code.value}: {outcome.message}"
        if effects and not self.conditions.judge(child):
            unmet = self.conditions.unmet_text(child)
            tree.add_verdict(child, VerdictKind.REJECTED, f"reported success, but {unmet}", VerdictSource.CONDITIONS)
            tree.set_status(child, NodeStatus.FAILED)
            self._failure = GoalError.EXECUTION_FAILED
            return False, f"'{text}' was executed and reported success, but {unmet}"
        tree.set_status(child, NodeStatus.SUCCEEDED)
        return True, ""

    def _execute(self, node_id: int, call: PrimitiveCall) -> Generator[PrimitiveCall, StepReport, Outcome]:
        self.budget.charge_primitive()
        self.tree.set_status(node_id, NodeStatus.EXECUTING)
        self.tree.set_active(node_id)
        before = self.beliefs.observed
        report = yield call
        self.tree.set_outcome(node_id, report.outcome.to_dict())
        self._observe(report.world)
        after = self.beliefs.observed
        self._moved |= {n for n, o in after.objects.items() if n in before.objects
                        and o.location != before.objects[n].location}
        if after.held:
            self._moved.add(after.held)
        self.conditions.judge_open_path(self.tree.node(node_id).parent or self.tree.root)
        if report.outcome.code is ExecCode.CANCELED:
            raise Canceled()
        return report.outcome

    def _after_child(self, rnd: _Round, child: int, before: WorldState, ok: bool, reason: str, actions: int) -> None:
        """Plan-ahead bookkeeping and the feature plug-ins, once a child has run."""
        event = ChildFinished(self.tree, rnd.node_id, child, ok, reason, before, self.beliefs.world, actions)
        for plugin in self.plugins:
            plugin.after_child(event)
        if rnd.pending and (ok or rnd.flow.kind is not Control.SEQUENCE):  # a failed head is re-planned in place
            rest = rnd.pending[1:]
            learned = getattr(next((p for p in self.plugins if p.name == "self_revision"), None), "learned", {})
            if facts := learned.get(rnd.node_id):
                for spec, text in zip(rest, revise_pending([s.text for s in rest], facts), strict=True):
                    spec.text = text
            rnd.pending = rest

