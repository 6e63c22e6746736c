"""The README's commands as a new contributor meets them on a new machine: each run clones the repository's HEAD
into an empty directory and runs a command there with EMPTY download caches (uv's and pip's: UV_CACHE_DIR and
PIP_CACHE_DIR in a new temporary directory, PIP_NO_CACHE_DIR=1), so every wheel is downloaded again (issues 31, 44).

    python benchmarks/fresh_clone.py --demo-runs 2 --runs builds=1 --runs demo-ros=1 --ci-runs 1

Kinds: demo (`make demo`), demo-ros (`make demo-ros`), builds (what `make test` builds before pytest: `make venv
test-interfaces robot-install`), test (`make test`), ci (`.ci/run`). Prints every run's wall time against
its target (demo 60 s, CI 10 min), each step the Makefile and scripts time (uv, the demo's requirements, the
interface builds' requirements, the rest, each interface package, the colcon workspace, each robot-install step,
pytest) and, for test and CI, tests passed and tests per minute of pytest. Debian's packages (apt) are not
removed: the packages the Makefile installs with apt and the build tools are reported as present or missing before
the first run, and apt is a no-op for those present; a machine without them spends the apt download on top. The
clone runs with this interpreter's venv taken off PATH and no ROS or virtualenv variables, as a new shell would.
Exits 1 when a run fails (its last lines are printed).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGETS_S = {"demo": 60.0, "ci": 10 * 60.0}
COMMANDS = {"demo": "make demo", "demo-ros": "make demo-ros",
            "builds": "make venv test-interfaces robot-install", "test": "make test",
            "ci": "CI=true bash .ci/run"}
# the lines the Makefile and scripts print about their own durations
STEPS = {
    "uv": re.compile(r"^uv\.sh: uv \S+ installed into .* in (\d+) s"),
    "demo requirements": re.compile(r"^venv: the demo's requirements installed in (\d+) s"),
    "step_planner": re.compile(r"^venv: step_planner installed \(editable\) in (\d+) s"),
    "build requirements": re.compile(r"^venv: the interface builds' requirements installed in (\d+) s"),
    "requirements": re.compile(r"^venv: requirements installed in (\d+) s"),
    "bytecode": re.compile(r"^compile_imported: .* in (\d+) s"),
    "interfaces": re.compile(r"^build_interfaces: (\S+) installed into .* in (\d+) s"),
    "colcon": re.compile(r"^colcon_workspace: built (\S+) .* in (\d+) s"),
    "robot": re.compile(r"^robot_install: (the system|the venv made|requirements-robot\.txt)\S* .*in (\d+) s"),
    "pytest": re.compile(r"^test: pytest took (\d+) s"),
}
# what the Makefile installs with apt, and what the builds need from the machine
APT_VARIABLES = ("SDF_PACKAGES", "GZ_PHYSICS_PACKAGES", "BROWSER_PACKAGES")
BUILD_PACKAGES = ("cmake", "g++", "git", "make")
# pytest's last line, e.g. "1286 passed, 2 warnings in 543.2s"
SUMMARY = re.compile(r"^=*\s*((?:\d+ \w+,? ?)+) in [\d.]+s\b")
VENV_VARS = ("VIRTUAL_ENV", "UV_CACHE_DIR", "PIP_CACHE_DIR", "PIP_NO_CACHE_DIR", "AMENT_PREFIX_PATH", "PYTHONPATH",
             "CMAKE_PREFIX_PATH", "COLCON_PREFIX_PATH",
             "ROS_DOMAIN_ID", "ROS_LOG_DIR", "ROS_AUTOMATIC_DISCOVERY_RANGE", "PYTEST_ADDOPTS")


@dataclass
class Run:
    kind: str
    wall_s: float
    code: int
    cpu_s: float = 0.0  # user + system time of the command and its children: what the machine's load does not stretch
    steps: dict[str, float] = field(default_factory=dict)
    passed: int | None = None
    failed: int | None = None
    tail: list[str] = field(default_factory=list)


def clean_env() -> dict[str, str]:
    """This process's environment as a new shell would have it: no venv on PATH, no ROS or virtualenv settings."""
    env = {k: v for k, v in os.environ.items() if k not in VENV_VARS}
    here = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p and p != here)
    return env


def parse(lines: list[str]) -> tuple[dict[str, float], int | None, int | None]:
    """The step durations the output reports, and pytest's passed and failed counts (its last summary)."""
    steps: dict[str, float] = {}
    passed = failed = None
    for line in lines:
        for name, pattern in STEPS.items():
            if m := pattern.match(line):
                if name == "interfaces":
                    key = f"interfaces {m.group(1)}"
                elif name == "colcon":
                    key = "robot workspace" if "/robot/" in m.group(1) else "colcon workspace"
                elif name == "robot":
                    key = {"the system": "robot system", "the venv made": "robot venv"}.get(m.group(1),
                                                                                            "robot requirements")
                else:
                    key = name
                steps[key] = float(m.group(m.lastindex or 1))
        if m := SUMMARY.match(line):
            counts = {word: int(n) for n, word in re.findall(r"(\d+) (\w+)", m.group(1))}
            passed, failed = counts.get("passed", 0), counts.get("failed", 0) + counts.get("errors", 0)
    return steps, passed, failed


def run_once(kind: str, command: str, source: Path, log: Path) -> Run:
    """Clone ``source``'s HEAD into a new directory and run ``command`` there; the output goes to ``log``."""
    with tempfile.TemporaryDirectory(prefix=f"fresh_{kind}_") as tmp:
        clone = Path(tmp) / "step_planner"
        subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(source), str(clone)], check=True)
        env = clean_env()
        # a new machine's caches: empty, and gone with the run
        env.update(UV_CACHE_DIR=f"{tmp}/uv-cache", PIP_CACHE_DIR=f"{tmp}/pip-cache", PIP_NO_CACHE_DIR="1")
        t0, used = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
        with log.open("w") as out:
            code = subprocess.run(["bash", "-c", command], cwd=clone, env=env, stdout=out,
                                  stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL).returncode
        wall = time.perf_counter() - t0
        now = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = now.ru_utime + now.ru_stime - used.ru_utime - used.ru_stime
    lines = log.read_text(errors="replace").splitlines()
    steps, passed, failed = parse(lines)
    return Run(kind, wall, code, cpu, steps, passed, failed, lines[-15:])


def apt_packages(makefile: Path) -> dict[str, bool]:
    """The Makefile's apt packages and the build tools' packages, each present (dpkg: installed) or not."""
    text = makefile.read_text().replace("\\\n", " ")
    names = [n for var in APT_VARIABLES for m in re.finditer(rf"^{var} := (.+)$", text, re.M)
             for n in m.group(1).split()]
    names = list(dict.fromkeys([*names, *BUILD_PACKAGES]))
    present = {}
    for name in names:
        done = subprocess.run(["dpkg-query", "-W", "-f=${Status}", name], capture_output=True, text=True)
        present[name] = done.returncode == 0 and done.stdout.endswith("installed")
    return present


def report(run: Run, index: int) -> str:
    target = TARGETS_S.get(run.kind)
    verdict = "" if target is None else f" (target {target:.0f} s: {'met' if run.wall_s <= target else 'MISSED'})"
    parts = [f"{run.kind} run {index}: exit {run.code}, {run.wall_s:.0f} s{verdict}, {run.cpu_s:.0f} s of CPU",
             f"load average {os.getloadavg()[0]:.1f} at its end"]
    if run.steps:
        parts.append("steps " + ", ".join(f"{k} {v:.0f} s" for k, v in run.steps.items()))
    if run.passed is not None:
        parts.append(f"{run.passed} passed, {run.failed or 0} failed")
        if "pytest" in run.steps and run.steps["pytest"] > 0:
            parts.append(f"{run.passed / (run.steps['pytest'] / 60):.0f} tests per minute of pytest")
    return "; ".join(parts)


def summary(kind: str, runs: list[Run]) -> str:
    walls = [r.wall_s for r in runs]
    green = sum(r.code == 0 for r in runs)
    text = f"{kind}: {green}/{len(runs)} green; wall min {min(walls):.0f} s, " \
           f"median {statistics.median(walls):.0f} s, max {max(walls):.0f} s"
    if kind in TARGETS_S:
        text += f" (target {TARGETS_S[kind]:.0f} s, met by {sum(w <= TARGETS_S[kind] for w in walls)}/{len(walls)})"
    return text


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--demo-runs", type=int, default=1)
    ap.add_argument("--ci-runs", type=int, default=0)
    ap.add_argument("--runs", action="append", default=[], metavar="KIND=N",
                    help=f"N runs of KIND ({', '.join(COMMANDS)}), after the demo runs and before the CI runs")
    ap.add_argument("--command", action="append", default=[], metavar="KIND=SHELL",
                    help="run this instead of a kind's command (e.g. 'demo=make -n demo', for a dry check)")
    ap.add_argument("--source", type=Path, default=ROOT, help="the repository to clone (its HEAD)")
    ap.add_argument("--logs", type=Path, default=ROOT / "results" / "fresh_clone")
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    commands = dict(COMMANDS)
    for item in args.command:
        kind, _, shell = item.partition("=")
        if kind not in commands or not shell:
            ap.error(f"--command {item!r}: KIND is one of {sorted(commands)}, then '=' and a shell command")
        commands[kind] = shell
    counts = {"demo": args.demo_runs}
    for item in args.runs:
        kind, _, n = item.partition("=")
        if kind not in commands or not n.isdigit():
            ap.error(f"--runs {item!r}: KIND is one of {sorted(commands)}, then '=' and a number")
        counts[kind] = int(n)
    counts["ci"] = args.ci_runs
    head = subprocess.run(["git", "-C", str(args.source), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    print(f"fresh clones of {args.source} at {head}, empty uv and pip caches; {os.cpu_count()} CPUs; "
          "NOT an LLM figure (build and test time)")
    if shutil.which("dpkg-query"):
        found = apt_packages(args.source / "Makefile")
        print("apt packages before the first run: present " + (", ".join(n for n, f in found.items() if f) or "none")
              + "; missing " + (", ".join(n for n, f in found.items() if not f) or "none"))
    else:
        print("apt packages before the first run: no dpkg-query here (not a Debian system)")
    args.logs.mkdir(parents=True, exist_ok=True)
    results: dict[str, list[Run]] = {}
    for kind, count in counts.items():
        for i in range(1, count + 1):
            print(f"{kind} run {i}: `{commands[kind]}` in a fresh clone ...", flush=True)
            run = run_once(kind, commands[kind], args.source, args.logs / f"{kind}_{i}.log")
            results.setdefault(kind, []).append(run)
            print(report(run, i), flush=True)
            if run.code != 0:
                print("  last lines:\n" + "\n".join(f"    {line}" for line in run.tail), flush=True)
    for kind, runs in results.items():
        print(summary(kind, runs))
    return 0 if all(r.code == 0 for runs in results.values() for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
