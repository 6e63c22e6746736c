"""Primitive specifications loaded from ``config/primitives.yaml``.

The primitives are the only things the arm can be asked to do. A :class:`PrimitiveCall` is a
plain value (name + typed arguments) that travels from the planner to an executor; whether a
call is allowed is decided here and in :mod:`step_planner.domain.conditions`, never by the LLM.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from step_planner.config_schema import ConfigFileError, ConfigModel, Items, read_yaml, validate
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


class PrimitivesFileError(DomainError, ConfigFileError):
    """``config/primitives.yaml`` (or another primitives file) is malformed."""


def _lower(words: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(w.lower() for w in words)


Name = Annotated[str, Field(pattern=r"^[a-z_][a-z0-9_]*$")]
Words = Items[str]


class ArgModel(ConfigModel):
    name: Name = Field(description="The argument's keyword in a call.")
    type: Literal[ARG_TYPES] = Field(description="What it must name in the world (checked against the scene).")


class PrimitiveModel(ConfigModel):
    """One primitive: a leaf of the subgoal tree the arm can execute."""

    name: Name = Field(description="The primitive's name in a call.")
    description: str = Field("", description="What it does, as the prompts show it.")
    phrases: Words = Field((), description="Verbs that name this action in a subgoal.")
    args: Items[ArgModel] = Field((), description="Its arguments, in positional order.")
    preconditions: Words = Field((), description="Facts and capabilities over argument names that must hold "
                                 "(step_planner/domain/conditions.py).")
    effects: Words = Field((), description="What holds after it.")


class Embodiment(ConfigModel):
    """What the prompts and the termination checker tell the LLM about this robot."""

    name: str = Field("", description="The robot's name.")
    summary: str = Field("", description="What the robot can and cannot do, in prose.")
    arms: int = Field(1, ge=1, description="How many arms.")
    max_held_objects: int = Field(1, ge=1, description="How many objects it can hold at once.")


class PrimitivesFile(ConfigModel):
    """``config/primitives.yaml``: the primitives of one embodiment, and the words the goal rules read."""

    primitives: Items[PrimitiveModel] = Field(description="The only things the arm can be asked to do.")
    embodiment: Embodiment = Field(Embodiment(), description="The robot, as the prompts describe it.")
    goal_words: dict[Literal[FACT_PREDICATES], Words] = Field(
        {}, description="Fact predicate -> words an instruction must use before its goal may hold it.")
    required_words: dict[Literal[FACT_PREDICATES], Words] = Field(
        {}, description="Fact predicate -> words that make a goal fact of it necessary.")
    stay_words: Words = Field((), description="Words that let a goal keep a named object where it is.")
    reference_words: Words = Field((), description="Words before an object named only as a reference.")
    exception_words: Words = Field((), description="Words before an object the instruction leaves out.")
    generic_nouns: Words = Field((), description="Words that never name an object.")
    group_words: dict[str, Words] = Field({}, description="A group word -> the kinds of object it covers.")
    search_words: Words = Field((), description="Words that describe looking for something (\"find\", \"look for\"): "
                                "a child that searches for a thing not seen yet is a step, not a restatement.")


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
        return cls.from_dict(read_yaml(path, PrimitivesFileError), source=str(path))

    @classmethod
    def from_dict(cls, data: Any, source: str = "<dict>") -> PrimitiveLibrary:
        f = validate(PrimitivesFile, data, source, PrimitivesFileError)
        prims: dict[str, PrimitiveSpec] = {}
        for i, raw in enumerate(f.primitives):
            where = f"{source}: primitives[{i}]"
            if raw.name in prims:
                raise PrimitivesFileError(f"{where}: duplicate primitive '{raw.name}'")
            args = tuple(ArgSpec(a.name, a.type) for a in raw.args)
            arg_names = {a.name for a in args}
            try:
                pre = tuple(parse_condition(c, {FACT, CAPABILITY}) for c in raw.preconditions)
                eff = tuple(parse_condition(c, {EFFECT}) for c in raw.effects)
            except ConditionError as exc:
                raise PrimitivesFileError(f"{where}: {exc}") from exc
            for cond in pre + eff:
                unknown = [v for v in cond.args if v not in arg_names and not cond.is_constant(v)]
                if unknown:
                    raise PrimitivesFileError(f"{where}: condition {cond} names unknown arguments {unknown}")
            prims[raw.name] = PrimitiveSpec(raw.name, raw.description, args, pre, eff, _lower(raw.phrases))
        return cls(prims, f.embodiment.model_dump(), {k: _lower(v) for k, v in f.goal_words.items()},
                   _lower(f.stay_words), {k: _lower(v) for k, v in f.required_words.items()},
                   _lower(f.reference_words), _lower(f.exception_words), _lower(f.generic_nouns),
                   {k.lower(): _lower(v) for k, v in f.group_words.items()}, search_words=_lower(f.search_words))

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
