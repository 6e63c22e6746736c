"""Run (task x planner x noise x seed) episodes and record what each one did.

The LLM side comes from an :data:`LLMFactory`: the scripted expert in process (fast sweeps), the
scripted expert behind a loopback OpenAI server and the real ``openai`` client, or a real
endpoint. Success is judged by the task's goal atoms on the executor's TRUE final world — never
by the planner's own claim, which is recorded separately.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from step_planner.bench.expert import ScriptedExpert
from step_planner.bench.goals import milestones_reached, parse_atom, same_goal, satisfied
from step_planner.bench.mistakes import MISTAKE_KINDS
from step_planner.bench.planners import run_planner
from step_planner.bench.referents import task_referred
from step_planner.bench.tasks import Task
from step_planner.domain.primitives import PrimitiveCall, PrimitiveLibrary
from step_planner.domain.world import WorldState
from step_planner.execution.base import Executor, Outcome
from step_planner.planner.config import PlannerConfig
from step_planner.planner.person import Ask, AskKind, Reply, ReplyKind
from step_planner.planner.result import GoalError, GoalResult
from step_planner.planner.termination import CompletionLLM

# (task, noise, seed) -> (client, expert or None when the answers come from a real model)
LLMFactory = Callable[[Task, float, int], tuple[CompletionLLM, ScriptedExpert | None]]


def new_expert(library: PrimitiveLibrary, task: Task, noise: float, seed: int,
               call_style: str = "mixed", mistakes: tuple[str, ...] = MISTAKE_KINDS) -> ScriptedExpert:
    """The scripted expert for one run of a task: its goal registered, mistakes of ``mistakes`` at rate ``noise``."""
    expert = ScriptedExpert(library, seed=seed, mistake_rate=noise, call_style=call_style, mistakes=mistakes)
    stated = tuple(parse_atom(f) for f in task.provisional_goal) or task.stated_goal
    world = referred = None
    if any(k in ("extra_object", "swapped_object", "wrong_place", "kept_exception") for k in mistakes) and noise > 0:
        world, referred = task.world, task_referred(task)
    expert.register(task.instruction, task.goal, stated, task.question, task.candidates,
                    tuple(task.hidden_goal_objects), world=world, referred=referred or frozenset())
    return expert


class TaskPerson:
    """The benchmark's person: answers a question with the task's ``answer``; asked to confirm a goal,
    accepts the one the task means and corrects any other to it. Not a person: task data."""

    def __init__(self, task: Task) -> None:
        self.task = task

    def ask(self, request: Ask, cancel: object) -> Reply:
        if request.kind is AskKind.QUESTION:
            return Reply(ReplyKind.ANSWER, self.task.answer) if self.task.answer else \
                Reply(ReplyKind.NO_ANSWER, "the task has no answer to give")
        if any(same_goal(request.facts, goal) for goal in self.task.correct_statements):
            return Reply(ReplyKind.ACCEPT)  # what it meant, as far as can be said before a drawer is open
        return Reply(ReplyKind.CORRECT, facts=tuple(str(a) for a in self.task.goal_as_stated))


def in_process_expert(library: PrimitiveLibrary, call_style: str = "mixed",
                      mistakes: tuple[str, ...] = MISTAKE_KINDS) -> LLMFactory:
    """An LLMFactory answering from the scripted expert in process, through the real client (``handler=``)."""
    from step_planner.llm.client import LLMClient
    from step_planner.llm.config import LLMConfig

    def make(task: Task, noise: float, seed: int) -> tuple[CompletionLLM, ScriptedExpert]:
        expert = new_expert(library, task, noise, seed, call_style, mistakes)
        return LLMClient(LLMConfig(model="scripted-expert"), handler=expert), expert

    return make
ExecutorFactory = Callable[[PrimitiveLibrary, WorldState], Executor]


@dataclass
class RunRecord:
    task_id: str
    category: str
    planner: str
    noise: float
    seed: int
    success: bool  # what the person sees: goal atoms hold in the true final world and nothing unasked was moved
    claimed_success: bool  # what the planner said
    verified: bool  # the planner checked the instruction's conditions in the world
    error: str
    message: str
    subgoals_reached: int
    subgoals_total: int
    primitives: int  # calls sent to the executor
    primitives_ok: int
    optimal: int
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    max_prompt_tokens: int
    prompt_tokens_per_call: list[int] = field(default_factory=list)
    llm_time_s: float = 0.0
    exec_time_s: float = 0.0
    wall_s: float = 0.0
    planner_time_s: float = 0.0  # wall - LLM latency - executor time
    failure_type: str = "none"
    injections: list[str] = field(default_factory=list)  # mistake kinds the expert injected, in order
    executed: list[str] = field(default_factory=list)
    outcomes: list[str] = field(default_factory=list)  # each executed call's code, in order
    style: str = ""  # paraphrase suite: the wording style; "ambiguous": the right first answer is a question
    questions: int = 0  # questions the model asked the person
    goal_rejections: int = 0  # goals the model stated that grounding refused
    formal_goal_rejections: int = 0  # ... of which the stated goal was the task's formal goal
    goal_corrections: int = 0  # confirm_goal: goals the person corrected
    phenomenon: str = ""  # wordings suite: the language the instruction tries
    rejection_rules: list[str] = field(default_factory=list)  # per refused goal, the rules that refused it
    correct_rejection_rules: list[str] = field(default_factory=list)  # ... of goals a careful model states
    repeated_asks: int = 0  # requests to the person that repeat an earlier one of the same run
    correct_rejection_problems: list[str] = field(default_factory=list)  # what refused a correct goal (texts)
    reading: str = ""  # the meaning mistake the expert held for the run ("" when none)
    moved_unasked: list[str] = field(default_factory=list)  # objects the task's goal does not move, moved
    unresolved_phrases: list[str] = field(default_factory=list)  # phrases the planner's resolver could not read
    confirm_goal: bool = False  # the person confirmed the goal before motion
    goal_holds: bool = False  # the task's goal atoms hold in the true final world (whatever else moved)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def failure_type(success: bool, claimed: bool, error: str) -> str:
    """How a run failed. ``false_done``: the planner reported success but goal atoms do not hold
    (a missing step / premature termination); otherwise the planner's own error code."""
    if success:
        return "none"
    if claimed:
        return "false_done"
    return error.lower()


def _failure(success: bool, result: GoalResult, goal_holds: bool = False) -> str:
    if not success and result.message.startswith("crash: "):
        return "crash"
    if not success and goal_holds:
        return "moved_unasked"  # the goal holds, but something nobody asked for was moved
    return failure_type(success, result.success, result.error.value)


def person_sees_success(task: Task, final: WorldState) -> tuple[bool, bool, list[str]]:
    """(success, goal holds, moved unasked): a run succeeds only when the task's goal holds AND no object the goal
    does not move ended elsewhere; a formal goal that holds while something nobody asked for was moved is not what
    the person wanted (issue 43: such runs were counted successes)."""
    holds = satisfied(task.goal, final)
    moved = moved_unasked(task, final)
    return holds and not moved, holds, moved


class ExchangeLog:
    """Wraps a client and appends every exchange (messages, parsed answer or error) to a JSONL file."""

    def __init__(self, inner: CompletionLLM, path: Path) -> None:
        self.inner = inner
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")

    @property
    def usage(self) -> Any:
        return getattr(self.inner, "usage", None)

    def complete(self, messages: list[dict[str, str]], schema: type[BaseModel], purpose: str) -> BaseModel:
        entry: dict[str, Any] = {"purpose": purpose, "messages": messages}
        try:
            answer = self.inner.complete(messages, schema, purpose)
            entry["answer"] = answer.model_dump()
            return answer
        except Exception as exc:
            entry["error"] = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            with self.path.open("a") as fh:
                fh.write(json.dumps(entry) + "\n")


def _records(llm: Any) -> list[Any]:
    return list(getattr(getattr(llm, "usage", None), "records", []) or [])


def run_one(task: Task, planner: str, noise: float, seed: int, *, library: PrimitiveLibrary,
            config: PlannerConfig, make_llm: LLMFactory, make_executor: ExecutorFactory,
            record_dir: Path | None = None, person: bool = True, confirm_goal: bool = False) -> RunRecord:
    """One run. ``person``: the task's person (:class:`TaskPerson`) answers the model's questions and, with
    ``confirm_goal``, confirms or corrects its goal; without, nobody answers."""
    llm, expert = make_llm(task, noise, seed)
    client = llm
    if record_dir is not None:
        llm = ExchangeLog(llm, record_dir / planner / f"{task.id}_p{noise:g}_s{seed}.jsonl")
    executor = make_executor(library, task.fresh_world())
    first = len(_records(llm))
    states = [executor.observe()]
    exec_time = 0.0

    def on_step(call: PrimitiveCall, outcome: Outcome, world: WorldState) -> None:
        nonlocal exec_time
        exec_time += outcome.duration_s
        states.append(world.copy())

    t0 = time.perf_counter()
    try:
        result = run_planner(planner, task.instruction, library=library, executor=executor, llm=llm,
                             config=config, on_step=on_step, person=TaskPerson(task) if person else None,
                             confirm_goal=confirm_goal)
    except Exception as exc:  # a bug in a planner: recorded as a crash, the sweep goes on
        result = GoalResult(False, GoalError.PLANNING_FAILED, f"crash: {type(exc).__name__}: {exc}")
    wall = time.perf_counter() - t0
    final = executor.observe()
    for resource in (executor, client):
        if callable(close := getattr(resource, "close", None)):
            close()
    usage = _records(llm)[first:]
    prompts = [int(getattr(r, "prompt_tokens", 0) or 0) for r in usage]
    llm_time = sum(float(getattr(r, "latency_s", 0.0) or 0.0) for r in usage)
    success, goal_holds, moved = person_sees_success(task, final)
    dialogue = (result.tree or {}).get("dialogue") or []
    return RunRecord(
        task_id=task.id, category=task.category, planner=planner, noise=noise, seed=seed,
        success=success, claimed_success=result.success, verified=result.verified, error=result.error.value,
        message=result.message,
        subgoals_reached=milestones_reached(list(task.subgoals), states), subgoals_total=len(task.subgoals),
        primitives=len(result.executed), primitives_ok=sum(1 for _, o in result.executed if o.success),
        optimal=task.optimal, llm_calls=len(usage) if usage else int(result.usage.get("llm_calls", 0)),
        prompt_tokens=sum(prompts),
        completion_tokens=sum(int(getattr(r, "completion_tokens", 0) or 0) for r in usage),
        max_prompt_tokens=max(prompts, default=0), prompt_tokens_per_call=prompts,
        llm_time_s=round(llm_time, 6), exec_time_s=round(exec_time, 6), wall_s=round(wall, 6),
        planner_time_s=round(max(0.0, wall - llm_time - exec_time), 6),
        failure_type=_failure(success, result, goal_holds),
        injections=[i.kind for i in expert.injections] if expert else [],
        executed=[str(c) for c, _ in result.executed],
        outcomes=[o.code.value for _, o in result.executed],
        style=task.style,
        questions=sum(1 for d in dialogue if d.get("kind") == AskKind.QUESTION.value),
        goal_rejections=len(result.goal_rejections),
        formal_goal_rejections=sum(1 for r in result.goal_rejections
                                   if any(same_goal(r["goal"], g) for g in task.correct_statements)),
        goal_corrections=sum(1 for d in dialogue if d.get("reply", {}).get("kind") == ReplyKind.CORRECT.value),
        phenomenon=task.phenomenon,
        rejection_rules=[rule for r in result.goal_rejections for rule in rejection_rules(r)],
        correct_rejection_rules=[rule for r in result.goal_rejections for rule in rejection_rules(r)
                                 if any(same_goal(r["goal"], g) for g in task.correct_statements)],
        repeated_asks=repeated_asks(dialogue),
        correct_rejection_problems=[blank_names(str(p), task.world) for r in result.goal_rejections
                                    if any(same_goal(r["goal"], g) for g in task.correct_statements)
                                    for p in r.get("problems") or []],
        reading=next((i.kind for i in expert.injections if i.purpose == "reading"), "") if expert else "",
        moved_unasked=moved, unresolved_phrases=unresolved_phrases(result),
        confirm_goal=confirm_goal, goal_holds=goal_holds,
    )


def moved_unasked(task: Task, final: WorldState) -> list[str]:
    """Objects the task's goal does not move that ended somewhere else than they started (objects the final
    world does not show are not judged)."""
    asked = {o for a in task.goal for o in a.objects}
    return sorted(o for o, start in task.world.objects.items()
                  if o not in asked and o in final.objects and final.objects[o].location != start.location)


def unresolved_phrases(result: Any) -> list[str]:
    """The phrases of the instruction the planner's resolver could not read, from whatever the result carries:
    ``unresolved_phrases`` (or ``unresolved``) on the result, else the root's readings in the tree snapshot
    marked ``unresolved`` (or whose ``from`` says the resolver could not read them). Empty when nothing does."""
    for name in ("unresolved_phrases", "unresolved"):
        value = getattr(result, name, None)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return ["?"] * value  # a count without the words
        if value and not isinstance(value, int | float | bool):
            return [_phrase(v) for v in (value if isinstance(value, list | tuple) else [value])]
    readings = (getattr(result, "tree", None) or {}).get("readings") or []
    return [_phrase(r) for r in readings if isinstance(r, dict) and (
        r.get("unresolved") or re.search(r"unresolved|could not (?:be )?read|cannot read", str(r.get("from", ""))))]


def _phrase(value: Any) -> str:
    if isinstance(value, dict):
        return str(value.get("said") or value.get("phrase") or value.get("text") or value)
    return str(getattr(value, "said", None) or getattr(value, "phrase", None) or value)


def blank_names(text: str, world: WorldState) -> str:
    """A problem text with the scene's names blanked, so refusals by the same rule read the same."""
    names = sorted({*world.objects, *world.places}, key=len, reverse=True)
    for name in names:
        text = re.sub(rf"\b{re.escape(name)}\b", "…", text)
    return text


def rejection_rules(rejection: dict[str, Any]) -> list[str]:
    """The rules a goal refusal names (``"rules"``, one per problem), or ``untagged`` for a planner that tags none."""
    rules = [str(r) for r in rejection.get("rules") or [] if r]
    return rules or ["untagged"]


def repeated_asks(dialogue: list[dict[str, Any]]) -> int:
    """Requests to the person that repeat one already made in the run (the same kind and words)."""
    seen: set[str] = set()
    repeats = 0
    for entry in dialogue:
        request = entry.get("request", entry)
        key = json.dumps([request.get("kind"), " ".join(str(request.get("text", "")).lower().split()),
                          sorted(request.get("facts") or [])])
        repeats += key in seen
        seen.add(key)
    return repeats


def episodes(tasks: Iterable[Task], planners: Iterable[str], noises: Iterable[float],
             seeds: int) -> Iterator[tuple[Task, str, float, int]]:
    """Every (task, planner, noise, seed) combination, planners innermost so they share answers."""
    for noise in noises:
        for seed in range(seeds):
            for task in tasks:
                for planner in planners:
                    yield task, planner, noise, seed
