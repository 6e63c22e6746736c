"""Conditions an LLM states, checked against the world and the words they claim to stand for.

The instruction's goal and every subgoal's ``success_when`` come from the model. They decide
success, so they are validated like primitive calls before the planner relies on them:

- grammar and names: each is a fact of the domain's grammar naming things that exist, with the
  right types (``in`` takes a container); an object may be unseen only if the instruction (or an
  ancestor's condition) names it — it may be hidden in a closed drawer;
- the instruction's goal must be *about the instruction*: every fact names something the
  instruction mentions (by name, or by a kind word such as "drawer" or "block"); a place an object
  must end up in or on is a place the instruction mentions; every object the instruction names
  ends up somewhere a fact says (or stays where it is, when the instruction says to leave it); and a
  goal leaves an object in the gripper or a drawer open only
  when the instruction's words ask for it (``goal_words`` in ``config/primitives.yaml``) —
  ``holding(tape)`` is not what "put the tape in the drawer" leaves behind; and an instruction that
  says "close" has a ``closed(...)`` fact (``required_words``);
- a subgoal's conditions must not already hold (a step that changes nothing is no step).

Each problem is a sentence that goes back to the model as re-plan feedback.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from step_planner.domain.conditions import Condition, ConditionError, check_fact, parse_fact
from step_planner.domain.primitives import PrimitiveLibrary
from step_planner.domain.world import GRIPPER, WorldState
from step_planner.planner.beliefs import Beliefs

MAX_CONDITIONS = 24


@dataclass
class CheckedConditions:
    facts: list[Condition] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems and bool(self.facts)


def _words(text: str) -> str:
    return f" {' '.join(re.sub(r'[^a-z0-9_ ]', ' ', text.lower()).split())} "


def named_entities(text: str, world: WorldState) -> set[str]:
    """Entity names (``red_block`` or ``red block``) that a text mentions."""
    padded = _words(text)
    return {name for name in (*world.objects, *world.places)
            if f" {name} " in padded or f" {name.replace('_', ' ')} " in padded}


def kind_mentions(text: str, world: WorldState) -> set[str]:
    """Entities a text refers to by kind: "every drawer", "all three blocks", "the bins".

    A kind word inside a name the text spells out ("the red block") does not count."""
    padded = _words(text)
    for name in sorted((*world.objects, *world.places), key=len, reverse=True):
        for spelled in (name, name.replace("_", " ")):
            padded = padded.replace(f" {spelled} ", " ")
    found: set[str] = set()
    for name, place in world.places.items():
        if any(f" {w} " in padded or f" {w}s " in padded for w in {place.kind, name.split("_")[-1]}):
            found.add(name)
    full = _words(text)
    for name, obj in world.objects.items():
        words = {name.split("_")[-1]} | ({obj.category.split()[-1]} if obj.category else set())
        by_kind = any(f" {w} " in padded or f" {w}s " in padded for w in words)
        by_adjective = "_" in name and f" {name.split('_')[0]} " in full and any(  # "the red and the blue block"
            f" {w} " in full or f" {w}s " in full for w in words)
        if by_kind or by_adjective:
            found.add(name)
    return found


def unseen_names(text: str, world: WorldState) -> set[str]:
    """Plain words of a text that could name an object not seen yet (``screwdriver``, ``red_block``)."""
    padded = _words(text).split()
    singles = set(padded)
    pairs = {f"{a}_{b}" for a, b in zip(padded, padded[1:], strict=False)}
    return {w for w in singles | pairs if not world.entity_type(w)}


def _parse_all(texts: Iterable[object], world: WorldState, unseen: set[str]) -> CheckedConditions:
    out = CheckedConditions()
    seen: set[Condition] = set()
    for raw in texts:
        try:
            fact = parse_fact(str(raw))
        except ConditionError as exc:
            out.problems.append(str(exc))
            continue
        if problem := check_fact(fact, world, unseen):
            out.problems.append(problem)
        elif fact not in seen:
            seen.add(fact)
            out.facts.append(fact)
    if len(out.facts) > MAX_CONDITIONS:
        out.problems.append(f"{len(out.facts)} conditions are too many; state at most {MAX_CONDITIONS}")
    return out


def check_goal(texts: list[str], instruction: str, beliefs: Beliefs, library: PrimitiveLibrary, *,
               about_instruction: bool = True) -> CheckedConditions:
    """The instruction's goal conditions, or the problems with them.

    ``about_instruction=False`` (a goal the client states itself) checks grammar and names only.
    """
    world = beliefs.world
    if not texts:
        return CheckedConditions(problems=["state the instruction's goal as facts in `goal`, e.g. in(tape, drawer)"])
    named = named_entities(instruction, world)
    out = _parse_all(texts, world, unseen_names(instruction, world))
    if out.problems or not about_instruction:
        return out
    places_mentioned = named | kind_mentions(instruction, world)
    mentioned = places_mentioned | unseen_names(instruction, world)
    padded = _words(instruction)
    stays = any(f" {w} " in padded for w in library.stay_words)  # "leave the blocks where they are"
    for fact in out.facts:
        if fact.args and not set(fact.args) & mentioned:
            out.problems.append(f"{fact} is about {', '.join(fact.args)}, which the instruction does not mention")
        elif fact.predicate in ("in", "on", "at") and not fact.negated and fact.args[1] not in places_mentioned \
                and not (stays and beliefs.judge(fact)[0]):
            out.problems.append(f"{fact}: the instruction does not mention {fact.args[1]} as a place")
        elif not fact.negated and (words := library.goal_words.get(fact.predicate)) and not any(
                f" {w} " in padded for w in words):
            out.problems.append(f"{fact}: the instruction does not ask to end with it ({' / '.join(words)}); "
                                "state where things must end up")
    for predicate, words in library.required_words.items():  # "... and close the drawer": closed(...) is needed
        said = next((w for w in words if f" {w} " in padded), None)
        if said and not any(f.predicate == predicate and not f.negated for f in out.facts):
            out.problems.append(f"the instruction says '{said}' but no goal fact is {predicate}(...): state what "
                                f"must end {predicate}")
    named_objects = {n for n in named if n in world.objects}
    positive = {o for f in out.facts if not f.negated for o in f.objects}
    if missing := sorted(named_objects - {o for f in out.facts for o in f.objects}):
        out.problems.append(f"the instruction names {', '.join(missing)} but no condition says what must hold "
                            "of it")
    elif missing := sorted(named_objects - positive):
        out.problems.append(f"say where {', '.join(missing)} must end up (a fact such as in(...), on(...) or "
                            "holding(...), not only what must not hold)")
    return out


def check_subgoal_conditions(texts: list[str], subgoal: str, known_unseen: set[str],
                             beliefs: Beliefs) -> CheckedConditions:
    """A child's ``success_when``: valid facts, not all true already."""
    if not texts:
        return CheckedConditions(problems=[f"'{subgoal}' needs success_when: the facts that will hold once it "
                                           "is achieved, e.g. in(tape, drawer)"])
    out = _parse_all(texts, beliefs.world, known_unseen | (unseen_names(subgoal, beliefs.world) & known_unseen))
    if not out.problems and out.facts and not beliefs.unmet(out.facts):
        shown = ", ".join(map(str, out.facts))
        out.problems.append(f"'{subgoal}' is already achieved ({shown} hold now); propose a step toward what is "
                            "still missing")
    return out


def relevant_entities(facts: Iterable[Condition], text: str, beliefs: Beliefs) -> set[str]:
    """What a subgoal needs to act on: the things its conditions and words name, where those
    objects are, the held object (to free the gripper), closed drawers while an object it needs
    is unseen (to search), and objects inside a place it needs (to make room)."""
    world = beliefs.world
    names = {a for f in facts for a in f.args} | named_entities(text, world) | kind_mentions(text, world)
    relevant = set(names)
    for name in names:  # the drawer an object needed is in must be opened
        obj = world.objects.get(name)
        place = world.places.get(obj.location or "") if obj is not None and obj.location != GRIPPER else None
        if place is not None and place.openable:
            relevant.add(place.name)
    if any(not beliefs.knows(o) for f in facts for o in f.objects):  # search where it may be hidden
        relevant |= {n for n, p in world.places.items() if p.openable and not p.is_open}
    if world.held:
        relevant.add(world.held)
    containers = {n for n in names if n in world.places and world.places[n].is_container}
    relevant |= {o.name for o in world.objects.values() if o.location in containers}  # to make room
    return relevant
