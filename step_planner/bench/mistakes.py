"""Realistic LLM mistakes the scripted expert injects, after STEP's error taxonomy.

Each function turns the expert's correct answer into a wrong one of one kind. Kinds (STEP /
Embodied Agent Interface names in brackets):

- ``hallucinated_object``   names an object that is not in the scene [missing state / grammar]
- ``wrong_order``           proposes the step after next first [trajectory: wrong order]
- ``missing_step``          skips the next step; with one step left, claims done [missing step]
- ``premature_done``        claims the subgoal is done while steps remain [goal satisfaction]
- ``extra_step``            inserts an unneeded but executable motion [additional step]
- ``irrelevant_step``       a feasible call on an object the subgoal does not need [additional step]
- ``affordance_violation``  grasps while holding, or places what it does not hold [affordance]
- ``missing_conditions``    leaves out a goal fact, or a subgoal's success_when [missing state]
- ``wrong_conditions``      states a wrong fact (the wrong place, or holding instead of placed)
- ``too_abstract_executable`` termination says "execute" with one call for a compound subgoal
- ``malformed_json``        truncated JSON [grammar]
- ``empty_answer``          an empty completion [grammar]

*Meaning* mistakes (:data:`MEANING_KINDS`, opt-in: ``step-planner bench --mistakes meaning``) are readings,
not slips: drawn once per run (rate p, seeded by the seed and the instruction), the expert holds the wrong
reading in every answer of the run — its stated goal and its plan — until the prompt shows a goal the person
corrected (``--confirm-goal``):

- ``narrow_group``    a group read narrowly: one member of "the blocks on the table" left out
- ``wrong_referent``  the wrong one of several: another thing the instruction's noun fits (``candidates``)
- ``adjective_name``  a thing not seen yet named after the words ("an old sponge" -> ``old_sponge``); the
  goal is restated with the real name only when the prompt asks for the goal again once it is in view
- ``extra_object``    one more fact: a visible object the words never refer to (:mod:`step_planner.bench.referents`)
  moved to a place the goal names ("put the tape in the bin" -> also ``in(wrench, bin)``); stated and carried out
- ``swapped_object``  a visible object the goal moves replaced, in every fact, by one of another kind the words never
  refer to ("put the tape in the bin" -> ``in(wrench, bin)``)
- ``wrong_place``     a place the words name and the goal puts things in replaced, in every fact, by a place the words
  never name ("put the tape in the bin" -> ``in(tape, tray)``)
- ``kept_exception``  the thing the words leave out moved too ("everything on the table except the cup goes in the
  box" -> also ``in(cup, box)``)

A run is wrong when it claims success while the task's goal does not hold or an object the goal does not move
ended elsewhere (``extra_object`` and ``kept_exception`` leave the goal holding: only the moved object shows it).
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from typing import Any

from step_planner.bench.phrases import call_phrase, short_call, spoken
from step_planner.domain.primitives import PrimitiveCall
from step_planner.domain.world import WorldState

MISTAKE_KINDS = (
    "hallucinated_object",
    "wrong_order",
    "missing_step",
    "premature_done",
    "extra_step",
    "irrelevant_step",
    "affordance_violation",
    "missing_conditions",
    "wrong_conditions",
    "too_abstract_executable",
    "malformed_json",
    "empty_answer",
)
MEANING_KINDS = ("narrow_group", "wrong_referent", "adjective_name", "extra_object", "swapped_object", "wrong_place",
                 "kept_exception")
# words before a thing left out (the lexicon's and words it does not hold): where kept_exception finds the thing
EXCEPTION_CUES = ("except for", "except", "but not", "apart from", "other than", "besides", "excluding",
                  "not including", "leave out", "leave", "without", "bar", "save", "barring", "aside from",
                  "excepting", "with the exception of")
ALL_KINDS = (*MISTAKE_KINDS, *MEANING_KINDS)
PHANTOMS = ("banana", "blue_mug", "scissors", "stapler", "green_bottle")


@dataclass
class AnswerContext:
    """What the expert worked out for one request; the mistakes are derived from it."""

    purpose: str
    world: WorldState  # the believed world (observation + beliefs)
    plan: list[PrimitiveCall] = field(default_factory=list)  # remaining primitives
    children: list[dict[str, Any]] = field(default_factory=list)  # remaining children at this level
    primitive_level: bool = True
    shape: Any = None  # expert.Shape: which answer fields the schema asks for
    goal: list[str] = field(default_factory=list)  # the goal facts, when the schema asks for them
    verdict: str = ""  # termination: the correct verdict

    def render(self, children: list[dict[str, Any]], reasoning: str, done: bool) -> dict[str, Any]:
        """An answer dict in the asked shape."""
        answer: dict[str, Any] = {"reasoning": reasoning}
        shape = self.shape
        if shape is not None and shape.question:
            answer["question"] = None
        if shape is not None and shape.goal:
            answer["goal"] = list(self.goal)
        answer["done"] = done
        answer["next"] = children[0] if children and not done else None
        if shape is not None and shape.plan:
            answer["then"] = children[1:49] if not done else []
        if shape is not None and shape.control:
            answer["control"] = "sequence"
        return answer

    @property
    def grounded(self) -> bool:
        return bool(self.shape is not None and self.shape.grounded)


def _phantom(world: WorldState, rng: random.Random) -> str:
    return rng.choice([p for p in PHANTOMS if p not in world.objects and p not in world.places])


def _call_child(call: PrimitiveCall, ctx: AnswerContext) -> dict[str, Any]:
    if ctx.grounded:
        return {"subgoal": call_phrase(call, ctx.world), "call": str(call), "success_when": []}
    text = short_call(call) if ctx.primitive_level else call_phrase(call, ctx.world)
    return {"subgoal": text}


def applicable(ctx: AnswerContext, kinds: tuple[str, ...]) -> list[str]:
    """The mistake kinds that make sense for this request (a wrong order needs two steps...)."""
    ok = {"malformed_json", "empty_answer", "hallucinated_object"}
    if ctx.purpose == "decomposition":
        if len(ctx.children) >= 2:
            ok.add("wrong_order")
        if ctx.children:
            ok |= {"missing_step", "premature_done", "extra_step", "affordance_violation"}
            if _irrelevant_objects(ctx):
                ok.add("irrelevant_step")
        if ctx.goal or any(c.get("success_when") for c in _shown(ctx)):
            ok |= {"missing_conditions", "wrong_conditions"}
    elif ctx.verdict == "decompose" and ctx.plan:
        ok.add("too_abstract_executable")
    return [k for k in kinds if k in ok]


def _shown(ctx: AnswerContext) -> list[dict[str, Any]]:
    """The children the answer shows: the next one, and the plan when the schema asks for one."""
    return ctx.children if ctx.shape is not None and ctx.shape.plan else ctx.children[:1]


def _irrelevant_objects(ctx: AnswerContext) -> list[str]:
    needed = {v for c in ctx.plan for v in c.kwargs.values()} | {o for g in ctx.goal for o in _names(g)}
    return [o for o, s in ctx.world.objects.items()
            if o not in needed and s.graspable and ctx.world.is_visible(o) and s.location != "gripper"]


def _names(fact: str) -> list[str]:
    inner = fact[fact.find("(") + 1: fact.rfind(")")] if "(" in fact else ""
    return [a.strip() for a in inner.split(",") if a.strip()]


def _wrong_fact(fact: str, ctx: AnswerContext, rng: random.Random) -> str:
    """A plausible wrong fact: the object held instead of placed, or placed somewhere else."""
    names = _names(fact)
    if fact.startswith(("in(", "on(", "at(")) and names:
        others = [p for p in ctx.world.places if p != names[1]]
        if others and rng.random() < 0.5:
            place = rng.choice(others)
            kind = "on" if not ctx.world.places[place].is_container else "in"
            return f"{kind}({names[0]}, {place})"
        return f"holding({names[0]})"
    if fact.startswith("closed("):
        return f"open({names[0]})"
    return "gripper_empty"


def decomposition_mistake(kind: str, ctx: AnswerContext, correct: str, rng: random.Random) -> tuple[str, str]:
    """(answer text, detail) for a decomposition request."""
    world, kids = ctx.world, ctx.children
    if kind == "malformed_json":
        return correct[: max(1, len(correct) // 2)], "truncated JSON"
    if kind == "empty_answer":
        return "", "empty completion"

    def answer(children: list[dict[str, Any]], reasoning: str, done: bool = False, goal: list[str] | None = None
               ) -> str:
        saved = ctx.goal
        if goal is not None:
            ctx.goal = goal
        try:
            return json.dumps(ctx.render(children, reasoning, done))
        finally:
            ctx.goal = saved

    if kind == "hallucinated_object":
        ghost = _phantom(world, rng)
        target = next((p for p in world.places), "table")
        if ctx.primitive_level or ctx.grounded:
            call = PrimitiveCall.make("pick", {"object": ghost})
            child = _call_child(call, ctx) if ctx.primitive_level else {
                "subgoal": f"put the {spoken(ghost)} in the {spoken(target)}", "call": None,
                "success_when": [f"in({ghost}, {target})"]}
        else:
            child = {"subgoal": f"put the {spoken(ghost)} in the {spoken(target)}"}
        return answer([child, *kids], "the object is right there"), child["subgoal"]
    if kind == "wrong_order":
        return answer([kids[1], kids[0], *kids[2:]], "do this first"), kids[1]["subgoal"]
    if kind == "missing_step":
        if len(kids) == 1:
            return answer([], "everything is done", done=True), f"claimed done before {kids[0]['subgoal']}"
        return answer(kids[1:], "next step"), f"skipped {kids[0]['subgoal']}"
    if kind == "premature_done":
        return answer([], "that should do it", done=True), f"claimed done with {len(kids)} children left"
    if kind == "extra_step":
        options = [PrimitiveCall.make("home")]
        options += [PrimitiveCall.make("move_to", {"target": p}) for p in world.places]
        extra = _call_child(rng.choice(options), ctx)
        return answer([extra, *kids], "get into position first"), extra["subgoal"]
    if kind == "irrelevant_step":
        obj = rng.choice(_irrelevant_objects(ctx))
        extra = _call_child(PrimitiveCall.make("pick", {"object": obj}), ctx)
        return answer([extra, *kids], f"the {spoken(obj)} is in the way"), f"pick({obj})"
    if kind == "affordance_violation":
        if world.held:
            others = [o for o in world.objects if o != world.held and world.is_visible(o)]
            if others:
                call = PrimitiveCall.make("pick", {"object": rng.choice(others)})
                return answer([_call_child(call, ctx), *kids], "grab it too"), str(call)
        obj = next((c.kwargs["object"] for c in ctx.plan if "object" in c.kwargs), None) or \
            next(iter(world.objects), "tape")
        target = next((c.kwargs["target"] for c in ctx.plan if c.name == "place"), None) or \
            next(iter(world.places), "table")
        call = PrimitiveCall.make("place", {"object": obj, "target": target})
        return answer([_call_child(call, ctx), *kids], "place it"), f"{call} while not holding {obj}"
    if kind == "missing_conditions":
        if ctx.goal and (len(ctx.goal) > 1 or rng.random() < 0.5):
            dropped = rng.choice(ctx.goal)
            return answer(kids, "the goal", goal=[g for g in ctx.goal if g != dropped]), f"goal without {dropped}"
        i = next((i for i, c in enumerate(_shown(ctx)) if c.get("success_when")), None)
        if i is None:
            return answer(kids, "the goal", goal=[]), "no goal facts"
        changed = [dict(c) for c in kids]
        changed[i]["success_when"] = []
        return answer(changed, "next"), f"{kids[i]['subgoal']} without success_when"
    if kind == "wrong_conditions":
        if ctx.goal and (rng.random() < 0.5 or not any(c.get("success_when") for c in _shown(ctx))):
            j = rng.randrange(len(ctx.goal))
            wrong = [*ctx.goal[:j], _wrong_fact(ctx.goal[j], ctx, rng), *ctx.goal[j + 1:]]
            return answer(kids, "the goal", goal=wrong), f"goal {ctx.goal[j]} -> {wrong[j]}"
        i = next(i for i, c in enumerate(_shown(ctx)) if c.get("success_when"))
        changed = [dict(c) for c in kids]
        changed[i]["success_when"] = [_wrong_fact(f, ctx, rng) for f in kids[i]["success_when"]]
        return answer(changed, "next"), f"{kids[i]['subgoal']} when {changed[i]['success_when']}"
    raise ValueError(f"{kind} does not apply to a decomposition")


def termination_mistake(kind: str, ctx: AnswerContext, correct: str, rng: random.Random) -> tuple[str, str]:
    """(answer text, detail) for a termination request."""
    if kind == "malformed_json":
        return correct[: max(1, len(correct) // 2)], "truncated JSON"
    if kind == "empty_answer":
        return "", "empty completion"
    if kind == "hallucinated_object":
        ghost = _phantom(ctx.world, rng)
        call = f"pick(object={ghost})"
        return json.dumps({"reasoning": "one grasp", "verdict": "execute", "call": call}), call
    if kind == "too_abstract_executable":
        first = ctx.plan[0]
        return json.dumps({"reasoning": "a single action does it", "verdict": "execute", "call": str(first)}), \
            f"compound subgoal mapped to {first}"
    raise ValueError(f"{kind} does not apply to a termination")


@dataclass(frozen=True)
class Reading:
    """A wrong reading of an instruction: the goal the expert plans for and the goal it states."""

    kind: str
    goal: tuple[Any, ...]
    stated: tuple[Any, ...]
    detail: str


def _placements(goal: tuple[Any, ...]) -> list[Any]:
    return [a for a in goal if a.predicate in ("in", "on", "at") and not a.negated]


def meaning_readings(instruction: str, goal: tuple[Any, ...], stated: tuple[Any, ...], candidates: tuple[str, ...],
                     hidden: set[str] | frozenset[str] = frozenset(), *, world: WorldState | None = None,
                     referred: frozenset[str] = frozenset(), rng: random.Random | None = None) -> dict[str, Reading]:
    """Every wrong reading of each meaning kind that applies to this instruction (kind -> reading).

    ``world`` (the scene at the start) and ``referred`` (the objects the words may refer to,
    :func:`step_planner.bench.referents.task_referred`) are what ``extra_object`` and ``swapped_object`` need;
    without a world they do not apply. ``rng`` picks among the objects they could use (default: the first)."""
    out = _narrow_referent_adjective(instruction, goal, stated, candidates, hidden)
    if world is not None:
        if (extra := extra_object_reading(goal, stated, world, referred, rng)) is not None:
            out["extra_object"] = extra
        if (swapped := swapped_object_reading(goal, stated, world, referred, rng)) is not None:
            out["swapped_object"] = swapped
        if (place := wrong_place_reading(instruction, goal, stated, world, rng)) is not None:
            out["wrong_place"] = place
        if (kept := kept_exception_reading(instruction, goal, stated, world)) is not None:
            out["kept_exception"] = kept
    return out


def _narrow_referent_adjective(instruction: str, goal: tuple[Any, ...], stated: tuple[Any, ...],
                               candidates: tuple[str, ...], hidden: set[str] | frozenset[str]) -> dict[str, Reading]:
    from step_planner.bench.goals import Atom

    out: dict[str, Reading] = {}
    placed = _placements(goal)
    if len({a.args[1] for a in placed}) == 1 and len(placed) >= 2:  # one destination: a group
        left_out = placed[-1]
        narrow = tuple(a for a in goal if a != left_out)
        out["narrow_group"] = Reading("narrow_group", narrow, tuple(a for a in (stated or goal) if a != left_out),
                                      f"left {left_out.args[0]} out of the group")
    objects = {o for a in goal for o in a.objects}
    if len(candidates) >= 2 and len(chosen := [c for c in candidates if c in {x for a in goal for x in a.args}]) == 1:
        other = next(c for c in candidates if c != chosen[0])

        def swap(atoms: tuple[Any, ...]) -> tuple[Any, ...]:
            return tuple(Atom(a.predicate, tuple(other if x == chosen[0] else x for x in a.args), a.negated)
                         for a in atoms)

        out["wrong_referent"] = Reading("wrong_referent", swap(goal), swap(stated) if stated else swap(goal),
                                        f"{other} instead of {chosen[0]}")
    words = " ".join(re.sub(r"[^a-z0-9 ]", " ", instruction.lower()).split())
    for obj in sorted(objects & set(hidden)):
        m = re.search(rf"\ban? ([a-z]+) {re.escape(obj.replace('_', ' '))}\b", words)
        if m and m.group(1) not in obj.split("_"):
            name = f"{m.group(1)}_{obj}"
            renamed = tuple(Atom(a.predicate, tuple(name if x == obj else x for x in a.args), a.negated)
                            for a in (stated or goal))
            out["adjective_name"] = Reading("adjective_name", goal, renamed, f"named {obj} {name}")
            break
    return out


# ---- objects the words never refer to ---------------------------------------------------------------
def _put(obj: str, place: str, world: WorldState) -> Any:
    from step_planner.bench.goals import Atom

    return Atom("in" if world.places[place].is_container else "on", (obj, place))


def _unreferenced(world: WorldState, referred: frozenset[str], goal: tuple[Any, ...]) -> list[str]:
    """Visible, graspable, reachable objects out of the hand that neither the words nor the goal are about."""
    in_goal = {o for a in goal for o in a.objects}
    return [o for o, s in world.objects.items()
            if o not in referred and o not in in_goal and s.graspable and s.reachable and world.is_visible(o)
            and s.location in world.places]


def _has_room(world: WorldState, place: str, goal: tuple[Any, ...]) -> bool:
    """``place`` has a free slot once the goal's placements there (and removals from there) are done."""
    spec = world.places[place]
    if spec.capacity is None:
        return True
    coming = {a.args[0] for a in _placements(goal) if a.args[1] == place
              and (world.objects.get(a.args[0]) is None or world.objects[a.args[0]].location != place)}
    leaving = {a.args[0] for a in goal if a.predicate in ("in", "on", "at", "holding") and not a.negated
               and a.args[0] in world.objects and world.objects[a.args[0]].location == place
               and (a.predicate == "holding" or a.args[1] != place)}
    return spec.capacity - len(world.contents(place)) - len(coming) + len(leaving) > 0


def extra_object_reading(goal: tuple[Any, ...], stated: tuple[Any, ...], world: WorldState, referred: frozenset[str],
                         rng: random.Random | None = None) -> Reading | None:
    """The goal plus one fact: an object the words never refer to put where the goal puts something (the
    expert states it and carries it out). None when the goal places nothing, or no such object fits there, or the
    goal as first stated names a thing not seen yet ("the thing in the drawer": no goal can be stated before the
    look inside, and moving the extra object first would be a step before any goal, which the planner refuses)."""
    if any(o not in world.objects for a in stated for o in a.objects):
        return None
    dests = [p for p in dict.fromkeys(a.args[1] for a in _placements(goal))
             if p in world.places and world.places[p].reachable and _has_room(world, p, goal)]
    options = [(o, p) for p in dests for o in _unreferenced(world, referred, goal) if world.objects[o].location != p]
    if not options:
        return None
    obj, place = rng.choice(options) if rng is not None else options[0]
    fact = _put(obj, place, world)
    return Reading("extra_object", (*goal, fact), (*stated, fact) if stated else (),
                   f"also {fact}: nothing in the words refers to the {spoken(obj)}")


def _kind(world: WorldState, name: str) -> str:
    obj = world.objects[name]
    return obj.category or name


def swapped_object_reading(goal: tuple[Any, ...], stated: tuple[Any, ...], world: WorldState,
                           referred: frozenset[str], rng: random.Random | None = None) -> Reading | None:
    """The goal with an object it moves (visible at the start) replaced, in every fact, by a visible object of
    another kind the words never refer to. None when no such pair exists."""
    from step_planner.bench.goals import Atom

    moved = [a.args[0] for a in goal if a.predicate in ("in", "on", "at", "holding") and not a.negated]
    named = [o for o in dict.fromkeys(moved) if o in world.objects and world.is_visible(o)]
    targets = {a.args[0]: a.args[1] for a in _placements(goal)}
    options = [(o, x) for o in named for x in _unreferenced(world, referred, goal)
               if _kind(world, x) != _kind(world, o) and world.objects[x].location != targets.get(o)]
    if not options:
        return None
    named_obj, other = rng.choice(options) if rng is not None else options[0]

    def swap(atoms: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(Atom(a.predicate, tuple(other if x == named_obj else x for x in a.args), a.negated)
                     for a in atoms)

    new_goal = swap(goal)
    new_stated = ()
    if stated:
        new_stated = swap(stated)
        if not any(named_obj in a.objects for a in stated):
            new_stated = (*new_stated, *(a for a in new_goal if other in a.objects))
    return Reading("swapped_object", new_goal, new_stated,
                   f"the {spoken(other)} ({_kind(world, other)}) instead of the {spoken(named_obj)}")


def _replace_place(atoms: tuple[Any, ...], old: str, new: str, world: WorldState) -> tuple[Any, ...]:
    from step_planner.bench.goals import Atom

    return tuple(_put(a.args[0], new, world) if a.predicate in ("in", "on", "at") and not a.negated and
                 len(a.args) == 2 and a.args[1] == old else Atom(a.predicate, a.args, a.negated) for a in atoms)


def wrong_place_reading(instruction: str, goal: tuple[Any, ...], stated: tuple[Any, ...], world: WorldState,
                        rng: random.Random | None = None) -> Reading | None:
    """The goal with a place the words name, where it puts things, replaced in every fact by a reachable place the
    words never name that has room and holds none of those things already. None when the goal's places are not
    named by the words (a place the words imply, "bin it", is not decided by a place word) or no other place fits."""
    from step_planner.bench.referents import places_named, words_of

    said = set(words_of(instruction))
    named = places_named(world, said)
    dests = [p for p in dict.fromkeys(a.args[1] for a in _placements(goal)) if p in named]
    options = []
    for dest in dests:
        objs = [a.args[0] for a in _placements(goal) if a.args[1] == dest]
        for other, spec in world.places.items():
            if other in named or other == dest or not spec.reachable or \
                    any(world.objects.get(o) is not None and world.objects[o].location == other for o in objs):
                continue
            if spec.openable and not spec.is_open:
                continue  # a closed drawer would need opening first: a step the goal gives no reason for
            room = None if spec.capacity is None else spec.capacity - len(world.contents(other))
            if room is None or room >= len(objs):
                options.append((dest, other))
    if not options:
        return None
    dest, other = rng.choice(options) if rng is not None else options[0]
    return Reading("wrong_place", _replace_place(goal, dest, other, world),
                   _replace_place(stated, dest, other, world) if stated else (),
                   f"{spoken(other)} instead of {spoken(dest)}: the words never name the {spoken(other)}")


def excepted_objects(instruction: str, goal: tuple[Any, ...], world: WorldState) -> list[str]:
    """Objects the words leave out: named right after an exception word ("except the cup", "bar the red block",
    "leave the sponge where it is"), not moved by the goal, visible (scene order)."""
    from step_planner.bench.referents import object_words, words_of

    text = " ".join(words_of(instruction))
    moved = {a.args[0] for a in goal if a.predicate in ("in", "on", "at", "holding") and not a.negated}
    out = []
    for cue in EXCEPTION_CUES:
        for m in re.finditer(rf"\b{cue}\b((?: [a-z0-9]+){{1,4}})", text):
            after = m.group(1).split()
            for name, obj in world.objects.items():
                if name in moved or name in out or not world.is_visible(name) or not obj.graspable:
                    continue
                spoken_name = name.replace("_", " ").split()
                if " ".join(after).find(" ".join(spoken_name)) >= 0 or \
                        (after[:1] == ["the"] and len(after) > 1 and after[1] in object_words(world, name) and
                         sum(1 for o in world.objects if after[1] in object_words(world, o)) == 1):
                    out.append(name)
    return [o for o in world.objects if o in out]


def kept_exception_reading(instruction: str, goal: tuple[Any, ...], stated: tuple[Any, ...],
                           world: WorldState) -> Reading | None:
    """The goal plus the excepted object put where the goal puts the others (the first place with room). None when
    the words except nothing the goal leaves where it is, or no goal place has room for it."""
    for obj in excepted_objects(instruction, goal, world):
        dests = [p for p in dict.fromkeys(a.args[1] for a in _placements(goal))
                 if p in world.places and world.places[p].reachable and _has_room(world, p, goal)
                 and world.objects[obj].location != p]
        if dests:
            fact = _put(obj, dests[0], world)
            return Reading("kept_exception", (*goal, fact), (*stated, fact) if stated else (),
                           f"also {fact}: the words leave the {spoken(obj)} out")
    return None
