"""One declared schema per config file: the base every file model derives from, and the one error they raise.

WHY: a misspelt key in a YAML file used to fall back to a default with no word (``max_velocity_scalling: 0.05``
ran at 0.5). Every file model is a pydantic model with unknown keys forbidden and strict types (``"0.5"`` is not a
number, ``1`` is not true), so a file loads whole or is refused with every problem at once, each naming the file,
the key path and what is allowed (``safety.yaml: safety.max_velocity_scalling: unknown key; did you mean
max_velocity_scaling?``). The models also give the JSON Schemas of ``config/schemas/`` and ``docs/configuration.md``
(:mod:`step_planner.config_check`). Pure Python: no ROS.
"""

from __future__ import annotations

import difflib
import types
import typing
from pathlib import Path
from typing import Annotated, Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")

# A YAML list read as a tuple (strict mode would take only a tuple); its items stay strict.
Items = Annotated[tuple[T, ...], Field(strict=False)]
_MEANINGS: dict[str, str] = {}


def pattern(regex: str, meaning: str) -> Any:
    """A string type matching ``regex``; a mismatch is reported as "must be <meaning>", not as the regex."""
    _MEANINGS[regex] = meaning
    return Annotated[str, Field(pattern=regex, description=meaning[:1].upper() + meaning[1:] + ".")]


class ConfigModel(BaseModel):
    """A config file's section: unknown keys are refused, values are never coerced (strict), defaults documented."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class ConfigFileError(ValueError):
    """A config file is unreadable or does not match its schema; ``problems`` lists every finding."""

    def __init__(self, message: str, problems: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.problems = problems or (message,)


# libyaml's parser where PyYAML was built with it (the PyPI wheels are): the same documents and errors (with line and
# column) as yaml.safe_load, at about a tenth of its CPU: every process reads a dozen config files as it starts.
_SAFE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def parse_yaml(text: str) -> Any:
    """``yaml.safe_load(text)``, by libyaml when PyYAML has it."""
    return yaml.load(text, Loader=_SAFE_LOADER)  # noqa: S506 - a safe loader (CSafeLoader or SafeLoader)


def read_yaml(path: str | Path, error: type[Exception] = ConfigFileError) -> Any:
    """The parsed file, or ``error`` naming it (an unreadable file and bad YAML are config errors too)."""
    try:
        return parse_yaml(Path(path).read_text())
    except (OSError, yaml.YAMLError, UnicodeDecodeError) as exc:
        raise error(f"cannot read {path}: {exc}") from exc


def validate(model: type[M], data: Any, source: str, error: type[Exception] = ConfigFileError,
             prefix: tuple[str | int, ...] = ()) -> M:
    """``data`` as ``model``, or one ``error`` listing every problem (``prefix``: where ``data`` sits in its file)."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        misspelt = {tuple(e["loc"][:-1]) + (_suggestion(model, e["loc"]),) for e in errors
                    if e["type"] == "extra_forbidden"}
        # a required key that was misspelt is reported once: as the unknown key, with the right spelling
        problems = tuple(describe(model, e, prefix) for e in errors
                         if not (e["type"] == "missing" and tuple(e["loc"]) in misspelt))
        raise _error(error, source, problems) from None


def _suggestion(model: type[BaseModel], loc: Any) -> str | None:
    close = difflib.get_close_matches(str(loc[-1]), allowed_keys(model, tuple(loc[:-1])), n=1, cutoff=0.6)
    return close[0] if close else None


def _error(error: type[Exception], source: str, problems: tuple[str, ...]) -> Exception:
    message = "\n".join(f"{source}: {p}" for p in problems)
    if len(problems) > 1:
        message = f"{source}: {len(problems)} problems\n" + "\n".join(f"  {p}" for p in problems)
    if issubclass(error, ConfigFileError):
        return error(message, problems)
    return error(message)


def key_path(loc: tuple[str | int, ...]) -> str:
    """``('places', 2, 'kind')`` -> ``places[2].kind``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(the file)"


def describe(model: type[BaseModel], err: Any, prefix: tuple[str | int, ...] = ()) -> str:
    """One validation error as ``key.path: what is wrong``, with the nearest allowed key for an unknown one."""
    loc = tuple(err["loc"])
    is_key = bool(loc) and loc[-1] == "[key]"  # a mapping key itself is wrong, not its value
    loc = loc[:-1] if is_key else loc
    where = key_path(prefix + loc) + (" (the key)" if is_key else "")
    if err["type"] == "extra_forbidden":
        allowed = allowed_keys(model, loc[:-1])
        close = _suggestion(model, loc)
        hint = f"; did you mean {close}?" if close else ""
        return f"{where}: unknown key{hint} (allowed: {', '.join(allowed)})"
    if err["type"] == "missing":
        return f"{where}: missing (required)"
    message = str(err["msg"])
    for wording in ("Tuple should", "List should", "Dictionary should"):  # a YAML file has lists and mappings only
        message = message.replace(wording, "should")
    message = message.replace(" after validation", "")
    if err["type"] == "string_pattern_mismatch" and err.get("ctx", {}).get("pattern") in _MEANINGS:
        message = f"must be {_MEANINGS[err['ctx']['pattern']]}"
    message = message.removeprefix("Value error, ").removeprefix("Assertion failed, ")
    given = err.get("input")
    if isinstance(given, dict):  # a check of a whole section: its message says what is wrong
        return f"{where}: {message}"
    shown = repr(given)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return f"{where}: {message[:1].lower()}{message[1:]}, got {shown}"


def allowed_keys(model: type[BaseModel], loc: tuple[str | int, ...]) -> list[str]:
    """The keys the model allows at ``loc`` (a mapping inside it), as a file spells them."""
    current: Any = model
    for part in loc:
        target = _model_of(current)
        if target is not None and isinstance(part, str):
            field = _field_by_key(target, part)
            current = field.annotation if field is not None else None
        else:
            current = _element(current)
        if current is None:
            return []
    target = _model_of(current)
    if target is None:
        return []
    return [f.alias or name for name, f in target.model_fields.items()]


def _field_by_key(model: type[BaseModel], key: str) -> Any:
    for name, field in model.model_fields.items():
        if key in (name, field.alias):
            return field
    return None


def _strip(tp: Any) -> Any:
    """``Annotated[X, ...]`` and ``X | None`` -> X (the first model of a union, else its first member)."""
    while typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        models = [a for a in args if _model_of(a) is not None]
        tp = (models or args)[0]
    return tp


def _model_of(tp: Any) -> type[BaseModel] | None:
    tp = _strip(tp) if tp is not None else None
    return tp if isinstance(tp, type) and issubclass(tp, BaseModel) else None


def _element(tp: Any) -> Any:
    """The item type of a list/tuple or the value type of a dict (what an index or a mapping key leads to)."""
    tp = _strip(tp)
    model = _model_of(tp)
    if model is not None and model.model_fields.keys() == {"root"}:  # a RootModel
        tp = _strip(model.model_fields["root"].annotation)
    args = typing.get_args(tp)
    if typing.get_origin(tp) in (list, tuple, set, frozenset) and args:
        return args[0]
    if typing.get_origin(tp) is dict and len(args) == 2:
        return args[1]
    return None
