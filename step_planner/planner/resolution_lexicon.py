"""The resolver's words: ``config/resolution_lexicon.yaml`` (its grammar words) and the people's words of
``config/wordings_lexicon.yaml`` (nouns, colours, groups), each a declared model.

WHY a module of its own: the resolver (:mod:`step_planner.planner.resolution`) is the grammar; this is the data it
reads, declared so that a misspelt key stops the node and ``step-planner config check`` instead of quietly
emptying a word list the goal checks depend on (issue 37). The wordings generator (``bench/wordings.py``) reads
the same people's words and imports their model from here (the planner may not import the bench).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from step_planner.config_schema import ConfigFileError, ConfigModel, Items, read_yaml, validate
from step_planner.domain.primitives import PrimitiveLibrary
from step_planner.resources import config_path

Words = Items[str]


class LexiconFileError(ConfigFileError):
    """A lexicon file is malformed."""


class WordingsLexicon(ConfigModel):
    """``config/wordings_lexicon.yaml``: the words people use for the scenes' things (the resolver reads them; the
    wordings suite is generated with them)."""

    nouns: dict[str, str] = Field({}, description="Category -> what a person calls it.")
    plurals: dict[str, str] = Field({}, description="Noun -> its plural, where adding s is wrong.")
    groups: dict[str, list[str]] = Field({}, description="Group word -> the categories it covers.")
    colours: dict[str, Annotated[list[Annotated[float, Field(ge=0, le=1)]], Field(min_length=3, max_length=3)]] = \
        Field({}, description="Colour word -> its RGB (each in [0, 1]).")
    colour_tolerance: float = Field(0.2, ge=0, description="How far an object's RGB may be from a colour word's.")
    uses: dict[str, str] = Field({}, description="Category -> a description by use (the one you write with).")
    adjectives: list[str] = Field([], description="Adjectives for a thing expected in a closed drawer.")
    generic: list[str] = Field([], description="Nouns for a thing nobody has seen (never an object's name).")
    mass: list[str] = Field([], description="Mass nouns: all of it, never one piece.")


class ImpliedPlace(ConfigModel):
    """Where words such as "throw away" put a thing: exactly one of ``kind``, ``start`` or ``obvious``."""

    kind: str | None = Field(None, description="A place of this kind in view (throw away -> a bin).")
    start: bool = Field(False, description="Where the thing was at the start (put back).")
    obvious: Words = Field((), description="The one place of these kinds in view, if there is exactly one "
                           "(put away).")

    @model_validator(mode="after")
    def _one(self) -> ImpliedPlace:
        if sum((self.kind is not None, self.start, bool(self.obvious))) != 1:
            raise ValueError("give exactly one of kind, start: true or obvious")
        return self


Side = Annotated[tuple[Literal["x", "y", "d"], Literal["max", "min"]], Field(strict=False)]


class ResolutionLexiconFile(ConfigModel):
    """``config/resolution_lexicon.yaml``: the words the resolver reads an instruction with (nouns come from the
    scene and ``colour_words_from``)."""

    determiners: Words = Field(description="Words before a noun phrase (the, a, these ...).")
    universal: Words = Field(description="Quantifiers over every candidate (all, every, each, both, any).")
    numbers: dict[str, Annotated[int, Field(ge=1)]] = Field({}, description="Number words -> how many.")
    everything: Words = Field((), description="Phrases meaning every thing in scope (everything, the rest).")
    others: Words = Field((), description="Words that make a phrase 'the others' (else, rest, other).")
    pronouns_singular: Words = Field((), description="Pronouns for one thing named before (it).")
    pronouns_plural: Words = Field((), description="Pronouns for several things named before (them).")
    anaphoric: Words = Field((), description="'one' / 'ones' standing for a noun said before.")
    presentational: Words = Field((), description="Phrases that only point at things (there is, look at).")
    partitive: Words = Field((), description="'of' in 'of the blocks, the red one'.")
    where_it_is: Words = Field((), description="Prepositions describing where a thing is.")
    source: Words = Field((), description="Prepositions naming where a thing comes from.")
    where_it_goes: Words = Field((), description="Prepositions naming where a thing goes.")
    place_adverbs: Words = Field((), description="Words standing for a place said elsewhere (put it there).")
    placing_verbs: Words = Field((), description="Verbs that move things.")
    relative: Words = Field((), description="Relative pronouns (that, which).")
    copula: Words = Field((), description="Forms of 'to be' (and sits, lies) in relative clauses.")
    colour_words_from: str = Field("wordings_lexicon.yaml", description="The file under config/ with the colour "
                                   "words, people's nouns and groups.")
    sizes: dict[str, Literal["max", "min"]] = Field({}, description="Size word -> the largest or smallest.")
    states: dict[str, Literal["open", "closed", "empty", "full"]] = Field({}, description="State word -> the state.")
    sides: dict[str, Side] = Field({}, description="Side word -> [axis, extreme]: x (front is min), y (left is "
                                   "max), d (distance from the base).")
    side_margin: float = Field(0.08, ge=0, le=0.5, description="m: things within this of the extreme one all fit "
                               "a side word.")
    ordinals: Words = Field((), description="Ordinal words in order (first, second ...; last): drawers count from "
                            "the top, things in a row from the robot's left; otherwise every candidate stays open.")
    shapes: dict[str, Words] = Field({}, description="Shape word -> the scene geometry shapes it covers (round: "
                                     "cylinder).")
    colour_families: dict[str, Words] = Field({}, description="Family word -> its colour words: 'the warm colours' "
                                              "are the things of those colours.")
    stop: Words = Field((), description="Words that never start or name a thing.")
    implied_places: dict[str, ImpliedPlace] = Field({}, description="Phrases that imply where things go.")
    corrections: Words = Field((), description="Phrases that start a self-correction (no wait, I meant).")
    exceptions: Words = Field((), description="Phrases before things left out (except, but not, leave).")
    also_reference: Words = Field((), description="Phrases before a thing named only as a reference (with).")
    surface_words: Words = Field((), description="Nouns read as the table (bench, desk).")
    function_words: Words = Field((), description="A closed list of English words that cannot change what a "
                                  "phrase refers to or where things go (articles, pronouns, auxiliaries, "
                                  "politeness): read though no rule uses them. Every other word the resolver "
                                  "does not know is unknown, and makes the checks it could change doubtful.")
    matching_attributes: dict[str, Literal["colour"]] = Field({}, description="Attribute word -> what a place "
                                                              "'of its colour' shares with each thing in it.")
    matching_openers: Words = Field((), description="Words before a matching description (of, that matches).")
    matching_owners: Words = Field((), description="Words naming whose attribute (its, their, the same).")


@dataclass
class Lexicon:
    """The resolver's words (``config/resolution_lexicon.yaml`` with the wordings and primitives' words)."""

    data: dict[str, Any]
    colours: dict[str, list[float]]
    colour_tolerance: float
    category_nouns: dict[str, str]
    uses: dict[str, str]
    groups: dict[str, tuple[str, ...]]
    generic: frozenset[str]
    reference_words: tuple[str, ...]
    phrases: dict[str, str] = field(default_factory=dict)  # multiword function phrase -> its class
    adjectives: frozenset[str] = frozenset()  # put on a thing expected in a closed drawer ("the old battery")

    @classmethod
    def load(cls, library: PrimitiveLibrary | None = None, path: str | Path | None = None) -> Lexicon:
        path = Path(path or config_path("resolution_lexicon.yaml"))
        raw = read_yaml(path, LexiconFileError)
        declared = validate(ResolutionLexiconFile, raw, str(path), LexiconFileError)
        data = declared.model_dump(exclude_unset=True)
        wordings_path = config_path(declared.colour_words_from)
        wordings = validate(WordingsLexicon, read_yaml(wordings_path, LexiconFileError), str(wordings_path),
                            LexiconFileError)
        groups = {w: tuple(k) for w, k in wordings.groups.items()}
        generic = set(wordings.generic)
        reference: tuple[str, ...] = ("next to", "beside", "near", "by", "close to")
        stay: tuple[str, ...] = ("where it is", "where they are", "as it is", "as they are")
        if library is not None:
            groups |= {w: tuple(k) for w, k in library.group_words.items()}
            generic |= set(library.generic_nouns)
            reference = tuple(library.reference_words) or reference
            stay = tuple(w for w in library.stay_words if " " in w) or stay
        generic -= {"it", "them", "one", "ones", "whichever"}
        lex = cls(data, dict(wordings.colours), float(wordings.colour_tolerance), dict(wordings.nouns),
                  dict(wordings.uses), groups, frozenset(generic), reference,
                  adjectives=frozenset(wordings.adjectives))
        for key in ("where_it_is", "where_it_goes", "exceptions", "corrections", "presentational", "everything"):
            for phrase in data.get(key) or ():
                if " " in phrase:
                    lex.phrases.setdefault(phrase, key)
        reference = (*reference, *(data.get("also_reference") or ()))
        lex.reference_words = reference
        for phrase in data.get("everything") or ():
            lex.phrases.setdefault(phrase, "everything")
        for phrase in stay:
            lex.phrases.setdefault(phrase, "stay")
        for phrase in (*reference, *data.get("implied_places", {})):
            if " " in phrase:
                lex.phrases.setdefault(phrase, "reference" if phrase in reference else "implied")
        return lex

    @classmethod
    def load_file(cls, path: str | Path) -> Lexicon:
        """``path`` as the resolver would read it (``step-planner config check``)."""
        return cls.load(path=path)

    def words(self, key: str) -> frozenset[str]:
        value = self.data.get(key) or ()
        return frozenset(value if not isinstance(value, dict) else value.keys())


_LEXICONS: dict[int, Lexicon] = {}


def default_lexicon(library: PrimitiveLibrary | None = None) -> Lexicon:
    """The shipped lexicon with ``library``'s words (the shipped primitives when None), loaded once."""
    if library is None:
        library = _shipped_library()
    key = id(library)
    if key not in _LEXICONS:
        _LEXICONS[key] = Lexicon.load(library)
    return _LEXICONS[key]


@lru_cache(maxsize=1)
def _shipped_library() -> PrimitiveLibrary:
    return PrimitiveLibrary.load(config_path("primitives.yaml"))
