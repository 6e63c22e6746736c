"""The wordings suite: instructions generated from the scenes, each with the goal its words denote.

Why generated: a suite written next to the rules that check it measures the rules, not the language
(issue 29: the paraphrase suite scored 100 % while new users' plain wordings were refused). This
module writes instructions for every scene in ``config/scenes/`` from templates per *phenomenon*
(quantifiers, plurals, relative clauses, descriptions by place, state, colour and side, "the
one(s)", pronouns across sentences, exceptions, group words, hidden things named with an
adjective, polite and indirect forms, and ambiguous references), and computes what each phrase
denotes from the scene data: "the blocks on the table" is exactly the objects whose noun is
*block* and whose location is ``table``. Words come from ``config/wordings_lexicon.yaml``.

Ambiguous instructions carry the ``question`` a careful model asks, an ``answer`` that DESCRIBES
the thing ("the one on the tray", "the left one") and ``answer_means``: the object (or place) the
answer picks out. ``candidates`` are the things the ambiguous phrase fits (for a mid-task question:
what the drawer turns out to hold). Sides are the robot's: left is +y in its base frame.

Everything is deterministic: templates are filled in scene order and sampled with
``random.Random(SEED)``; :func:`generate` returns the same suite every time, and
``scripts/generate_wordings.py`` writes it to ``config/tasks/wordings.yaml`` (a test checks the
committed file is current).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from step_planner.bench.goals import parse_goal, satisfied
from step_planner.config_schema import read_yaml, validate
from step_planner.domain.primitives import PrimitiveLibrary
from step_planner.domain.scene import load_scene
from step_planner.domain.world import WorldState
from step_planner.planner.resolution_lexicon import WordingsLexicon
from step_planner.resources import config_path

SEED = 29
PER_CELL = 6  # at most this many instructions per (scene, phenomenon)
PHENOMENA = ("quantifier", "plural", "relative_clause", "place", "state", "colour", "side", "the_one",
             "pronoun", "exception", "group", "hidden_adjective", "polite", "indirect",
             "which_object", "which_place", "hidden_which")
AMBIGUOUS = ("which_object", "which_place", "hidden_which")
SIDE_MARGIN = 0.08  # m: "the left one" only when it is this much further left than the next candidate


@dataclass
class Item:
    """One generated instruction: its words, goal and what its phrases denote."""

    phenomenon: str
    scene: str
    instruction: str
    goal: list[str]
    denotes: dict[str, list[str]] = field(default_factory=dict)  # phrase -> the objects/places it means
    candidates: list[str] = field(default_factory=list)  # what the instruction's singular phrase fits
    question: str = ""
    answer: str = ""
    answer_means: str = ""
    provisional_goal: list[str] = field(default_factory=list)  # what can be stated before the drawer opens


Lexicon = WordingsLexicon  # the model lives beside the resolver, which reads the same file


def load_lexicon(path: str | Path | None = None) -> dict[str, Any]:
    path = path or config_path("wordings_lexicon.yaml")
    return validate(Lexicon, read_yaml(path), str(path)).model_dump()


class SceneWords:
    """One scene seen through the lexicon: nouns, colours, sides, groups, and denotations."""

    def __init__(self, scene: str, world: WorldState, lexicon: dict[str, Any]) -> None:
        self.scene, self.world, self.lex = scene, world, lexicon
        self.objects = [n for n, o in world.objects.items() if o.graspable]  # scene order

    # ---- words for one thing ----------------------------------------------------------------
    def noun(self, obj: str) -> str:
        category = self.world.objects[obj].category or obj.replace("_", " ")
        if category in self.lex["nouns"]:
            return self.lex["nouns"][category]
        return " ".join(w for w in category.split() if w not in self.lex["colours"])

    def plural(self, noun: str) -> str:
        return self.lex["plurals"].get(noun, noun + ("es" if noun.endswith(("x", "sh", "ch")) else "s"))

    def colour(self, obj: str) -> str:
        """The colour word of the object's name, else the nearest lexicon colour to its RGBA ('' if none)."""
        for word in obj.split("_"):
            if word in self.lex["colours"]:
                return word
        rgba = (self.world.objects[obj].geometry or {}).get("rgba")
        if not rgba:
            return ""
        best = min(self.lex["colours"].items(),
                   key=lambda kv: sum((a - b) ** 2 for a, b in zip(kv[1], rgba[:3], strict=True)))
        dist = sum((a - b) ** 2 for a, b in zip(best[1], rgba[:3], strict=True)) ** 0.5
        return best[0] if dist <= self.lex["colour_tolerance"] else ""

    def spoken(self, name: str) -> str:
        return name.replace("_", " ")

    def the(self, name: str) -> str:
        return f"the {self.spoken(name)}"

    def prep(self, place: str) -> str:
        return "in" if self.world.places[place].is_container else "on"

    def at(self, obj: str) -> str:
        """``in the tray`` / ``on the table``: where the object is."""
        loc = self.world.objects[obj].location or ""
        return f"{self.prep(loc)} {self.the(loc)}" if loc in self.world.places else ""

    def y(self, name: str) -> float | None:
        """Left-right coordinate (+y: the robot's left) of an object, or of the place it is in."""
        entity = self.world.objects.get(name) or self.world.places.get(name)
        geometry = (entity.geometry if entity else None) or {}
        pos = geometry.get("position") or geometry.get("cabinet_position")
        if pos is not None:
            return float(pos[1])
        obj = self.world.objects.get(name)
        return self.y(obj.location) if obj is not None and obj.location in self.world.places else None

    def visible(self, obj: str) -> bool:
        return self.world.is_visible(obj)

    def group_of(self, obj: str) -> str:
        category = self.world.objects[obj].category
        return next((g for g, cats in self.lex["groups"].items() if category in cats), "")

    # ---- denotations -------------------------------------------------------------------------
    def members(self, noun: str | None = None, *, colour: str | None = None, at: str | None = None,
                group: str | None = None, visible: bool = True) -> list[str]:
        """The objects a description denotes (scene order)."""
        out = []
        for o in self.objects:
            if visible and not self.visible(o):
                continue
            if noun is not None and self.noun(o) != noun:
                continue
            if colour is not None and self.colour(o) != colour:
                continue
            if at is not None and self.world.objects[o].location != at:
                continue
            if group is not None and self.group_of(o) != group:
                continue
            out.append(o)
        return out

    def nouns(self, countable: bool = False) -> list[str]:
        """The nouns of the scene's objects; ``countable``: without mass nouns ("the rubbish" is all of it)."""
        return [n for n in dict.fromkeys(self.noun(o) for o in self.objects)
                if not (countable and n in self.lex["mass"])]

    def side(self, name: str, among: list[str]) -> str:
        """'left' / 'right' when ``name`` is the leftmost / rightmost of ``among`` by SIDE_MARGIN, else ''."""
        ys = {n: self.y(n) for n in among}
        if any(v is None for v in ys.values()) or len(among) < 2:
            return ""
        others = sorted(v for n, v in ys.items() if n != name)
        if ys[name] >= others[-1] + SIDE_MARGIN:
            return "left"
        if ys[name] <= others[0] - SIDE_MARGIN:
            return "right"
        return ""

    def describe(self, name: str, among: list[str]) -> str:
        """A phrase that singles ``name`` out of ``among`` without naming it ('' if none does)."""
        if name in self.world.objects:
            loc = self.world.objects[name].location
            if loc in self.world.places and self.visible(name) and \
                    sum(1 for o in among if self.world.objects[o].location == loc) == 1:
                return f"the one {self.at(name)}"
        if side := self.side(name, among):
            return f"the {side} one"
        if name in self.world.places and (p := self.world.places[name]).openable:
            states = [self.world.places[n].is_open for n in among]
            if states.count(p.is_open) == 1:
                return f"the {'open' if p.is_open else 'closed'} one"
        return ""

    def destinations(self, objs: list[str], *, containers_only: bool = False) -> list[str]:
        """Places all of ``objs`` fit in together that do not already hold all of them."""
        out = []
        for name, place in self.world.places.items():
            if not place.reachable or (containers_only and not place.is_container):
                continue
            if all(self.world.objects[o].location == name for o in objs):
                continue
            if any(self.world.objects[o].location == name for o in objs):
                continue  # "put the blocks on the table in the table": not a sensible request
            room = None if place.capacity is None else place.capacity - len(self.world.contents(name))
            if room is None or room >= len(objs):
                out.append(name)
        return out


def put_fact(w: SceneWords, obj: str, place: str) -> str:
    return f"{'in' if w.world.places[place].is_container else 'on'}({obj}, {place})"


def article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def listing(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


# ---- templates, one generator per phenomenon --------------------------------------------------
def _quantifier(w: SceneWords, rng: random.Random) -> Iterator[Item]:
    for noun in w.nouns(countable=True):
        for at in [None, *w.world.places]:
            objs = w.members(noun, at=at)
            if len(objs) < 2 or (at is None and len(objs) != len(w.members(noun, visible=False))):
                continue
            where = f" {w.prep(at)} {w.the(at)}" if at else ""
            phrase_all = f"all the {w.plural(noun)}{where}"
            for dest in w.destinations(objs):
                d = f"{w.prep(dest)} {w.the(dest)}"
                forms = [f"Put {phrase_all} {d}.", f"Every {noun}{where} goes {d}.",
                         f"Put each {noun}{where} {d}."]
                if len(objs) == 2:
                    forms += [f"Put both {w.plural(noun)}{where} {d}.", f"Move the two {w.plural(noun)}{where} "
                              f"to {w.the(dest)}."]
                text = rng.choice(forms)
                phrase = text.split(" goes ")[0].removeprefix("Put ").removeprefix("Move ").removesuffix(f" {d}.")
                yield Item("quantifier", w.scene, text, [put_fact(w, o, dest) for o in objs], {phrase.lower(): objs})
    for at in w.world.places:
        objs = w.members(at=at)
        if not objs or not all(w.visible(o) for o in objs):
            continue
        for dest in w.destinations(objs, containers_only=True):
            word = rng.choice(("everything", "whatever is"))
            text = f"Put {word} {w.prep(at)} {w.the(at)} {w.prep(dest)} {w.the(dest)}."
            yield Item("quantifier", w.scene, text, [put_fact(w, o, dest) for o in objs],
                       {f"{word} {w.prep(at)} {w.the(at)}": objs})


def _plural(w: SceneWords, rng: random.Random) -> Iterator[Item]:
    for noun in w.nouns(countable=True):
        for at in w.world.places:
            objs = w.members(noun, at=at)
            if len(objs) < 2:
                continue
            phrase = f"the {w.plural(noun)} {w.prep(at)} {w.the(at)}"
            for dest in w.destinations(objs):
                d = f"{w.prep(dest)} {w.the(dest)}"
                text = rng.choice((f"{phrase.capitalize()} can go {d}.", f"Move {phrase} to {w.the(dest)}.",
                                   f"{phrase.capitalize()} belong {d}."))
                yield Item("plural", w.scene, text, [put_fact(w, o, dest) for o in objs], {phrase: objs})


def _singled(w: SceneWords) -> Iterator[tuple[str, list[str], str]]:
    """(object, the other visible things of its noun, where it is) for objects a place singles out."""
    for noun in w.nouns(countable=True):
        objs = w.members(noun)
        if len(objs) < 2:
            continue
        for o in objs:
            loc = w.world.objects[o].location or ""
            if loc in w.world.places and sum(1 for x in objs if w.world.objects[x].location == loc) == 1:
                yield o, objs, loc


def _relative_clause(w: SceneWords, rng: random.Random) -> Iterator[Item]:
    for o, objs, loc in _singled(w):
        col = w.colour(o)
        same_colour = [x for x in objs if w.colour(x) == col]
        adj = f"{col} " if col and len(same_colour) < len(objs) else ""
        verb = rng.choice(("is", "is sitting", "is lying"))
        phrase = f"the {adj}{w.noun(o)} that {verb} {w.prep(loc)} {w.the(loc)}"
        for dest in w.destinations([o]):
            text = rng.choice((f"Put {phrase} {w.prep(dest)} {w.the(dest)}.",
                               f"{phrase[0].upper() + phrase[1:]} belongs {w.prep(dest)} {w.the(dest)}."))
            yield Item("relative_clause", w.scene, text, [put_fact(w, o, dest)], {phrase: [o]}, candidates=objs)
    for noun in w.nouns(countable=True):
        for at in w.world.places:
            objs = w.members(noun, at=at)
            if len(objs) >= 2 and len(objs) < len(w.members(noun)):
                phrase = f"the {w.plural(noun)} that are {w.prep(at)} {w.the(at)}"
                for dest in w.destinations(objs):
                    yield Item("relative_clause", w.scene, f"Put {phrase} {w.prep(dest)} {w.the(dest)}.",
                               [put_fact(w, o, dest) for o in objs], {phrase: objs})


def _place(w: SceneWords, rng: random.Random) -> Iterator[Item]:
    for o, objs, loc in _singled(w):
        for dest in w.destinations([o]):
            phrase = f"the {w.noun(o)} from {w.the(loc)}"
            if not w.world.places[dest].is_container and rng.random() < 0.5:  # "in the tray" never reads as where to
                phrase = f"the {w.noun(o)} {w.prep(loc)} {w.the(loc)}"
            text = rng.choice((f"Put {phrase} {w.prep(dest)} {w.the(dest)}.", f"Move {phrase} to {w.the(dest)}."))
            yield Item("place", w.scene, text, [put_fact(w, o, dest)], {phrase: [o]}, candidates=objs)


def single_states(w: SceneWords, name: str, names: list[str]) -> list[str]:
    """The states ("open", "closed", "empty") that single out place ``name`` among the places ``names`` of its kind:
    the one open (or closed) drawer of two or more, the one container seen empty. Both wordings corpora use it."""
    place, places = w.world.places[name], w.world.places
    states = []
    if place.openable and len(names) >= 2 and sum(places[n].is_open == place.is_open for n in names) == 1:
        states.append("open" if place.is_open else "closed")
    if (place.is_open or not place.openable) and place.is_container and not w.world.contents(name) and \
            all(w.world.contents(n) or (places[n].openable and not places[n].is_open) for n in names if n != name):
        states.append("empty")
    return states


def _state(w: SceneWords, rng: random.Random) -> Iterator[Item]:
    kinds: dict[str, list[str]] = {}
    for name, place in w.world.places.items():
        kinds.setdefault(place.kind, []).append(name)
    for kind, names in kinds.items():
        for name in names:
            place, words = w.world.places[name], single_states(w, name, names)
            for word in words:
                phrase = f"the {word} {kind}"
                movable = [o for o in w.members() if w.world.objects[o].location != name][:2]
                for k in (1, 2):
                    objs = movable[:k]
                    if len(objs) < k or name not in w.destinations(objs):
                        continue
                    things = listing([w.the(o) for o in objs])
                    text = rng.choice((f"Put {things} in {phrase}.", f"{things[0].upper() + things[1:]} should go "
                                       f"in {phrase}."))
                    yield Item("state", w.scene, text, [put_fact(w, o, name) for o in objs], {phrase: [name]},
                               candidates=names)
            if place.openable and place.is_open and len(names) >= 2 and words:
                phrase = f"the {words[0]} {kind}"
                yield Item("state", w.scene, f"Close {phrase}.", [f"closed({name})"], {phrase: [name]},
                           candidates=names)


def _colour(w: SceneWords, rng: random.Random) -> Iterator[Item]:
    for noun in w.nouns(countable=True):
        objs = w.members(noun)
        for colour in dict.fromkeys(w.colour(o) for o in objs):
            if not colour:
                continue
            chosen = w.members(noun, colour=colour)
            if len(chosen) == 1:
                o = chosen[0]
                said = f"the {colour} {noun}"
                if said.replace(" ", "_").removeprefix("the_") == o:
                    if len(objs) < 2:
                        continue
                    said = rng.choice((f"the {colour} one", f"the {noun}, the {colour} one,"))
                for dest in w.destinations([o]):
                    text = f"Put {said} {w.prep(dest)} {w.the(dest)}."
                    if said == f"the {colour} one":
                        text = f"Of the {w.plural(noun)}, put {said} {w.prep(dest)} {w.the(dest)}."
                    yield Item("colour", w.scene, text, [put_fact(w, o, dest)], {said.rstrip(","): [o]},
                               candidates=objs if len(objs) > 1 else [])
            elif len(chosen) >= 2:
                for at in w.world.places:
                    sub = w.members(noun, colour=colour, at=at)
                    if len(sub) < 2:
                        continue
                    phrase = f"the {colour} {w.plural(noun)} {w.prep(at)} {w.the(at)}"
                    for dest in w.destinations(sub):
                        yield Item("colour", w.scene, f"Put {phrase} {w.prep(dest)} {w.the(dest)}.",
                                   [put_fact(w, o, dest) for o in sub], {phrase: sub})


def _side(w: SceneWords, rng: random.Random) -> Iterator[Item]:
    for noun in w.nouns(countable=True):
        objs = w.members(noun)
        for o in objs:
            side = w.side(o, objs)
            if not side:
                continue
            phrase = rng.choice((f"the {noun} on the {side}", f"the {side}most {noun}", f"the {noun} furthest "
                                 f"to the {side}"))
            for dest in w.destinations([o]):
                yield Item("side", w.scene, f"Put {phrase} {w.prep(dest)} {w.the(dest)}.", [put_fact(w, o, dest)],
                           {phrase: [o]}, candidates=objs)


def _the_one(w: SceneWords, rng: random.Random) -> Iterator[Item]:
    for o, objs, loc in _singled(w):
        for dest in w.destinations([o]):
            text = rng.choice((f"Of the {w.plural(w.noun(o))}, put the one {w.prep(loc)} {w.the(loc)} "
                               f"{w.prep(dest)} {w.the(dest)}.",
                               f"See the {w.plural(w.noun(o))}? The one {w.prep(loc)} {w.the(loc)} goes "
                               f"{w.prep(dest)} {w.the(dest)}."))
            yield Item("the_one", w.scene, text, [put_fact(w, o, dest)],
                       {f"the one {w.prep(loc)} {w.the(loc)}": [o]}, candidates=objs)
    for noun in w.nouns(countable=True):
        for at in w.world.places:
            objs = w.members(noun, at=at)
            if objs and len(objs) < len(w.members(noun)) and len(objs) >= 2:
                for dest in w.destinations(objs):
                    text = f"Put the {w.plural(noun)} {w.prep(dest)} {w.the(dest)}, the ones {w.prep(at)} " \
                           f"{w.the(at)}."
                    yield Item("the_one", w.scene, text, [put_fact(w, o, dest) for o in objs],
                               {f"the ones {w.prep(at)} {w.the(at)}": objs})


def _named_visible(w: SceneWords) -> list[str]:
    """Objects whose spoken name says which (no other object shares the words)."""
    return [o for o in w.members() if not any(c.isdigit() for c in o)  # nobody says "green block 1"
            and (sum(1 for x in w.members() if w.noun(x) == w.noun(o)) == 1 or w.noun(o) != w.spoken(o))]


def _pronoun(w: SceneWords, rng: random.Random) -> Iterator[Item]:
    for o in _named_visible(w):
        loc = w.world.objects[o].location or ""
        for dest in w.destinations([o]):
            d = f"{w.prep(dest)} {w.the(dest)}"
            text = rng.choice((f"There's {article(w.spoken(o))} {w.spoken(o)} {w.at(o)}. Put it {d}.",
                               f"See {w.the(o)}? It goes {d}.",
                               f"Pick up {w.the(o)}. Then put it {d}."))
            yield Item("pronoun", w.scene, text, [put_fact(w, o, dest)], {"it": [o]})
        del loc
    for noun in w.nouns(countable=True):
        for at in w.world.places:
            objs = w.members(noun, at=at)
            if len(objs) >= 2:
                for dest in w.destinations(objs):
                    text = f"The {w.plural(noun)} {w.prep(at)} {w.the(at)}: put them {w.prep(dest)} {w.the(dest)}."
                    yield Item("pronoun", w.scene, text, [put_fact(w, o, dest) for o in objs], {"them": objs})


def exception_cases(w: SceneWords) -> Iterator[tuple[str, str, list[str], str]]:
    """Every (place, excepted thing, the rest, destination) an exception can be said of: three or more things in
    view at a place, the excepted one named, the rest going into a container."""
    for at in w.world.places:
        here = w.members(at=at)
        if len(here) < 3 or not all(w.visible(o) for o in here):
            continue
        for out in here:
            if out not in _named_visible(w):
                continue
            objs = [o for o in here if o != out]
            for dest in w.destinations(objs, containers_only=True):
                yield at, out, objs, dest


def _exception(w: SceneWords, rng: random.Random) -> Iterator[Item]:
    for at, out, objs, dest in exception_cases(w):
        word = rng.choice(("everything", "all the things", "everything else"))
        if word == "everything else":
            text = f"Leave {w.the(out)} where it is; put everything else {w.prep(at)} {w.the(at)} " \
                   f"{w.prep(dest)} {w.the(dest)}."
            phrase = f"everything else {w.prep(at)} {w.the(at)}"
        else:
            text = f"Put {word} {w.prep(at)} {w.the(at)} except {w.the(out)} {w.prep(dest)} {w.the(dest)}."
            phrase = f"{word} {w.prep(at)} {w.the(at)} except {w.the(out)}"
        yield Item("exception", w.scene, text, [put_fact(w, o, dest) for o in objs], {phrase: objs})


def _group(w: SceneWords, rng: random.Random) -> Iterator[Item]:
    for group in w.lex["groups"]:
        every = w.members(group=group, visible=False)
        for at in [None, *w.world.places]:
            objs = w.members(group=group, at=at)
            if len(objs) < 2 or (at is None and len(objs) != len(every)):
                continue  # "the tools" for one tool is not how anyone speaks; unqualified only when all are seen
            where = f" {w.prep(at)} {w.the(at)}" if at else ""
            phrase = f"the {group}{where}"
            for dest in w.destinations(objs):
                d = f"{w.prep(dest)} {w.the(dest)}"
                text = rng.choice((f"Put {phrase} {d}.", f"Tidy {phrase} away {d}.",
                                   f"{phrase[0].upper() + phrase[1:]} should go {d}."))
                yield Item("group", w.scene, text, [put_fact(w, o, dest) for o in objs], {phrase: objs})


def _hidden_adjective(w: SceneWords, rng: random.Random) -> Iterator[Item]:
    for o in w.objects:
        loc = w.world.objects[o].location or ""
        if w.visible(o) or loc not in w.world.places:
            continue
        if sum(1 for x in w.objects if w.noun(x) == w.noun(o)) > 1 and w.noun(o) == w.spoken(o):
            continue
        adjectives = [a for a in w.lex["adjectives"] if a not in o.split("_")]
        adj = rng.choice(adjectives)
        art = article(adj)
        for dest in w.destinations([o]):
            if w.world.places[dest].openable and not w.world.places[dest].is_open:
                continue
            first = rng.choice((f"There should be {art} {adj} {w.spoken(o)} in {w.the(loc)}.",
                                f"I think there's {art} {adj} {w.spoken(o)} in {w.the(loc)}."))
            then = "Bin it." if w.world.places[dest].kind == "bin" and rng.random() < 0.5 else \
                f"Put it {w.prep(dest)} {w.the(dest)}."
            yield Item("hidden_adjective", w.scene, f"{first} {then}", [put_fact(w, o, dest)],
                       {f"{art} {adj} {w.spoken(o)}": [o], "it": [o]})


def _polite_indirect(w: SceneWords, rng: random.Random) -> Iterator[Item]:
    for o in _named_visible(w):
        for dest in w.destinations([o]):
            d = f"{w.prep(dest)} {w.the(dest)}"
            polite = rng.choice((f"Could you please put {w.the(o)} {d}?",
                                 f"Would you mind moving {w.the(o)} to {w.the(dest)}, please?",
                                 f"When you have a moment, please put {w.the(o)} {d}. Thanks!"))
            indirect = rng.choice((f"{w.the(o).capitalize()} belongs {d}.",
                                   f"I'd like {w.the(o)} {d}.",
                                   f"It would be great if {w.the(o)} ended up {d}."))
            yield Item("polite", w.scene, polite, [put_fact(w, o, dest)], {w.the(o): [o]})
            yield Item("indirect", w.scene, indirect, [put_fact(w, o, dest)], {w.the(o): [o]})


def which_cases(w: SceneWords) -> Iterator[tuple[str, list[str], str, str, str]]:
    """Every (noun, the things it fits, the one meant, its description, the question) where a noun fits several
    visible things and the one meant can be described: the person is asked which."""
    for noun in w.nouns(countable=True):
        objs = w.members(noun)
        if len(objs) < 2:
            continue
        descriptions = {o: w.describe(o, objs) for o in objs}
        for o in objs:
            if not descriptions[o]:
                continue
            if all(descriptions.values()):
                question = f"Which {noun} do you mean: {listing(list(descriptions.values()))}?"
            else:
                question = f"There are {len(objs)} {w.plural(noun)}; which one do you mean?"
            yield noun, objs, o, descriptions[o], question


def _which_object(w: SceneWords, rng: random.Random) -> Iterator[Item]:
    for noun, objs, o, description, question in which_cases(w):
        for dest in w.destinations([o]):
            if all(w.world.objects[x].location == dest for x in objs if x != o):
                continue
            text = rng.choice((f"Put the {noun} {w.prep(dest)} {w.the(dest)}.",
                               f"Move the {noun} to {w.the(dest)}."))
            yield Item("which_object", w.scene, text, [put_fact(w, o, dest)], {f"the {noun}": objs},
                       candidates=objs, question=question, answer=description[0].upper() + description[1:] + ".",
                       answer_means=o)


def _which_place(w: SceneWords, rng: random.Random) -> Iterator[Item]:
    kinds: dict[str, list[str]] = {}
    for name, place in w.world.places.items():
        if place.is_container:
            kinds.setdefault(place.kind, []).append(name)
    for kind, names in kinds.items():
        if len(names) < 2:
            continue
        descriptions = {n: w.describe(n, names) for n in names}
        for dest in names:
            if not descriptions[dest]:
                continue
            for o in _named_visible(w):
                if w.world.objects[o].location in names or dest not in w.destinations([o]):
                    continue
                question = (f"Which {kind} do you mean: {listing(list(descriptions.values()))}?"
                            if all(descriptions.values()) else f"There are {len(names)} {w.plural(kind)}; which one?")
                text = rng.choice((f"Put {w.the(o)} in the {kind}.", f"{w.the(o).capitalize()} goes in the {kind}."))
                yield Item("which_place", w.scene, text, [put_fact(w, o, dest)], {f"the {kind}": names},
                           candidates=names, question=question,
                           answer=descriptions[dest][0].upper() + descriptions[dest][1:] + ".", answer_means=dest)


def _hidden_which(w: SceneWords, rng: random.Random) -> Iterator[Item]:
    uses = w.lex["uses"]
    for drawer, place in w.world.places.items():
        inside = w.world.contents(drawer)
        if not place.openable or place.is_open or len(inside) < 2:
            continue
        described = {o: uses.get(w.world.objects[o].category, "") for o in inside}
        if len(set(described.values())) < len(inside) or not all(described.values()):
            continue
        for o in inside:
            for dest in w.destinations([o]):
                if w.world.places[dest].openable:
                    continue
                generic = rng.choice(w.lex["generic"])
                text = rng.choice((f"Take the {generic} out of {w.the(drawer)} and put it {w.prep(dest)} "
                                   f"{w.the(dest)}.",
                                   f"There's {article(generic)} {generic} in {w.the(drawer)}; move it to "
                                   f"{w.the(dest)}."))
                yield Item("hidden_which", w.scene, text, [put_fact(w, o, dest)], {f"the {generic}": inside},
                           candidates=inside, question=f"{w.the(drawer).capitalize()} holds {len(inside)} things; "
                           f"which one do you mean?", answer=described[o][0].upper() + described[o][1:] + ".",
                           answer_means=o, provisional_goal=[put_fact(w, generic, dest)])


GENERATORS = {
    "quantifier": _quantifier, "plural": _plural, "relative_clause": _relative_clause, "place": _place,
    "state": _state, "colour": _colour, "side": _side, "the_one": _the_one, "pronoun": _pronoun,
    "exception": _exception, "group": _group, "hidden_adjective": _hidden_adjective,
    "polite_indirect": _polite_indirect, "which_object": _which_object, "which_place": _which_place,
    "hidden_which": _hidden_which,
}


# ---- the suite ----------------------------------------------------------------------------------
def _category(length: int, hidden: bool) -> str | None:
    for word, (low, high) in (("short", (1, 4)), ("long", (5, 8)), ("horizon", (12, 40))):
        if low <= length <= high:
            return f"{word}_{'complex' if hidden else 'simple'}"
    return None


def _milestones(goal: list[str], plan: list[Any]) -> list[list[str]]:
    """One milestone per goal fact, in the order the expert's plan reaches them."""
    order = {str(c.kwargs.get("object")): i for i, c in enumerate(plan) if c.name == "place"}
    return [[f] for f in sorted(goal, key=lambda f: order.get(f[f.find("(") + 1:f.find(",")], len(plan)))]


def task_entry(item: Item, index: int, library: PrimitiveLibrary, world: WorldState) -> dict[str, Any] | None:
    """The suite entry of an item (None when its goal already holds or its length fits no category)."""
    from step_planner.bench.symbolic_planner import PlanningError, solve_online

    goal = parse_goal(item.goal)
    if satisfied(goal, world):
        return None
    try:
        plan = solve_online(library, world, goal, item.instruction)
    except PlanningError:
        return None
    hidden = any(not world.is_visible(o) for a in goal for o in a.objects)
    category = _category(len(plan), hidden)
    if category is None:
        return None
    ambiguous = item.phenomenon in AMBIGUOUS
    entry: dict[str, Any] = {
        "id": f"w{index:03d}_{item.scene.removesuffix('.yaml')}_{item.phenomenon}",
        "category": category, "scene": item.scene, "style": "ambiguous" if ambiguous else item.phenomenon,
        "phenomenon": item.phenomenon, "instruction": item.instruction, "goal": list(item.goal),
        "subgoals": _milestones(item.goal, plan), "optimal": len(plan), "denotes": item.denotes,
    }
    if item.candidates:
        entry["candidates"] = list(item.candidates)
    if ambiguous:
        entry.update(question=item.question, answer=item.answer, answer_means=item.answer_means)
    if item.provisional_goal:
        entry["provisional_goal"] = list(item.provisional_goal)
    return entry


def generate(scenes_dir: str | Path | None = None, library: PrimitiveLibrary | None = None,
             seed: int = SEED, per_cell: int = PER_CELL) -> list[dict[str, Any]]:
    """The suite's task entries: every scene x phenomenon, at most ``per_cell`` each, sampled with ``seed``."""
    scenes_dir = Path(scenes_dir or config_path("scenes"))
    library = library or PrimitiveLibrary.load(config_path("primitives.yaml"))
    lexicon = load_lexicon()
    entries: list[dict[str, Any]] = []
    seen: set[str] = set()
    for path in sorted(scenes_dir.glob("*.yaml")):
        world = load_scene(path)
        words = SceneWords(path.name, world, lexicon)
        for name, make in GENERATORS.items():
            rng = random.Random(f"{seed}:{path.name}:{name}")
            items = [i for i in make(words, rng) if i.instruction not in seen]
            rng.shuffle(items)
            kept: dict[str, int] = {}
            for item in items:
                if kept.get(item.phenomenon, 0) >= per_cell or item.instruction in seen:
                    continue
                entry = task_entry(item, len(entries) + 1, library, world)
                if entry is None:
                    continue
                seen.add(item.instruction)
                kept[item.phenomenon] = kept.get(item.phenomenon, 0) + 1
                entries.append(entry)
    return entries


HEADER = """\
# yaml-language-server: $schema=../schemas/tasks.schema.json
# GENERATED by scripts/generate_wordings.py from config/scenes/*.yaml and config/wordings_lexicon.yaml
# (step_planner/bench/wordings.py, seed {seed}); do not edit by hand: re-run the script. test/test_bench_wordings.py
# checks this file is current and every goal is what its words denote in the scene.
#
# `step-planner bench --suite wordings`. Each task: `phenomenon` (the language it tries), `style` (the
# phenomenon, or `ambiguous`), `denotes` (phrase -> the objects or places it means, computed from the scene),
# `candidates` (what the instruction's noun fits). Ambiguous tasks carry the `question` a careful model asks,
# the person's `answer` (it describes, never names) and `answer_means` (what the answer picks out);
# `hidden_which` tasks are ambiguous only once the drawer is open (the question belongs mid-task), and their
# `provisional_goal` is what can be stated before anything is seen. Sides are the robot's (+y is left).
"""


def render(entries: list[dict[str, Any]], seed: int = SEED) -> str:
    class _NoAliases(yaml.SafeDumper):
        def ignore_aliases(self, data: Any) -> bool:
            return True

    body = yaml.dump({"tasks": entries}, Dumper=_NoAliases, sort_keys=False, allow_unicode=True, width=1000,
                     default_flow_style=None)
    return HEADER.format(seed=seed) + body
