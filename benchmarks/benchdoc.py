"""BENCHMARKS.md as data: the benchmark commands (``benchmarks/commands.yaml``), how each command is parsed, and
the template (``benchmarks/BENCHMARKS.md.in``) rendered with what each command printed.

Why a template: a figure typed into a document goes stale the moment a default changes; a figure rendered
from the stored output of the command quoted above it cannot. ``make_bench.py`` runs commands and stores
their outputs under ``docs/benchmarks/<name>/``; this module only reads them, so rendering is cheap and
deterministic (a test re-renders and compares with the committed BENCHMARKS.md).

Template directives, each alone on a line:
    {{command NAME}}               the entry's command, in a ```bash block
    {{ran NAME}}                   when, where and how long it ran, or how to run it when it has not
    {{output NAME}}                what the command printed, in a ```text block
    {{file NAME FILE [HEADING]}}   a stored markdown file (or only the body of its section ``## HEADING``)
    {{line NAME FILE TEXT}}        every line of a stored file that contains TEXT (e.g. where answers came from)
    {{image NAME FILE ALT...}}     a stored plot
``{{file}}``/``{{line}}``/``{{output}}``/``{{image}}`` render nothing until the entry has run (``{{ran}}``
says so).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import re
import shlex
import sys
import textwrap
from argparse import ArgumentParser, Namespace
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
COMMANDS_FILE = ROOT / "benchmarks" / "commands.yaml"
TEMPLATE = ROOT / "benchmarks" / "BENCHMARKS.md.in"
DOCUMENT = ROOT / "BENCHMARKS.md"
STORE = ROOT / "docs" / "benchmarks"
OUTPUT_FILE, RUN_FILE = "output.txt", "run.json"
WRAP = 110  # characters per line of a quoted command
_DIRECTIVE = re.compile(r"^\{\{(\w+)\s+(.*?)\}\}\s*$")
_BASH_BLOCK = re.compile(r"^```bash\n(.*?)^```", re.S | re.M)


class BenchDocError(ValueError):
    """A malformed commands file or template (the message names the entry or the line)."""


@dataclass(frozen=True)
class BenchCommand:
    name: str
    command: str
    outputs: tuple[str, ...]
    minutes: float
    issue: str

    @property
    def argv(self) -> list[str]:
        return shlex.split(self.command)


def load_commands(path: Path = COMMANDS_FILE) -> dict[str, BenchCommand]:
    data = yaml.safe_load(path.read_text()) or {}
    entries = data.get("benchmarks") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise BenchDocError(f"{path}: expected a 'benchmarks' list")
    out: dict[str, BenchCommand] = {}
    for raw in entries:
        if not isinstance(raw, dict) or not re.fullmatch(r"[a-z0-9_]+", str(raw.get("name", ""))):
            raise BenchDocError(f"{path}: every entry needs a name of lowercase letters, digits and _: {raw!r}")
        name = raw["name"]
        if unknown := sorted(set(raw) - {"name", "command", "outputs", "minutes", "issue"}):
            raise BenchDocError(f"{path}: {name}: unknown fields {unknown}")
        if name in out or not isinstance(raw.get("command"), str):
            raise BenchDocError(f"{path}: {name}: duplicate name or no command")
        out[name] = BenchCommand(name, " ".join(raw["command"].split()), tuple(raw.get("outputs") or ()),
                                 float(raw.get("minutes", 0)), str(raw.get("issue", "")))
    return out


# ---- commands and their parsers ---------------------------------------------------------------------
def script_module(path: str) -> Any:
    """The module of ``benchmarks/x.py``, imported by path (benchmarks/ is not a package)."""
    file = ROOT / path
    if not file.is_file() or file.parent != ROOT / "benchmarks":
        raise BenchDocError(f"{path}: not a script in benchmarks/")
    name = f"benchmarks_{file.stem}"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, file)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def parser_for(argv: list[str]) -> tuple[ArgumentParser, list[str]]:
    """(the parser that owns a command, the arguments it parses): ``step-planner bench`` -> the bench CLI's,
    ``step-planner SUB`` -> the CLI's, ``python benchmarks/x.py`` / ``python -m mod`` -> that module's
    ``build_parser()``."""
    if argv[:2] == ["step-planner", "bench"]:
        from step_planner.bench.cli import build_parser

        return build_parser(), argv[2:]
    if argv[:1] == ["step-planner"]:
        from step_planner.cli import build_parser as cli_parser

        return cli_parser(), argv[1:]
    if argv[:2] == ["python", "-m"] and len(argv) > 2:
        return importlib.import_module(argv[2]).build_parser(), argv[3:]
    if argv[:1] == ["python"] and len(argv) > 1 and argv[1].endswith(".py"):
        return script_module(argv[1]).build_parser(), argv[2:]
    raise BenchDocError(f"no parser known for {shlex.join(argv)!r}: quote `python benchmarks/x.py ...`, "
                        "`python -m module ...` or `step-planner ...`")


def parse_command(command: str) -> Namespace:
    """Parse a quoted command with its own parser; raises BenchDocError with argparse's message."""
    parser, args = parser_for(shlex.split(command))
    parser.exit_on_error = False
    try:
        return parser.parse_args(args)
    except SystemExit as exc:  # argparse prints its message and exits on some errors even so
        raise BenchDocError(f"{command!r} does not parse (exit {exc.code})") from None
    except Exception as exc:
        raise BenchDocError(f"{command!r} does not parse: {exc}") from None


def quote(command: str) -> str:
    """A command as shown in the document: shell-quoted, wrapped before options with ``\\``."""
    words = [shlex.quote(w) for w in shlex.split(command)]
    lines, line = [], ""
    for word in words:
        if line and word.startswith("--") and len(line) + 1 + len(word) > WRAP:
            lines.append(line + " \\")
            line = "    " + word
        else:
            line = f"{line} {word}" if line else word
    return "\n".join([*lines, line])


def quoted_commands(markdown: str) -> list[str]:
    """Every command in a ```bash block of a document (continuation lines joined, one per line)."""
    out = []
    for block in _BASH_BLOCK.findall(markdown):
        for line in re.sub(r"\\\n\s*", " ", block).splitlines():
            if words := shlex.split(line, comments=True):
                out.append(shlex.join(words))
    return out


# ---- rendering -------------------------------------------------------------------------------------
def directives(template: str) -> list[tuple[int, str, list[str]]]:
    """(line number, directive, arguments) of every directive line."""
    out = []
    for number, line in enumerate(template.splitlines(), 1):
        if m := _DIRECTIVE.match(line):
            out.append((number, m.group(1), m.group(2).split()))
    return out


def template_commands(template: str, commands: dict[str, BenchCommand]) -> list[str]:
    """The commands the rendered document will quote, in order: ``{{command}}`` entries and literal blocks."""
    lines = []
    for line in template.splitlines():
        m = _DIRECTIVE.match(line)
        if m and m.group(1) == "command":
            lines += ["```bash", commands[m.group(2).strip()].command, "```"]
        elif not m:
            lines.append(line)
    return quoted_commands("\n".join(lines) + "\n")


def check_template(template: str, commands: dict[str, BenchCommand]) -> list[str]:
    """Problems: unknown directives or names, files an entry does not write, entries the template never quotes."""
    problems, quoted = [], set()
    for number, kind, args in directives(template):
        where = f"BENCHMARKS.md.in:{number}"
        if kind not in ("command", "ran", "output", "file", "line", "image"):
            problems.append(f"{where}: unknown directive {kind!r}")
            continue
        if not args or args[0] not in commands:
            problems.append(f"{where}: {kind} names no entry of commands.yaml: {args}")
            continue
        entry = commands[args[0]]
        if kind == "command":
            quoted.add(entry.name)
        written = {Path(o).name for o in entry.outputs} | {"aggregates.json"}
        if kind in ("file", "line", "image") and (len(args) < 2 or args[1] not in written):
            problems.append(f"{where}: {entry.name} writes no file {args[1:2]} (outputs: {list(entry.outputs)})")
    problems += [f"commands.yaml: {n} is never quoted ({{{{command {n}}}}})" for n in commands if n not in quoted]
    return problems


def _section(markdown: str, heading: str) -> str:
    m = re.search(rf"^#+ {re.escape(heading)}\n(.*?)(?=^#+ |\Z)", markdown, re.S | re.M)
    return m.group(1).strip() if m else f"(section {heading!r} not found in the stored file)"


def stale_command(entry: BenchCommand, meta: dict[str, Any]) -> bool:
    """The stored output was printed by a command other than the entry's (commands.yaml changed since)."""
    return " ".join(str(meta.get("command", "")).split()) != " ".join(entry.command.split())


def _ran(entry: BenchCommand, folder: Path) -> str:
    run = folder / RUN_FILE
    if not run.exists():
        return (f"_Not run yet: `make bench ONLY={entry.name}` (about {entry.minutes:g} min on the 2-core "
                "development machine)._")
    meta = json.loads(run.read_text())
    if stale_command(entry, meta):
        return (f"_**Stale**: what follows was printed by another command (`{meta.get('command')}`); "
                f"re-run `make bench ONLY={entry.name}`._")
    state = "" if meta.get("clean", True) else " plus uncommitted changes"
    failed = "" if meta.get("exit_code") == 0 else f" — **exit code {meta.get('exit_code')}**"
    note = f" {meta['note']}" if meta.get("note") else ""  # what a person added to the record, and why
    return (f"_Ran {meta['started']} at commit `{meta['commit']}`{state}, {meta['wall_s']:.0f} s wall, "
            f"{meta['machine']}{failed}.{note}_")


def _shown(path: Path) -> str:
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)


def render(template: str, commands: dict[str, BenchCommand], store: Path = STORE) -> str:
    """The document: every directive replaced by what it stands for (see the module docstring), from the
    outputs stored under ``store/<name>/``."""
    out = []
    for line in template.splitlines():
        m = _DIRECTIVE.match(line)
        if not m:
            out.append(line)
            continue
        kind, args = m.group(1), m.group(2).split()
        entry, folder = commands[args[0]], store / args[0]
        if kind == "command":
            out.append(f"```bash\n{quote(entry.command)}\n```")
        elif kind == "ran":
            out.append(_ran(entry, folder))
        elif kind == "output" and (folder / OUTPUT_FILE).exists():
            text = (folder / OUTPUT_FILE).read_text().rstrip("\n")
            out.append(f"```text\n{text}\n```")
        elif kind == "file" and (folder / args[1]).exists():
            text = (folder / args[1]).read_text()
            out.append(_section(text, " ".join(args[2:])) if len(args) > 2 else textwrap.dedent(text).strip())
        elif kind == "line" and (folder / args[1]).exists():
            wanted = " ".join(args[2:])
            out += [line for line in (folder / args[1]).read_text().splitlines() if wanted in line]
        elif kind == "image" and (folder / args[1]).exists():
            out.append(f"![{' '.join(args[2:]) or args[1]}]({_shown(folder / args[1])})")
    text = "\n".join(out) + "\n"
    return re.sub(r"\n{3,}", "\n\n", text)


def render_document(template_path: Path = TEMPLATE, commands_path: Path = COMMANDS_FILE, store: Path = STORE) -> str:
    """BENCHMARKS.md as ``make bench`` writes it; raises BenchDocError for a template that does not fit the
    commands file."""
    commands = load_commands(commands_path)
    template = template_path.read_text()
    if problems := check_template(template, commands):
        raise BenchDocError("; ".join(problems))
    return render(template, commands, store)
