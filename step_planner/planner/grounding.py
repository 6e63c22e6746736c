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
- real wording: a word one typo away from exactly one name in the scene counts as that name ("blokc",
  "tary"; :func:`spell_corrected`); an object named only as a reference ("on the table next to the cup",
  ``reference_words``) need not be in the goal; and "the block" where several blocks are in view and
  nothing says which is not resolved by picking one: the model is told to ask the person
  (:func:`guessed_references`);
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
# Common words one letter away from a name in the shipped scenes: never read as a typo of that name.
_NOT_TYPOS = frozenset({
    "black", "gray", "grey", "take", "type", "tale", "tame", "cape", "took", "toll", "role", "fine", "five",
    "fill", "film", "fire", "mile", "pile", "tile", "cable", "fable", "stable", "clock", "flock", "market",
    "word", "fork", "wore", "stool", "spoon", "spoil", "fellow", "mellow", "greet", "greed", "preen", "hamper",
    "classes", "grasses", "bread", "brick", "trap", "then", "them", "they", "than", "that", "this", "with",
    "from", "into", "onto", "over", "were", "want", "wont", "need", "hold", "keep", "make", "have", "here",
    "there", "where", "what", "when", "these", "those", "both", "each", "some", "once", "back", "next",
    "near", "left", "right", "put", "get", "got", "set", "let", "not", "and", "the", "for", "you", "any",
})


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
    full = _words(text)
    for name, place in world.places.items():
        kinds = {place.kind, name.split("_")[-1]}
        by_kind = any(f" {w} " in padded or f" {w}s " in padded for w in kinds)
        by_adjective = "_" in name and f" {name.split('_')[0]} " in full and any(  # "the right drawer ... the left one"
            f" {w} " in full or f" {w}s " in full for w in kinds)
        if by_kind or by_adjective:
            found.add(name)
    for name, obj in world.objects.items():
        words = {name.split("_")[-1]} | ({obj.category.split()[-1]} if obj.category else set())
        by_kind = any(f" {w} " in padded or f" {w}s " in padded for w in words)
        by_adjective = "_" in name and f" {name.split('_')[0]} " in full and any(  # "the red and the blue block"
            f" {w} " in full or f" {w}s " in full for w in words)
        if by_kind or by_adjective:
            found.add(name)
    return found


def _one_typo(word: str, name: str) -> bool:
    """One insertion, deletion, substitution or swap of neighbours turns ``word`` into ``name``."""
    if word == name or abs(len(word) - len(name)) > 1:
        return False
    if len(word) == len(name):
        diff = [i for i, (a, b) in enumerate(zip(word, name, strict=True)) if a != b]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1 and word[diff[0]] == name[diff[1]]
                                   and word[diff[1]] == name[diff[0]])
    short, long_ = (word, name) if len(word) < len(name) else (name, word)
    return any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))


def _name_words(world: WorldState, extra: Iterable[str] = ()) -> set[str]:
    words = {w for name in (*world.objects, *world.places, *extra) for w in name.split("_")}
    words |= {w for o in world.objects.values() for w in (o.category or "").split()}
    words |= {p.kind for p in world.places.values()}
    return {w for w in words if w.isalpha()}


def spell_corrected(text: str, world: WorldState, extra: Iterable[str] = (), keep: Iterable[str] = ()) -> str:
    """``text`` with each word one typo away from exactly one word of a name in the scene (or of ``extra``
    names) replaced by that word: "the red blokc on the tary" -> "the red block on the tray".

    Words of three letters count only with two neighbouring letters swapped ("cpu" -> "cup"); words of the
    scene, ``keep`` (the primitives' and goal words) and common words one letter from a name are kept."""
    names = _name_words(world, extra)
    kept = names | _NOT_TYPOS | {w for phrase in keep for w in phrase.split()}
    out = []
    for word in _words(text).split():
        if word in kept or not word.isalpha() or len(word) < 3:
            out.append(word)
            continue
        found = [n for n in names if (len(n) >= 4 and len(word) >= 4 or len(n) == len(word) == 3)
                 and _one_typo(word, n) and (len(word) > 3 or sorted(word) == sorted(n))]
        out.append(found[0] if len(found) == 1 else word)
    return " ".join(out)


def reference_only(text: str, world: WorldState, reference_words: Iterable[str]) -> set[str]:
    """Objects the text names only right after a reference word ("next to the cup", "beside the red
    block"): they say where or which, they are not what the instruction asks to change."""
    padded = _words(text)
    refs = [f" {w} " for w in reference_words]
    out = set()
    for name in named_entities(text, world) & set(world.objects):
        spots = [m.start() for spelled in {name, name.replace("_", " ")}
                 for m in re.finditer(rf"(?= {re.escape(spelled)} )", padded)]
        before = [padded[:i + 1].removesuffix(" the ").removesuffix(" a ") + " " for i in spots]
        if spots and all(any(b.endswith(r) for r in refs) for b in before):
            out.add(name)
    return out


def _kind_words(name: str, category: str = "", kind: str = "") -> set[str]:
    return {w for w in {name.split("_")[-1], (category.split() or [""])[-1], kind} if w.isalpha()}


def guessed_references(text: str, world: WorldState, named: Iterable[str]) -> list[str]:
    """Singular references ("the block") that several things in view fit, where ``named`` (what the goal
    is about) picks some of them and nothing in the text singles one out: the goal guessed which."""
    padded = _words(text)
    for name in sorted((*world.objects, *world.places), key=len, reverse=True):  # spelled names say which
        for spelled in (name, name.replace("_", " ")):
            padded = padded.replace(f" {spelled} ", " ")
    things = {n: _kind_words(n, o.category) for n, o in world.objects.items() if world.is_visible(n)}
    things |= {n: _kind_words(n, kind=p.kind) for n, p in world.places.items()}
    chosen = set(named)
    full = set(_words(text).split())
    problems = []
    for word in sorted({w for kinds in things.values() for w in kinds}):
        m = re.search(rf" the (?:(\w+) )?{word} ", padded)
        if not m:
            continue
        candidates = {n for n, kinds in things.items() if word in kinds}
        if m.group(1) and any(m.group(1) in n.split("_") for n in candidates):  # "the blue block"
            candidates = {n for n in candidates if m.group(1) in n.split("_")}
        picked = candidates & chosen
        if len(candidates) < 2 or not picked or picked == candidates:
            continue
        shared = set.intersection(*(set(n.split("_")) for n in candidates))
        if any((set(n.split("_")) - shared) & full for n in candidates):  # "the green one": singled out
            continue
        said = f"the {m.group(1) + ' ' if m.group(1) else ''}{word}"
        problems.append(f"the instruction says '{said}' but {', '.join(sorted(candidates))} all fit and it does "
                        f"not say which; ask the person which is meant instead of choosing "
                        f"{', '.join(sorted(picked))}")
    return problems


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
    stated = _stated_names(texts)
    keep = {w for words in (*library.goal_words.values(), *library.required_words.values()) for w in words}
    keep |= {p for spec in library.primitives.values() for p in spec.phrases} | set(library.stay_words)
    instruction = spell_corrected(instruction, world, extra=stated - set(world.objects) - set(world.places),
                                  keep=keep | set(library.reference_words))
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
    named_objects = {n for n in named if n in world.objects} - reference_only(instruction, world,
                                                                             library.reference_words)
    positive = {o for f in out.facts if not f.negated for o in f.objects}
    if missing := sorted(named_objects - {o for f in out.facts for o in f.objects}):
        out.problems.append(f"the instruction names {', '.join(missing)} but no condition says what must hold "
                            "of it")
    elif missing := sorted(named_objects - positive):
        out.problems.append(f"say where {', '.join(missing)} must end up (a fact such as in(...), on(...) or "
                            "holding(...), not only what must not hold)")
    out.problems += guessed_references(instruction, world, {a for f in out.facts if not f.negated for a in f.args})
    return out


def _stated_names(texts: Iterable[object]) -> set[str]:
    """The names the facts of a goal use (whatever parses), for the spelling check of hidden objects."""
    names = set()
    for raw in texts:
        try:
            names |= set(parse_fact(str(raw)).args)
        except ConditionError:
            continue
    return names


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
    relevant |= cabinet_neighbours(relevant, world)  # a drawer above may have to close for one below
    containers = {n for n in names if n in world.places and world.places[n].is_container}
    relevant |= {o.name for o in world.objects.values() if o.location in containers}  # to make room
    return relevant


def cabinet_neighbours(names: Iterable[str], world: WorldState) -> set[str]:
    """The other drawers of the cabinets that drawers among ``names`` are part of (the same
    ``cabinet_position`` in the scene's geometry): opening or closing one may be what reaching another takes."""
    def cabinet(name: str) -> tuple | None:
        place = world.places.get(name)
        where = place.geometry.get("cabinet_position") if place is not None and place.openable else None
        return tuple(where) if where else None

    cabinets = {c for n in names if (c := cabinet(n)) is not None}
    return {n for n in world.places if (c := cabinet(n)) is not None and c in cabinets} - set(names)
