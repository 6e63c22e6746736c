"""`make demo` installs only the demo's requirements (the Makefile's DEMO_REQUIREMENTS of requirements.txt, with
what they depend on) before it runs the offline `step-planner plan`: this runs that demo and checks that every
distribution it imports is among them, and that it loads no ROS (rclpy, interface packages), which `make demo` no
longer builds."""

from __future__ import annotations

import importlib.metadata
import json
import re
import subprocess
import sys
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]

# The demo as the Makefile runs it, in this venv with every distribution outside ALLOWED (argv[1]) made unimportable,
# as in the venv `make demo` builds (optional imports then fail as they would there). Prints what it imported.
DEMO = """
import contextlib, importlib.abc, importlib.metadata, io, json, sys
allowed = set(json.loads(sys.argv[1]))
canon = lambda name: name.lower().replace("_", "-").replace(".", "-")
blocked = {m for m, dists in importlib.metadata.packages_distributions().items()
           if not {canon(d) for d in dists} & allowed}
tried = set()

class Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in blocked:
            tried.add(name.split(".")[0])
            raise ModuleNotFoundError(f"No module named {name!r} (not installed by make demo)", name=name)
        return None

sys.meta_path.insert(0, Absent())
before = set(sys.modules)
from step_planner import cli
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = cli.main(["plan", "put the tape and the screwdriver in the drawer",
                     "--scene", "config/scenes/drawer_desk.yaml"])
print(json.dumps({"code": code, "out": out.getvalue(), "modules": sorted(set(sys.modules) - before),
                  "tried": sorted(tried)}))
"""


def demo_requirements() -> list[str]:
    pattern = re.search(r"^DEMO_REQUIREMENTS := (.+)$", (ROOT / "Makefile").read_text(), re.M).group(1)
    lines = [line for line in (ROOT / "requirements.txt").read_text().splitlines() if re.match(pattern, line)]
    assert lines, f"DEMO_REQUIREMENTS {pattern} selects nothing of requirements.txt"
    return lines


def closure(requirements: list[str]) -> set[str]:
    """The distributions these requirements install: themselves and what they require, markers evaluated."""
    env = {**default_environment(), "extra": ""}
    todo, seen = [Requirement(r) for r in requirements], set()
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        if name in seen or (req.marker and not req.marker.evaluate(env)):
            continue
        seen.add(name)
        todo += [Requirement(r) for r in importlib.metadata.requires(req.name) or []]
    return seen


def test_demo_requirements_are_pinned_lines_of_requirements_txt():
    for line in demo_requirements():
        assert "==" in line and not line.startswith("ros-"), line


def test_the_offline_demo_runs_with_only_its_requirements_and_no_ros(tmp_path):
    allowed = sorted(closure(demo_requirements()) | {"step-planner"})
    done = subprocess.run([sys.executable, "-c", DEMO, json.dumps(allowed)], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "HF_HUB_OFFLINE": "1",
                                            "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, ("the demo fails without what DEMO_REQUIREMENTS in the Makefile leaves out (add the "
                                  "requirement there):\n" + done.stderr[-3000:])
    got = json.loads(done.stdout.splitlines()[-1])
    assert got["code"] == 0 and "outcome: SUCCESS" in got["out"], (got["tried"], got["out"][-2000:])
    tops = {m.split(".")[0] for m in got["modules"]}
    ros = sorted(m for m in tops if m == "rclpy" or m.endswith(("_msgs", "_interfaces")))
    assert not ros, f"the offline demo imports ROS, which `make demo` does not build: {ros[:10]}"
