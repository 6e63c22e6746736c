"""Primitive specifications loaded from ``config/primitives.yaml``.

The primitives are the only things the arm can be asked to do. A :class:`PrimitiveCall` is a
plain value (name + typed arguments) that travels from the planner to an executor; whether a
call is allowed is decided here and in :mod:`step_planner.domain.conditions`, never by the LLM.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from step_planner.domain.conditions import (
    CAPABILITY,
    EFFECT,
    FACT,
    FACT_PREDICATES,
    Condition,
    ConditionError,
    parse_condition,
)

ARG_TYPES = ("object", "container", "drawer", "surface", "place", "location", "direction")
DIRECTIONS = ("left", "right", "forward", "backward")


class DomainError(ValueError):
    """A primitive file, a scene file or a primitive call is malformed."""


@dataclass(frozen=True)
class ArgSpec:
    name: str
    type: str


@dataclass(frozen=True)
class PrimitiveSpec:
    name: str
    description: str
    args: tuple[ArgSpec, ...]
    preconditions: tuple[Condition, ...]
    effects: tuple[Condition, ...]
    phrases: tuple[str, ...] = ()

    def signature(self) -> str:
        """``place(object=<object>, target=<place>)``: the call syntax the parser accepts, as the LLM sees it."""
        return f"{self.name}({', '.join(f'{a.name}=<{a.type}>' for a in self.args)})"


@dataclass(frozen=True)
class PrimitiveCall:
    """One primitive with its arguments, e.g. ``place(object=tape, target=drawer)``."""

    name: str
    args: tuple[tuple[str, str], ...] = ()

    @classmethod
    def make(cls, name: str, args: dict[str, str] | None = None) -> PrimitiveCall:
        return cls(name=name, args=tuple((args or {}).items()))

    @property
    def kwargs(self) -> dict[str, str]:
        return dict(self.args)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "args": self.kwargs}

    def __str__(self) -> str:
        return f"{self.name}({', '.join(f'{k}={v}' for k, v in self.args)})"


_CALL_RE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*\((.*)\)\s*\.?\s*$")


def call_shape(text: str) -> tuple[str, str] | None:
    """``(name, argument text)`` when ``text`` is written as a call, ``pick(tape)`` (None when it is not).

    The one place that says what a call looks like: the prompts, the planner and the termination check all
    ask here, so a text they read as a call is one the library parses the same way."""
    m = _CALL_RE.match(text)
    return (m.group(1), m.group(2)) if m else None


@dataclass
class PrimitiveLibrary:
    """The set of primitives of one embodiment, with the embodiment description."""

    primitives: dict[str, PrimitiveSpec]
    embodiment: dict[str, Any] = field(default_factory=dict)
    goal_words: dict[str, tuple[str, ...]] = field(default_factory=dict)  # fact predicate -> licensing words
    stay_words: tuple[str, ...] = ()  # words that let a goal keep an object where it is
    required_words: dict[str, tuple[str, ...]] = field(default_factory=dict)  # predicate -> words that demand it
    reference_words: tuple[str, ...] = ()  # words before an object named only as a reference ("next to")
    exception_words: tuple[str, ...] = ()  # words before an object the instruction leaves out ("except")
    generic_nouns: tuple[str, ...] = ()  # words that are never an object's name ("thing", "stuff")
    group_words: dict[str, tuple[str, ...]] = field(default_factory=dict)  # "tools" -> the kinds it covers
    search_words: tuple[str, ...] = ()  # words that describe looking for something ("find", "look for")

    @classmethod
    def load(cls, path: str | Path) -> PrimitiveLibrary:
        path = Path(path)
        try:
            data = yaml.safe_load(path.read_text())
        except (OSError, yaml.YAMLError) as exc:
            raise DomainError(f"cannot read primitives file {path}: {exc}") from exc
        return cls.from_dict(data, source=str(path))

    @classmethod
    def from_dict(cls, data: Any, source: str = "<dict>") -> PrimitiveLibrary:
        if not isinstance(data, dict) or not isinstance(data.get("primitives"), list):
            raise DomainError(f"{source}: expected a mapping with a 'primitives' list")
        prims: dict[str, PrimitiveSpec] = {}
        for i, raw in enumerate(data["primitives"]):
            where = f"{source}: primitives[{i}]"
            if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
                raise DomainError(f"{where}: each primitive needs a 'name'")
            name = raw["name"]
            if name in prims:
                raise DomainError(f"{where}: duplicate primitive '{name}'")
            args = []
            for a in raw.get("args") or []:
                if not isinstance(a, dict) or a.get("type") not in ARG_TYPES or not a.get("name"):
                    raise DomainError(f"{where}: bad argument {a!r}; types are {', '.join(ARG_TYPES)}")
                args.append(ArgSpec(str(a["name"]), str(a["type"])))
            arg_names = {a.name for a in args}
            try:
                pre = tuple(parse_condition(c, {FACT, CAPABILITY}) for c in raw.get("preconditions") or [])
                eff = tuple(parse_condition(c, {EFFECT}) for c in raw.get("effects") or [])
            except ConditionError as exc:
                raise DomainError(f"{where}: {exc}") from exc
            for cond in pre + eff:
                unknown = [v for v in cond.args if v not in arg_names and not cond.is_constant(v)]
                if unknown:
                    raise DomainError(f"{where}: condition {cond} names unknown arguments {unknown}")
            phrases = raw.get("phrases") or []
            if not isinstance(phrases, list) or not all(isinstance(p, str) for p in phrases):
                raise DomainError(f"{where}: 'phrases' must be a list of strings")
            prims[name] = PrimitiveSpec(name, str(raw.get("description", "")), tuple(args), pre, eff,
                                        tuple(p.lower() for p in phrases))
        word_maps = {}
        for key in ("goal_words", "required_words"):
            words = data.get(key) or {}
            if not isinstance(words, dict) or any(
                    k not in FACT_PREDICATES or not isinstance(v, list) or not all(isinstance(w, str) for w in v)
                    for k, v in words.items()):
                raise DomainError(f"{source}: {key} maps fact predicates ({', '.join(FACT_PREDICATES)}) to word lists")
            word_maps[key] = {k: tuple(w.lower() for w in v) for k, v in words.items()}
        lists = {}
        for key in ("stay_words", "reference_words", "exception_words", "generic_nouns", "search_words"):
            words = data.get(key) or []
            if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
                raise DomainError(f"{source}: {key} must be a list of words")
            lists[key] = tuple(w.lower() for w in words)
        groups = data.get("group_words") or {}
        if not isinstance(groups, dict) or any(not isinstance(k, str) or not isinstance(v, list)
                                                or not all(isinstance(w, str) for w in v) for k, v in groups.items()):
            raise DomainError(f"{source}: group_words maps a word to the list of kinds it covers")
        return cls(prims, dict(data.get("embodiment") or {}), word_maps["goal_words"],
                   lists["stay_words"], word_maps["required_words"], lists["reference_words"],
                   lists["exception_words"], lists["generic_nouns"],
                   {k.lower(): tuple(w.lower() for w in v) for k, v in groups.items()},
                   search_words=lists["search_words"])

    def __contains__(self, name: str) -> bool:
        return name in self.primitives

    def get(self, name: str) -> PrimitiveSpec | None:
        return self.primitives.get(name)

    def describe(self) -> str:
        """The primitive list as the prompts show it."""
        return "\n".join(f"- {p.signature()}: {p.description}" for p in self.primitives.values())

    def embodiment_summary(self) -> str:
        return str(self.embodiment.get("summary", "")).strip()

    def parse_call_text(self, text: str) -> PrimitiveCall | None:
        """Read ``pick(tape)`` / ``place(object=tape, target=drawer)`` as a call.

        Returns None when the text is not written as a call of a known primitive (it is then a
        natural-language subgoal that the termination model judges). Positional arguments are
        bound in declaration order. Arity or keyword mistakes raise :class:`DomainError`.
        """
        shape = call_shape(text)
        if shape is None or shape[0].lower() not in self.primitives:
            return None
        spec = self.primitives[shape[0].lower()]
        inner = shape[1].strip()
        parts = [p.strip() for p in inner.split(",")] if inner else []
        bound: dict[str, str] = {}
        for pos, part in enumerate(parts):
            key, sep, value = part.partition("=") if "=" in part else part.partition(":")
            if sep:  # place(object=tape, ...) and, leniently, place(object: tape, ...)
                if key.strip() in bound:
                    raise DomainError(f"{spec.signature()}: {key.strip()} is given twice in {text!r}")
                bound[key.strip()] = value.strip().strip("'\"<>")
            elif pos < len(spec.args):
                bound[spec.args[pos].name] = part.strip("'\"<>")
            else:
                raise DomainError(f"{spec.signature()} takes {len(spec.args)} arguments: {text!r}")
        return PrimitiveCall.make(spec.name, bound)
