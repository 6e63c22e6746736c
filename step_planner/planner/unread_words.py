"""Which words of an instruction the reader did not read, and which checks each one makes doubtful.

The resolver (``planner/resolution.py``) skips a word it does not know unless the word is inside a noun phrase.
Skipping is not reading: a refusal must rest on a full reading. So every token is accounted for here: read (a
noun of the world, a name, a word of ``config/resolution_lexicon.yaml`` or of the wordings lexicon, one of its
closed list of ``function_words``, a goal or action word of ``config/primitives.yaml``) or unknown. An unknown
word makes doubtful exactly the checks whose verdict it could change from where it stands:

- right after a phrase (in its relative clause, its apposition, at its end): that phrase's reference checks
  (all of its candidates or some, which one): "the blocks that are just sitting on the table";
- between two phrases: the next one too, whose role it may set ("all the blocks save the red one");
- before any phrase of its sentence, or after a verb (a verb or an adverb of the clause): where the things of
  that sentence go, and the end state it asks ("chuck the sponge"), unless the sentence names where;
- before a noun, as its description: nothing new (the resolver already marked that phrase unread).

A count said with a plural phrase ("the blocks, all three of them") that its candidates do not match is a sign
that something read it narrower than the resolver did: that phrase's coverage is doubtful too, bounded by the
count. ``planner/goal_checks.py`` turns a doubtful check's verdict into a reading (shown and counted), never a
refusal; what *was* read still bounds it (the kind noun, the colour, the count).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from step_planner.domain.world import WorldState
from step_planner.planner.resolution import (
    DESTINATION,
    EXCEPTION,
    MENTION,
    THING,
    Lexicon,
    Phrase,
    Resolution,
    clauses,
    resolve,
    singular,
    tokens,
    vocabulary,
)

_SENTENCE_ENDS = frozenset(".;:!?")


@dataclass(frozen=True)
class Unread:
    """The unknown words of an instruction and the checks they make doubtful (keys: a phrase's ``start``)."""

    words: tuple[str, ...] = ()  # every unknown word, in order
    reference: dict[int, tuple[str, ...]] = field(default_factory=dict)  # which/how many of the phrase's candidates
    place: dict[int, tuple[str, ...]] = field(default_factory=dict)  # where the phrase's things go, their end state
    counts: dict[int, int] = field(default_factory=dict)  # a count said with a plural phrase its candidates miss
    defined: frozenset[int] = frozenset()  # unread phrases what follows says ("the upper left drawer", "the
    # writing gear, that is the pencil and the file"): their reading is that, nothing else
    excepts: dict[int, tuple[str, ...]] = field(default_factory=dict)  # a thing phrase an unknown word right before
    # it may except from a wider phrase of its sentence ("bar the cup, everything on the table ...")
    except_from: dict[int, tuple[int, ...]] = field(default_factory=dict)  # the wider phrase -> those it may spare
    bounded: dict[int, tuple[str, ...]] = field(default_factory=dict)  # a doubtful singular phrase -> what its read
    # words alone pick ("the block way over on the right" read as "the block on the right")
    aside: dict[int, tuple[str, tuple[str, ...]]] = field(default_factory=dict)  # a wider phrase an aside may
    # except from -> how it reads without the aside, and what that holds ("everything on the table, bar the cup,
    # in the bin" -> "everything on the table")
    loose: frozenset[int] = frozenset()  # clauses with a place word that opens no phrase ("green block in there
    # instead", "put it here"): the place phrases of such a clause are not all it says about where its things go

    def of(self, start: int) -> tuple[str, ...]:
        return self.reference.get(start, ())

    @property
    def verbs(self) -> tuple[str, ...]:
        """Unknown words standing where a verb or an adverb of a clause stands."""
        return tuple(dict.fromkeys(w for ws in self.place.values() for w in ws))


def known_words(lex: Lexicon, world: WorldState, extra: Iterable[str] = ()) -> frozenset[str]:
    """Every single word the reader holds: the lexicon's (each word of its phrases), the world's names and kinds,
    the wordings lexicon's nouns, colours and uses, and ``extra`` (the primitives' goal and action words)."""
    out: set[str] = set()

    def add(text: str, phrase_words: bool = True) -> None:  # a lexicon phrase's words are read only together
        words = text.lower().replace("_", " ").replace("'", " ").split()
        if phrase_words or len(words) == 1:
            out.update(words)

    for value in lex.data.values():
        if isinstance(value, dict):
            for key in value:
                add(str(key), False)
        elif isinstance(value, list | tuple):
            for item in value:
                add(str(item), False)
    for words in (lex.reference_words, lex.uses.values(), extra):
        for word in words:
            add(str(word), False)
    for said in lex.data.get("implied_places") or ():  # "tidy ... away", "put ... back": read across the gap
        add(str(said))
    for words in (lex.colours, lex.category_nouns, lex.category_nouns.values(), lex.uses, lex.groups,
                  *lex.groups.values(), lex.generic, lex.adjectives, world.objects, world.places,
                  (o.category or "" for o in world.objects.values()), (p.kind for p in world.places.values())):
        for word in words:
            add(str(word))
    return frozenset(out)


def known_nouns(lex: Lexicon, world: WorldState) -> frozenset[str]:
    """The nouns the reader knows as kinds of things or places, whether or not one is in view: a phrase headed by
    one ("the pen" not seen yet) can only mean a thing of that kind."""
    out: set[str] = set()
    for words in (lex.category_nouns, lex.category_nouns.values(), lex.uses, *lex.groups.values(),
                  (p.kind for p in world.places.values()), lex.words("surface_words"),
                  ("drawer", "tray", "bin", "box", "table", "shelf", "cabinet", "basket", "container")):
        for word in words:
            out.add(str(word).split()[-1])
    return frozenset(out)


def is_place_noun(word: str, lex: Lexicon, world: WorldState) -> bool:
    """A noun naming a place (a drawer, a tray, the table): a phrase headed by it moves no object."""
    word = singular(word) or word
    kinds = {p.kind for p in world.places.values()} | {n.split("_")[-1] for n in world.places}
    return word in kinds | set(lex.words("surface_words")) | {"drawer", "tray", "bin", "box", "table", "shelf",
                                                              "cabinet", "basket", "container"}


def account(text: str, res: Resolution, world: WorldState, lex: Lexicon, extra: Iterable[str] = ()) -> Unread:
    """Account for every token of ``text`` (the words ``res`` was resolved from) and say which checks the unknown
    ones make doubtful."""
    toks = tokens(text, vocabulary(world, lex), lex)
    known = known_words(lex, world, extra)
    verbs = set(lex.words("placing_verbs")) | set(lex.words("stop")) - set(lex.words("where_it_is")) \
        - set(lex.words("where_it_goes")) - {"and", "or", "of", "it", "them", "s", "is", "are", "with", "for", "by"}
    sentence = [0] * len(toks)
    for i in range(1, len(toks)):
        sentence[i] = sentence[i - 1] + (toks[i - 1].cls == "punct" and toks[i - 1].text in _SENTENCE_ENDS)
    phrases = sorted((p for p in res.phrases if p.start >= 0), key=lambda p: p.start)
    reference: dict[int, list[str]] = {}
    place: dict[int, list[str]] = {}
    unknown: list[str] = []
    for t, tok in enumerate(toks):
        word = tok.text
        if tok.sense is not None or tok.cls or word.isdigit() or word in known or (singular(word) or "") in known:
            continue
        unknown.append(word)
        same = [p for p in phrases if sentence[min(p.start, len(toks) - 1)] == sentence[t]]
        nxt = next((p for p in same if p.start > t), None)
        if nxt is not None and word in nxt.unread and nxt.start - t <= 3:
            continue  # a description of the next noun: that phrase is already unread
        before = [p for p in same if p.start < t]
        verb_between = bool(before) and any(toks[m].text in verbs for m in range(before[-1].start + 1, t))
        if before and not verb_between:  # after a phrase: it may restrict or except it, or set the next one's role
            head = next((p for p in reversed(before) if p.role in (THING, MENTION, EXCEPTION, DESTINATION)),
                        before[-1])
            for p in before[before.index(head):]:
                reference.setdefault(p.start, []).append(word)
            if nxt is not None and all(toks[m].sense is None for m in range(t + 1, nxt.start)):
                reference.setdefault(nxt.start, []).append(word)
            continue
        if any(p.role == DESTINATION for p in same):
            continue  # "clear the blocks off the benchtop into the box": the place said decides
        for p in same:  # a verb or an adverb of the sentence: where its things go
            if p.start > t or p.role in (THING, MENTION):
                place.setdefault(p.start, []).append(word)
    excepts = _excepts(toks, phrases, sentence, known, verbs)
    except_from: dict[int, list[int]] = {}
    for p in phrases:  # the wider phrase it may except from: its coverage is doubtful too
        for start, words in excepts.items():
            q = next(q for q in phrases if q.start == start)
            if p.role == THING and p.sentence == q.sentence and set(q.candidates) < set(p.candidates):
                reference.setdefault(p.start, []).extend(words)
                except_from.setdefault(p.start, []).append(start)
    return Unread(tuple(unknown), {k: tuple(dict.fromkeys(v)) for k, v in reference.items()},
                  {k: tuple(dict.fromkeys(v)) for k, v in place.items()}, _counts(toks, phrases, lex, sentence, world),
                  _defined(toks, phrases, lex, verbs, world), excepts, {k: tuple(v) for k, v in except_from.items()},
                  _bounded(toks, set(unknown), [p for p in phrases if p.start in reference], world, lex),
                  _asides(toks, phrases, except_from, world, lex), _loose(toks, phrases, lex))


def _loose(toks: list, phrases: list, lex: Lexicon) -> frozenset[int]:
    """The clauses holding a place word that opens no phrase: a preposition of going with no phrase right after it
    ("in there", "inside", "to the left"), or a word standing for a place ("here", "there")."""
    clause, goes = clauses(toks, lex), lex.words("where_it_goes")
    return frozenset(clause[m] for m, t in enumerate(toks) if t.text in lex.words("place_adverbs")
                     or (t.text in goes or t.cls == "where_it_goes")
                     and not any(m < p.start <= m + 3 and clause[p.start] == clause[m] for p in phrases))


def _asides(toks: list, phrases: list, except_from: dict[int, list[int]], world: WorldState,
            lex: Lexicon) -> dict[int, tuple[str, tuple[str, ...]]]:
    """"Put everything on the table, bar the cup, in the bin": the resolver reads "on the table" as a place,
    the aside between the commas cutting it from "in the bin". An aside can only name things (each licensed by its
    own phrase) and spare them; it cannot widen the phrase before it to things it does not name. So the sentence
    read without the aside bounds that phrase: "everything on the table" holds only what is on the table."""
    out: dict[int, tuple[str, tuple[str, ...]]] = {}
    for wide, spared in except_from.items():
        p = next(q for q in phrases if q.start == wide)
        for start in spared:
            before = [m for m in range(wide + 1, start) if toks[m].text == ","]
            after = next((m for m in range(start + 1, len(toks)) if toks[m].cls == "punct"), None)
            if not before or after is None or toks[after].text != ",":
                continue
            again = resolve(" ".join(t.text for m, t in enumerate(toks) if not before[-1] <= m <= after), world, lex)
            q = next((q for q in again.phrases if q.role == p.role and q.read and q.said.startswith(p.said)
                      and q.said != p.said and set(q.candidates) < set(p.candidates)), None)
            if q is not None:
                out[wide] = (q.said, q.candidates)
    return out


def _bounded(toks: list, unknown: set[str], doubtful: list, world: WorldState,
             lex: Lexicon) -> dict[int, tuple[str, ...]]:
    """What each doubtful singular phrase means on its read words alone: the instruction read again without its
    unknown words ("the block way over on the right" -> "the block on the right", "the block that's presently
    perched in the blue tray" -> "the block that's in the blue tray"), kept where that reads a narrower description
    of the same phrase. The unknown words may still change it ("the block formerly in the tray"), so a pick outside
    it is put to the person, never refused."""
    doubtful = [p for p in doubtful if not p.plural and p.definite and len(p.candidates) > 1]
    if not doubtful or not unknown:
        return {}
    again = resolve(" ".join(t.text for t in toks if t.text not in unknown), world, lex).phrases
    out: dict[int, tuple[str, ...]] = {}
    for p in doubtful:
        q = next((q for q in again if q.role == p.role and q.read and q.candidates and q.said != p.said
                  and q.said.startswith(p.said + " ") and set(q.candidates) < set(p.candidates)), None)
        if q is not None:
            out[p.start] = q.candidates
    return out


def spared(unread: Unread, res: Resolution, phrase: Phrase, world: WorldState) -> frozenset[str] | None:
    """What a wider phrase's reading may leave out when an unknown word may except from it ("everything on the
    table, bar the cup"): the excepted things, and where the resolver read "on the table" as a place while the
    sentence names another one ("... in the bin"), what is not on it (the words may have said it as a filter).
    None where no unknown word may except from the phrase."""
    froms = unread.except_from.get(phrase.start)
    if not froms:
        return None
    out = {c for q in res.phrases if q.start in froms for c in q.candidates}
    span = phrase.start + len(phrase.said.split()) + 3  # "everything on the table"
    dests = [q for q in res.of_role(DESTINATION) if q.sentence == phrase.sentence and q.candidates]
    after = next((q for q in dests if phrase.start < q.start <= span), None)
    if after is not None and len(dests) > 1:
        out |= {c for c in phrase.candidates
                if c in world.objects and world.objects[c].location not in after.candidates}
    return frozenset(out)


def _excepts(toks: list, phrases: list, sentence: list[int], known: frozenset[str],
             verbs: set[str]) -> dict[int, tuple[str, ...]]:
    """Thing phrases an unknown word (or words: "aside from", "with the exception of") right before them may
    except: within three tokens, nothing read between but function words, and a wider phrase of the sentence
    (a plural or quantified one whose candidates include all of this one's) to except them from. "Chuck the
    sponge" has no wider phrase: the word there is a verb, not an exception."""
    out: dict[int, tuple[str, ...]] = {}
    for p in phrases:
        if p.role not in (THING, MENTION) or not p.candidates or p.start <= 0:
            continue
        if not any(q is not p and q.role == THING and q.sentence == p.sentence
                   and set(p.candidates) < set(q.candidates) for q in phrases):
            continue
        words = []
        for m in range(p.start - 1, max(-1, p.start - 5), -1):
            tok = toks[m]
            if sentence[m] != sentence[p.start] or tok.cls == "punct" or tok.text in verbs or tok.sense is not None \
                    or any(q.start == m for q in phrases):  # "the drawing stuff - the pencil": a noun read stops
                break
            if tok.sense is None and not tok.cls and not tok.text.isdigit() and tok.text not in known \
                    and (singular(tok.text) or "") not in known:
                words.insert(0, tok.text)
        if words:
            out[p.start] = tuple(words)
    return out


def excepted(unread: Unread, res: Resolution) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Each thing an unknown word may except ("bar the cup"): (what was said, the unknown words)."""
    out: dict[str, tuple[str, tuple[str, ...]]] = {}
    for p in res.phrases:
        if (words := unread.excepts.get(p.start)) and p.role in (THING, MENTION):
            for c in p.candidates:
                out.setdefault(c, (f"{' '.join(words)} {p.said}", words))
    return out


def state_described(res: Resolution, unread: Unread) -> list[tuple[object, str, tuple[str, ...]]]:
    """"Put the pen in the drawer with nothing in it": the resolver read "in the drawer" as where the pen is (so
    the phrase fits nothing) and "in it" as the place. Where unknown words follow the place inside such a phrase,
    they may describe the place's state: the phrase then means a thing of its noun ("pen"), and the place is
    where it goes. Returns (the phrase, its noun, the unknown words)."""
    out = []
    for p in res.of_role(THING, MENTION):
        if p.candidates or not p.read or p.start < 0:
            continue
        words = p.said.split()
        inner = [q for q in res.phrases if p.start < q.start < p.start + len(words) and q.candidates
                 and unread.of(q.start)]
        cut = next((i for i, w in enumerate(words) if w in ("in", "on", "at", "inside")), 0)
        if inner and cut > 1:
            out.append((p, singular(words[cut - 1]) or words[cut - 1], unread.of(inner[0].start)))
    return out


def place_in_phrase(said: str, unread_words: Sequence[str]) -> tuple[str, ...]:
    """"the sponge in the dustbin": an unread phrase ending with a place said by unknown words (the resolver read
    the place as part of the thing's description). Returns those words, or () where none ends it."""
    words = said.split()
    cut = max((i for i, w in enumerate(words) if w in ("in", "into", "on", "onto", "inside") and i), default=0)
    tail = [w for w in words[cut + 1:] if w not in ("the", "a", "an")] if cut else []
    return tuple(tail) if tail and set(tail) <= set(unread_words) else ()


def place_reading(phrase_words: Sequence[str], world: WorldState) -> tuple[tuple[str, ...], str]:
    """The places an unread place noun ("in the dustbin") may name, and how it was read. English compounds are
    head-final: a "dustbin" is a bin and a "wastebasket" a basket, so a noun ending with (or else holding) a
    place kind of the scene is read as that kind. This is reading, not guessing: the head noun says the kind.
    Else a typo (one letter off, or two swapped) of exactly one place noun of the scene is read as it. Else
    every place may be meant: the reading is the goal's, listed."""
    kinds: dict[str, set[str]] = {}
    for name, place in world.places.items():
        for noun in {place.kind, name.split("_")[-1], name}:
            if noun:
                kinds.setdefault(str(noun).lower(), set()).add(name)
    noun = "".join(phrase_words).lower()
    head = phrase_words[-1].lower() if phrase_words else ""
    for test, how in ((lambda k: head == k or noun == k, "its noun"),
                      (lambda k: noun.endswith(k) or head.endswith(k), "its head noun"),
                      (lambda k: k in noun, "a place noun in it")):
        hits = sorted({n for k, names in kinds.items() if len(k) > 2 and test(k) for n in names})
        if hits:
            return tuple(hits), how
    near = [k for k in kinds if _one_off(head, k)]
    if len({frozenset(kinds[k]) for k in near}) == 1:
        return tuple(sorted(kinds[near[0]])), f"a typo of '{near[0]}'"
    return tuple(sorted(world.places)), ANY_PLACE


RANK_MARGIN = 0.05  # cosine: how far ahead the top-ranked place must be for a goal elsewhere to be asked about
ANY_PLACE = "any place (no place noun in it)"  # how place_reading reads a noun with no place noun in it
_RANKS: dict[tuple[str, tuple[str, ...]], str | None] = {}


def ranked_place(phrase_words: Sequence[str], places: Sequence[str], embed=None) -> str | None:
    """The place an unknown place noun with no place noun in it ("the carton") is most likely to name, where one
    stands out: the scene's places ranked by all-MiniLM-L6-v2 cosine similarity with the noun, the first kept
    only when it is ``RANK_MARGIN`` ahead of the second. Embeddings are too noisy to decide a sense, so this only
    ranks: a goal putting a thing elsewhere is put to the person, never refused. None where the model is not
    installed or nothing stands out. ``embed``: a stand-in embedder (texts -> unit vectors), for tests."""
    key = (" ".join(phrase_words).lower(), tuple(sorted(places)))
    if embed is None and key in _RANKS:
        return _RANKS[key]
    try:
        from step_planner.planner.memory import minilm_embedder
        vectors = (embed or minilm_embedder())([key[0], *(p.replace("_", " ") for p in key[1])])
    except (ImportError, OSError):  # a minimal install without the model: the reading stays any place
        return None
    scores = sorted(((float(vectors[i + 1] @ vectors[0]), p) for i, p in enumerate(key[1])), reverse=True)
    top = scores[0][1] if len(scores) == 1 or scores[0][0] - scores[1][0] >= RANK_MARGIN else None
    if embed is None:
        _RANKS[key] = top
    return top


def _one_off(a: str, b: str) -> bool:
    """One letter changed, added or dropped, or two neighbours swapped."""
    if a == b or abs(len(a) - len(b)) > 1 or len(b) < 3:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] \
            and a[diff[1]] == b[diff[0]]
    short, long_ = sorted((a, b), key=len)
    return any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))


def _defined(toks: list, phrases: list, lex: Lexicon, verbs: set[str], world: WorldState) -> frozenset[int]:
    """Unread phrases that say no thing of their own: the first words of a longer description ("the upper left
    drawer": 'the upper', then 'left drawer'), a group defined right after it ("the writing gear - the pencil and
    the file", "the writing gear, that is the pencil and the file"), something of a thing said before ("its
    hue"), an apposition ending the sentence after a read plural ("the blocks ..., the whole lot": no word there
    adds, as "too" would), something of the things said right after "of" ("the places of the tape and the
    wrench": an attribute, a part or a quantity of them; "the contents of the drawer" is not bounded so, a drawer
    holds things), or a relative clause read as a phrase ("the tray that matches ...")."""
    out = set()
    opening = {",", ":", *lex.words("determiners"), "that", "namely", "i", "e", "ie", "meaning", "is", "so"}
    describing = set(lex.colours) | set(lex.words("sides")) | set(lex.words("sizes")) | lex.words("ordinals") \
        | set(lex.words("states"))
    for p in phrases:
        if p.read or p.role not in (THING, MENTION):
            continue
        first = toks[p.start].text
        if first in ("its", "their") or first in lex.words("relative") and p.start and toks[p.start - 1].sense:
            out.add(p.start)
            continue
        end = next((m for m in range(p.start + 1, len(toks)) if toks[m].cls == "punct"), len(toks))
        if p.start and toks[p.start - 1].text == "," and (end == len(toks) or toks[end].text in _SENTENCE_ENDS) \
                and all(t.sense is None and not t.cls and t.text not in lex.words("function_words")
                        for t in toks[p.start + 1:end]) \
                and any(q.plural and q.read and q.role == THING and q.sentence == p.sentence and q.start < p.start
                        for q in phrases):
            out.add(p.start)  # "put the blocks in the bin, the whole lot.": it ends the sentence, restating them
            continue
        of = next((q for q in phrases if q.start > p.start and q.sentence == p.sentence), None)
        cut = next((m for m in range(p.start + 1, of.start) if toks[m].text in lex.words("partitive")), 0) if of else 0
        if cut and of.candidates and all(c in world.objects for c in of.candidates) \
                and not any(toks[m].text in verbs or toks[m].sense is not None for m in range(p.start, cut)) \
                and all(toks[m].sense is None and not toks[m].cls for m in range(cut + 1, of.start)):
            out.add(p.start)  # "the places of the red block and the cup": something of those things, no other
            continue
        end = p.start + 1 + (0 if p.candidates else len(p.unread))  # after its noun, or its unknown words
        nxt = next((q for q in phrases if q.start >= end and q.sentence == p.sentence), None)
        if nxt is not None and not nxt.candidates:
            continue  # "one block that doesn't match its colour": a phrase that reads nothing says nothing
        if nxt is None or any(toks[m].text in verbs or toks[m].text in ("and", "then") or toks[m].sense is not None
                              and m != nxt.start for m in range(end, nxt.start)):
            continue
        between = [toks[m].text for m in range(end, nxt.start)]
        if set(between) <= describing or between[0] in opening:
            out.add(p.start)
    return frozenset(out)


def _counts(toks: list, phrases: list, lex: Lexicon, sentence: list[int], world: WorldState) -> dict[int, int]:
    """"the blocks, all three of them": a count after a plural phrase, in its sentence, before the next phrase
    that is not a pronoun for it; kept only where it differs from the phrase's candidates."""
    numbers = {**{w: n for w, n in (lex.data.get("numbers") or {}).items()}, "both": 2}
    out: dict[int, int] = {}
    for p in phrases:
        if p.role != THING or not p.plural or not p.candidates or p.said in lex.words("pronouns_plural") \
                or any(c not in world.objects for c in p.candidates):
            continue
        for m in range(p.start + 1, len(toks)):
            if sentence[m] != sentence[p.start] or toks[m].text in ("and", "then") or toks[m].sense is not None:
                break
            n = int(toks[m].text) if toks[m].text.isdigit() else numbers.get(toks[m].text)
            if n is not None:
                if n != len(p.candidates):
                    out[p.start] = n
                break
    return out


DOUBT = "the model's reading of words the resolver could not read (unresolved)"  # goal_checks.UNRESOLVED


def doubt_source(words: Iterable[str]) -> str:
    """Where a doubtful check's reading came from, naming the unread words it rests on."""
    return f"{DOUBT}: rests on the unread {', '.join(repr(w) for w in words)}"
