"""Run the benchmarks BENCHMARKS.md quotes, store what they printed, and render BENCHMARKS.md (``make bench``).

    python benchmarks/make_bench.py                       # every entry of benchmarks/commands.yaml, then render
    python benchmarks/make_bench.py --only core_perf,cancel
    python benchmarks/make_bench.py --list                # names, commands, expected minutes, last run
    python benchmarks/make_bench.py --render-only         # BENCHMARKS.md from what is stored

Each entry's command runs from the repository root with the venv's ``python`` and ``step-planner``, on
loopback DDS (a free ROS_DOMAIN_ID, ROS logs in a temporary folder), offline. Its stdout goes to
``docs/benchmarks/<name>/output.txt`` (and to this terminal), its stderr to ``results/make_bench/<name>.stderr``
(not committed), the files it declares under ``outputs`` are copied next to the output (files over
``--max-kb`` are not: a bench ``results.json`` is then stored as ``aggregates.json``, its runs dropped),
and ``run.json`` records the command, date, commit, wall time, machine and exit code. A failing command is
stored and rendered with its exit code, never hidden.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchdoc import (  # noqa: E402
    COMMANDS_FILE,
    DOCUMENT,
    OUTPUT_FILE,
    ROOT,
    RUN_FILE,
    STORE,
    TEMPLATE,
    BenchCommand,
    BenchDocError,
    load_commands,
    parse_command,
    render_document,
)

STDERR_DIR = ROOT / "results" / "make_bench"
MAX_KB = 300


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def machine() -> str:
    """A one-line description of where a figure was measured."""
    mem = ""
    try:
        kb = next(int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines()
                  if line.startswith("MemTotal:"))
        mem = f", {kb / 2**20:.0f} GiB"
    except (OSError, StopIteration, ValueError):
        pass
    return f"{os.cpu_count()} CPUs{mem}, {platform.system()}, Python {platform.python_version()}"


def environment(log_dir: str) -> dict[str, str]:
    """The environment of a benchmark: venv first on PATH, loopback DDS on a free domain, offline."""
    env = dict(os.environ)
    bin_dir = str(Path(sys.executable).parent)
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
    env.setdefault("AMENT_PREFIX_PATH", sys.prefix)
    env.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    env.setdefault("ROS_DOMAIN_ID", str(random.randint(101, 200)))
    env.setdefault("ROS_LOG_DIR", log_dir)
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("MUJOCO_GL", "egl")
    env["PYTHONUNBUFFERED"] = "1"
    return env


def executable(argv: list[str]) -> list[str]:
    """``python`` -> this interpreter, ``step-planner`` -> the venv's console script."""
    if argv[0] == "python":
        return [sys.executable, *argv[1:]]
    script = Path(sys.executable).with_name(argv[0])
    return [str(script), *argv[1:]] if script.exists() else argv


def store_outputs(entry: BenchCommand, folder: Path, max_kb: int) -> tuple[list[str], list[str]]:
    """Copy the entry's declared files into its store: (stored names, notes about files not stored)."""
    stored, notes = [], []
    for rel in entry.outputs:
        src = ROOT / rel
        if not src.exists():
            notes.append(f"{rel}: missing")
            continue
        if src.stat().st_size <= max_kb * 1024:
            shutil.copy2(src, folder / src.name)
            stored.append(src.name)
            continue
        data: Any = None
        if src.suffix == ".json":
            try:
                data = json.loads(src.read_text())
            except ValueError:
                data = None
        if isinstance(data, dict) and "runs" in data:
            slim = {k: v for k, v in data.items() if k != "runs"}
            (folder / "aggregates.json").write_text(json.dumps(slim, indent=1) + "\n")
            stored.append("aggregates.json")
            notes.append(f"{rel}: {src.stat().st_size // 1024} kB, stored without its runs as aggregates.json")
        else:
            notes.append(f"{rel}: {src.stat().st_size // 1024} kB, over {max_kb} kB, not stored")
    return stored, notes


def run_entry(entry: BenchCommand, store: Path, max_kb: int) -> int:
    """Run one entry, stream and store its output, its files and run.json under ``store/<name>/``; returns its
    exit code."""
    parse_command(entry.command)  # fail before running, with the parser's message
    for rel in entry.outputs:  # never store a file a previous run left behind
        (ROOT / rel).unlink(missing_ok=True)
    folder = store / entry.name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    STDERR_DIR.mkdir(parents=True, exist_ok=True)
    print(f"\n=== {entry.name}: {entry.command}", flush=True)
    commit = _git("rev-parse", "--short", "HEAD") or "unknown"  # the code that runs: noted before it runs
    dirty = _git("status", "--porcelain", "--", ".", ":!docs/benchmarks", ":!BENCHMARKS.md")
    started = datetime.now(timezone.utc)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="make_bench_ros_log_") as log_dir, \
            (folder / OUTPUT_FILE).open("w") as out, (STDERR_DIR / f"{entry.name}.stderr").open("w") as err:
        # no terminal: a benchmark never waits for a person to type (a question nobody can answer ends the goal)
        proc = subprocess.Popen(executable(entry.argv), cwd=ROOT, env=environment(log_dir), stdout=subprocess.PIPE,
                                stderr=err, text=True, stdin=subprocess.DEVNULL)
        assert proc.stdout is not None
        for line in proc.stdout:
            out.write(line)
            sys.stdout.write(line)
        code = proc.wait()
    wall = time.perf_counter() - t0
    stored, notes = store_outputs(entry, folder, max_kb)
    meta = {"command": entry.command, "started": started.strftime("%Y-%m-%d %H:%M UTC"), "wall_s": round(wall, 1),
            "exit_code": code, "commit": commit, "clean": not dirty,
            "machine": machine(), "stored": stored, "not_stored": notes}
    (folder / RUN_FILE).write_text(json.dumps(meta, indent=1) + "\n")
    print(f"=== {entry.name}: exit {code} in {wall:.0f} s; stored {[OUTPUT_FILE, *stored]} in {folder}"
          + (f"; {notes}" if notes else ""), flush=True)
    if code != 0:
        print(f"=== {entry.name}: stderr in {STDERR_DIR / f'{entry.name}.stderr'}", flush=True)
    return code


def list_entries(commands: dict[str, BenchCommand], store: Path) -> None:
    for entry in commands.values():
        run = store / entry.name / RUN_FILE
        last = "not run"
        if run.exists():
            meta = json.loads(run.read_text())
            last = f"ran {meta['started']}, {meta['wall_s']:.0f} s, exit {meta['exit_code']}"
        print(f"{entry.name:<22} ~{entry.minutes:g} min  issue {entry.issue:<7} {last}\n    {entry.command}")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="benchmarks/make_bench.py", description=__doc__.split("\n")[0])
    p.add_argument("--only", help="comma-separated entry names of benchmarks/commands.yaml (default: all)")
    p.add_argument("--list", action="store_true", help="list the entries and their last run, run nothing")
    p.add_argument("--render-only", action="store_true", help="render BENCHMARKS.md from what is stored")
    p.add_argument("--max-kb", type=int, default=MAX_KB, help="largest output file copied into docs/benchmarks")
    p.add_argument("--commands", type=Path, default=COMMANDS_FILE, help=argparse.SUPPRESS)  # tests: another set
    p.add_argument("--template", type=Path, default=TEMPLATE, help=argparse.SUPPRESS)
    p.add_argument("--store", type=Path, default=STORE, help=argparse.SUPPRESS)
    p.add_argument("--document", type=Path, default=DOCUMENT, help=argparse.SUPPRESS)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        commands = load_commands(args.commands)
        render_document(args.template, args.commands, args.store)  # a broken template fails now, not after hours
    except BenchDocError as exc:
        print(f"make_bench: {exc}", file=sys.stderr)
        return 2
    if args.list:
        list_entries(commands, args.store)
        return 0
    chosen = list(commands.values())
    if args.only:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
        if unknown := [n for n in names if n not in commands]:
            print(f"make_bench: unknown entries {unknown}; known: {', '.join(commands)}", file=sys.stderr)
            return 2
        chosen = [commands[n] for n in names]
    failed = []
    if not args.render_only:
        for entry in chosen:
            try:
                code = run_entry(entry, args.store, args.max_kb)
            except BenchDocError as exc:
                print(f"make_bench: {entry.name}: {exc}", file=sys.stderr)
                code = 2
            if code != 0:
                failed.append(entry.name)
    args.document.write_text(render_document(args.template, args.commands, args.store))
    print(f"rendered {args.document}" + (f"; FAILED: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
