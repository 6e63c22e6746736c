"""``step-planner config check|schemas|docs``: every config file checked against its declared schema.

    step-planner config check                 every shipped config file, and the files the node's params file names
    step-planner config check my_safety.yaml  one file (its kind from its name, folder or keys; or --kind)
    step-planner config check my_params.yaml  a ROS params file: each section for the node against its parameters
    step-planner config schemas [--out DIR]   the JSON Schemas (config/schemas/) editors complete and flag keys with
    step-planner config docs [--out FILE]     docs/configuration.md: every setting, type, default, range, meaning

Each kind is a pydantic model beside the code that uses it (:mod:`step_planner.config_schema`); ``check`` runs the
kind's real loader, so it also finds what only loading can (a scene's unknown place, a primitive's unknown argument).
A ROS params file (``/**:``, ``step_planner:``, ``/ns/step_planner:`` or nested namespaces, each with
``ros__parameters``) is checked as the node checks what it is given at start: every section that applies to the node
against the node's declared parameters (step_planner/ros/parameters.py: the same table, types, ranges and unknown-name
lines), each problem naming its section; sections for other nodes are noted and left alone.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.fields import PydanticUndefined  # pydantic_core's, as pydantic re-exports it

from step_planner.config_schema import ConfigFileError, read_yaml, validate
from step_planner.resources import config_dir


@dataclass(frozen=True)
class Kind:
    """One kind of config file: its schema, its loader and where the shipped ones are (globs under config/)."""

    name: str
    model: str  # "module:Class" (imported when needed: the CLI starts fast)
    loader: str  # "module:function" taking the path; "" = the model alone
    shipped: tuple[str, ...]
    keys: tuple[str, ...] = ()  # top-level keys that tell this kind apart in a file of unknown kind

    def schema_model(self) -> type[BaseModel]:
        return _attr(self.model)

    def check(self, path: Path) -> None:
        """Raises ConfigFileError (or the loader's own error) with every problem of the file."""
        if self.loader:
            _attr(self.loader)(path)
        else:
            validate(self.schema_model(), read_yaml(path), str(path))


KINDS = {k.name: k for k in (
    Kind("safety", "step_planner.domain.safety:SafetyFile", "step_planner.domain.safety:SafetyEnvelope.load",
         ("safety.yaml",), ("safety",)),
    Kind("robot_boundary", "step_planner.execution.controllers.config:BoundaryFile",
         "step_planner.execution.controllers.config:BoundaryConfig.load", ("robot_boundary.yaml",), ("robots",)),
    Kind("primitives", "step_planner.domain.primitives:PrimitivesFile",
         "step_planner.domain.primitives:PrimitiveLibrary.load", ("primitives.yaml",), ("primitives",)),
    Kind("scene", "step_planner.domain.scene:SceneFile", "step_planner.domain.scene:load_scene",
         ("scenes/*.yaml",), ("places", "objects")),
    Kind("franka", "step_planner.execution.moveit.config:FrankaFile",
         "step_planner.execution.moveit.config:FrankaConfig.load", ("franka.yaml",), ("variants",)),
    Kind("planner", "step_planner.planner.config:PlannerFile", "step_planner.planner.config:PlannerConfig.from_yaml",
         ("planner.yaml", "bench.yaml"), ("planner",)),
    Kind("llm", "step_planner.llm.config:LLMFile", "step_planner.llm.config:load_llm_file", ("llm.yaml",), ("llm",)),
    Kind("profiles", "step_planner.planner.profiles:ProfilesFile", "step_planner.planner.profiles:load_profiles",
         ("profiles.yaml",), ("profiles",)),
    Kind("tasks", "step_planner.bench.tasks:TasksFile", "step_planner.bench.tasks:load_tasks", ("tasks/*.yaml",),
         ("tasks", "paraphrases")),
    Kind("prompt_examples", "step_planner.planner.prompts:ExamplesFile", "", ("prompts/examples.yaml",),
         ("decompose", "terminate", "verify")),
    Kind("resolution_lexicon", "step_planner.planner.resolution_lexicon:ResolutionLexiconFile",
         "step_planner.planner.resolution_lexicon:Lexicon.load_file", ("resolution_lexicon.yaml",),
         ("determiners", "universal")),
    Kind("wordings_lexicon", "step_planner.planner.resolution_lexicon:WordingsLexicon",
         "step_planner.bench.wordings:load_lexicon",
         ("wordings_lexicon.yaml",), ("nouns", "colours")),
    Kind("episodic_seed", "step_planner.planner.memory:EpisodicSeed", "step_planner.planner.memory:load_seed",
         ("episodic_seed.yaml",), ("subgoal", "children")),
    Kind("demo_tasks", "step_planner.bench.offline_answers:DemoTasks",
         "step_planner.bench.offline_answers:load_demo_tasks", ("demo_tasks.yaml",), ("instruction", "goal")),
)}

# The node's parameters that name a config file (config/step_planner.yaml), and their kinds.
NODE_FILE_PARAMETERS = {"primitives_file": "primitives", "safety_file": "safety", "scene": "scene",
                        "controllers.boundary_file": "robot_boundary", "moveit.config_file": "franka"}


NODE_NAME = "/step_planner"  # the node's name in the package's launch files and `ros2 run`
PARAMS_KEY = "ros__parameters"  # rcl_yaml_param_parser's marker of a node's parameters


def params_sections(data: Any) -> list[tuple[str, Any]] | None:
    """The node sections of a ROS params file as rcl reads them: (node name, its ``ros__parameters``), a nested
    namespace joined into the name (``robot1: {step_planner: {ros__parameters: ..}}`` is ``/robot1/step_planner``);
    None when ``data`` is not that shape (no ``ros__parameters`` anywhere)."""
    out: list[tuple[str, Any]] = []

    def walk(prefix: str, node: Any) -> None:
        for key, value in node.items():
            if key == PARAMS_KEY:
                out.append((prefix or "/", value))
            elif isinstance(value, dict):
                walk(f"{prefix}/{str(key).strip('/')}", value)

    if isinstance(data, dict):
        walk("", data)
    return out or None


def section_applies(section: str, node: str = NODE_NAME) -> bool:
    """A section is the node's when rcl would give it to the node named ``node`` in some namespace: its last name is
    the node's (or a wildcard matching it); its namespace part may be any (``/robot1/step_planner``, ``/*/step_*``)."""
    from step_planner.ros.parameters import _section_matches

    base = node.rstrip("/").rsplit("/", 1)[-1]
    if _section_matches(section, node):
        return True
    *_, last = section.rstrip("/").rsplit("/", 1)
    return last == "**" or _section_matches("/" + last, "/" + base)


def _flat(params: dict[str, Any]) -> dict[str, Any]:
    from step_planner.ros.parameters import flatten_yaml

    return flatten_yaml({"section": {PARAMS_KEY: params}})


class ParamsKind:
    """A ROS params file for the node: each section that applies to it checked as the node checks it at start."""

    name = "params"

    def __init__(self, node: str = NODE_NAME) -> None:
        self.node = node

    def check(self, path: Path) -> list[str]:
        """Raises ConfigFileError naming each problem with its section; returns notes (sections left alone)."""
        from step_planner.ros.parameters import given_problems

        sections = params_sections(read_yaml(path))
        if sections is None:
            raise ConfigFileError(f"{path}: not a ROS params file: no section has {PARAMS_KEY}")
        problems, notes, checked = [], [], 0
        for section, body in sections:
            if not section_applies(section, self.node):
                notes.append(f"section {section}: for another node than {self.node}, left alone")
                continue
            checked += 1
            if not isinstance(body, dict):
                problems.append(f"section {section}: {PARAMS_KEY} must be a mapping of parameters, got {body!r}")
                continue
            problems += [f"section {section}: {p}" for p in given_problems(_flat(body))]
        if not checked:
            notes.append(f"no section applies to {self.node} (give --node NAME for another name); nothing checked")
        if problems:
            raise ConfigFileError(f"{path}: {len(problems)} parameter problem{'s' if len(problems) > 1 else ''} the "
                                  "node would refuse at start:\n" + "\n".join(f"  {p}" for p in problems))
        return notes


PARAMS = ParamsKind()


def _attr(spec: str) -> Any:
    module, _, name = spec.partition(":")
    target: Any = importlib.import_module(module)
    for part in name.split("."):
        target = getattr(target, part)
    return target


def shipped_files(root: Path | None = None) -> list[tuple[Path, Kind]]:
    """Every config file the package ships, with its kind."""
    root = root or config_dir()
    return [(p, kind) for kind in KINDS.values() for pattern in kind.shipped for p in sorted(root.glob(pattern))]


def schema_line(path: Path, kind: Kind, root: Path | None = None) -> str:
    """The modeline that points an editor at the kind's JSON Schema, relative to the file's folder."""
    depth = len(path.relative_to(root or config_dir()).parts) - 1
    return f"# yaml-language-server: $schema={'../' * depth or './'}schemas/{kind.name}.schema.json"


def node_files(params_file: Path | None = None) -> list[tuple[Path, Kind]]:
    """The config files a launch with this params file (default: the package's config/step_planner.yaml) loads
    beyond the shipped defaults: every file parameter it sets to a non-empty value."""
    path = params_file or config_dir() / "step_planner.yaml"
    data = read_yaml(path) or {}
    out = []
    for node in data.values() if isinstance(data, dict) else ():
        params = (node or {}).get("ros__parameters") if isinstance(node, dict) else None
        for name, kind in NODE_FILE_PARAMETERS.items():
            value: Any = params
            for part in name.split("."):
                value = value.get(part) if isinstance(value, dict) else None
            if isinstance(value, str) and value:
                out.append((_resolve(value, kind), KINDS[kind]))
    return out


def _named_files(path: Path) -> list[tuple[Path, Kind]]:
    try:
        return node_files(path)
    except (ConfigFileError, AttributeError):  # its own check says what is wrong with it
        return []


def _resolve(value: str, kind: str) -> Path:
    path = Path(value)
    if kind == "scene" and not path.is_file():  # the node takes a scene's name too
        return config_dir() / "scenes" / (value if value.endswith(".yaml") else f"{value}.yaml")
    return path


def infer_kind(path: Path) -> Kind | ParamsKind | None:
    """A file's kind from its shape (a ROS params file), its name, then its folder, then its top-level keys."""
    try:
        if params_sections(read_yaml(path)) is not None:
            return PARAMS
    except ConfigFileError:
        pass
    for kind in KINDS.values():
        if any("*" not in g and Path(g).name == path.name and (len(Path(g).parts) == 1 or Path(g).parent.name ==
                                                                path.parent.name) for g in kind.shipped):
            return kind
    for kind in KINDS.values():
        if any("*" in g and Path(g).parent.name == path.parent.name for g in kind.shipped):
            return kind
    try:
        data = read_yaml(path)
    except ConfigFileError:
        return None
    keys = set(data) if isinstance(data, dict) else set(data[0]) if isinstance(data, list) and data and \
        isinstance(data[0], dict) else set()
    return next((k for k in KINDS.values() if keys & set(k.keys)), None)


def check_files(files: list[tuple[Path, Kind | ParamsKind]], out: Any = None) -> int:
    """Check each file; print what is wrong (or ok, with what was left alone); the number of files with problems."""
    out, bad = out or sys.stdout, 0
    for path, kind in files:
        try:
            notes = kind.check(path)
        except (ConfigFileError, ValueError, OSError) as exc:
            bad += 1
            out.write(f"FAIL {_shown(path)} ({kind.name})\n{_indent(str(exc))}\n")
        else:
            out.write(f"ok   {_shown(path)} ({kind.name})\n")
            if isinstance(notes, list) and notes:
                out.write(_indent("\n".join(notes)) + "\n")
    return bad


def _shown(path: Path) -> str:
    """The path as given, or relative to the working directory when under it (the shipped files)."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve())) if path.is_absolute() else str(path)
    except ValueError:
        return str(path)


def _indent(text: str) -> str:
    return "\n".join(f"     {line}" for line in text.splitlines())


# ---- JSON Schemas and the reference ----------------------------------------------------------------------------


def json_schema(kind: Kind) -> dict[str, Any]:
    schema = kind.schema_model().model_json_schema()
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": f"{kind.name}.schema.json", **schema}


def schema_texts() -> dict[str, str]:
    """File name -> content of every JSON Schema of config/schemas/."""
    return {f"{k.name}.schema.json": json.dumps(json_schema(k), indent=2) + "\n" for k in KINDS.values()}


def _strip(tp: Any) -> tuple[Any, list[Any]]:
    meta: list[Any] = []
    while typing.get_origin(tp) is typing.Annotated:
        args = typing.get_args(tp)
        tp, meta = args[0], meta + list(args[1:])
    return tp, meta


def _range(meta: list[Any]) -> str:
    """``> 0, <= 1`` from a field's constraints (annotated_types and FieldInfo metadata)."""
    parts = []
    lengths = {getattr(m, a) for m in meta for a in ("min_length", "max_length") if getattr(m, a, None) is not None}
    if len(lengths) == 1 and sum(getattr(m, a, None) is not None for m in meta for a in ("min_length",
                                                                                           "max_length")) == 2:
        meta = [m for m in meta if getattr(m, "min_length", None) is None and getattr(m, "max_length", None) is None]
        parts.append(f"exactly {lengths.pop()} items")
    for m in meta:
        for attr, sign in (("gt", ">"), ("ge", ">="), ("lt", "<"), ("le", "<="), ("min_length", "length >="),
                           ("max_length", "length <="), ("pattern", "matches")):
            value = getattr(m, attr, None)
            if value is not None:
                parts.append(f"{sign} {value:g}" if isinstance(value, float) else f"{sign} {value}")
        for inner in getattr(m, "metadata", ()):
            parts.append(_range([inner]))
    return ", ".join(p for p in parts if p)


def type_name(tp: Any) -> str:
    tp, meta = _strip(tp)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Literal:
        return "one of " + ", ".join(f"`{a}`" if a != "" else '`""`' for a in args)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(type_name(a) for a in args)
    if origin in (list, tuple):
        item, item_meta = _strip(args[0])
        limits = _range(item_meta)
        return f"list of {type_name(item)}" + (f" ({limits})" if limits else "")
    if origin is dict:
        return f"mapping of {type_name(args[0])} to {type_name(args[1])}"
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        root = tp.model_fields.get("root")
        return type_name(root.annotation) if root and len(tp.model_fields) == 1 else "mapping"
    return {bool: "bool", int: "int", float: "number", str: "string", type(None): "null"}.get(tp, str(tp))


def _default(field: Any) -> str:
    if field.default_factory is not None:
        value = field.default_factory()
    elif field.default is PydanticUndefined:
        return "required"
    else:
        value = field.default
    if isinstance(value, BaseModel):
        return "(section)"
    return f"`{json.dumps(list(value) if isinstance(value, tuple) else value)}`"


def _rows(model: type[BaseModel], prefix: str) -> list[str]:
    rows = []
    for name, field in model.model_fields.items():
        key = prefix + (field.alias or name)
        tp, meta = _strip(field.annotation)
        nested, suffix = _nested(tp)
        text = field.description or _doc(nested)
        rows.append(f"| `{key}` | {type_name(field.annotation)} | {_default(field)} | "
                    f"{_range(meta + list(field.metadata))} | {text.replace('|', '/')} |")
        if nested is not None:
            rows += _rows(nested, f"{key}{suffix}.")
    return rows


def _doc(model: type[BaseModel] | None) -> str:
    return " ".join((model.__doc__ or "").replace("``", "`").split()) if model is not None else ""


def _nested(tp: Any) -> tuple[type[BaseModel] | None, str]:
    """The section model inside a field's type (itself, an optional one, a list's or a mapping's item)."""
    tp, _ = _strip(tp)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return tp, ""
    if origin in (typing.Union, types.UnionType):
        return next(((m, s) for m, s in map(_nested, args) if m is not None), (None, ""))
    if origin in (list, tuple) and args:
        inner, suffix = _nested(args[0])
        return inner, "[]" + suffix
    if origin is dict and len(args) == 2:
        inner, suffix = _nested(args[1])
        return inner, ".<name>" + suffix
    return None, ""


def reference() -> str:
    """docs/configuration.md."""
    out = ["# Configuration reference", "",
           "GENERATED by `make schemas` (`step-planner config docs`) from the schemas declared beside the code "
           "(step_planner/config_schema.py); do not edit by hand. test/test_config_schemas.py fails when it is "
           "stale.", "",
           "Every file is checked whole when it is loaded: an unknown key (a misspelt one too), a value of the "
           "wrong type or out of range stops the command or the node before anything moves, naming the file, the "
           "key and what is allowed. `step-planner config check [FILE ...]` checks files without running anything; "
           "a ROS params file (`/**:`, `step_planner:`, `/ns/step_planner:` sections with `ros__parameters`) is "
           "checked as the node checks it at start, each section that applies to the node against the node's "
           "parameters (`step_planner_node --help`), each problem naming its section, sections for other nodes "
           "left alone (`--node NAME` when a launch names the node otherwise); "
           "`config/schemas/` holds the JSON Schemas editors use (each shipped file names its schema in its first "
           "line). Units are in the descriptions (m, s, rad, N).", ""]
    for kind in KINDS.values():
        model = kind.schema_model()
        doc = _doc(model)
        out += [f"## {kind.name}", "", f"Files: {', '.join(f'`config/{g}`' for g in kind.shipped)}. "
                f"Schema: `config/schemas/{kind.name}.schema.json`. {doc}", ""]
        root = model.model_fields.get("root")
        item = _nested(root.annotation)[0] if root and len(model.model_fields) == 1 else model
        out += ["| Setting | Type | Default | Range | Description |", "|---|---|---|---|---|"]
        out += _rows(item, "[]." if item is not model else "") + [""]
    return "\n".join(out)


# ---- the command -----------------------------------------------------------------------------------------------


def main_config(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="step-planner config", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="check config files against their schemas (exit 1 on any problem)")
    check.add_argument("files", nargs="*", type=Path, help="files to check (default: every shipped config file "
                       "and the files config/step_planner.yaml names)")
    check.add_argument("--kind", choices=sorted([*KINDS, PARAMS.name]),
                       help="the files' kind (default: from shape, name, folder, keys; params: a ROS params file)")
    check.add_argument("--node", default=NODE_NAME, help="params files: the node's name, as its launch gives it "
                       f"(default {NODE_NAME}; a section for it in any namespace applies)")
    schemas = sub.add_parser("schemas", help="write the JSON Schemas")
    schemas.add_argument("--out", type=Path, default=None, help="folder (default: the package's config/schemas)")
    docs = sub.add_parser("docs", help="write the configuration reference")
    docs.add_argument("--out", type=Path, default=None, help="file (default: docs/configuration.md of the source)")
    args = parser.parse_args(argv)
    if args.command == "schemas":
        folder = args.out or config_dir() / "schemas"
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in schema_texts().items():
            (folder / name).write_text(text)
        print(f"config schemas: {len(KINDS)} written to {folder}")
        return 0
    if args.command == "docs":
        path = args.out or config_dir().parent / "docs" / "configuration.md"
        path.write_text(reference())
        print(f"config docs: {path}")
        return 0
    params = ParamsKind(args.node)
    if args.files:
        files: list[tuple[Path, Kind | ParamsKind]] = []
        for path in args.files:
            kind = params if args.kind == PARAMS.name else KINDS[args.kind] if args.kind else infer_kind(path)
            if kind is None:
                print(f"step-planner config: cannot tell what kind of file {path} is; give --kind "
                      f"({', '.join([*KINDS, PARAMS.name])})", file=sys.stderr)
                return 2
            files.append((path, params if kind is PARAMS else kind))
            if kind is PARAMS:  # the files it names, as the node loads them at start
                files += [f for f in _named_files(path) if f not in files]
    else:
        files = [*shipped_files(), (config_dir() / "step_planner.yaml", params)]
        files += [f for f in node_files() if f not in files]
    bad = check_files(files)
    print(f"config check: {len(files)} files, {bad} with problems")
    return 1 if bad else 0
