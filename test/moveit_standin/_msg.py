"""A strict base for ROS message stand-ins: declared fields only, type-checked on assignment.

It mirrors what rosidl-generated Python classes enforce (``__slots__``, keyword-only constructor
with declared field names, type assertions on setters, ``byte`` fields as length-1 ``bytes``), so
code that builds a message wrongly fails here the way it would with the real package.
"""

from __future__ import annotations

from typing import Any


class Field:
    def __init__(self, kind: Any, default: Any = None, seq_of: Any = None) -> None:
        self.kind, self.default, self.seq_of = kind, default, seq_of

    def check(self, owner: str, name: str, value: Any) -> Any:
        if self.seq_of is not None:
            if not isinstance(value, (list, tuple)):
                raise AssertionError(f"{owner}.{name} must be a sequence of {self.seq_of.__name__}")
            for item in value:
                if not isinstance(item, self.seq_of) or (self.seq_of is float and isinstance(item, bool)):
                    if self.seq_of is float and isinstance(item, int) and not isinstance(item, bool):
                        continue
                    raise AssertionError(f"{owner}.{name} items must be {self.seq_of.__name__}, got {item!r}")
            return list(value)
        if self.kind == "byte":
            if not isinstance(value, bytes) or len(value) != 1:
                raise AssertionError(f"{owner}.{name} is a byte field: a bytes of length 1, got {value!r}")
            return value
        if self.kind is float:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise AssertionError(f"{owner}.{name} must be float, got {value!r}")
            return float(value)
        if self.kind is int:
            if isinstance(value, bool) or not isinstance(value, int):
                raise AssertionError(f"{owner}.{name} must be int, got {value!r}")
            return value
        if not isinstance(value, self.kind):
            raise AssertionError(f"{owner}.{name} must be {self.kind.__name__}, got {type(value).__name__}")
        return value

    def make_default(self) -> Any:
        if self.seq_of is not None:
            return []
        if callable(self.default):
            return self.default()
        return self.default


class Message:
    FIELDS: dict[str, Field] = {}

    def __init__(self, **kwargs: Any) -> None:
        unknown = set(kwargs) - set(self.FIELDS)
        if unknown:
            raise AssertionError(f"invalid arguments passed to {type(self).__name__}: {sorted(unknown)}")
        for name, spec in self.FIELDS.items():
            object.__setattr__(self, "_" + name, spec.make_default())
        for name, value in kwargs.items():
            setattr(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        spec = self.FIELDS.get(name)
        if spec is None:
            raise AttributeError(f"'{type(self).__name__}' has no field '{name}'")
        object.__setattr__(self, "_" + name, spec.check(type(self).__name__, name, value))

    def __getattr__(self, name: str) -> Any:
        if name in type(self).FIELDS:
            return object.__getattribute__(self, "_" + name)
        raise AttributeError(f"'{type(self).__name__}' has no field '{name}'")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and all(getattr(self, f) == getattr(other, f) for f in self.FIELDS)

    def __repr__(self) -> str:
        inner = ", ".join(f"{f}={getattr(self, f)!r}" for f in self.FIELDS)
        return f"{type(self).__name__}({inner})"
