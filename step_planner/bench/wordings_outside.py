"""The wordings_outside suite: plain instructions in words the planner's reader does not hold.

Why: the ``wordings`` suite is generated from ``config/wordings_lexicon.yaml``, which the resolver reads too, so it
can only try words the reader already knows (issue 43: 427/427 there, 12/16 on words from elsewhere). This suite
takes its verbs, place nouns, exception words, quantifiers, adverbs, participles, state, side and colour-matching
phrases from ``benchmarks/data/outside_words.yaml``, a list nothing under ``step_planner/planner`` reads (a test
checks the lexicon files hold none of it), plus a typo of each noun. What each phrase denotes and the goal are
computed from the scene files, as :mod:`step_planner.bench.wordings` does, whose scene reading this reuses; the
object nouns themselves are the people's nouns of the scenes (a thing has to be called something).

One ambiguous phenomenon (``outside_which``: an outside verb with a noun several things fit) carries the question
a careful model asks and a describing answer; every other instruction is clear: a person at the robot would carry it
out without asking. ``scripts/generate_wordings.py --suite wordings_outside`` writes the suite to
``benchmarks/data/tasks/wordings_outside.yaml`` (a test checks the committed file is current).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from step_planner.bench.wordings import (
    Item,
    SceneWords,
    _named_visible,
    _singled,
    exception_cases,
    listing,
    load_lexicon,
    put_fact,
    single_states,
    task_entry,
    which_cases,
)
from step_planner.config_schema import parse_yaml
from step_planner.domain.primitives import PrimitiveLibrary
from step_planner.domain.scene import load_scene
from step_planner.resources import benchmarks_data_dir, config_path

SEED = 43
PER_CELL = 5  # at most this many instructions per (scene, phenomenon)
WORDS_FILE = benchmarks_data_dir() / "outside_words.yaml"
SUITE_FILE = benchmarks_data_dir() / "tasks" / "wordings_outside.yaml"
AMBIGUOUS = ("outside_which",)


def load_words(path: str | Path | None = None) -> dict[str, Any]:
    """The outside word list (a plain YAML mapping; its sections are named in the file)."""
    data = parse_yaml(Path(path or WORDS_FILE).read_text())
    if not isinstance(data, dict):
        raise ValueError(f"{path or WORDS_FILE}: expected a mapping of word lists")
    return data


def typo(word: str) -> str:
    """``word`` with the two letters after its first swapped ("sponge" -> "sopnge"); words under four letters and
    swaps that change nothing are kept (a person's slip, not a new word)."""
    for i in range(1, len(word) - 2):
        if word[i] != word[i + 1] and word[i].isalpha() and word[i + 1].isalpha():
            return word[:i] + word[i + 1] + word[i] + word[i + 2:]
    return word


class Outside:
    """One scene with the outside words: the phrases a template needs."""

    def __init__(self, w: SceneWords, words: dict[str, Any]) -> None:
        self.w, self.words = w, words

    def d(self, dest: str) -> str:
        return f"{self.w.prep(dest)} {self.w.the(dest)}"

    def surface(self) -> str:
        return next((n for n, p in self.w.world.places.items() if p.kind == "surface"), "")

    def only(self, kind: str) -> str:
        """The one reachable place of ``kind`` ('' when there is none or several)."""
        names = [n for n, p in self.w.world.places.items() if p.kind == kind]
        return names[0] if len(names) == 1 and self.w.world.places[names[0]].reachable else ""


def _sentence(text: str) -> str:
    return text[0].upper() + text[1:]


# ---- templates ----------------------------------------------------------------------------------------------
def _placing_verb(o: Outside, rng: random.Random) -> Iterator[Item]:
    w = o.w
    for obj in _named_visible(w):
        for dest in w.destinations([obj]):
            to = rng.random() < 0.5
            verb = rng.choice(o.words["placing_verbs"]["to" if to else "in"])
            where = f"to {w.the(dest)}" if to else o.d(dest)
            text = rng.choice((f"{_sentence(verb)} {w.the(obj)} {where}.",
                               f"Could you {verb} {w.the(obj)} over {where}?",
                               f"{_sentence(verb)} {w.the(obj)} {where}, please."))
            yield Item("placing_verb", w.scene, text, [put_fact(w, obj, dest)], {w.the(obj): [obj]})


def _disposal(o: Outside, rng: random.Random) -> Iterator[Item]:
    w, bin_ = o.w, o.only("bin")
    if not bin_:
        return
    for obj in _named_visible(w):
        if bin_ not in w.destinations([obj]):
            continue
        verb = rng.choice(o.words["disposal_verbs"])
        head, _, particle = verb.partition(" ")
        said = f"{head} {w.the(obj)} {particle}".strip() if particle else f"{verb} {w.the(obj)}"
        text = rng.choice((f"{_sentence(said)}.", f"Please {said}.", f"Could you {said}?"))
        yield Item("disposal", w.scene, text, [put_fact(w, obj, bin_)], {w.the(obj): [obj]})
    for noun in w.nouns(countable=True):
        objs = w.members(noun, at=o.surface())
        if len(objs) >= 2 and len(objs) == len(w.members(noun, visible=False)) and bin_ in w.destinations(objs):
            verb = rng.choice([v for v in o.words["disposal_verbs"] if " " not in v])
            phrase = f"the {w.plural(noun)}"
            yield Item("disposal", w.scene, f"{_sentence(verb)} {phrase}, all of them.",
                       [put_fact(w, x, bin_) for x in objs], {phrase: objs})


def _clear_from(o: Outside, rng: random.Random) -> Iterator[Item]:
    w, table = o.w, o.surface()
    if not table:
        return
    for noun in w.nouns(countable=True):
        objs = w.members(noun, at=table)
        if not objs or len(objs) != len(w.members(noun)):
            continue
        said = f"the {w.plural(noun)}" if len(objs) > 1 else f"the {noun}"
        for dest in w.destinations(objs, containers_only=True):
            top = rng.choice(o.words["surface_nouns"])
            verb = rng.choice(o.words["clearing_verbs"])
            text = rng.choice((f"{_sentence(verb)} {said} off the {top} into {w.the(dest)}.",
                               f"Take {said} off the {top} and put {'them' if len(objs) > 1 else 'it'} "
                               f"{o.d(dest)}."))
            yield Item("clear_from", w.scene, text, [put_fact(w, x, dest) for x in objs], {said: objs})
    here = w.members(at=table)
    if here and len(here) == len([x for x in w.objects if w.world.objects[x].location == table]):
        for dest in w.destinations(here, containers_only=True):
            top = rng.choice(o.words["surface_nouns"])
            verb = rng.choice(o.words["clearing_verbs"])
            yield Item("clear_from", w.scene, f"{_sentence(verb)} the {top}: everything on it goes {o.d(dest)}.",
                       [put_fact(w, x, dest) for x in here], {"everything on it": here})
    for obj, objs, loc in _singled(w):
        if loc != table:
            continue
        for dest in w.destinations([obj]):
            top = rng.choice(o.words["surface_nouns"])
            text = f"Move the {w.noun(obj)} on the {top} {o.d(dest)}."
            yield Item("clear_from", w.scene, text, [put_fact(w, obj, dest)],
                       {f"the {w.noun(obj)} on the {top}": [obj]}, candidates=objs)


def _tidying(o: Outside, rng: random.Random) -> Iterator[Item]:
    w = o.w
    for noun in w.nouns(countable=True):
        objs = w.members(noun)
        if len(objs) < 2 or len(objs) != len(w.members(noun, visible=False)):
            continue
        for dest in w.destinations(objs, containers_only=True):
            verb = rng.choice(o.words["tidying_verbs"])
            phrase = f"the {w.plural(noun)}"
            yield Item("tidying", w.scene, f"{_sentence(verb)} {phrase} into {w.the(dest)}.",
                       [put_fact(w, x, dest) for x in objs], {phrase: objs})


def _swap(o: Outside, rng: random.Random) -> Iterator[Item]:
    w = o.w
    named = _named_visible(w)
    for i, a in enumerate(named):
        for b in named[i + 1:]:
            la, lb = w.world.objects[a].location or "", w.world.objects[b].location or ""
            if la == lb or la not in w.world.places or lb not in w.world.places:
                continue
            verb = rng.choice(o.words["swapping_verbs"])
            text = rng.choice((f"{_sentence(verb)} {w.the(a)} and {w.the(b)} round.",
                               f"{_sentence(verb)} the places of {w.the(a)} and {w.the(b)}."))
            if verb == "exchange":
                text = f"Exchange the places of {w.the(a)} and {w.the(b)}."
            yield Item("swap", w.scene, text, [put_fact(w, a, lb), put_fact(w, b, la)], {w.the(a): [a], w.the(b): [b]})


def _exception(o: Outside, rng: random.Random) -> Iterator[Item]:
    w = o.w
    for at, out, objs, dest in exception_cases(w):
        word = rng.choice(o.words["exceptions"])
        text = rng.choice((f"Put everything {o.d(at)}, {word} {w.the(out)}, {o.d(dest)}.",
                           f"{_sentence(word)} {w.the(out)}, everything {o.d(at)} goes {o.d(dest)}."))
        yield Item("outside_exception", w.scene, text, [put_fact(w, x, dest) for x in objs],
                   {f"everything {o.d(at)} {word} {w.the(out)}": objs})


def _quantifier(o: Outside, rng: random.Random) -> Iterator[Item]:
    w = o.w
    for noun in w.nouns(countable=True):
        for at in w.world.places:
            objs = w.members(noun, at=at)
            if len(objs) < 2:
                continue
            for dest in w.destinations(objs):
                lot = rng.choice(o.words["quantifiers"])
                phrase = f"the {w.plural(noun)} {o.d(at)}"
                text = rng.choice((f"Put {phrase} {o.d(dest)}, {lot}.",
                                   f"{_sentence(phrase)}: {lot} of them go {o.d(dest)}."))
                yield Item("outside_quantifier", w.scene, text, [put_fact(w, x, dest) for x in objs], {phrase: objs})


NUMBERS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}


def _count_apposition(o: Outside, rng: random.Random) -> Iterator[Item]:
    w = o.w
    for noun in w.nouns(countable=True):
        for at in w.world.places:
            objs = w.members(noun, at=at)
            if not 2 <= len(objs) <= 6 or len(objs) == len(w.members(noun)) and rng.random() < 0.3:
                continue
            for dest in w.destinations(objs):
                n = NUMBERS[len(objs)]
                phrase = f"the {w.plural(noun)}, all {n} of them {o.d(at)},"
                text = rng.choice((f"Put {phrase} {o.d(dest)}.", f"{_sentence(phrase)} go {o.d(dest)}."))
                yield Item("count_apposition", w.scene, text, [put_fact(w, x, dest) for x in objs],
                           {phrase.rstrip(","): objs})


def _adverb_clause(o: Outside, rng: random.Random) -> Iterator[Item]:
    w = o.w
    for obj, objs, loc in _singled(w):
        adverb = rng.choice(o.words["adverbs"])
        participle = rng.choice([*o.words["participles"], "sitting", "lying", "standing"])
        phrase = f"the {w.noun(obj)} that's {adverb} {participle} {o.d(loc)}"
        if rng.random() < 0.3:
            phrase = f"the {w.noun(obj)} that's {participle} {o.d(loc)} {rng.choice(o.words['adverbials'])}"
        for dest in w.destinations([obj]):
            text = rng.choice((f"Put {phrase} {o.d(dest)}.", f"{_sentence(phrase)} belongs {o.d(dest)}."))
            yield Item("adverb_clause", w.scene, text, [put_fact(w, obj, dest)], {phrase: [obj]}, candidates=objs)
    for noun in w.nouns(countable=True):
        for at in w.world.places:
            objs = w.members(noun, at=at)
            if len(objs) >= 2 and len(objs) < len(w.members(noun)):
                adverb = rng.choice(o.words["adverbs"])
                participle = rng.choice([*o.words["participles"], "sitting", "lying"])
                phrase = f"the {w.plural(noun)} that are {adverb} {participle} {o.d(at)}"
                for dest in w.destinations(objs):
                    yield Item("adverb_clause", w.scene, f"Put {phrase} {o.d(dest)}.",
                               [put_fact(w, x, dest) for x in objs], {phrase: objs})


def _state(o: Outside, rng: random.Random) -> Iterator[Item]:
    w = o.w
    kinds: dict[str, list[str]] = {}
    for name, place in w.world.places.items():
        kinds.setdefault(place.kind, []).append(name)
    for kind, names in kinds.items():
        if len(names) < 2:
            continue
        for name in names:
            for state in single_states(w, name, names):
                said = rng.choice(o.words["states"][state])
                adverb = rng.choice([*o.words["adverbs"], ""])
                if adverb and rng.random() < 0.4:
                    said = state  # "the drawer that's still open": the lexicon's word after an outside adverb
                elif " " in said:
                    adverb = ""  # "already with nothing in it", "still wide open": nobody says that
                phrase = f"the {kind} that's {adverb + ' ' if adverb else ''}{said}"
                if said.startswith("with "):
                    phrase = f"the {kind} {said}"  # "the drawer with nothing in it"
                if not adverb and rng.random() < 0.5:
                    phrase = f"{phrase} {rng.choice(o.words['adverbials'])}"
                movable = [x for x in w.members() if w.world.objects[x].location != name][:2]
                for k in (1, 2):
                    objs = movable[:k]
                    if len(objs) < k or name not in w.destinations(objs) or state == "closed":
                        continue
                    things = listing([w.the(x) for x in objs])
                    yield Item("outside_state", w.scene, f"Put {things} in {phrase}.",
                               [put_fact(w, x, name) for x in objs], {phrase: [name]}, candidates=names)
                if state == "open":
                    yield Item("outside_state", w.scene, f"Close {phrase}.", [f"closed({name})"], {phrase: [name]},
                               candidates=names)


def _side(o: Outside, rng: random.Random) -> Iterator[Item]:
    w = o.w
    for noun in w.nouns(countable=True):
        objs = w.members(noun)
        for obj in objs:
            side = w.side(obj, objs)
            if not side:
                continue
            phrase = f"the {noun} " + rng.choice(o.words["positions"]).format(side=side)
            for dest in w.destinations([obj]):
                yield Item("outside_side", w.scene, f"Put {phrase} {o.d(dest)}.", [put_fact(w, obj, dest)],
                           {phrase: [obj]}, candidates=objs)


def _colour_matching(o: Outside, rng: random.Random) -> Iterator[Item]:
    """Each thing to the place whose colour it has, said without the lexicon's colour phrases."""
    w = o.w
    trays: dict[str, str] = {}
    for name, place in w.world.places.items():
        rgba = (place.geometry or {}).get("rgba")
        colour = next((c for c in name.split("_") if c in w.lex["colours"]), "")
        if place.is_container and rgba and colour:
            trays[colour] = name
    kinds = {w.world.places[n].kind for n in trays.values()}
    if len(trays) < 2 or len(kinds) != 1:
        return
    kind = kinds.pop()
    table = o.surface()
    for noun in w.nouns(countable=True):
        objs = [x for x in w.members(noun, at=table) if w.colour(x) in trays]
        if len(objs) < 2:
            continue
        for how in o.words["colour_matching"]:
            said = f"the {kind} {how}"
            text = rng.choice((f"Put each {noun} {o.d(table)} in {said}.",
                               f"Every {noun} {o.d(table)} goes in {said}."))
            yield Item("colour_matching", w.scene, text, [put_fact(w, x, trays[w.colour(x)]) for x in objs],
                       {f"each {noun} {o.d(table)}": objs})
        for colour in dict.fromkeys(w.colour(x) for x in objs):
            sub = [x for x in objs if w.colour(x) == colour]
            if len(sub) < 2:
                continue
            how = rng.choice(o.words["colour_matching"]).replace(" its ", " their ").replace(" it shares",
                                                                                             " they share")
            how = how.replace("as it", "as them")
            phrase = f"the {colour} {w.plural(noun)} {o.d(table)}"
            yield Item("colour_matching", w.scene, f"Put {phrase} in the {kind} {how}.",
                       [put_fact(w, x, trays[colour]) for x in sub], {phrase: sub})


def _place_noun(o: Outside, rng: random.Random) -> Iterator[Item]:
    w = o.w
    for kind, key in (("bin", "bin_nouns"), ("box", "box_nouns")):
        place = o.only(kind)
        if not place or place != kind:  # "the supply crate": a named box keeps its name's other words
            continue
        for obj in _named_visible(w):
            if place not in w.destinations([obj]):
                continue
            noun = rng.choice(o.words[key])
            text = rng.choice((f"Put {w.the(obj)} in the {noun}.", f"{w.the(obj).capitalize()} goes in the {noun}."))
            yield Item("place_noun", w.scene, text, [put_fact(w, obj, place)], {f"the {noun}": [place]})


def _typo(o: Outside, rng: random.Random) -> Iterator[Item]:
    w = o.w
    for obj in _named_visible(w):
        words = w.spoken(obj).split()
        noun = w.noun(obj).split()[-1] if w.noun(obj).split()[-1] in words else max(words, key=len)
        if len(noun) < 4 or typo(noun) == noun:
            continue
        said = w.spoken(obj).replace(noun, typo(noun), 1)
        for dest in w.destinations([obj]):
            text = rng.choice((f"Put the {said} {o.d(dest)}.", f"Move the {said} to {w.the(dest)}."))
            yield Item("typo", w.scene, text, [put_fact(w, obj, dest)], {f"the {said}": [obj]})


def _which(o: Outside, rng: random.Random) -> Iterator[Item]:
    """An outside verb with a noun several visible things fit: the person is asked which, and describes it."""
    w = o.w
    for noun, objs, obj, description, question in which_cases(w):
        for dest in w.destinations([obj]):
            if any(w.world.objects[x].location == dest for x in objs):
                continue  # "slot the block in the blue tray" with a block in it: a description, not a place
            to = rng.random() < 0.5
            verb = rng.choice(o.words["placing_verbs"]["to" if to else "in"])
            where = f"to {w.the(dest)}" if to else o.d(dest)
            yield Item("outside_which", w.scene, f"{_sentence(verb)} the {noun} {where}.",
                       [put_fact(w, obj, dest)], {f"the {noun}": objs}, candidates=objs, question=question,
                       answer=_sentence(description) + ".", answer_means=obj)

GENERATORS = {
    "placing_verb": _placing_verb, "disposal": _disposal, "clear_from": _clear_from, "tidying": _tidying,
    "swap": _swap, "outside_exception": _exception, "outside_quantifier": _quantifier,
    "count_apposition": _count_apposition, "adverb_clause": _adverb_clause, "outside_state": _state,
    "outside_side": _side, "colour_matching": _colour_matching, "place_noun": _place_noun, "typo": _typo,
    "outside_which": _which,
}


def generate(scenes_dir: str | Path | None = None, library: PrimitiveLibrary | None = None, seed: int = SEED,
             per_cell: int = PER_CELL, words: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The suite's task entries: every scene x phenomenon, at most ``per_cell`` each, sampled with ``seed``."""
    scenes_dir = Path(scenes_dir or config_path("scenes"))
    library = library or PrimitiveLibrary.load(config_path("primitives.yaml"))
    lexicon, words = load_lexicon(), words or load_words()
    entries: list[dict[str, Any]] = []
    seen: set[str] = set()
    for path in sorted(scenes_dir.glob("*.yaml")):
        world = load_scene(path)
        scene = Outside(SceneWords(path.name, world, lexicon), words)
        for name, make in GENERATORS.items():
            rng = random.Random(f"{seed}:{path.name}:{name}")
            items = [i for i in make(scene, rng) if i.instruction not in seen]
            rng.shuffle(items)
            kept = 0
            for item in items:
                if kept >= per_cell or item.instruction in seen:
                    continue
                entry = task_entry(item, len(entries) + 1, library, world)
                if entry is None:
                    continue
                entry["id"] = entry["id"].replace("w", "o", 1)
                if item.phenomenon in AMBIGUOUS:
                    entry.update(style="ambiguous", question=item.question, answer=item.answer,
                                 answer_means=item.answer_means)
                seen.add(item.instruction)
                kept += 1
                entries.append(entry)
    return entries


HEADER = """\
# yaml-language-server: $schema=../../../config/schemas/tasks.schema.json
# GENERATED by `python scripts/generate_wordings.py --suite wordings_outside` from config/scenes/*.yaml and
# benchmarks/data/outside_words.yaml (step_planner/bench/wordings_outside.py, seed {seed}); do not edit by hand.
# test/test_bench_wordings_outside.py checks this file is current and that the planner's lexicon files hold none of
# the outside words.
#
# `step-planner bench --suite wordings_outside`. Fields as in config/tasks/wordings.yaml; `outside_which` tasks are
# ambiguous (one question expected), every other one is clear (no question expected).
"""


def render(entries: list[dict[str, Any]], seed: int = SEED) -> str:
    from step_planner.bench.wordings import render as render_wordings

    body = render_wordings(entries, seed)
    return HEADER.format(seed=seed) + body[body.index("tasks:"):]
