"""How many misspelt or mistyped settings `step-planner config check` names, over every config file the package ships.

Each generated case is one shipped file with one change: a key misspelt (deleted, swapped, doubled or replaced
letter, a capital, a dash for an underscore) or a value of the wrong type. The files: config/step_planner.yaml (the
node's ROS params file: every parameter the node declares, step_planner/ros/parameters.py) and every file of
`config check`'s kinds (safety, scenes, tasks, ...: every key their schema fixes, each key position once per kind;
keys that are free names, an object's or a task's, are not typos of anything and are left out). A case counts as
named when `config check FILE` (run in this process, as the command line runs it) exits non-zero and its output
names the changed key. No LLM and no robot: only the checker is measured.

    python benchmarks/config_typos.py                    # every case
    python benchmarks/config_typos.py --limit 20         # the first 20 cases of each file (a smoke run)
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import sys
import tempfile
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
WRONG = {bool: "maybe", int: "many", float: "fast", str: 7, list: "one_thing"}  # a value of another type


def typos(word: str) -> list[str]:
    """Misspellings of ``word``, each a different string: a letter deleted, two swapped, one doubled, one replaced,
    a capital first letter, a dash for an underscore."""
    out = []
    mid = max(1, len(word) // 2)
    if len(word) > 2:
        out.append(word[:mid] + word[mid + 1:])
    i = next((i for i in range(1, len(word) - 1) if word[i] != word[i + 1]), None)
    if i is not None:
        out.append(word[:i] + word[i + 1] + word[i] + word[i + 2:])
    out.append(word[:mid] + word[mid] + word[mid:])
    out.append(word[:mid] + ("x" if word[mid] != "x" else "q") + word[mid + 1:])
    if word[:1].isalpha():
        out.append(word[:1].upper() + word[1:])
    if "_" in word:
        out.append(word.replace("_", "-", 1))
    return list(dict.fromkeys(t for t in out if t != word))


# ---- where the keys are: the params file's parameters, the schemas' fixed keys ------------------------------------

class Free(str):
    """A key that is a free name (an object's, a robot's): part of a path, not a key the schema fixes."""


def _strip(tp: Any) -> Any:
    while typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    return tp


def _models(tp: Any) -> list[Any]:
    """The section models a value of type ``tp`` may be (a union's members)."""
    from pydantic import BaseModel

    tp = _strip(tp)
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return [m for a in typing.get_args(tp) for m in _models(a)]
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return [tp]
    return []


def fixed_keys(tp: Any, data: Any, path: tuple = ()) -> Iterator[tuple[tuple, str, Any]]:
    """(path to the mapping, key, the field's type) for every key of ``data`` its schema type ``tp`` fixes."""
    tp = _strip(tp)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (list, tuple) and args and isinstance(data, list):
        for i, item in enumerate(data):
            yield from fixed_keys(args[0], item, (*path, i))
        return
    if origin is dict and len(args) == 2 and isinstance(data, dict):
        for key, value in data.items():
            yield from fixed_keys(args[1], value, (*path, Free(key)))
        return
    for model in _models(tp):
        fields = model.model_fields
        if set(fields) == {"root"}:
            yield from fixed_keys(fields["root"].annotation, data, path)
            return
        if not isinstance(data, dict):
            continue
        names = {f.alias or n: f for n, f in fields.items()}
        if not set(data) <= set(names):
            continue  # another member of the union
        for key, value in data.items():
            yield path, key, names[key].annotation
            yield from fixed_keys(names[key].annotation, value, (*path, key))
        return


def _at(data: Any, path: tuple) -> Any:
    for part in path:
        data = data[part]
    return data


def _pattern(path: tuple, key: str) -> str:
    """The key's position with list indices and free names left out: each schema key once per kind (a mapping's
    first entry stands for its others)."""
    return ".".join(str(p) for p in (*path, key) if not isinstance(p, (int, Free)))


def cases(path: Path, kind: Any, seen: set[str]) -> Iterator[tuple[str, str, Any]]:
    """(what changed, the name the check must say, the changed data) for one shipped file; ``seen``: the key
    positions of its kind already generated (from its other files)."""
    data = yaml.safe_load(path.read_text())
    if kind == "params":
        from step_planner.ros.parameters import SPECS

        (section,) = data
        body = data[section]["ros__parameters"]
        for name in SPECS:
            *groups, last = name.split(".")
            parent = _at(body, tuple(groups)) if groups else body
            if last not in parent:
                continue  # not in the shipped file (an empty list cannot be written in one)
            for wrong in typos(last):
                changed = copy.deepcopy(data)
                holder = _at(changed[section]["ros__parameters"], tuple(groups))
                holder[wrong] = holder.pop(last)
                yield f"key {name} -> {wrong}", ".".join([*groups, wrong]), changed
            value = parent[last]
            changed = copy.deepcopy(data)
            _at(changed[section]["ros__parameters"], tuple(groups))[last] = WRONG[type(value)]
            yield f"value {name} = {WRONG[type(value)]!r}", name, changed
            if isinstance(value, float):  # rclpy refuses an integer for a double
                changed = copy.deepcopy(data)
                _at(changed[section]["ros__parameters"], tuple(groups))[last] = int(value)
                yield f"value {name} = {int(value)!r}", name, changed
        return
    model = kind.schema_model()
    for where, key, field_type in list(fixed_keys(model, data)):
        pattern = _pattern(where, key)
        if pattern in seen:
            continue
        seen.add(pattern)
        parent = _at(data, where)
        valid = set(parent) | {f.alias or n for m in _models(model) for n, f in m.model_fields.items()}
        for wrong in typos(str(key)):
            if wrong in valid:
                continue
            changed = copy.deepcopy(data)
            holder = _at(changed, where)
            holder[wrong] = holder.pop(key)
            yield f"key {pattern} -> {wrong}", wrong, changed
        value = parent[key]
        if type(value) in WRONG and type(value) is not list and not _models(field_type):
            changed = copy.deepcopy(data)
            _at(changed, where)[key] = WRONG[type(value)]
            yield f"value {pattern} = {WRONG[type(value)]!r}", str(key), changed


def named(path: Path, data: Any, name: str, kind: str, root: Path) -> bool:
    """`config check` on the changed file (where the shipped one lies relative to config/, for loaders that read
    beside it) exits non-zero and names ``name``."""
    from step_planner.config_check import main_config

    target = root / path.relative_to(ROOT / "config")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(yaml.safe_dump(data, sort_keys=False))
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            code = main_config(["check", *(["--kind", kind] if kind != "params" else []), str(target)])
        except SystemExit as exc:
            code = exc.code
        except Exception as exc:  # a checker that crashes names nothing
            print(f"{type(exc).__name__}: {exc}")
            code = 3
    return code not in (0, None) and name in out.getvalue()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=0, help="at most this many cases per file (0: all)")
    parser.add_argument("--show-missed", type=int, default=30, help="list at most this many missed cases")
    return parser


def main(argv: list[str] | None = None) -> int:
    from step_planner.config_check import shipped_files

    args = build_parser().parse_args(argv)
    files = [(ROOT / "config" / "step_planner.yaml", "params")] + \
        [(p, k) for p, k in shipped_files(ROOT / "config")]
    print("No answers at all (NOT an LLM, no robot): `step-planner config check FILE` on one shipped config file "
          "with one generated change (a key misspelt: letter deleted, swapped, doubled, replaced, capitalised, "
          "'-' for '_'; or a value of the wrong type); named = exit code non-zero and the changed key in its output.\n")
    print("| file | kind | cases | named | missed |")
    print("|---|---|---|---|---|")
    total = hits = 0
    missed: list[str] = []
    by_kind: dict[str, list[tuple[Path, int, int]]] = {}
    seen_by_kind: dict[str, set[str]] = {}
    with tempfile.TemporaryDirectory(prefix="config_typos_") as tmp:
        for path, kind in files:
            kind_name = kind if isinstance(kind, str) else kind.name
            n = m = 0
            seen = seen_by_kind.setdefault(kind_name, set())
            for i, (what, name, data) in enumerate(cases(path, kind, seen)):
                if args.limit and i >= args.limit:
                    break
                n += 1
                if named(path, data, name, kind_name, Path(tmp)):
                    m += 1
                else:
                    missed.append(f"{path.relative_to(ROOT)}: {what}")
            by_kind.setdefault(kind_name, []).append((path, n, m))
            total += n
            hits += m
    for kind_name, rows in by_kind.items():
        n, m = sum(r[1] for r in rows), sum(r[2] for r in rows)
        shown = rows[0][0].relative_to(ROOT) if len(rows) == 1 else f"({len(rows)} files)"
        print(f"| {shown} | {kind_name} | {n} | {m} | {n - m} |")
    print(f"\nconfig check named {hits} of {total} generated typos ({100.0 * hits / max(total, 1):.1f} %); "
          f"missed {total - hits}")
    for line in missed[:args.show_missed]:
        print(f"  missed: {line}")
    if len(missed) > args.show_missed:
        print(f"  ... and {len(missed) - args.show_missed} more")
    return 0


if __name__ == "__main__":
    sys.exit(main())
