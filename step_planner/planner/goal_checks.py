"""A goal held against what the instruction's words refer to (``planner/resolution.py``).

What the words and the world already decide, these checks decide; what only the person can settle, they ask:

- every object the goal changes (places, holds or empties) is a candidate of some phrase; a goal about
  anything else is refused naming it ("in(wrench, bin): nothing in the words refers to the wrench");
- a plural or quantified phrase covers all its candidates: a narrow reading is refused naming what it left
  out; what an exception leaves out (or a correction takes back) is not moved;
- a singular described phrase: the goal's pick is one of its candidates (else refused); several remaining
  are asked about, naming them; none in view ends the goal (unless it may be hidden);
- the person's answer is resolved too: it replaces the candidates of the phrase it says which of, for every
  check, and a goal moving what it left out is refused naming it;
- a phrase the resolver cannot read ("tidy the bench"): the changed objects no phrase covers and that fit what
  was read of it (its kind noun, not a place's description, not beyond a list defined after it) are taken as
  its reading, shown, and counted as unresolved;
- a word the resolver does not know (``planner/unread_words.py``) turns the checks it could change into
  readings, shown with the word: a refusal rests only on a full reading; where the goal moves a thing such a
  word may spare with the rest ("bar the cup"), or picks what the read words (or the embeddings' ranking of an
  unknown place noun) rule out, the person is asked (``spared_moved``, an :class:`Ask`), never the model refused;
- a place the words imply ("throw away" -> a bin in view, "put back" -> where it was, "put away" -> the one
  obvious place) is a reading, shown with the words it came from, not a refusal;
- a clause with its own things and its own place puts those things there ("put the pen in the drawer, then set the
  cup on the tray": not the pen on the tray), unless a later clause with no thing of its own may place them again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from step_planner.domain.conditions import Condition
from step_planner.domain.world import GRIPPER, WorldState
from step_planner.planner.resolution import (
    DESTINATION,
    EXCEPTION,
    MENTION,
    REFERENCE,
    REPLACED,
    THING,
    Lexicon,
    Phrase,
    Resolution,
    resolve,
    resolve_answer,
    singular,
)
from step_planner.planner.unread_words import (
    ANY_PLACE,
    Unread,
    doubt_source,
    excepted,
    is_place_noun,
    known_nouns,
    place_in_phrase,
    place_reading,
    ranked_place,
    spared,
    state_described,
)
from step_planner.planner.world_descriptions import colour_of

RULE_UNREFERRED = "unmentioned_thing"  # a changed object no phrase of the words refers to
RULE_NARROW = "narrow_reading"  # a plural or quantified phrase read as fewer than its candidates
RULE_LEFT_OUT = "left_out_moved"  # an object an exception leaves out (or a correction took back) is moved
RULE_WRONG_PICK = "wrong_referent"  # a described phrase's pick is none of its candidates
RULE_NOTHING_FITS = "nothing_fits"  # nothing in view fits a described phrase
RULE_ANSWER = "against_answer"  # the pick contradicts the person's answer
RULE_PLACE = "unmentioned_place"  # an object must end up in a place the words neither name nor imply
RULE_MISMATCH = "mismatched_place"  # "the tray of its colour": a thing put in a place of another colour
RULE_SPARE_ASKED = "spared_moved"  # "bar the cup": the cup moved with the rest, the unknown word read as nothing

PLACING = ("in", "on", "at")


UNRESOLVED = "the model's reading of words the resolver could not read (unresolved)"  # a reading's source


@dataclass(frozen=True)
class Ask:
    """A phrase several things still fit, and what the goal picked of them: only the person can say."""

    said: str
    candidates: tuple[str, ...]
    picked: tuple[str, ...]


@dataclass(frozen=True)
class Reading:
    """How the goal reads words the checks accepted: ``said`` -> ``resolved``, with where that came from."""

    said: str
    resolved: tuple[str, ...]
    candidates: tuple[str, ...]
    source: str
    unresolved: bool = False
    from_answer: bool = False


@dataclass
class WordCheck:
    problems: list[tuple[str, str]] = field(default_factory=list)  # (rule, sentence)
    asks: list[Ask] = field(default_factory=list)
    readings: list[Reading] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)  # phrases the resolver could not read, taken as readings
    ends: str = ""  # the goal cannot be met as the words say: why
    questions: list[str] = field(default_factory=list)  # what only the person can settle, put to them

    def refuse(self, rule: str, text: str) -> None:
        if (rule, text) not in self.problems:
            self.problems.append((rule, text))


def _spoken(name: str) -> str:
    return name.replace("_", " ")


def _listing(names: Iterable[str]) -> str:
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1] if names else "nothing"


def changes(facts: Iterable[Condition], world: WorldState,
            holds: Callable[[Condition], bool]) -> dict[str, list[Condition]]:
    """The objects a goal changes (places, holds or empties), each with the facts that change it; a fact
    that already holds changes nothing."""
    out: dict[str, list[Condition]] = {}
    for fact in facts:
        if holds(fact):
            continue
        if fact.predicate in (*PLACING, "holding") and fact.args:
            out.setdefault(fact.args[0], []).append(fact)
        elif fact.predicate == "empty" and not fact.negated:
            for obj in world.contents(fact.args[0]):
                out.setdefault(obj, []).append(fact)
    return out


def _hidden(world: WorldState, name: str) -> bool:
    return name not in world.objects or not world.is_visible(name)


def check_words(facts: Sequence[Condition], res: Resolution, world: WorldState, lex: Lexicon, *,
                holds: Callable[[Condition], bool], answers: Sequence[str] = (), exempt: Iterable[str] = (),
                start: WorldState | None = None, stays: bool = False, also: Sequence[Resolution] = (),
                unread: Unread | None = None) -> WordCheck:
    """Hold ``facts`` (a parsed, well-formed goal) against ``res`` (the instruction resolved in ``world``).

    ``holds``: whether a fact holds now (it changes nothing then). ``exempt``: names the words may mean though
    the resolver cannot see them (names of things not seen yet, things a search revealed). ``start``: the
    world when the task began ("put back"; default ``world``). ``stays``: the words say to leave things where
    they are, so a fact that holds may keep an object in a place they do not name. ``also``: the person's
    answers, resolved: what they refer to counts as referred to ("yes, the marker too"). ``answers``: the
    person's answers as said; one that says which of a phrase's candidates are meant replaces them for every
    check. ``unread``: the words the resolver did not read (``planner/unread_words.py``): a check they could
    change gives a reading, not a refusal."""
    out = WordCheck()
    start = start or world
    unread = unread or Unread()
    given, (res, answered) = res, _bind_answers(res, answers, also, world, lex, unread)
    changed = changes(facts, world, holds)
    exempt = set(exempt)
    referring = res.of_role(THING, MENTION)
    licensed = {c for p in referring if p.read or p.hidden for c in p.candidates}
    licensed |= {c for extra in also for p in extra.of_role(THING, MENTION) for c in p.candidates}
    may_be_hidden = any(p.hidden for p in referring)
    left_out = res.left_out()
    uncovered: dict[str, Condition] = {}
    refused_aside: set[str] = set()
    for obj, its in changed.items():
        fact = its[0]
        if obj in left_out:
            why = next(p for p in res.phrases if p.role in (EXCEPTION, REPLACED) and obj in p.candidates)
            if doubt := unread.of(why.start):
                out.readings.append(Reading(why.said, (str(fact),), why.candidates, doubt_source(doubt),
                                            unresolved=True))
                out.unresolved.append(why.said)
                continue
            out.refuse(RULE_LEFT_OUT, f"{fact}: the words leave the {_spoken(obj)} out ('{why.said}'); it is not to "
                       "be moved")
        elif obj in answered and obj not in licensed:
            said, answer = answered[obj]
            if not answer:
                continue  # "the block" -> "the left one": the pick is held against the answer below
            out.refuse(RULE_ANSWER, f"{fact}: the person's answer '{answer}' says which '{said}' means, and it "
                       f"leaves out the {_spoken(obj)}")
        elif obj not in licensed and not (obj in exempt or may_be_hidden and _hidden(world, obj)) \
                and not all(f.predicate == "empty" and f.args[0] in licensed for f in its):
            uncovered[obj] = fact  # "empty the tray": what the tray holds is what the words move
    for p in referring:  # "everything on the table, bar the cup, in the bin": the aside does not widen it
        said, holds_ = unread.aside.get(p.start, ("", ()))
        for obj in [o for o in changed if said and o in p.candidates and o not in holds_ and o not in uncovered
                    and not any(q is not p and o in q.candidates and (q.read or q.hidden) for q in referring)]:
            out.refuse(RULE_UNREFERRED, f"{changed[obj][0]}: nothing in the words refers to the {_spoken(obj)} "
                       f"('{p.said}' is '{said}' without the aside between the commas, which can only name things)")
            uncovered.pop(obj, None)
            refused_aside.add(obj)
    unresolved = [p for p in res.unresolved  # "the pen" not seen yet, the goal's pen hidden: that is what it names
                  if not any(_hidden(world, o) and set(o.split("_")) & set(p.unread) for o in changed)]
    loose = [p for p in referring if not p.read and p.candidates]  # "everything round": which of them is unread
    refused = set(uncovered) | refused_aside  # refused, or the reading of an unread phrase: their places are in it
    for phrase in (*unresolved, *loose):  # "tidy the bench": the model's reading of words the resolver cannot read
        taken = {o: f for o, f in uncovered.items() if _may_mean(phrase, o, world, lex, phrase.start in unread.defined)}
        if taken:
            opened = _open_clauses(res, world, lex)  # "...; those go in the box": a later place, no thing of its own
            if where := any(q.role == DESTINATION and (q.sentence == phrase.sentence or q.clause > phrase.clause
                                                        and q.clause in opened) for q in res.phrases):
                refused -= set(taken)  # the words say where ("tidy the glorp into the box"): that still decides
            out.unresolved.append(phrase.said)
            out.readings.append(Reading(phrase.said, tuple(str(f) for f in taken.values()), (), UNRESOLVED,
                                        unresolved=True))
            if not where and (tail := place_in_phrase(phrase.said, phrase.unread)):  # "the sponge in the dustbin"
                places, how = place_reading(tail, world)
                for f in taken.values():
                    if f.predicate in PLACING and not f.negated and f.args[1] in places and how == ANY_PLACE:
                        _ranked(f, f"the {' '.join(tail)}", tail, places, answers, world, lex, out)
                    elif f.predicate in PLACING and not f.negated and f.args[1] not in places:
                        out.refuse(RULE_PLACE, f"{f}: the words name '{' '.join(tail)}' as the place (read by {how} "
                                   f"as {_listing(places)}), not {f.args[1]}")
            uncovered = {o: f for o, f in uncovered.items() if o not in taken}
    for p in referring:  # "clear the desk": what a place holds, when a verb the resolver does not know acts on it
        if p.candidates and all(c in world.places for c in p.candidates) and (doubt := unread.place.get(p.start)):
            taken = {o: f for o, f in uncovered.items() if o in world.objects and start.objects.get(o) is not None
                     and start.objects[o].location in p.candidates}
            if taken:
                out.unresolved.append(p.said)
                out.readings.append(Reading(p.said, tuple(str(f) for f in taken.values()), p.candidates,
                                            doubt_source(doubt), unresolved=True))
                uncovered = {o: f for o, f in uncovered.items() if o not in taken}
    for phrase, noun, doubt in state_described(res, unread):  # "the pen in the drawer with nothing in it"
        taken = {o: f for o, f in uncovered.items() if o in world.objects
                 and noun in {*o.split("_"), *(world.objects[o].category or "").split()}}
        if taken:
            out.unresolved.append(phrase.said)
            out.readings.append(Reading(phrase.said, tuple(str(f) for f in taken.values()), (),
                                        doubt_source(doubt), unresolved=True))
            uncovered = {o: f for o, f in uncovered.items() if o not in taken}
            refused -= set(taken)  # the drawer it names still decides where they go
    for obj, (said, words) in excepted(unread, res).items():  # "bar the cup": moving it too is only a reading,
        if obj in changed:  # but moving it with the rest to the same place reads the word as saying nothing: asked
            if (answer := _sparing(answers, obj, world, lex)) is not None:
                out.refuse(RULE_ANSWER, f"{changed[obj][0]}: the person's answer '{answer}' leaves the "
                           f"{_spoken(obj)} where it is")
                continue
            if not answers and (rest := _with_the_rest(obj, res, unread, changed)):
                out.refuse(RULE_SPARE_ASKED, f"{changed[obj][0]}: '{said}' names the {_spoken(obj)} apart from "
                           f"'{rest}' with a word the reader does not know ({_listing(words)}); moving it with the "
                           "rest to the same place reads that word as saying nothing: the person is asked")
                out.questions.append(f"Should the {_spoken(obj)} stay where it is? You said '{said}', and I do not "
                                     f"know the word{'s' * (len(words) > 1)} {_listing(words)}.")
                continue
            out.unresolved.append(said)
            out.readings.append(Reading(said, tuple(str(f) for f in changed[obj]), (obj,), doubt_source(words),
                                        unresolved=True))
    for obj, fact in uncovered.items():
        out.refuse(RULE_UNREFERRED, f"{fact}: nothing in the words refers to the {_spoken(obj)}"
                   + (_not_meant(obj, (*unresolved, *loose)) or _referred(referring, world)))
    _plural_coverage(facts, res, world, changed, out, unread)
    _singular_picks(facts, given, world, lex, changed, answers, out, unread)  # asks; picks held against the answers
    _matching_places(facts, res, world, lex, out)
    said_places = {c for extra in also for p in extra.phrases for c in p.candidates}
    _places([f for f in facts if not set(f.objects) & refused and not set(f.args[1:]) & said_places], res, world,
            start, holds if stays else (lambda _f: False), out, unread, lex, answers)
    return out


def _with_the_rest(obj: str, res: Resolution, unread: Unread, changed: dict[str, list[Condition]]) -> str:
    """The wider phrase an unknown word may except ``obj`` from ("everything on the table, bar the cup"), where
    the goal puts ``obj`` where it puts the rest of that phrase's things ('' where it does not)."""
    def dests(name: str) -> set[str]:
        return {f.args[1] for f in changed.get(name, []) if f.predicate in PLACING and not f.negated}

    for wide, froms in unread.except_from.items():
        p = next((q for q in res.phrases if q.start == wide), None)
        spared = {c for q in res.phrases if q.start in froms for c in q.candidates}
        if p is None or obj not in spared:
            continue
        rest = set().union(*(dests(c) for c in p.candidates if c not in spared))
        if dests(obj) and dests(obj) <= rest:
            return p.said
    return ""


def _sparing(answers: Sequence[str], obj: str, world: WorldState, lex: Lexicon) -> str | None:
    """The person's answer that leaves ``obj`` out ("leave the cup", "except the cup", "the cup stays where it
    is"): it names no other thing and says a word of the lexicon's exceptions or stay phrases. An answer without
    such a word ("yes", "it goes too") is the model's reading, shown."""
    sparing = lex.words("exceptions") | {p for p, k in lex.phrases.items() if k == "stay"}
    for answer in reversed(answers):
        said = f" {' '.join(answer.lower().replace(',', ' ').replace('.', ' ').split())} "
        if any(f" {w} " in said for w in sparing) and resolve_answer(answer, (obj,), world, lex) in ((obj,), None) \
                and not any(p.candidates and obj not in p.candidates
                            for p in resolve(answer, world, lex).of_role(THING, MENTION, EXCEPTION)):
            return answer
    return None


def _bind_answers(res: Resolution, answers: Sequence[str], also: Sequence[Resolution], world: WorldState,
                  lex: Lexicon, unread: Unread) -> tuple[Resolution, dict[str, tuple[str, str]]]:
    """The person's answers bind: a phrase some answer says which of its candidates are meant ("the tool" ->
    "the chisel") has those candidates only, for every check. An answer naming only what an unknown word may
    spare from the phrase ("bar the cup" -> "the cup goes too") says whether it is spared, not which the phrase
    means. Returns the bound resolution and, for each thing an answer left out, (the phrase said, the answer;
    "" for a singular phrase, whose pick is checked apart)."""
    if not answers:
        return res, {}
    phrases: list[Phrase] = []
    left: dict[str, tuple[str, str]] = {}
    for p in res.phrases:
        if p.role in (THING, MENTION, DESTINATION, EXCEPTION) and len(p.candidates) > 1 and not p.matches:
            for answer, said in reversed(list(zip(answers, (*also, *[Resolution()] * len(answers)), strict=False))):
                meaning = resolve_answer(answer, p.candidates, world, lex)
                if meaning:  # "yes, the battery goes there with the tape and the eraser": all it names
                    meaning = tuple(sorted({*meaning, *(c for q in said.of_role(THING, MENTION, REFERENCE)
                                                        for c in q.candidates if c in p.candidates)}))
                spared = {c for q in res.phrases if q.start in unread.except_from.get(p.start, ())
                          for c in q.candidates}
                if meaning and set(meaning) < set(p.candidates) and not set(meaning) <= spared:
                    left |= {c: (p.said, answer if p.plural else "") for c in p.candidates if c not in meaning}
                    p = replace(p, candidates=tuple(meaning), read=True, unread=(), plural=len(meaning) > 1)
                    break
        phrases.append(p)
    kept = {c for p in phrases if p.role in (THING, MENTION) for c in p.candidates}
    return replace(res, phrases=tuple(phrases)), {c: w for c, w in left.items() if c not in kept}


def _may_mean(phrase: Phrase, obj: str, world: WorldState, lex: Lexicon, defined: bool) -> bool:
    """Whether an unread phrase may mean ``obj``: its reading must fit what of it was read. A phrase with
    candidates (what its read words fit) means one of them, unless they are places ("the drawer second from
    the top") or the things listed after it ("the office things - the tape and the pen"); a phrase headed by
    a noun the reader knows means a thing of that kind ("the pen", hidden or not), never a place's contents."""
    if phrase.candidates:  # "everything away": also what was not in view; "the round things - the tape, the
        # spool ...": what was read of it ("round") bounds the list; "the drawing stuff - ...": only the list
        listed = defined and set(phrase.candidates) == set(phrase.kinds)
        everything = {n for n in world.objects if world.is_visible(n)} <= set(phrase.kinds)
        return (obj in phrase.candidates or everything and _hidden(world, obj)) and not listed \
            and not all(c in world.places for c in phrase.candidates)
    if defined:
        return False
    head = phrase.unread[-1] if phrase.unread else ""
    if not head or is_place_noun(head, lex, world):
        return False
    noun = singular(head) or head
    if noun in known_nouns(lex, world):
        return obj in world.objects and noun in {*obj.split("_"), *(world.objects[obj].category or "").split()}
    return True


def _quoted(phrases: Iterable[Phrase]) -> str:
    return _listing(dict.fromkeys(f"'{p.said}'" for p in phrases))


def _referred(referring: Sequence[Phrase], world: WorldState) -> str:
    """What the refusal rests on: the phrases that do refer to things ('the tape')."""
    things = [p for p in referring if p.candidates and not all(c in world.places for c in p.candidates)]
    return f" (they refer to {_quoted(things)})" if things else ""


def _not_meant(obj: str, phrases: Iterable[Phrase]) -> str:
    said = [p.said for p in phrases]
    return f" ('{said[0]}' cannot mean it: what was read of it rules it out)" if said else ""


def _plural_coverage(facts: Sequence[Condition], res: Resolution, world: WorldState,
                     changed: dict[str, list[Condition]], out: WordCheck, unread: Unread) -> None:
    named = {a for f in facts for a in f.args}
    left_out = res.left_out()
    seen: set[tuple[str, ...]] = set()
    for p in res.of_role(THING):
        if not p.plural or not p.read or not p.candidates or p.candidates in seen:
            continue
        seen.add(p.candidates)
        picked = [c for c in p.candidates if c in named]
        if not picked:
            continue
        dests = {f.args[1] for c in picked for f in changed.get(c, []) if f.predicate in PLACING and not f.negated}
        missing = [c for c in p.candidates if c not in named and c not in left_out
                   and not (c in world.objects and world.objects[c].location in dests)]
        count = unread.counts.get(p.start)
        beyond = [] if (spare := spared(unread, res, p, world)) is None else [c for c in missing if c not in spare]
        if beyond:  # "everything, bar the cup": the unread word may spare the cup, nothing else
            out.refuse(RULE_NARROW, f"'{p.said}' means {_listing(p.candidates)}; the goal leaves out "
                       f"{_listing(beyond)}, which no word of the instruction spares: state a fact for each")
        elif count is not None and len(picked) != count:  # "the blocks, all three of them": the count was read
            out.refuse(RULE_NARROW, f"'{p.said}' is said to be {count} things; the goal changes {len(picked)} of "
                       f"them ({_listing(picked)})")
        elif missing and (doubt := unread.of(p.start) or (() if count is None else (f"{count} of them",))):
            out.readings.append(Reading(p.said, tuple(picked), p.candidates, doubt_source(doubt), unresolved=True))
            out.unresolved.append(p.said)
        elif missing:
            out.refuse(RULE_NARROW, f"'{p.said}' means {_listing(p.candidates)}; the goal leaves out "
                       f"{_listing(missing)}: state a fact for each")


def _picks(p: Phrase, facts: Sequence[Condition], changed: dict[str, list[Condition]]) -> tuple[str, ...]:
    if p.role == DESTINATION:
        return tuple(sorted({f.args[1] for f in facts if f.predicate in PLACING and not f.negated
                             and f.args[1] in p.kinds}))
    return tuple(sorted(c for c in changed if c in p.kinds))


def _singular_picks(facts: Sequence[Condition], res: Resolution, world: WorldState, lex: Lexicon,
                    changed: dict[str, list[Condition]], answers: Sequence[str], out: WordCheck,
                    unread: Unread) -> None:
    asked: set[tuple[str, ...]] = set()
    for p in res.of_role(THING, DESTINATION):
        if p.plural or not p.definite or p.named or not p.read or not p.kinds or p.matches:
            continue
        # what other phrases say and this one cannot mean: "the red and the blue block", "all the blocks ..., then
        # the yellow one"
        others = {c for q in res.of_role(p.role) if q is not p for c in q.candidates if c not in p.candidates}
        picked = tuple(c for c in _picks(p, facts, changed) if c not in others)
        if not picked:
            continue
        if (doubt := unread.of(p.start)) and set(picked) != set(p.candidates):  # which one: the unread word may say
            if not answers and (bound := unread.bounded.get(p.start)) and not set(picked) <= set(bound):
                out.asks.append(Ask(p.said, p.candidates, picked))  # what was read picks another: the person says
                continue
            out.readings.append(Reading(p.said, picked, p.kinds, doubt_source(doubt), unresolved=True))
            out.unresolved.append(p.said)
            continue
        if not p.candidates:
            if p.hidden or any(_hidden(world, c) for c in picked):
                continue
            unseen = [n for n, pl in world.places.items() if pl.openable and not pl.is_open]
            text = f"nothing in view fits '{p.said}' (the goal picks {_listing(picked)})"
            out.refuse(RULE_NOTHING_FITS, text + ("; it may be in " + _listing(unseen) if unseen else ""))
            if not unseen:
                out.ends = text
            continue
        wrong = [c for c in picked if c not in p.candidates]
        if wrong:
            out.refuse(RULE_WRONG_PICK, f"'{p.said}' is {_listing(p.candidates)}, not {_listing(wrong)}")
            continue
        if len(p.candidates) > 1 and set(picked) != set(p.candidates):
            meaning = _answer_meaning(answers, p.candidates, world, lex)
            if meaning is None:
                if p.candidates not in asked:
                    asked.add(p.candidates)
                    out.asks.append(Ask(p.said, p.candidates, picked))
                continue
            if not set(picked) <= set(meaning):
                out.refuse(RULE_ANSWER, f"the person's answer means {_listing(meaning)} for '{p.said}'; the goal "
                           f"picks {_listing(picked)}")
                continue
            out.readings.append(Reading(p.said, picked, p.candidates, "from the person's answer", from_answer=True))
        elif p.described and len(p.kinds) > 1:
            out.readings.append(Reading(p.said, picked, p.kinds, "what the words describe in view"))


def _matching_places(facts: Sequence[Condition], res: Resolution, world: WorldState, lex: Lexicon,
                     out: WordCheck) -> None:
    """"The tray of its colour": each thing placed in one of the phrase's candidates must share the attribute with
    it. Where the world does not say a colour (of the thing or of the place) the goal's pick stands, shown."""
    for p in res.of_role(DESTINATION):
        if p.matches != "colour":
            continue
        for fact in facts:
            if fact.predicate not in PLACING or fact.negated or fact.args[1] not in p.candidates:
                continue
            obj, place = fact.args[0], fact.args[1]
            want, have = colour_of(world, obj, lex), colour_of(world, place, lex)
            if not want or not have:
                out.readings.append(Reading(p.said, (str(fact),), p.candidates, "the goal's pick: the colour of "
                                            f"the {_spoken(obj) if not want else _spoken(place)} is not known"))
            elif want != have:
                fits = [c for c in p.candidates if colour_of(world, c, lex) == want]
                out.refuse(RULE_MISMATCH, f"{fact}: '{p.said}' for the {_spoken(obj)} ({want}) is "
                           + (_listing(fits) if fits else f"no place in view (none is {want})")
                           + f", not {place} ({have})")


def _answer_meaning(answers: Sequence[str], candidates: tuple[str, ...], world: WorldState,
                    lex: Lexicon) -> tuple[str, ...] | None:
    for answer in reversed(answers):
        meaning = resolve_answer(answer, candidates, world, lex)
        if meaning is not None:
            return meaning
    return None if not answers else candidates  # an answer the resolver cannot read: the model's reading


def _places(facts: Sequence[Condition], res: Resolution, world: WorldState, start: WorldState,
            holds: Callable[[Condition], bool], out: WordCheck, unread: Unread, lex: Lexicon,
            answers: Sequence[str]) -> None:
    said = {c for p in res.phrases if p.role not in (EXCEPTION, REPLACED) for c in p.candidates}
    taken_back = {c for p in res.of_role(REPLACED) for c in p.candidates} - said
    for fact in facts:
        if fact.predicate not in PLACING or fact.negated or holds(fact):
            continue
        obj, place = fact.args[0], fact.args[1]
        bound = _bound_places(obj, res, world, lex, unread)
        if bound is not None and place in said and place not in bound[1]:  # "put the pen in the drawer, then set
            out.refuse(RULE_PLACE, f"{fact}: the words name {_quoted(bound[2])} as the place for '{bound[0].said}' "
                       f"in its clause; {place} is said for other things")  # the cup on the tray": the pen's place
            continue
        if place in said:
            continue
        if place in taken_back:
            back = [p for p in res.of_role(REPLACED) if place in p.candidates]
            out.refuse(RULE_PLACE, f"{fact}: the words took back {place} as the place ({_quoted(back)})")
            continue
        implied = None
        for imp in res.implied:
            if imp.start:
                before = start.objects.get(obj)
                where = before.location if before is not None and before.location != GRIPPER else None
                if where == place:
                    implied = imp
            elif place in imp.places:
                implied = imp
            if implied is not None:
                break
        doubt = [w for p in res.phrases if obj in p.candidates or place in p.kinds
                 for w in unread.place.get(p.start, ())]
        about = next((p for p in res.of_role(THING, MENTION) if obj in p.candidates), None)
        unread_places = [p for p in res.of_role(DESTINATION) if not p.candidates and p.unread
                         and (about is None or p.sentence == about.sentence)]
        if implied is None and unread_places:  # "in the dustbin": what its noun says bounds the reading
            read = [(p, *_pronoun_places(p, res, world, lex)) for p in unread_places]
            fits = [(p, how) for p, places, how in read if place in places]
            if fits:
                p, how = fits[0]
                if how == ANY_PLACE and _ranked(fact, p.said, p.unread, tuple(world.places), answers, world, lex, out):
                    continue
                out.readings.append(Reading(p.said, (str(fact),), (place,), doubt_source(p.unread) + f", read by {how}",
                                            unresolved=True))
                out.unresolved.append(p.said)
            else:
                out.refuse(RULE_PLACE, f"{fact}: " + "; ".join(
                    f"the words name '{p.said}' as the place (read by {how} as {_listing(places)}), not {place}"
                    for p, places, how in read))
            continue
        if implied is not None:
            out.readings.append(Reading(implied.said, (str(fact),), implied.places or (place,),
                                        "a place the words imply"))
        elif doubt:  # "chuck the sponge": a verb the resolver does not know may say where
            words = " ".join(dict.fromkeys(doubt))  # (not ``said``: the places said, for the facts after this one)
            out.readings.append(Reading(words, (str(fact),), (place,), doubt_source(dict.fromkeys(doubt)),
                                        unresolved=True))
            out.unresolved.append(words)
        else:
            out.refuse(RULE_PLACE, f"{fact}: " + _place_words(obj, place, res))


def _ranked(fact: Condition, said: str, words: Sequence[str], places: Sequence[str], answers: Sequence[str],
            world: WorldState, lex: Lexicon, out: WordCheck) -> bool:
    """"The carton", a noun with no place noun in it, may be any place; where the embeddings rank one place of
    the scene clearly first (:func:`ranked_place`) and the goal puts the thing elsewhere, only the person can say:
    asked, and their answer binds. Returns whether the goal's place was settled so (asked or refused)."""
    top = ranked_place(words, places)
    if top is None or fact.args[1] == top:
        return False
    meaning = _answer_meaning(answers, tuple(places), world, lex)
    if meaning is None:
        out.asks.append(Ask(said, tuple(places), (fact.args[1],)))
    elif fact.args[1] not in meaning:
        out.refuse(RULE_ANSWER, f"{fact}: the person's answer means {_listing(meaning)} for '{said}'")
    else:
        return False
    return True


def _pronoun_places(p: Phrase, res: Resolution, world: WorldState, lex: Lexicon) -> tuple[tuple[str, ...], str]:
    """The places an unread place phrase may name: a pronoun ("in it") only a place said before it in its sentence
    (a pronoun names nothing new), else what its noun says (:func:`place_reading`)."""
    if p.said in lex.words("pronouns_singular") | lex.words("pronouns_plural"):
        said = sorted({c for q in res.phrases if q.sentence == p.sentence and 0 <= q.start < p.start
                       for c in q.candidates if c in world.places})
        if said:
            return tuple(said), "what it refers back to"
    return place_reading(p.unread, world)


def _open_clauses(res: Resolution, world: WorldState, lex: Lexicon) -> dict[int, set[str]]:
    """Clauses naming a place but no thing of their own ("those should be in the trays", "then onto the tray", "then
    put it in the bin"), with the places they name: a pronoun, an ellipsis or an unread phrase places things said
    before them, any of them."""
    pronouns = lex.words("pronouns_singular") | lex.words("pronouns_plural")
    owned = {p.clause for p in res.of_role(THING, MENTION) if p.read and p.said not in pronouns
             and any(c in world.objects for c in p.candidates)}
    out: dict[int, set[str]] = {}
    for q in res.of_role(THING, MENTION, DESTINATION):
        if q.clause not in owned and q.candidates and all(c in world.places for c in q.candidates):
            out.setdefault(q.clause, set()).update(q.candidates)
    return out


def _bound_places(obj: str, res: Resolution, world: WorldState, lex: Lexicon,
                  unread: Unread) -> tuple[Phrase, set[str], list[Phrase]] | None:
    """The places the words bind ``obj`` to, clause by clause: a clause with its own things and its own place puts
    those things there ("put the pen and the sponge in the left drawer and close it, then set the cup on the tray":
    the pen and the sponge in the left drawer). Every clause with a phrase that may mean ``obj`` (its candidates,
    or an unread phrase whose read words allow it) must name a place read in full, else None (nothing binds it);
    a later clause with no thing of its own (:func:`_open_clauses`), or with things described by a place it was
    put in, may place it too; of clauses naming it in words read, the last decides. Returns (a phrase for it, the
    places, the place phrases of its clauses)."""
    own = [p for p in res.of_role(THING, MENTION) if obj in p.candidates or (not p.read or not p.candidates)
           and _may_mean(p, obj, world, lex, p.start in unread.defined)]
    dests = [q for q in res.of_role(DESTINATION) if q.clause in {p.clause for p in own}]
    if not own or any(p.role == MENTION or p.clause in unread.loose or not any(q.clause == p.clause for q in dests)
                      for p in own) or any(not q.candidates or not q.read for q in dests):
        return None
    first = min(p.clause for p in own)
    # a later clause naming it places it last ("put all the blocks in the box, then the yellow one in the bin"); a
    # pronoun only may mean it
    pronouns = lex.words("pronouns_singular") | lex.words("pronouns_plural")
    last = max((p.clause for p in own if p.read and obj in p.candidates and p.said not in pronouns), default=first)
    places = {c for q in dests if q.clause >= last for c in q.candidates}
    for q in sorted(res.of_role(REFERENCE), key=lambda q: q.clause):  # "put the cup in the tray, then move
        if q.clause > first and set(q.candidates) & places:  # everything in the tray to the box": it may be there
            places |= {c for d in res.of_role(DESTINATION) if d.clause == q.clause for c in d.candidates}
    opened = {c for clause, named in _open_clauses(res, world, lex).items() if clause > first for c in named}
    named = next((p for p in own if p.clause == last and p.read and obj in p.candidates), own[0])
    return named, places | opened, [q for q in dests if q.clause >= last]


def _place_words(obj: str, place: str, res: Resolution) -> str:
    """What a place refusal rests on: the place phrase the words name for the thing (in its sentence), or the
    words about the thing that name no place."""
    about = next((p for p in res.of_role(THING, MENTION) if obj in p.candidates), None)
    dests = [p for p in res.of_role(DESTINATION) if about is None or p.sentence == about.sentence] \
        or (res.of_role(DESTINATION) if about is None else [])
    whose = f" for '{about.said}'" if about is not None else ""
    if dests:
        return f"the words name {_quoted(dests)} as the place{whose}, not {place}"
    if about is not None:
        return f"the words name no place for the {_spoken(obj)}: they say '{about.said}', not where it goes"
    return f"the words name no place for the {_spoken(obj)}, and none that implies {place}"
