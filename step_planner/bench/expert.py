"""The scripted expert: answers the planner's prompts from the task's formal goal, not from an LLM.

It is a handler for an OpenAI-compatible loopback server or an in-process client
(``handler(request_dict) -> answer text``). It reads only what an LLM would: the prompt text —
the ``## `` sections, the observation lines, the previous siblings, a subgoal's "Achieved when"
facts — and the answer schema printed in the system prompt, so it answers in whatever shape the
planner profile asks for (goal facts, calls and ``success_when``, a plan, control flow). It
plans with :mod:`step_planner.bench.symbolic_planner` over what the robot knows and writes as an
LLM would: natural-language subgoals at the top level ("put the tape in the drawer"), primitive
calls or short phrases below. It is stateless per request, so it answers correctly after
re-plans and once hidden objects appear.

With ``mistake_rate`` p it replaces its answer with one of STEP's error types, or one of the
mistakes a model makes about conditions (see :mod:`step_planner.bench.mistakes`). The draw uses
``random.Random`` seeded by the seed and a hash of the request, so an answer is a pure function
of (request, seed): every planner meets the same mistake for the same question. Every injection
is recorded in ``injections``.

Clarifying questions: an instruction registered with a ``question`` (the benchmark's ambiguous tasks)
is answered with that question while the prompt offers a ``question`` field and shows no answer from the
person yet; once the prompt shows the person's answer, the expert states the formal goal. It asks because
the task data says the instruction is ambiguous, not because it noticed: what this measures is the
planner's handling of questions and answers, not a model's judgement of ambiguity.

Anything measured with it measures the planner against a scripted expert, never an LLM.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from typing import Any

from step_planner.bench.goals import Atom, parse_atom, same_goal, satisfied
from step_planner.bench.mistakes import (
    ALL_KINDS,
    MEANING_KINDS,
    MISTAKE_KINDS,
    AnswerContext,
    Reading,
    applicable,
    decomposition_mistake,
    meaning_readings,
    termination_mistake,
)
from step_planner.bench.phrases import (
    Intent,
    achieved_when,
    answer_schema,
    call_phrase,
    group_phrase,
    parse_intent,
    parse_observation,
    section,
    sections,
    segment,
    short_call,
    siblings,
)
from step_planner.bench.symbolic_planner import PlanningError, believed_world, drawers_named, knowledge_plan
from step_planner.domain.primitives import PrimitiveCall, PrimitiveLibrary
from step_planner.domain.transitions import check_call
from step_planner.domain.world import WorldState
from step_planner.llm.replay import request_key

CALL_STYLES = ("call", "phrase", "mixed")


class ExpertError(ValueError):
    """The request is not one the expert can answer (unknown prompt kind, unregistered task)."""


@dataclass(frozen=True)
class Injection:
    kind: str
    purpose: str
    detail: str
    key: str  # short hash of the request


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[.!?]+$", "", text.strip()).lower().split())


_NO_ROOM = re.compile(r"\b([a-z0-9_]+) has no room for another object")
_NO_REACH = re.compile(r"\b([a-z0-9_]+) is out of the arm's reach")


def learn_from_feedback(feedback: str, observed: WorldState) -> None:
    """What feedback says that the observation does not show: full places, unreachable things."""
    for name in _NO_ROOM.findall(feedback):
        if name in observed.places:
            observed.places[name].capacity = len(observed.contents(name))
    for name in _NO_REACH.findall(feedback):
        entity = observed.objects.get(name) or observed.places.get(name)
        if entity is not None:
            entity.reachable = False


def _first_line(text: str) -> str:
    return text.splitlines()[0].strip() if text else ""


@dataclass(frozen=True)
class Shape:
    """What the answer schema asks for."""

    goal: bool = False
    grounded: bool = False
    plan: bool = False
    control: bool = False
    question: bool = False

    @classmethod
    def of(cls, schema: dict) -> Shape:
        props = schema.get("properties", {})
        defs = schema.get("$defs", {})
        return cls(goal="goal" in props, grounded="GroundedChild" in defs, plan="then" in props,
                   control="control" in props, question="question" in props)


def fact_for(call: PrimitiveCall, world: WorldState) -> str:
    """The fact a pick+place group leaves behind: ``in(tape, drawer)`` / ``on(cup, table)``."""
    obj, target = call.kwargs["object"], call.kwargs["target"]
    place = world.places.get(target)
    return f"{'on' if place is not None and not place.is_container else 'in'}({obj}, {target})"


class ScriptedExpert:
    def __init__(self, library: PrimitiveLibrary, *, seed: int = 0, mistake_rate: float = 0.0,
                 call_style: str = "mixed", mistakes: tuple[str, ...] = MISTAKE_KINDS) -> None:
        if not 0.0 <= mistake_rate <= 1.0:
            raise ValueError(f"mistake_rate must be in [0, 1], got {mistake_rate}")
        if call_style not in CALL_STYLES:
            raise ValueError(f"call_style must be one of {CALL_STYLES}")
        if unknown := set(mistakes) - set(ALL_KINDS):
            raise ValueError(f"unknown mistake kinds {sorted(unknown)}")
        self.library = library
        self.seed = seed
        self.mistake_rate = mistake_rate
        self.call_style = call_style
        self.mistakes = tuple(mistakes)
        self.goals: dict[str, tuple[Atom, ...]] = {}
        self.stated: dict[str, tuple[Atom, ...]] = {}
        self.questions: dict[str, str] = {}
        self.candidates: dict[str, tuple[str, ...]] = {}
        self.misread: dict[str, Reading] = {}  # meaning mistakes: the wrong reading held for the run
        self.injections: list[Injection] = []
        self.requests = 0

    def register(self, instruction: str, goal: tuple[Atom, ...], stated: tuple[Atom, ...] = (),
                 question: str = "", candidates: tuple[str, ...] = (), hidden: tuple[str, ...] = (), *,
                 world: WorldState | None = None, referred: frozenset[str] = frozenset()) -> None:
        """Tell the expert the formal goal behind an instruction (what the 'LLM' secretly knows).

        ``stated``: the goal facts it answers when asked for the instruction's goal, when the formal
        goal names objects no observation has shown yet (a model could not name them); it still plans
        towards the formal goal, as a model that understood the instruction would. ``question``: the
        instruction is ambiguous, and this is what it asks the person before stating any goal.
        ``candidates``: what the ambiguous phrase fits; the question is asked once the observation shows at
        least two of them (at the start, or mid-task once the drawer holding them is open). ``hidden``: goal
        objects in closed drawers at the start (what an adjective-named provisional name can be about).

        With meaning mistakes enabled, a wrong reading is drawn here once per run (rate ``mistake_rate``,
        seeded by the seed and the instruction) and held in every answer. ``world`` (the scene at the start)
        and ``referred`` (the objects the words may refer to) let ``extra_object`` and ``swapped_object`` apply.
        """
        self.goals[_norm(instruction)] = tuple(goal)
        if stated:
            self.stated[_norm(instruction)] = tuple(stated)
        if question:
            self.questions[_norm(instruction)] = question
            if candidates:
                self.candidates[_norm(instruction)] = tuple(candidates)
        self._draw_reading(instruction, tuple(goal), tuple(stated), tuple(candidates), set(hidden), world,
                           frozenset(referred))

    def _draw_reading(self, instruction: str, goal: tuple[Atom, ...], stated: tuple[Atom, ...],
                      candidates: tuple[str, ...], hidden: set[str], world: WorldState | None = None,
                      referred: frozenset[str] = frozenset()) -> None:
        kinds = [k for k in self.mistakes if k in MEANING_KINDS]
        if not kinds or self.mistake_rate <= 0:
            return
        rng = random.Random(f"meaning:{self.seed}:{_norm(instruction)}")
        if rng.random() >= self.mistake_rate:
            return
        readings = meaning_readings(instruction, goal, stated, candidates, hidden, world=world, referred=referred,
                                    rng=random.Random(f"meaning-object:{self.seed}:{_norm(instruction)}"))
        if not (usable := [k for k in kinds if k in readings]):
            return
        reading = readings[rng.choice(usable)]
        key = _norm(instruction)
        self.misread[key] = reading
        self.goals[key] = reading.goal
        if reading.stated != reading.goal or key in self.stated:
            self.stated[key] = reading.stated
        self.injections.append(Injection(reading.kind, "reading", reading.detail, "run"))

    @property
    def goal_objects(self) -> set[str]:
        return {o for goal in self.goals.values() for a in goal for o in a.objects}

    # ---- the handler ---------------------------------------------------------------------------
    def __call__(self, request: dict[str, Any]) -> str:
        return self.handle(request)

    def handle(self, request: dict[str, Any]) -> str:
        messages = request.get("messages") or []
        system = next((m.get("content", "") for m in messages if m.get("role") == "system"), "")
        user = next((m.get("content", "") for m in messages if m.get("role") == "user"), "")
        if "decomposition model" in system:
            purpose = "decomposition"
        elif "termination checker" in system:
            purpose = "termination"
        elif "completion checker" in system:
            purpose = "verification"
        else:
            raise ExpertError("not a decomposition, termination or completion prompt of step_planner")
        self.requests += 1
        key = request_key(request)
        secs = sections(user)
        if purpose == "verification":
            return self._verify(secs, key)
        if purpose == "decomposition":
            shape = Shape.of(answer_schema(system))
            calls_only = "Every child is exactly one primitive call" in system
            correct, ctx = self._decompose(secs, shape, random.Random(f"style:{self.seed}:{key}"), calls_only)
        else:
            correct, ctx = self._terminate(secs)
        rng = random.Random(f"mistake:{self.seed}:{key}")
        if self.mistake_rate > 0 and rng.random() < self.mistake_rate:
            kinds = applicable(ctx, tuple(k for k in self.mistakes if k in MISTAKE_KINDS))
            if kinds:
                kind = rng.choice(kinds)
                make = decomposition_mistake if purpose == "decomposition" else termination_mistake
                text, detail = make(kind, ctx, correct, rng)
                self.injections.append(Injection(kind, purpose, detail, key[:12]))
                return text
        return correct

    # ---- knowledge from the prompt ------------------------------------------------------------
    def _memory(self, sibs: list[tuple[str, str]], observed: WorldState) -> tuple[dict[str, str], set[str]]:
        """Beliefs (objects put into drawers now closed) and drawers already searched, from siblings."""
        beliefs: dict[str, str] = {}
        searched: set[str] = set()
        for text, outcome in sibs:
            if outcome != "succeeded" or (intent := parse_intent(text, self.library)) is None:
                continue
            for atom in intent.atoms:
                if atom.predicate == "at" and atom.args[1] in observed.places:
                    beliefs[atom.args[0]] = atom.args[1]
                elif atom.predicate == "open":
                    searched.add(atom.args[0])
        beliefs = {o: p for o, p in beliefs.items() if o not in observed.objects}
        return beliefs, searched

    def _plan(self, observed: WorldState, atoms: tuple[Atom, ...], sibs: list[tuple[str, str]],
              hints: str) -> tuple[WorldState, list[PrimitiveCall]]:
        """(believed world, remaining plan); raises PlanningError when no plan exists."""
        beliefs, searched = self._memory(sibs, observed)
        preferred = drawers_named(hints, observed)
        unknown = [o for a in atoms for o in a.objects
                   if o not in observed.objects and o not in beliefs and o not in self.goal_objects]
        if unknown:
            raise PlanningError(f"there is no {', '.join(unknown)} in the observation")
        world = believed_world(observed, atoms, beliefs, searched, preferred)
        if satisfied(atoms, world):
            return world, []
        return world, knowledge_plan(self.library, observed, atoms, beliefs, searched, preferred)

    def _child(self, call: PrimitiveCall, world: WorldState, style: str, shape: Shape) -> dict[str, Any]:
        """One primitive child in the asked shape."""
        if shape.grounded:
            return {"subgoal": call_phrase(call, world), "call": str(call), "success_when": []}
        return {"subgoal": short_call(call) if style == "call" else call_phrase(call, world)}

    def _group(self, group: list[PrimitiveCall], world: WorldState, variant: int, shape: Shape) -> dict[str, Any]:
        """One top-level child (a pick+place group, or a single action) in the asked shape."""
        text = group_phrase(group, world, variant)
        if not shape.grounded:
            return {"subgoal": text}
        if len(group) == 1:
            return {"subgoal": text, "call": str(group[0]), "success_when": []}
        return {"subgoal": text, "call": None, "success_when": [fact_for(group[1], world)]}

    # ---- decomposition ------------------------------------------------------------------------
    def _decompose(self, secs: dict[str, str], shape: Shape, style_rng: random.Random,
                   calls_only: bool = False) -> tuple[str, AnswerContext]:
        task = section(secs, "Task")
        parent_section = section(secs, "Subgoal to decompose")
        parent = _first_line(parent_section)
        path = [line for line in section(secs, "Path").splitlines() if line.strip()]
        is_root = len(path) <= 1 or _norm(parent) == _norm(task)
        observed = parse_observation(section(secs, "Current observation"))
        children = section(secs, "Children of this subgoal")
        learn_from_feedback(section(secs, "Feedback") + "\n" + children, observed)  # + failed siblings
        sibs = siblings(children)
        primitive_level = not is_root or bool(section(secs, "Depth limit"))
        ctx = AnswerContext("decomposition", observed, primitive_level=primitive_level, shape=shape)
        facts = achieved_when(parent_section)
        if is_root and _norm(task) not in self.goals:
            raise ExpertError(f"no goal registered for the task {task!r}")
        if shape.question and (question := self._question(task, observed, secs)):
            ctx.children = []
            return json.dumps({**ctx.render([], "the instruction can be read in more than one way", False),
                               "question": question}), ctx
        if shape.goal and _norm(task) in self.goals:  # asked at the root, or again later: with the names it sees
            ctx.goal = self._goal_now(task, observed)
        if is_root and facts and (reading := self.misread.get(_norm(task))) is not None:
            self._follow_correction(task, reading, facts)
        if is_root:
            intent: Intent | None = Intent(self.goals[_norm(task)])
        elif facts:
            intent = Intent(tuple(parse_atom(f) for f in facts))
        else:
            intent = parse_intent(parent, self.library)
        if intent is None:
            return self._stuck(f"cannot tell what '{parent}' asks for", ctx), ctx
        if intent.call is not None:
            done = any(o == "succeeded" and parse_intent(t, self.library) == intent for t, o in sibs)
            if done:
                return self._answer(ctx, [], "the motion is done", done=True), ctx
            ctx.children = [self._child(intent.call, observed, "call", shape)]
            return self._answer(ctx, ctx.children, "one motion"), ctx
        try:
            world, plan = self._plan(observed, intent.atoms, sibs, f"{task} {parent}")
        except PlanningError as exc:
            return self._stuck(str(exc), ctx), ctx
        if not plan and not is_root and observed.held and not any(
                a.predicate == "holding" and a.args[0] == observed.held for a in intent.atoms):
            plan = self._put_down(observed, task)  # the facts hold, but what it picked up is still in hand
        ctx.world, ctx.plan = world, plan
        if not plan:
            reason = "the observation shows " + ", ".join(map(str, intent.atoms))
            return self._answer(ctx, [], reason, done=True), ctx
        groups = segment(plan)
        if primitive_level or (shape.grounded and len(groups) == 1):  # one group: its calls, not a restatement
            style = self.call_style if self.call_style != "mixed" else style_rng.choice(("call", "phrase"))
            if calls_only:  # the prompt asks for calls: follow it
                style = "call"
            ctx.primitive_level = True
            ctx.children = [self._child(c, world, style, shape) for c in plan]
        else:
            variant = style_rng.randrange(3)
            ctx.children = [self._group(g, world, variant, shape) for g in groups]
        return self._answer(ctx, ctx.children, f"{len(plan)} primitive actions remain"), ctx

    def _follow_correction(self, task: str, reading: Reading, facts: tuple[str, ...]) -> None:
        """The prompt shows a root goal other than the wrong reading it stated: the person corrected it; from
        now on the expert plans for and states what the prompt says, as a model reading it would."""
        shown = tuple(parse_atom(f) for f in facts)
        if same_goal(shown, reading.stated) or same_goal(shown, reading.goal):
            return
        key = _norm(task)
        self.goals[key] = shown
        self.stated.pop(key, None)
        del self.misread[key]

    def _question(self, task: str, observed: WorldState, secs: dict[str, str]) -> str:
        """The task's question, while the person has not answered and the observation shows the ambiguity."""
        question = self.questions.get(_norm(task), "")
        if not question or section(secs, "Answers from the person"):
            return ""
        candidates = self.candidates.get(_norm(task))
        if candidates and sum(1 for c in candidates if c in observed.objects or c in observed.places) < 2:
            return ""  # e.g. "the thing in the bottom drawer": ambiguous once the drawer shows two things
        return question

    def _goal_now(self, task: str, observed: WorldState) -> list[str]:
        """The formal goal when every object it names is in view; before that, what can be stated."""
        goal = self.goals[_norm(task)]
        stated = self.stated.get(_norm(task))
        if stated and not all(o in observed.objects for a in goal for o in a.objects):
            generic = set(self.library.generic_nouns)
            if any(set(o.split("_")) & generic for a in stated for o in a.objects):
                return []  # "the thing in the drawer": no name to state until the drawer shows it (the prompt's rule)
            return [str(a) for a in self._restated(stated, goal, observed)]
        return [str(a) for a in goal]

    @staticmethod
    def _restated(stated: tuple[Atom, ...], goal: tuple[Atom, ...], observed: WorldState) -> tuple[Atom, ...]:
        """The stated goal with each ``empty(X)`` of a drawer now looked into replaced by the goal's facts about
        the things in view (what a model restating the goal can say of the things it now sees)."""
        looked = {a.args[0] for a in stated if a.predicate == "empty" and not a.negated
                  and (observed.places[a.args[0]].is_open if a.args[0] in observed.places else False)}
        if not looked:
            return stated
        seen = tuple(a for a in goal if a not in stated and a.objects and all(o in observed.objects for o in a.objects))
        return (*(a for a in stated if not (a.predicate == "empty" and a.args[0] in looked)), *seen)

    def _put_down(self, observed: WorldState, task: str) -> list[PrimitiveCall]:
        """Where the held object goes: where the task's goal puts it, else on the first surface in view."""
        held = observed.held or ""
        wanted = [a.args[1] for a in self.goals.get(_norm(task), ()) if a.predicate in ("in", "on", "at")
                  and not a.negated and a.args[0] == held and a.args[1] in observed.places]
        surfaces = [n for n, p in observed.places.items() if not p.is_container]
        target = (wanted or surfaces or list(observed.places))[:1]
        return [PrimitiveCall.make("place", {"object": held, "target": target[0]})] if target else []

    @staticmethod
    def _answer(ctx: AnswerContext, children: list[dict[str, Any]], reasoning: str, done: bool = False) -> str:
        return json.dumps(ctx.render(children, reasoning, done))

    @staticmethod
    def _stuck(reason: str, ctx: AnswerContext) -> str:
        return json.dumps(ctx.render([], reason, False))

    # ---- completion check (profiles without conditions: verify_done) -----------------------------
    def _verify(self, secs: dict[str, str], key: str) -> str:
        """Is the subgoal achieved? With rate p the verdict is flipped (a wrong second opinion)."""
        task = section(secs, "Task")
        subgoal = _first_line(section(secs, "Subgoal to verify"))
        observed = parse_observation(section(secs, "Current observation"))
        sibs = siblings(section(secs, "Children carried out"))
        if _norm(subgoal) == _norm(task) and _norm(task) in self.goals:
            intent: Intent | None = Intent(self.goals[_norm(task)])
        else:
            intent = parse_intent(subgoal, self.library)
        missing = ""
        if intent is None:
            achieved = True  # cannot tell: do not overrule the decomposer
        elif intent.call is not None:
            achieved = any(o == "succeeded" and parse_intent(t, self.library) == intent for t, o in sibs)
            missing = "" if achieved else f"{short_call(intent.call)} has not succeeded"
        else:
            try:
                _, plan = self._plan(observed, intent.atoms, sibs, f"{task} {subgoal}")
                achieved = not plan
                missing = "" if achieved else f"{len(plan)} more actions, next {short_call(plan[0])}"
            except PlanningError as exc:
                achieved, missing = False, str(exc)
        rng = random.Random(f"mistake:{self.seed}:{key}")
        if self.mistake_rate > 0 and rng.random() < self.mistake_rate:
            self.injections.append(Injection("wrong_verification", "verification",
                                             f"said achieved={not achieved}", key[:12]))
            achieved, missing = not achieved, ""
        return json.dumps({"reasoning": missing or "checked the observation", "achieved": achieved})

    # ---- termination (profiles whose LLM judges leaves) ------------------------------------------
    def _terminate(self, secs: dict[str, str]) -> tuple[str, AnswerContext]:
        subgoal = section(secs, "Subgoal to judge")
        parent = _first_line(section(secs, "Parent subgoal"))
        observed = parse_observation(section(secs, "Current observation"))
        sibs = siblings(section(secs, "Previous sibling"))
        ctx = AnswerContext("termination", observed, verdict="replan")
        intent = parse_intent(subgoal, self.library)
        if intent is None:
            return self._verdict("replan", f"'{subgoal}' does not map to anything this robot can do"), ctx
        if intent.call is not None:
            return self._execute_or_replan(intent.call, observed, ctx), ctx
        try:
            world, plan = self._plan(observed, intent.atoms, sibs, f"{parent} {subgoal}")
        except PlanningError as exc:
            return self._verdict("replan", str(exc)), ctx
        ctx.world, ctx.plan = world, plan
        if not plan:
            return self._verdict("replan", f"'{subgoal}' already holds in the observation"), ctx
        if len(plan) == 1:
            return self._execute_or_replan(plan[0], observed, ctx), ctx
        ctx.verdict = "decompose"
        return self._verdict("decompose", f"needs {len(plan)} actions: " + ", ".join(map(str, plan))), ctx

    def _execute_or_replan(self, call: PrimitiveCall, observed: WorldState, ctx: AnswerContext) -> str:
        problems = check_call(call, self.library, observed)
        if problems:
            return self._verdict("replan", "; ".join(p.message for p in problems))
        ctx.verdict, ctx.plan = "execute", [call]
        return self._verdict("execute", f"one action: {call}", str(call))

    @staticmethod
    def _verdict(kind: str, reason: str, call: str | None = None) -> str:
        return json.dumps({"reasoning": reason[:400], "verdict": kind, "call": call})
