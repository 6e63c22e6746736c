"""Which objects an instruction's words may refer to: what the ``extra_object`` and ``swapped_object``
meaning mistakes must stay clear of.

A mistake that moves "an object nobody mentioned" is only a mistake when the words really never refer to it,
so this over-approximates: an object counts as referred to when

- the task says so: a goal object, one a phrase denotes or the instruction's noun fits (``denotes``,
  ``candidates``), what the person's answer picks out;
- a word of the instruction (or the person's answer) names it: a word of its name or category, its noun or
  that noun's plural (``config/wordings_lexicon.yaml``), a group word covering its category ("the tools"), its
  colour when the words say "the red one(s)"; typos within one edit of a word of four letters or more count;
- the words are about everything somewhere: "everything", "anything", "whatever", "things", "the rest", "else"
  or a generic noun ("the thing in the drawer") refer to every object at a place the words name other than where
  the goal puts things, or to every object when they name no other; "clear", "tidy", "restock", "declutter"
  and "clean" to every object.

This is benchmark data about the words (what the expert may misread), not the planner's resolution of them.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from step_planner.config_schema import parse_yaml
from step_planner.domain.world import WorldState

UNIVERSAL = frozenset({"everything", "anything", "whatever", "things", "thing", "stuff", "rest", "else", "item",
                       "items", "object", "objects", "empty", "contents"})
EVERYTHING_VERBS = frozenset({"clear", "tidy", "restock", "declutter", "clean"})
_FILLER = frozenset({"of", "the", "a", "an", "and", "with", "for", "in", "on", "to"})


@lru_cache(maxsize=1)
def _lexicon() -> dict[str, Any]:
    from step_planner.bench.wordings import load_lexicon

    return load_lexicon()


def words_of(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _said(word: str, said: set[str]) -> bool:
    """``word`` is among the words said, or one edit away from one of them (a typo) when it is long enough."""
    if word in said:
        return True
    if len(word) < 4:
        return False
    letters = set(word)
    return any(abs(len(w) - len(word)) <= 1 and len(letters ^ set(w)) <= 2
               and difflib.SequenceMatcher(None, w, word).ratio() >= 0.8 for w in said if len(w) >= 4)


def object_words(world: WorldState, name: str, lexicon: dict[str, Any] | None = None) -> set[str]:
    """The words that name an object: its name's and category's words, its noun and plural, its groups."""
    lex = lexicon or _lexicon()
    obj = world.objects[name]
    category = obj.category or name.replace("_", " ")
    colours = set(lex.get("colours", {}))
    noun = lex.get("nouns", {}).get(category) or " ".join(w for w in category.split() if w not in colours)
    plural = lex.get("plurals", {}).get(noun, noun + ("es" if noun.endswith(("x", "sh", "ch")) else "s"))
    out = {w for w in (*name.split("_"), *words_of(category), *words_of(noun), *words_of(plural))
           if w not in colours and not w.isdigit() and w not in _FILLER}
    out |= {group for group, cats in lex.get("groups", {}).items() if category in cats}
    return out


def object_colour(world: WorldState, name: str, lexicon: dict[str, Any] | None = None) -> str:
    """The colour word of an object's name, else the nearest lexicon colour to its RGBA within tolerance."""
    lex = lexicon or _lexicon()
    colours = lex.get("colours", {})
    for word in name.split("_"):
        if word in colours:
            return word
    rgba = (world.objects[name].geometry or {}).get("rgba")
    if not rgba or not colours:
        return ""
    best, rgb = min(colours.items(), key=lambda kv: sum((a - b) ** 2 for a, b in zip(kv[1], rgba[:3], strict=True)))
    dist = sum((a - b) ** 2 for a, b in zip(rgb, rgba[:3], strict=True)) ** 0.5
    return best if dist <= lex.get("colour_tolerance", 0.2) else ""


@lru_cache(maxsize=1)
def _kind_words() -> dict[str, tuple[frozenset[str], ...]]:
    """Place kind -> other words people name such a place with: the resolver's surface words ("bench", "desk") and
    the outside word list's (``benchmarks/data/outside_words.yaml``: "countertop", "dustbin", "crate"), so that a
    place said either way counts as named (an over-approximation, as everything here)."""
    from step_planner.bench.wordings_outside import WORDS_FILE
    from step_planner.resources import config_path

    lexicon = parse_yaml(config_path("resolution_lexicon.yaml").read_text()) or {}
    outside = parse_yaml(WORDS_FILE.read_text()) if WORDS_FILE.is_file() else {}
    words = {"surface": [*lexicon.get("surface_words", []), *outside.get("surface_nouns", [])],
             "bin": outside.get("bin_nouns", []), "box": outside.get("box_nouns", [])}
    return {kind: tuple(frozenset(words_of(phrase)) for phrase in found) for kind, found in words.items()}


def _swapped(word: str, said: set[str]) -> bool:
    """A three-letter word said with two neighbouring letters swapped ("bni" for "bin")."""
    return len(word) == 3 and any(w[0] == word[1] and w[1] == word[0] and w[2] == word[2] or
                                  w[0] == word[0] and w[1] == word[2] and w[2] == word[1]
                                  for w in said if len(w) == 3)


def places_named(world: WorldState, said: set[str]) -> set[str]:
    """Places a word names: a word of the place's name (colours aside), its kind ("drawer": every drawer), another
    word for its kind ("bench" or "countertop" for the table), or one of those with a typo."""
    colours = set(_lexicon().get("colours", {}))
    kinds = _kind_words()
    out = set()
    for name, place in world.places.items():
        words = {w for w in (*name.split("_"), *words_of(place.kind or "")) if w not in colours and w not in _FILLER}
        if any(_said(w, said) or _swapped(w, said) for w in words) or \
                any(phrase <= said for phrase in kinds.get(place.kind or "", ())):
            out.add(name)
    return out


def referred_objects(instruction: str, world: WorldState, *, goal: Iterable[Any] = (), also: Iterable[str] = (),
                     answer: str = "") -> frozenset[str]:
    """Every object of ``world`` the words (``instruction`` and the person's ``answer``) may refer to, plus the
    ``goal``'s objects (atoms) and ``also`` (denotations, candidates, what the answer means)."""
    said = set(words_of(f"{instruction} {answer}"))
    goal_atoms = list(goal)
    out = {o for a in goal_atoms for o in a.objects} | set(also)
    lex = _lexicon()
    said_colours = said if said & {"one", "ones"} else set()  # "the red one": a colour word refers on its own
    for name in world.objects:
        if any(_said(w, said) for w in object_words(world, name, lex)) or \
                (said_colours and object_colour(world, name, lex) in said_colours):
            out.add(name)
    if said & EVERYTHING_VERBS:
        out |= set(world.objects)
    elif said & UNIVERSAL:  # scoped by the places named, other than where the goal puts things
        named = places_named(world, said) - {a.args[1] for a in goal_atoms
                                             if a.predicate in ("in", "on", "at") and not a.negated}
        out |= {o for o, obj in world.objects.items() if not named or obj.location in named}
    return frozenset(o for o in out if o in world.objects)


def task_referred(task: Any) -> frozenset[str]:
    """:func:`referred_objects` of a benchmark task, with everything its data says the words refer to."""
    also = {n for _, names in task.denotes for n in names} | set(task.candidates)
    if task.answer_means:
        also.add(task.answer_means)
    return referred_objects(task.instruction, task.world, goal=(*task.goal, *task.stated_goal), also=also,
                            answer=task.answer)
