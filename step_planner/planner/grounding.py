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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from step_planner.domain.conditions import Condition, ConditionError, check_fact, parse_fact
from step_planner.domain.primitives import PrimitiveLibrary
from step_planner.domain.world import GRIPPER, WorldState
from step_planner.planner.beliefs import Beliefs
from step_planner.planner.goal_checks import (
    RULE_ANSWER,
    RULE_LEFT_OUT,
    RULE_MISMATCH,
    RULE_NARROW,
    RULE_NOTHING_FITS,
    RULE_PLACE,
    RULE_SPARE_ASKED,
    RULE_UNREFERRED,
    RULE_WRONG_PICK,
    Reading,
    changes,
    check_words,
)
from step_planner.planner.resolution import Resolution, default_lexicon, plural, resolve, singular
from step_planner.planner.unread_words import account, doubt_source, excepted

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


# What refused a goal: each problem carries the rule that found it (benchmarks count refusals by rule, so a
# rule that refuses what people plainly mean shows up in a table).
RULE_GRAMMAR = "grammar"  # a fact that does not parse, names nothing in the scene, or has the wrong types
RULE_TOO_MANY = "too_many_facts"
RULE_EMPTY = "no_goal"
RULE_GENERIC = "generic_name"  # a fact about `thing` or `item`: no object has such a name
RULE_UNMENTIONED = "unmentioned_thing"  # a fact about something the instruction does not mention
# RULE_PLACE (an object must end up in a place the words neither name nor imply), RULE_UNREFERRED,
# RULE_NARROW, RULE_LEFT_OUT, RULE_WRONG_PICK, RULE_NOTHING_FITS, RULE_ANSWER, RULE_MISMATCH: planner/goal_checks.py
__all__ = ["RULE_ANSWER", "RULE_LEFT_OUT", "RULE_MISMATCH", "RULE_NARROW", "RULE_NOTHING_FITS", "RULE_PLACE",
           "RULE_UNREFERRED", "RULE_WRONG_PICK"]
RULE_END_STATE = "end_state_words"  # holding(...) / open(...) without words that ask to end so
RULE_REQUIRED = "required_fact"  # "close" said, no closed(...) fact
RULE_NAMED_MISSING = "named_object_missing"  # an object the instruction names, no fact about it
RULE_ONLY_NEGATED = "named_object_only_negated"
RULE_PROVISIONAL = "provisional_name_kept"  # a restated goal keeps a name nothing seen carries
RULE_CONTENTS = "contents_unstated"  # a goal restated after empty(<drawer>) says nothing of a thing it held
RULE_GUESSED = "guessed_reference"  # "the block", several fit, nothing says which, the goal picks some
# Refusals only the person can settle: re-reading the instruction does not tell the model which is meant.
PERSON_RULES = frozenset({RULE_GUESSED, RULE_SPARE_ASKED})


@dataclass(frozen=True)
class Reference:
    """A definite singular reference ("the blue block") and what the goal made of it.

    ``described``: something in the words can single one out (a relative clause, a place or state
    phrase, a description word, "the one on ..."), so which one is the model's reading, not a guess."""

    said: str
    candidates: tuple[str, ...]
    picked: tuple[str, ...]
    described: bool
    source: str = ""  # where the reading came from, when not the model's reading of the words

    @property
    def resolved(self) -> bool:
        """The goal chose some of several things the words fit (a reading worth showing)."""
        return len(self.candidates) > 1 and bool(self.picked) and set(self.picked) != set(self.candidates)

    @property
    def guessed(self) -> bool:
        return self.resolved and not self.described

    def guess_problem(self) -> str:
        return (f"the instruction says '{self.said}' but {', '.join(self.candidates)} all fit and it does not say "
                f"which; ask the person which is meant instead of choosing {', '.join(self.picked)}")


@dataclass
class CheckedConditions:
    facts: list[Condition] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)  # the rule of each problem, in order
    references: list[Reference] = field(default_factory=list)  # references the goal resolved (and readings)
    readings: list[Reading] = field(default_factory=list)  # how the goal reads the words, with where from
    unresolved: list[str] = field(default_factory=list)  # phrases the resolver could not read, taken as read
    resolution: Resolution | None = None  # what the instruction's phrases refer to
    ends: str = ""  # the words cannot be met in this world (nothing in view fits): the goal ends, saying why
    questions: list[str] = field(default_factory=list)  # doubts only the person can settle, put to them as said

    @property
    def ok(self) -> bool:
        return not self.problems and bool(self.facts)

    def refuse(self, rule: str, problem: str) -> None:
        self.problems.append(problem)
        self.rules.append(rule)

    @property
    def person_only(self) -> bool:
        """Every problem is one only the person can settle (which of several things is meant)."""
        return bool(self.rules) and all(r in PERSON_RULES for r in self.rules)


def _words(text: str) -> str:
    return f" {' '.join(re.sub(r'[^a-z0-9_ ]', ' ', text.lower()).split())} "


# Names that are also auxiliary verbs ("the blocks can go in the bin" with a can in the scene): such a name
# counts as said only after a determiner or adjective-free article ("the can", "a can", "that can").
_AUXILIARY_NAMES = frozenset({"can", "will", "may", "must", "might", "should", "would", "could"})
_ARTICLES = ("the", "a", "an", "that", "this", "my", "your", "our", "their", "his", "her", "its", "each", "every")


def named_entities(text: str, world: WorldState) -> set[str]:
    """Entity names (``red_block`` or ``red block``) that a text mentions."""
    padded = _words(text)
    found = {name for name in (*world.objects, *world.places)
             if f" {name} " in padded or f" {name.replace('_', ' ')} " in padded}
    return {n for n in found if n not in _AUXILIARY_NAMES or any(f" {a} {n} " in padded for a in _ARTICLES)}


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
        by_kind = any(f" {w} " in padded or f" {plural(w)} " in padded for w in kinds)
        by_adjective = "_" in name and f" {name.split('_')[0]} " in full and any(  # "the right drawer ... the left one"
            f" {w} " in full or f" {plural(w)} " in full for w in kinds)
        if by_kind or by_adjective:
            found.add(name)
    for name, obj in world.objects.items():
        words = {name.split("_")[-1]} | ({obj.category.split()[-1]} if obj.category else set())
        by_kind = any(f" {w} " in padded or f" {plural(w)} " in padded for w in words)
        by_adjective = "_" in name and f" {name.split('_')[0]} " in full and any(  # "the red and the blue block"
            f" {w} " in full or f" {plural(w)} " in full for w in words)
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
        if word in kept or not word.isalpha() or len(word) < 3 or singular(word) in names:
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


# Words before "the" that make "the block" part of a plural or a choice left open ("all the", "each of the").
_QUANTIFIERS = frozenset({"all", "both", "each", "every", "any", "either", "neither", "none", "of", "whichever",
                          "whatever"})
# Words right after a noun that start a description of it: "the block that is ...", "the drawer on the left".
_DESCRIPTION_STARTS = frozenset({
    "that", "which", "who", "whose", "where", "sitting", "lying", "standing", "resting", "currently", "now",
    "already", "still", "there", "here", "closest", "nearest", "furthest", "farthest", "left", "right",
    "above", "below", "beneath", "underneath", "between", "like", "with", "without", "of",
})
# Prepositions after a noun: a description when a candidate is in or at the place that follows ("the block in
# the red tray": one is there), otherwise where it goes ("put the block in the box": none is in the box).
_LOCATIVES = frozenset({"in", "on", "inside", "from", "at", "off", "out", "under", "near", "beside", "by",
                        "behind", "next", "within"})  # never "to", "into", "onto": those say where it goes
_POSITION_WORDS = frozenset({"left", "right", "front", "back", "middle", "centre", "center", "top", "bottom",
                             "end", "side", "corner", "edge", "far", "near"})


def _tokens(text: str, world: WorldState) -> list[str]:
    """The text's words, each name the text spells ("red block", "red_block") as one token ``red_block``."""
    padded = _words(text)
    for name in sorted((*world.objects, *world.places), key=len, reverse=True):
        for spelled in {name, name.replace("_", " ")}:
            padded = padded.replace(f" {spelled} ", f" {name} ")
    return padded.split()


def _describes(tokens: list[str], i: int, candidates: set[str], world: WorldState) -> bool:
    """Does what follows the noun at ``i`` say which of ``candidates`` is meant (could it single one out)?"""
    after = tokens[i + 1:i + 6]
    if not after:
        return False
    if after[0] in _DESCRIPTION_STARTS:
        return True
    if after[0] not in _LOCATIVES:
        return False
    words = [w for w in after[1:] if w not in ("the", "of", "a", "to")][:3]
    if any(w in _POSITION_WORDS for w in words[:1]):  # "on the left", "at the back"
        return True
    for word in words:
        if word in world.objects:  # a relation to another object: "the block by the cup"
            return True
        places = {word} if word in world.places else {n for n, p in world.places.items()
                                                      if word in _kind_words(n, kind=p.kind)}
        if places:
            return any((world.objects[c].location if c in world.objects else None) in places for c in candidates)
    return False


def references(text: str, world: WorldState, named: Iterable[str], group_words: Iterable[str] = ()) -> list[Reference]:
    """Definite singular references ("the block", "the blue block") that several things in view fit,
    with what the goal (``named``: the things its facts are about) picked of them.

    Plurals and quantifiers ("the blocks", "all the blocks", "each block") are not singular references. A
    reference is ``described`` when anything in the words can single one out: a description word before the
    noun that is not part of the candidates' names ("the open drawer", "the big block"), a relative clause or
    a place phrase that fits a candidate after it ("the block that is ...", "the block in the red tray", "the
    drawer on the left"), another mention of the same noun that is described, "the one(s) ...", or a word
    that only some candidates' names carry ("the green one"). A group or mass word ("the rubbish", "the
    stationery": ``group_words``) is never a singular reference."""
    tokens = _tokens(text, world)
    groups = set(group_words)
    things = {n: _kind_words(n, o.category) for n, o in world.objects.items() if world.is_visible(n)}
    things |= {n: _kind_words(n, kind=p.kind) for n, p in world.places.items()}
    chosen = set(named)
    words_said = set(_words(text).split())  # "the left drawer ... the drawer": 'left' says which
    found: dict[tuple[str, ...], tuple[str, bool]] = {}
    for i, tok in enumerate(tokens):
        candidates = {n for n, kinds in things.items() if tok in kinds}
        if len(candidates) < 2 or tok in groups:
            continue
        j, modifiers = i - 1, []
        while j >= 0 and tokens[j] != "the" and len(modifiers) < 3:
            modifiers.append(tokens[j])
            j -= 1
        if j < 0 or tokens[j] != "the" or (j > 0 and tokens[j - 1] in _QUANTIFIERS):
            continue  # not "the ... block", or "all the block"
        described = False
        for word in modifiers:
            narrowed = {n for n in candidates if word in n.split("_")}
            if narrowed:
                candidates = narrowed
            else:
                described = True  # "the open drawer", "the small block", "the first block"
        described = described or _describes(tokens, i, candidates, world)
        if len(candidates) < 2:
            continue
        shared = set.intersection(*(set(n.split("_")) for n in candidates))
        if any((set(n.split("_")) - shared) & words_said for n in candidates):  # "the green one": singled out
            described = True
        if {"one", "ones"} & set(tokens[i + 1:]):  # "... the one on the red tray": the noun before it
            described = True
        said = " ".join(["the", *reversed(modifiers), tok])
        key = tuple(sorted(candidates))
        prior = found.get(key)
        found[key] = (prior[0] if prior else said, described or (prior[1] if prior else False))
    out = []
    for key, (said, described) in found.items():
        picked = tuple(sorted(set(key) & chosen))
        out.append(Reference(said, key, picked, described))
    return out


def guessed_references(text: str, world: WorldState, named: Iterable[str]) -> list[str]:
    """Singular references ("the block") that several things in view fit, where ``named`` (what the goal
    is about) picks some of them and nothing in the text could single one out: the goal guessed which."""
    return [r.guess_problem() for r in references(text, world, named) if r.guessed]


def group_mentions(text: str, world: WorldState, library: PrimitiveLibrary) -> set[str]:
    """Objects a text may mean by a group or generic word ("the tools", "everything on the table", "the
    office supplies"). Which of them the person meant is the model's reading (shown, and confirmed when
    confirmation is on): the rules cannot decide it, so they do not refuse a goal about any of them."""
    tokens = _words(text).split()
    kinds = {n: _kind_words(n, o.category) | {o.category or ""} for n, o in world.objects.items()}
    out: set[str] = set()
    generic = set(library.generic_nouns) - {"it", "them", "one", "ones", "object", "thing", "item", "something"}
    names = _name_words(world)
    for i, tok in enumerate(tokens):
        one = singular(tok) if singular(tok) in library.group_words else tok
        if (members := library.group_words.get(one)) is not None:
            out |= {n for n, k in kinds.items() if k & set(members)}
        elif tok in generic or (tok in ("rest", "others") and i and tokens[i - 1] == "the"):
            out |= set(world.objects)  # "everything", "the stuff", "the rest"
        elif (len(tok) > 3 and singular(tok) and tok not in names
              and singular(tok) not in names and tok not in _NOT_TYPOS and i
              and (tokens[i - 1] in _DETERMINERS or (i > 1 and tokens[i - 2] in _DETERMINERS
                                                      and tokens[i - 1] not in names))):
            out |= set(world.objects)  # an unknown plural noun ("the office supplies"): maybe a group
    return out


_DETERMINERS = frozenset({"the", "all", "my", "your", "our", "their", "those", "these", "some", "any", "other"})


def unseen_names(text: str, world: WorldState, generic: Iterable[str] = ()) -> set[str]:
    """Runs of up to three words of a text that could name an object not seen yet (``screwdriver``,
    ``red_block``, ``old_sponge``, ``dusty_blue_block``); never one with a ``generic`` word ("thing", "item")."""
    padded = _words(text).split()
    generic = set(generic)
    runs = {"_".join(padded[i:i + n]) for n in (1, 2, 3) for i in range(len(padded) - n + 1)
            if not set(padded[i:i + n]) & generic}
    return {w for w in runs if not world.entity_type(w)}


def _parse_all(texts: Iterable[object], world: WorldState, unseen: set[str],
               generic: Iterable[str] = ()) -> CheckedConditions:
    out = CheckedConditions()
    seen: set[Condition] = set()
    generic = set(generic)
    for raw in texts:
        try:
            fact = parse_fact(str(raw))
        except ConditionError as exc:
            out.refuse(RULE_GRAMMAR, str(exc))
            continue
        if vague := [a for a in fact.args if not world.entity_type(a) and set(a.split("_")) & generic]:
            out.refuse(RULE_GENERIC, f"{fact}: '{vague[0]}' is not a name: no object is called that. If what is "
                       "meant is not in view yet, open where it is and state the goal with the name you see "
                       "then (leave `goal` empty until then)")
        elif problem := check_fact(fact, world, unseen):
            out.refuse(RULE_GRAMMAR, problem)
        elif fact not in seen:
            seen.add(fact)
            out.facts.append(fact)
    if len(out.facts) > MAX_CONDITIONS:
        out.refuse(RULE_TOO_MANY, f"{len(out.facts)} conditions are too many; state at most {MAX_CONDITIONS}")
    return out


def check_goal(texts: list[str], instruction: str, beliefs: Beliefs, library: PrimitiveLibrary, *,
               about_instruction: bool = True, answered: bool = False,
               renaming: Iterable[str] = (), answers: Sequence[str] = (),
               start: WorldState | None = None) -> CheckedConditions:
    """The instruction's goal conditions, or the problems with them (each tagged with its rule).

    ``about_instruction=False`` (a goal the client states itself) checks grammar and names only.
    ``answered``: the person has answered the model's question about what is meant; the model's resolution
    of a reference is then never refused as a guess (it is still listed in ``references``). ``answers``: what
    the person answered; each is resolved against the same world, and the goal's pick must fit it.
    ``renaming``: objects a search revealed that may carry a provisional name the goal used ("old_rag"): they
    count as mentioned (whether the renaming is right is checked by the planner, or settled by the person).
    ``start``: the world when the task began ("put it back": where it was then; default: the believed world).

    The words are resolved against the world (``planner/resolution.py``) and the goal held against the
    phrases (``planner/goal_checks.py``): ``resolution``, ``readings`` and ``unresolved`` say how.
    """
    world = beliefs.world
    if not texts:
        out = CheckedConditions()
        out.refuse(RULE_EMPTY, "state the instruction's goal as facts in `goal`, e.g. in(tape, drawer)")
        return out
    stated = _stated_names(texts)
    original = instruction
    for answer in reversed(answers):  # the planner appends the answers to the words: they are resolved apart
        original = original.removesuffix(answer).rstrip()
    keep = {w for words in (*library.goal_words.values(), *library.required_words.values()) for w in words}
    keep |= {p for spec in library.primitives.values() for p in spec.phrases} | set(library.stay_words)
    keep |= set(library.reference_words) | set(library.exception_words) | set(library.generic_nouns) \
        | set(library.group_words)
    extra = stated - set(world.objects) - set(world.places)
    instruction = spell_corrected(instruction, world, extra=extra, keep=keep)
    named = named_entities(instruction, world)
    unseen = unseen_names(instruction, world, library.generic_nouns)
    out = _parse_all(texts, world, unseen, library.generic_nouns)
    if out.problems or not about_instruction:
        return out
    lexicon = default_lexicon(library)
    read_text = _punctuated(original, spell_corrected(original, world, extra=extra, keep=keep))
    resolution = resolve(read_text, world, lexicon)
    unread = account(read_text, resolution, world, lexicon, extra=keep | set(library.primitives))
    said_in_answers = [resolve(a, world, lexicon) for a in answers]
    out.resolution = resolution

    def holds(fact: Condition) -> bool:
        return beliefs.judge(fact)[0]

    padded = _words(instruction)
    stays = any(f" {w} " in padded for w in library.stay_words)  # "leave the blocks where they are"
    words = check_words(out.facts, resolution, world, lexicon, holds=holds, answers=answers,
                        exempt=unseen | set(renaming), start=start, stays=stays, also=said_in_answers,
                        unread=unread)
    changed = changes(out.facts, world, holds)
    mentioned = named | kind_mentions(instruction, world) | unseen | group_mentions(instruction, world, library) \
        | set(renaming) | {c for ph in resolution.phrases for c in ph.candidates}
    for fact in out.facts:
        if fact.args and not set(fact.objects) & set(changed) and not set(fact.args) & mentioned:
            out.refuse(RULE_UNMENTIONED, f"{fact} is about {', '.join(fact.args)}, which the instruction does not "
                       "mention")
        elif not fact.negated and (need := library.goal_words.get(fact.predicate)) and not any(
                f" {w} " in padded for w in need):
            if unread.verbs:  # "seal the drawer": a verb the resolver does not know may ask for that end state
                words.readings.append(Reading(" ".join(unread.verbs), (str(fact),), (), doubt_source(unread.verbs),
                                              unresolved=True))
                words.unresolved.append(" ".join(unread.verbs))
                continue
            out.refuse(RULE_END_STATE, f"{fact}: the instruction does not ask to end with it "
                       f"({' / '.join(need)}); state where things must end up")
    for rule, text in words.problems:
        out.refuse(rule, text)
    for predicate, required in library.required_words.items():  # "... and close the drawer": closed(...) needed
        said = next((w for w in required if f" {w} " in padded), None)
        if said and not any(f.predicate == predicate and not f.negated for f in out.facts):
            out.refuse(RULE_REQUIRED, f"the instruction says '{said}' but no goal fact is {predicate}(...): state "
                       f"what must end {predicate}")
    # objects named only to say where or which, to leave out ("except the cup") or to leave alone ("leave the cup
    # where it is"): a goal may say nothing of them
    left_out = reference_only(instruction, world, (*library.reference_words, *library.exception_words,
                                                   *library.stay_words)) | resolution.left_out()
    named_objects = {n for n in named if n in world.objects} - left_out
    for obj, (said, unknown) in excepted(unread, resolution).items():  # "bar the cup": leaving it is a reading
        if obj in named_objects and not any(obj in f.objects for f in out.facts):
            named_objects.discard(obj)
            words.readings.append(Reading(said, (f"{obj} left where it is",), (obj,), doubt_source(unknown),
                                          unresolved=True))
            words.unresolved.append(said)
    positive = {o for f in out.facts if not f.negated for o in f.objects}
    if missing := sorted(named_objects - {o for f in out.facts for o in f.objects}):
        out.refuse(RULE_NAMED_MISSING, f"the instruction names {', '.join(missing)} but no condition says what must "
                   "hold of it")
    elif missing := sorted(named_objects - positive):
        out.refuse(RULE_ONLY_NEGATED, f"say where {', '.join(missing)} must end up (a fact such as in(...), "
                   "on(...) or holding(...), not only what must not hold)")
    out.readings = list(words.readings)
    out.unresolved = list(words.unresolved)
    out.ends = words.ends
    out.questions = list(words.questions)
    out.references = [Reference(a.said, a.candidates, a.picked, described=False) for a in words.asks]
    out.references += [Reference(r.said, r.candidates, r.resolved, described=True,
                                 source="" if r.from_answer else r.source) for r in words.readings]
    if not answered:
        for ref in out.references:
            if ref.guessed:
                out.refuse(RULE_GUESSED, ref.guess_problem())
    return out


def _punctuated(original: str, corrected: str) -> str:
    """The spell-corrected words with the original's punctuation back (sentences and clauses matter to the
    resolver): word for word while the two agree in length, else the corrected words alone."""
    words = corrected.split()
    parts = re.findall(r"[A-Za-z0-9_]+|[.,;:!?]", original.replace("'", " "))
    if sum(1 for p in parts if p not in ".,;:!?") != len(words):
        return corrected
    it = iter(words)
    return " ".join(p if p in ".,;:!?" else next(it) for p in parts)


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
