"""What the words of an instruction refer to in the perceived world: ``words + world -> phrases``.

A pure function (:func:`resolve`): each phrase of the instruction that refers to things becomes a
:class:`Phrase` with its set of candidates in the world, the role it plays (a thing to change, where things
go, a thing left out, a thing named only to say which or where), whether it means all its candidates (a
plural or a quantifier) or one of them, and whether every word of it was read. The goal checks
(``planner/goal_checks.py``) hold a goal against these phrases; nothing here refuses anything.

The grammar is small and the words are data: nouns come from the scene (names, categories, place kinds, the
nouns of ``config/wordings_lexicon.yaml``), group and generic words from ``config/primitives.yaml``,
everything else (determiners, quantifiers, side, size, state and order words, prepositions, the verbs that
imply a place, corrections) from ``config/resolution_lexicon.yaml``. Plurals come from ``inflect``.

Description words (sides, sizes, colours, shapes, order, state) are read against the world by
``planner/world_descriptions.py``; one it cannot read there is noted as unread.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from step_planner.domain.world import WorldState
from step_planner.planner.inflection import plural, singular
from step_planner.planner.resolution_lexicon import Lexicon, default_lexicon
from step_planner.planner.world_descriptions import (
    by_order,
    by_side,
    colour_of,
    extreme,
    position,
    shape_fits,
    state_fits,
    volume,
)

THING = "thing"  # something the instruction asks to change
DESTINATION = "destination"  # where things go
EXCEPTION = "exception"  # left out or left alone: not moved
REFERENCE = "reference"  # named to say which or where ("next to the cup", "of the blocks")
MENTION = "mention"  # introduced for a later pronoun ("see the sponge?", "there's a cup on the tray")
REPLACED = "replaced"  # corrected by the person ("the cup, no wait, I meant the tape")

# Names that are also auxiliary verbs: such a name is a name only after a determiner ("the can").
_VERBS = frozenset({"put", "move", "close", "open", "shut", "take", "throw", "leave", "keep", "bin", "place",
                    "pick", "get", "bring", "then", "also", "please"})
_AUXILIARIES = frozenset({"can", "will", "may", "must", "might", "should", "would", "could"})


@dataclass(frozen=True)
class Phrase:
    """One referring phrase and what it fits in the world.

    ``kinds``: what the noun alone fits (before anything describes it), ``candidates``: what the whole
    phrase fits. ``plural``: it means all its candidates. ``described``: words beyond the noun say which.
    ``read``: every word was understood (an unread phrase's reading is the model's). ``hidden``: it may
    name something not seen yet (an indefinite "an old sponge in the drawer", or a closed drawer's contents).
    ``matches``: a place described relative to each thing ("the tray of its colour"): which candidate is meant
    depends on the thing put there (the goal checks compare the attribute).
    """

    said: str
    role: str
    candidates: tuple[str, ...]
    kinds: tuple[str, ...] = ()
    plural: bool = False
    described: bool = False
    definite: bool = True
    read: bool = True
    named: bool = False
    hidden: bool = False
    sentence: int = 0
    start: int = 0
    unread: tuple[str, ...] = ()
    matches: str = ""  # "the tray of its colour": each thing goes to the candidate sharing this attribute with it
    clause: int = 0  # split at sentence ends, "then", and a comma or "and" right before a verb


@dataclass(frozen=True)
class Implied:
    """A place the words imply without naming it: "throw away" -> a bin in view, "put back" -> where it was."""

    said: str
    places: tuple[str, ...]  # the places in view it fits ((): none; the start location: filled per object)
    start: bool = False  # "put back": each object's place at the start


@dataclass(frozen=True)
class Resolution:
    phrases: tuple[Phrase, ...] = ()
    implied: tuple[Implied, ...] = ()

    def of_role(self, *roles: str) -> list[Phrase]:
        return [p for p in self.phrases if p.role in roles]

    @property
    def unresolved(self) -> list[Phrase]:
        """Phrases about things to change that the resolver could not read ("tidy the bench")."""
        return [p for p in self.phrases if p.role in (THING, MENTION) and not p.read and not p.candidates
                and not (p.hidden and not p.definite)]

    def left_out(self) -> set[str]:
        """Things the words leave out or take back: never moved."""
        kept = {c for p in self.of_role(THING, MENTION) for c in p.candidates}
        out = {c for p in self.of_role(EXCEPTION) for c in p.candidates}
        out |= {c for p in self.of_role(REPLACED) for c in p.candidates} - kept
        return out


# ---- the world's nouns ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Sense:
    """What a noun form means in this world."""

    entities: frozenset[str]
    how: str  # name | kind | group | generic
    plural: bool | None  # None: the same word either way ("pliers", "rubbish")


def _spoken(name: str) -> str:
    return name.replace("_", " ")


def _kind_nouns(world: WorldState, name: str, lex: Lexicon) -> set[str]:
    obj = world.objects.get(name)
    if obj is not None:
        category = obj.category or ""
        if not category:
            return {name.split("_")[-1]} if not name.split("_")[-1].isdigit() else {name.split("_")[0]}
        out = {category, " ".join(w for w in category.split() if w not in lex.colours) or category}
        if category in lex.category_nouns:
            out.add(lex.category_nouns[category])
        return {o for o in out if o}
    place = world.places[name]
    words = [w for w in name.split("_") if not w.isdigit()]
    out = {words[-1]} if words else set()
    if place.kind != "surface":
        out.add(place.kind)
    else:  # "the bench", "the desk": what people call the surface things stand on
        out |= set(lex.data.get("surface_words") or ())
    return out


def vocabulary(world: WorldState, lex: Lexicon) -> dict[str, _Sense]:
    """Noun forms (one or more words) -> what they mean in ``world``: names, kinds, groups and generic words."""
    kinds: dict[str, set[str]] = {}
    for name in (*world.objects, *world.places):
        for noun in _kind_nouns(world, name, lex):
            kinds.setdefault(noun, set()).add(name)
    out: dict[str, _Sense] = {}
    for noun, names in kinds.items():
        many = plural(noun)
        if many == noun or singular(noun) is not None and noun in lex.groups:
            out[noun] = _Sense(frozenset(names), "kind", None)
            continue
        out[noun] = _Sense(frozenset(names), "kind", False)
        out.setdefault(many, _Sense(frozenset(names), "kind", True))
    for word, members in lex.groups.items():
        names = {n for n, o in world.objects.items()
                 if {o.category, *(_kind_nouns(world, n, lex))} & set(members)}
        sense = _Sense(frozenset(names) | (out[word].entities if word in out else frozenset()), "group", True)
        out[word] = sense  # a group or mass word means all its members ("the rubbish", "the tools")
        if plural(word) != word:
            out.setdefault(plural(word), sense)
    for family, members in (lex.data.get("colour_families") or {}).items():  # "the warm colours": the things of them
        names = frozenset(n for n in world.objects if colour_of(world, n, lex) in members)
        for noun in ("colours", "colors", "coloured ones", "colored ones", "coloured things", "colored things"):
            out.setdefault(f"{family} {noun}", _Sense(names, "group", True))
    everything = frozenset(world.objects)
    for word in lex.generic:
        one = word in ("thing", "item", "object", "something")
        out.setdefault(word, _Sense(everything, "generic", not one))
    for name in (*world.objects, *world.places):
        sense = out.get(_spoken(name))
        if sense is not None and sense.how == "kind" and len(sense.entities) > 1:
            continue  # "the box" with a box and a box_2: the kind word, several fit
        out[_spoken(name)] = _Sense(frozenset({name}), "name", False)
        out[name] = out[_spoken(name)]
    return out


# ---- tokens ------------------------------------------------------------------------------------------
@dataclass
class _Tok:
    text: str
    sense: _Sense | None = None
    cls: str = ""  # a function phrase's class ("where_it_is", ...) or "punct"


def _split(text: str) -> list[str]:
    text = text.lower().replace("'", " ").replace("’", " ")
    return re.findall(r"[a-z0-9_]+|[.,;:!?]", text)


def tokens(text: str, vocab: dict[str, _Sense], lex: Lexicon) -> list[_Tok]:
    """The words of ``text``, nouns of the world joined into one token each (longest first)."""
    words = [_function_word(w, vocab, lex) for w in _split(text)]
    out: list[_Tok] = []
    i = 0
    while i < len(words):
        for n in (5, 4, 3, 2, 1):
            joined = " ".join(words[i:i + n])
            if len(words[i:i + n]) < n:
                continue
            if joined in vocab:
                out.append(_Tok(joined, vocab[joined]))
                break
            if joined in lex.phrases and (n > 1 or lex.phrases[joined] == "everything"):
                out.append(_Tok(joined, cls=lex.phrases[joined]))
                break
        else:
            out.append(_Tok(words[i], cls="punct" if words[i] in ".,;:!?" else ""))
            n = 1
        i += n
    return out


def _function_word(word: str, vocab: dict[str, _Sense], lex: Lexicon) -> str:
    """``word``, or the determiner it is a typo of: two neighbouring letters swapped ("teh" -> "the"); nouns
    are spell-corrected before (``grounding.spell_corrected``), this is the grammar's own words."""
    if word in vocab or len(word) < 3:
        return word
    dets = lex.words("determiners") | lex.words("universal")
    if word in dets:
        return word
    fits = [d for d in dets if len(d) == len(word) and sorted(d) == sorted(word)
            and sum(a != b for a, b in zip(d, word, strict=True)) == 2
            and any(word[i:i + 2] == d[i + 1] + d[i] for i in range(len(d) - 1))]
    return fits[0] if len(fits) == 1 else word


# ---- the grammar ---------------------------------------------------------------------------------------
@dataclass
class _Parse:
    world: WorldState
    lex: Lexicon
    toks: list[_Tok]
    phrases: list[Phrase] = field(default_factory=list)
    consumed: set[int] = field(default_factory=set)
    vocab: dict[str, _Sense] | None = None

    def text(self, i: int) -> str:
        return self.toks[i].text if 0 <= i < len(self.toks) else ""

    def clause_start(self, i: int) -> int:
        j = i
        while j > 0 and not (self.toks[j - 1].cls == "punct" and self.toks[j - 1].text != ",") \
                and self.toks[j - 1].text not in ("and", "then"):
            j -= 1
        return j

    def clause_end(self, i: int) -> int:
        j = i
        while j < len(self.toks) and not (self.toks[j].cls == "punct" and self.toks[j].text != ","):
            j += 1
        return j

    def sentence_of(self, i: int) -> int:
        return sum(1 for t in self.toks[:i] if t.cls == "punct" and t.text in ".;:!?")

    def visible(self, names: Iterable[str]) -> list[str]:
        return sorted(n for n in names if self.world.is_visible(n))


def clauses(toks: Sequence[_Tok], lex: Lexicon) -> list[int]:
    """Each token's clause: split after a sentence end or "then", and at a comma or "and" right before a verb."""
    verbs, out = (_VERBS | lex.words("placing_verbs")) - {"then"}, [0]
    for j, t in enumerate(toks[:-1]):
        out.append(out[-1] + (t.cls == "punct" and t.text in ".;:!?" or t.text == "then"
                              or t.text in (",", "and") and toks[j + 1].text in verbs))
    return out


def _filter(parse: _Parse, names: list[str], words: list[str]) -> tuple[list[str], list[str], bool]:
    """Apply description words before a noun; returns (candidates, unread words, described)."""
    lex, world = parse.lex, parse.world
    unread: list[str] = []
    described = False
    sizes, states, sides = lex.data.get("sizes", {}), lex.data.get("states", {}), lex.data.get("sides", {})
    ordinals = lex.words("ordinals")
    for word in words:
        if word in lex.words("numbers") or word in ("one", "ones", "other", "else"):
            continue
        narrowed = [n for n in names if word in n.split("_")]
        if narrowed and len(narrowed) < len(names):  # a word of some names: "the left drawer", "the new battery"
            names, described = narrowed, True
        elif narrowed:
            continue
        elif word in lex.colours:
            names, described = [n for n in names if colour_of(world, n, lex) == word], True
        elif word in states:
            names, described = [n for n in names if state_fits(world, n, states[word])], True
        elif word in sides:
            names, described = _narrow(names, by_side(world, names, word, lex), word, unread), True
        elif word in sizes:
            picked = extreme({n: volume(world, n) for n in names}, sizes[word], 1e-9) if len(names) > 1 else names
            if picked is not None and len(names) > 1 and len(picked) == len(names):  # all the same size: not read
                picked = None
            names, described = _narrow(names, picked, word, unread), True
        elif word in ordinals:
            names, described = by_order(world, names, word, lex), True
        elif word in lex.data.get("shapes", {}):
            names, described = _narrow(names, shape_fits(world, names, word, lex), word, unread), True
        else:
            unread.append(word)
            described = True
    return names, unread, described


def _narrow(names: list[str], picked: list[str] | None, word: str, unread: list[str]) -> list[str]:
    """The candidates a description word picked, or (it could not be read here) the same ones, the word noted."""
    if picked is None:
        unread.append(word)
        return names
    return picked


def _place_phrase(parse: _Parse, i: int) -> tuple[int, Phrase | None, str]:
    """A phrase naming a place (or a side) starting at token ``i``: (next index, phrase, side word)."""
    j = i
    if parse.text(j) in parse.lex.words("determiners"):
        j += 1
    mods: list[str] = []
    while j < len(parse.toks) and parse.toks[j].sense is None and parse.toks[j].cls == "" and len(mods) < 3:
        sides = parse.lex.data.get("sides", {})
        if parse.text(j) in sides and (j + 1 >= len(parse.toks) or parse.toks[j + 1].sense is None
                                       or parse.toks[j + 1].cls == "punct"):
            while parse.text(j + 1) in sides:  # "on the far left": the last side word says which
                j += 1
            return j + 1, None, parse.text(j)  # "on the left", "at the back"
        if parse.text(j) in parse.lex.words("stop"):
            return i, None, ""
        mods.append(parse.text(j))
        j += 1
    if j < len(parse.toks) and parse.toks[j].sense is not None:
        phrase = _noun_phrase(parse, j, mods, parse.text(i) in parse.lex.words("determiners"))
        return j + 1, phrase, ""
    if parse.text(j) in parse.lex.data.get("sides", {}):
        return j + 1, None, parse.text(j)
    return i, None, ""


def _noun_phrase(parse: _Parse, i: int, mods: list[str], definite: bool) -> Phrase:
    tok = parse.toks[i]
    sense = tok.sense
    assert sense is not None
    names = sorted(sense.entities) if sense.how == "name" else parse.visible(sense.entities)
    kinds = tuple(names)
    names, unread, described = _filter(parse, names, mods)
    hidden = False
    expected = [w for w in unread if w in parse.lex.adjectives]
    if expected and not sense.plural and any(p.openable and not p.is_open for p in parse.world.places.values()):
        # "the old battery" with only a new one in view: the old one is not seen yet, maybe in a closed drawer
        names, unread, hidden = [], [w for w in unread if w not in expected], True
    return Phrase(" ".join([*(["the"] if definite else []), *mods, tok.text]), THING, tuple(names), kinds,
                  plural=bool(sense.plural), described=described, definite=definite, named=sense.how == "name",
                  read=not unread, unread=tuple(unread), hidden=hidden, sentence=parse.sentence_of(i), start=i)


def _is_goes(parse: _Parse, k: int, end: int) -> bool:
    """Is there a preposition saying where things go after ``k`` in the clause?"""
    goes = parse.lex.words("where_it_goes")
    for m in range(k, end):
        if parse.toks[m].text in (",", "then") or parse.toks[m].text == "and" and parse.text(m + 1) in _VERBS:
            return False  # "put the blocks in the bin, the ones on the table"; "... and close it"
        if parse.toks[m].text in goes or parse.toks[m].cls == "where_it_goes":
            return True
    return False


def _post(parse: _Parse, phrase: Phrase, i: int) -> Phrase:
    """What follows the noun at ``i``: a relative clause, where it is, its side, "the one you write with"."""
    lex, world = parse.lex, parse.world
    k = i + 1
    end = parse.clause_end(i)
    start = parse.clause_start(i)
    forced = False
    names = list(phrase.candidates)
    if phrase.role == DESTINATION and (matching := _matching(parse, k)) is not None:  # "the tray of its colour":
        nxt, attribute = matching  # one place per thing, not one place
        parse.consumed.update(range(k, nxt))
        return replace(phrase, described=True, matches=attribute,
                       said=f"{phrase.said} {' '.join(parse.text(m) for m in range(k, nxt))}")
    if parse.text(k) in lex.words("relative") and parse.text(k + 1) in lex.words("copula"):
        k, forced = k + 2, True
    elif parse.text(k) in lex.words("relative") and parse.toks[k + 1:k + 2] and parse.toks[k + 1].sense is None:
        return replace(phrase, described=True, read=False, unread=(*phrase.unread, parse.text(k + 1)),
                       said=f"{phrase.said} {parse.text(k)} {parse.text(k + 1)} ...")  # "that doesn't match"
    elif (parse.toks[i].cls == "everything" or parse.text(i) in lex.words("everything")) \
            and parse.text(k) in lex.words("copula"):
        k, forced = k + 1, True  # "whatever is on the table"
    elif parse.toks[k:k + 1] and parse.toks[k].cls == "where_it_is" and parse.toks[k].text.split()[0] in (
            "sitting", "lying", "standing", "resting", "currently"):
        forced = True
    # "the one you write with": a use the wordings lexicon knows
    rest = " ".join(t.text for t in parse.toks[k:end])
    for use in set(lex.uses.values()):
        said = use.removeprefix("the one ").removeprefix("the ones ")
        if rest.startswith(said):
            uses = {c for c, u in lex.uses.items() if u == use}
            fits = [n for n in names if n in world.objects and world.objects[n].category in uses]
            return replace(phrase, candidates=tuple(fits), described=True, said=f"{phrase.said} {said}")
    word = parse.text(k)
    cls = parse.toks[k].cls if k < len(parse.toks) else ""
    if word == "of" and parse.toks[k + 1:k + 2] and parse.toks[k + 1].sense is None:
        return replace(phrase, described=True, read=False, unread=(*phrase.unread, "of"),
                       said=f"{phrase.said} of ...")  # "the blocks of other colours": not read
    if (parse.toks[i].cls == "everything" or parse.text(i) in lex.words("everything") or parse.text(i) in (
            "something", "anything", "stuff")) and k < len(parse.toks) and parse.toks[k].sense is None \
            and cls == "" and word not in lex.words("stop") and word not in lex.words("others") \
            and word not in lex.words("copula") and word not in lex.words("relative"):
        if word in lex.data.get("shapes", {}) or word in lex.colours:  # "everything round", "everything red"
            names, unread, _ = _filter(parse, names, [word])
            parse.consumed.add(k)
            return replace(phrase, candidates=tuple(names), described=True, read=phrase.read and not unread,
                           unread=(*phrase.unread, *unread), said=f"{phrase.said} {word}")
        return replace(phrase, described=True, read=False, unread=(*phrase.unread, word),
                       said=f"{phrase.said} {word}")  # "everything round": a description the resolver cannot read
    if word in lex.data.get("sides", {}) and parse.text(k + 1) in ("to", "from") and word not in ("left", "right"):
        # "furthest to the left": the side word after "to the"
        j = k + 2 + (parse.text(k + 2) in lex.words("determiners"))
        side = parse.text(j) if parse.text(j) in lex.data["sides"] else word
        picked = by_side(world, names, side, lex)
        parse.consumed.update(range(k, j + 1))
        return replace(phrase, candidates=tuple(picked if picked is not None else names), described=True,
                       read=phrase.read and picked is not None, said=f"{phrase.said} {word} to the {side}")
    where = lex.words("where_it_is")
    if word in where or cls == "where_it_is":
        source = word in lex.words("source") or cls == "where_it_is" and word in lex.words("source")
        nxt, place, side = _place_phrase(parse, k + 1)
        if side:
            picked = by_side(world, names, side, lex)
            parse.consumed.update(range(k, nxt))
            return replace(phrase, candidates=tuple(picked if picked is not None else names), described=True,
                           read=phrase.read and picked is not None, said=f"{phrase.said} {word} the {side}")
        if place is not None:
            there = set(place.candidates)
            located = [n for n in names if n in world.objects and world.objects[n].location in there]
            verb_before = any(t.text in lex.words("placing_verbs") for t in parse.toks[start:i])
            closed = any(world.places.get(p) is not None and world.places[p].openable
                         and not world.places[p].is_open for p in there)
            anaphoric = parse.text(i) in lex.words("anaphoric")
            describes = source or forced or (located and (_is_goes(parse, nxt, end) or not verb_before
                                                          or anaphoric)) \
                or (closed and (not phrase.definite or _is_goes(parse, nxt, end)))
            if describes:
                parse.consumed.update(range(k, nxt))
                parse.phrases.append(replace(place, role=REFERENCE))
                return replace(phrase, candidates=tuple(n for n in names if n in located),
                               described=True, hidden=phrase.hidden or closed,
                               read=phrase.read and place.read, said=f"{phrase.said} {word} {place.said}")
        if place is None and nxt == k + 1 and parse.text(k + 1) in lex.words("determiners"):
            m, run = k + 2, []
            while m < len(parse.toks) and parse.toks[m].sense is None and parse.toks[m].cls == "" \
                    and parse.text(m) not in lex.words("stop"):
                run.append(parse.text(m))
                m += 1
            if run and not (m < len(parse.toks) and parse.toks[m].sense is not None):  # "in the top row"
                parse.consumed.update(range(k, m))
                return replace(phrase, described=True, read=False, unread=(*phrase.unread, *run),
                               said=f"{phrase.said} {word} {parse.text(k + 1)} {' '.join(run)}")
    if word in lex.reference_words or cls == "reference":
        nxt, other, _ = _place_phrase(parse, k + 1)
        if other is not None:
            parse.consumed.update(range(k, nxt))
            parse.phrases.append(replace(other, role=REFERENCE))
            ref = position(world, other.candidates[0]) if len(other.candidates) == 1 else None
            if ref is None:
                return replace(phrase, described=True, read=False, said=f"{phrase.said} {word} {other.said}")
            dist = {n: (lambda p: None if p is None else ((p[0] - ref[0]) ** 2 + (p[1] - ref[1]) ** 2) ** 0.5)(
                position(world, n)) for n in names if n not in other.candidates}
            picked = extreme(dist, "min", float(lex.data.get("side_margin", 0.08)))
            return replace(phrase, candidates=tuple(picked if picked is not None else names), described=True,
                           read=phrase.read and picked is not None, said=f"{phrase.said} {word} {other.said}")
    return phrase


def _matching(parse: _Parse, k: int) -> tuple[int, str] | None:
    """"of its colour", "that matches its colour", "of the same colour" at ``k``: (the index after it, the
    attribute compared), else None."""
    lex = parse.lex
    attributes = lex.data.get("matching_attributes") or {}

    def take(j: int, options: frozenset[str]) -> int | None:
        for option in sorted(options, key=lambda o: -len(o.split())):  # the longest first: "its own" over "its"
            words = option.split()
            if [parse.text(j + n) for n in range(len(words))] == words:
                return j + len(words)
        return None

    if attributes and (j := take(k, lex.words("matching_openers"))) is not None \
            and (m := take(j, lex.words("matching_owners"))) is not None and parse.text(m) in attributes:
        return m + 1, attributes[parse.text(m)]
    return None


def _antecedent(parse: _Parse, i: int, plural_wanted: bool | None) -> Phrase | None:
    of = parse.text(i - 1) in parse.lex.words("partitive")  # "the entire lot of them": not "the entire lot"
    for p in reversed(parse.phrases):
        if p.start >= i or p.role in (DESTINATION, REFERENCE) and not p.plural or of and not p.read and not p.kinds:
            continue
        if p.role == REFERENCE and plural_wanted is False:
            continue
        if plural_wanted is None or p.plural == plural_wanted or p.role in (MENTION, THING):
            return p
    return None


def _role_before(parse: _Parse, i: int) -> str:
    """The role the words before a phrase give it (in its clause)."""
    lex = parse.lex
    start = parse.clause_start(i)
    j = i - 1
    while j >= start and (parse.text(j) in lex.words("determiners") or parse.text(j) in lex.words("universal")
                          or parse.toks[j].sense is None and parse.toks[j].cls == ""
                          and parse.text(j) not in lex.words("stop")):
        j -= 1
    before = parse.text(j) if j >= start else ""
    cls = parse.toks[j].cls if j >= start else ""
    if before in lex.words("exceptions") or cls == "exceptions":
        return EXCEPTION
    if before in lex.reference_words or cls == "reference":
        return REFERENCE
    if (before in lex.words("where_it_goes") or cls == "where_it_goes") and j > start:
        return DESTINATION
    if before in lex.words("partitive") and j == start:
        return REFERENCE
    head = " ".join(t.text for t in parse.toks[start:i])
    if any(head == p or head.startswith(p + " ") for p in lex.words("presentational")) or \
            parse.toks[start].cls == "presentational":
        return MENTION
    return THING


def _parse(parse: _Parse) -> None:
    lex = parse.lex
    toks = parse.toks
    dets, universal = lex.words("determiners"), lex.words("universal")
    for i, tok in enumerate(toks):
        if i in parse.consumed:
            continue
        word = tok.text
        if word in dets or word in universal:
            if (elided := _elided_at(parse, i)) is not None:
                parse.phrases.append(elided)
            elif (unknown := _unknown_at(parse, i)) is not None:
                parse.phrases.append(unknown)
            continue
        if tok.sense is not None and tok.sense.how == "name" and word in _AUXILIARIES and not (
                i and (toks[i - 1].text in dets or toks[i - 1].text in lex.colours)):
            continue  # "the blocks can go in the bin": a can only after a determiner
        if tok.sense is None and word not in lex.words("anaphoric") and \
                word not in (*lex.words("pronouns_singular"), *lex.words("pronouns_plural")) and \
                tok.cls != "everything":
            continue
        # premodifiers back to a determiner
        j, mods = i - 1, []
        alternatives: list[str] = []  # "the red, blue and green blocks": each colour's blocks
        while j >= 0 and toks[j].sense is None and toks[j].cls == "" and toks[j].text not in dets \
                and toks[j].text not in universal and toks[j].text not in lex.words("stop") and len(mods) < 3:
            mods.insert(0, toks[j].text)
            j -= 1
            while mods[0] in lex.colours and j > 0 and toks[j].text in (",", "and", "or") \
                    and toks[j - 1].text in lex.colours:
                alternatives.append(toks[j - 1].text)
                j -= 2
        det = toks[j].text if j >= 0 and (toks[j].text in dets or toks[j].text in universal) else ""
        if not det:  # "round stuff", "red blocks": a word right before the noun describes it
            mods = mods[-1:]
        quantified = det in universal or (bool(det) and j > 0 and toks[j - 1].text in universal) \
            or (j > 1 and toks[j - 1].text == "of" and toks[j - 2].text in universal) \
            or any(m in lex.words("numbers") for m in mods) or tok.cls == "everything"
        role = _role_before(parse, i)
        if word in (*lex.words("pronouns_singular"), *lex.words("pronouns_plural")) and tok.sense is None:
            many = word in lex.words("pronouns_plural")
            ante = _antecedent(parse, i, many)
            if parse.text(i - 1) in ("close", "open", "shut"):  # "... in the drawer and close it": the drawer
                ante = next((p for p in reversed(parse.phrases) if p.candidates
                             and all(c in parse.world.places for c in p.candidates)), ante)
            if ante is None or word in ("this", "that", "these", "those") and det:
                continue
            phrase = replace(ante, said=word, role=THING if role == MENTION else role, start=i,
                             sentence=parse.sentence_of(i), plural=many or ante.plural, definite=True)
            parse.phrases.append(phrase)
            continue
        if word in lex.words("anaphoric") and tok.sense is None:
            if role == DESTINATION:  # "shift it over to the left one": a place said before
                ante = next((p for p in reversed(parse.phrases) if p.kinds
                             and all(k in parse.world.places for k in p.kinds)), None)
            else:
                ante = next((p for p in reversed(parse.phrases) if p.kinds and p.role != DESTINATION), None)
            if ante is None:
                continue
            kinds = list(ante.kinds)
            if ante.named:  # "the right drawer ... the left one": things of its kind
                vocab = vocabulary_cache(parse)
                kinds = sorted({n for noun in _kind_nouns(parse.world, ante.candidates[0], lex) if noun in vocab
                                for n in vocab[noun].entities if parse.world.is_visible(n)})
            base = _Parse(parse.world, lex, toks, consumed=parse.consumed)
            names, unread, described = _filter(base, kinds, mods)
            phrase = Phrase(" ".join(["the", *mods, word]) if det else word, role, tuple(names), tuple(kinds),
                            plural=word == "ones", described=described or bool(mods), definite=True,
                            read=not unread, unread=tuple(unread), sentence=parse.sentence_of(i), start=i)
            phrase = _post(parse, phrase, i)
            apposition = all(t.cls == "punct" and t.text == "," or t.text in dets or t.text in mods
                             for t in toks[ante.start + 1:i]) or (toks[i - 1 - bool(det) - len(mods)].text == ","
                                                                  and ante.sentence == parse.sentence_of(i))
            if apposition and ante.named:  # "the red block, the one next to the blue block": the name says
                phrase = replace(phrase, candidates=ante.candidates, named=True)
            if ante.start < i and (apposition or not ante.described and not ante.plural
                                   and set(names) <= set(ante.candidates)) and ante.role == THING:
                parse.phrases[parse.phrases.index(ante)] = replace(ante, role=REFERENCE)  # "the block, the green one"
            if not phrase.described:
                phrase = replace(phrase, described=ante.described, candidates=ante.candidates)
            parse.phrases.append(phrase)
            continue
        if tok.cls == "everything":
            names = [n for n in parse.world.objects if parse.world.is_visible(n)]
            phrase = Phrase(word, role, tuple(sorted(names)), tuple(sorted(names)), plural=True, definite=True,
                            sentence=parse.sentence_of(i), start=i)
        else:
            phrase = _noun_phrase(parse, i, mods, bool(det))
            if alternatives:
                rest = [m for m in mods if m not in lex.colours]
                names = {n for colour in (*alternatives, *[m for m in mods if m in lex.colours])
                         for n in _filter(parse, list(phrase.kinds), [colour, *rest])[0]}
                phrase = replace(phrase, candidates=tuple(sorted(names)), plural=True, described=True)
                mods = [*reversed(alternatives), *mods]
            phrase = replace(phrase, said=" ".join([*([det] if det else []), *mods, word]),
                             definite=det not in ("", "a", "an") or bool(phrase.plural), role=role)
            if det in ("those", "these") and phrase.plural:  # "those drawers": the ones said before
                said = {c for q in parse.phrases for c in q.candidates if c in phrase.candidates}
                if said:
                    phrase = replace(phrase, candidates=tuple(sorted(said)), described=True)
        if quantified:
            phrase = replace(phrase, plural=True)
        if det in ("a", "an"):  # "an old sponge": what is expected, its adjectives need not single it out
            phrase = replace(phrase, hidden=True, read=True, unread=())
        if i + 1 < len(toks) and toks[i + 1].text in lex.words("others"):
            phrase = replace(phrase, said=f"{phrase.said} {toks[i + 1].text}", plural=True)
            parse.consumed.add(i + 1)
        phrase = _post(parse, phrase, i)
        parse.phrases.append(phrase)


def _elided_at(parse: _Parse, i: int) -> Phrase | None:
    """"the red and the blue block": description words whose noun comes after a conjunction."""
    lex, toks = parse.lex, parse.toks
    describing = set(lex.colours) | set(lex.data.get("sizes", {})) | set(lex.data.get("states", {})) | \
        set(lex.data.get("sides", {})) | lex.words("ordinals")
    j, mods = i + 1, []
    while j < len(toks) and toks[j].sense is None and toks[j].text in describing:
        mods.append(toks[j].text)
        j += 1
    if not mods or parse.text(j) not in ("and", "or", ",") or parse.text(j + 1) not in lex.words("determiners"):
        return None
    for k in range(j + 1, min(j + 7, len(toks))):
        if toks[k].cls == "punct" and toks[k].text != ",":
            return None
        sense = toks[k].sense
        if sense is not None and sense.how in ("kind", "name"):
            if sense.how == "name":  # "the red and the blue block" with a blue_block: its kind
                name = next(iter(sense.entities))
                nouns = _kind_nouns(parse.world, name, lex)
                kinds = set().union(*(s.entities for n in nouns if (s := vocabulary_cache(parse).get(n))))
                sense = _Sense(frozenset(kinds), "kind", False)
            names, unread, _ = _filter(parse, parse.visible(sense.entities), mods)
            return Phrase(" ".join([toks[i].text, *mods, toks[k].text]), _role_before(parse, i + 1), tuple(names),
                          tuple(parse.visible(sense.entities)), described=True, read=not unread,
                          unread=tuple(unread), sentence=parse.sentence_of(i), start=i)
    return None


def vocabulary_cache(parse: _Parse) -> dict[str, _Sense]:
    if parse.vocab is None:
        parse.vocab = vocabulary(parse.world, parse.lex)
    return parse.vocab


def _unknown_at(parse: _Parse, i: int) -> Phrase | None:
    """A determiner at ``i`` before words the resolver does not know as a noun ("tidy the bench", "the office
    supplies", "a spare wrench" not seen yet): a phrase it cannot read."""
    lex, toks = parse.lex, parse.toks
    dets = lex.words("determiners") | lex.words("universal")
    known = set(lex.words("stop")) | set(lex.colours) | set(lex.data.get("sizes", {})) | \
        set(lex.data.get("states", {})) | set(lex.data.get("sides", {})) | set(lex.words("ordinals")) | \
        lex.words("numbers") | lex.words("anaphoric") | dets | lex.words("others") | \
        {"way", "same", "moment", "time", "robot", "arm", "gripper", "end", "middle", "centre", "center", "top",
         "bottom", "side", "corner", "edge", "rest", "things", "lot", "bit", "spot", "place", "where", "what"}
    tok = toks[i]
    run = []
    j = i + 1
    described = set(lex.colours) | set(lex.data.get("sizes", {})) | set(lex.data.get("states", {})) | \
        set(lex.data.get("shapes", {}))
    while j < len(toks) and toks[j].sense is None and toks[j].cls == "" and (toks[j].text not in known
                                                                              or toks[j].text in described):
        run.append(toks[j].text)
        j += 1
    if not run or set(run) <= described or (j < len(toks) and (toks[j].sense is not None
                                                               or toks[j].text in lex.words("anaphoric"))) \
            or any(t.isdigit() for t in run):
        return None
    shut = any(p.openable and not p.is_open for p in parse.world.places.values())
    return Phrase(f"{tok.text} {' '.join(run)}", _role_before(parse, i + 1), (), (), read=False,
                  unread=tuple(run), definite=tok.text not in ("a", "an"), hidden=tok.text in ("a", "an") or shut,
                  sentence=parse.sentence_of(i), start=i)  # "the pen" not seen: maybe in a closed drawer


def _apply_scope(parse: _Parse) -> list[Phrase]:
    """Exceptions leave their members out of the plural phrases of their sentence; "else"/"the rest" leave
    out whatever else the instruction names; a correction replaces the last phrase of its sort before it."""
    phrases = sorted(parse.phrases, key=lambda p: p.start)
    out = []
    for p in phrases:
        if p.role in (THING, MENTION) and p.plural:
            gone = {c for q in phrases if q.role == EXCEPTION and q.sentence == p.sentence for c in q.candidates}
            if {"else", "rest", "others", "other"} & set(p.said.split()):
                gone |= {c for q in phrases if q is not p and q.role in (THING, EXCEPTION, MENTION)
                         and not q.plural for c in q.candidates}
            if gone:
                p = replace(p, candidates=tuple(c for c in p.candidates if c not in gone))
            listed = [q for q in phrases if q.start > p.start and q.sentence - p.sentence in (0, 1) and q.role == THING
                      and q.named and set(q.candidates) <= set(p.candidates)]
            if len(listed) >= 2:  # "everything on the bench - the tape, the screwdriver and the red block"
                p = replace(p, read=False, unread=(*p.unread, "(listed after it)"))
        out.append(p)
    for i, tok in enumerate(parse.toks):
        if not (tok.cls == "corrections" or tok.text in parse.lex.words("corrections")
                and (tok.text not in ("wait", "actually", "rather", "sorry") or _after_no(parse, i))):
            continue
        after = next((p for p in out if p.start > i and p.role in (THING, DESTINATION)), None)
        if after is None:
            continue
        is_place = bool(after.candidates) and all(c in parse.world.places for c in after.candidates)
        before = [p for p in out if p.start < i and p.role in (THING, DESTINATION)
                  and (p.role == DESTINATION) == is_place]
        if before:
            k = out.index(before[-1])
            out[k] = replace(before[-1], role=REPLACED)
            if is_place:
                out[out.index(after)] = replace(after, role=DESTINATION)
    return out


def _after_no(parse: _Parse, i: int) -> bool:
    return any(parse.text(j) == "no" for j in range(max(0, i - 2), i)) or parse.text(i) == "sorry"


def _implied(parse: _Parse) -> list[Implied]:
    lex, world = parse.lex, parse.world
    words = [t.text for t in parse.toks]
    joined = f" {' '.join(words)} "
    out: list[Implied] = []
    for said, spec in (lex.data.get("implied_places") or {}).items():
        parts = said.split()
        if len(parts) == 1:
            hits = [i for i, w in enumerate(words) if w == parts[0] and (i == 0 or words[i - 1] not in (
                *lex.words("determiners"), *lex.words("where_it_goes"), *lex.words("where_it_is")))
                and not (parse.toks[i].sense is not None and i + 1 < len(words) and words[i + 1] not in
                         ("it", "them", "the", "this", "that", "these", "those", "everything", "all"))]
            if not hits:
                continue
        elif f" {said} " not in joined:
            verb, particle = parts[0], " ".join(parts[1:])  # "get ... out of" is not "get rid of"
            if not re.search(rf"\b{verb}\b(?: [a-z0-9_ ]{{0,40}}?)?\b{particle}\b", " ".join(words)):
                continue
        if any(i.said in said or said in i.said or (i.said.split()[0], i.said.split()[-1]) == (parts[0], parts[-1])
               for i in out):
            continue  # "throw away" and "throw it away": one reading
        if spec.get("start"):
            out.append(Implied(said, (), start=True))
        elif kind := spec.get("kind"):
            out.append(Implied(said, tuple(sorted(n for n, p in world.places.items() if p.kind == kind))))
        else:
            for kind in spec.get("obvious") or ():
                fits = sorted(n for n, p in world.places.items() if p.kind == kind)
                if fits:
                    out.append(Implied(said, tuple(fits) if len(fits) == 1 else ()))
                    break
    return out


def resolve(text: str, world: WorldState, lexicon: Lexicon | None = None) -> Resolution:
    """The phrases of ``text`` that refer to things, each with its candidates in ``world``."""
    lex = lexicon or default_lexicon()
    vocab = vocabulary(world, lex)
    parse = _Parse(world, lex, tokens(text, vocab, lex), vocab=vocab)
    _parse(parse)
    numbers = clauses(parse.toks, lex)
    return Resolution(tuple(replace(p, clause=numbers[p.start]) for p in _apply_scope(parse)), tuple(_implied(parse)))


def resolve_answer(answer: str, candidates: Sequence[str], world: WorldState,
                   lexicon: Lexicon | None = None) -> tuple[str, ...] | None:
    """Which of ``candidates`` the person's answer means ("the one on the tray", "the left one", "the one you
    write with", "the blue block"); None when the answer cannot be read against them."""
    lex = lexicon or default_lexicon()
    kinds = tuple(sorted(candidates))
    said = " ".join(_split(answer))
    for use in sorted(set(lex.uses.values()), key=len, reverse=True):  # "the sticky roll", "the one for screws"
        if f" {' '.join(_split(use))} " in f" {said} ":
            fits = tuple(c for c in kinds if c in world.objects and lex.uses.get(world.objects[c].category) == use)
            if fits:
                return fits
    vocab = vocabulary(world, lex)
    parse = _Parse(world, lex, tokens(answer, vocab, lex), vocab=vocab)
    parse.phrases.append(Phrase("the question's candidates", MENTION, kinds, kinds, start=-1))
    _parse(parse)
    said = [p for p in parse.phrases[1:] if p.role not in (REFERENCE, DESTINATION)]
    for p in said:
        fits = tuple(c for c in p.candidates if c in kinds)
        if p.read and fits:
            return fits
    return None
