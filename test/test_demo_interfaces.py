"""`make demo` builds only what the offline demo runs (issues 31, 44): the Makefile's DEMO_REQUIREMENTS of
requirements.txt with what they depend on, and step_planner; no ROS interfaces (the product's nor the test-only
control_msgs, franka_msgs, tf2_msgs, controller_manager_msgs of test/interfaces/, which stand in for /opt/ros/jazzy's
on a robot). `make venv`, `make demo-ros` and `make test` build the rest. The demo then runs here with every other
distribution made unimportable, as in the venv `make demo` builds.
"""

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
TEST_ONLY = ("control_msgs", "franka_msgs", "tf2_msgs", "controller_manager_msgs")


def dry_run(*targets: str, venv: Path) -> str:
    """What make would run for ``targets`` in an empty venv (nothing is executed: make -n)."""
    done = subprocess.run(["make", "-n", f"VENV={venv}", *targets], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_make_demo_builds_no_interface_and_make_test_does(tmp_path):
    venv = tmp_path / "venv"
    demo = dry_run("demo", venv=venv)
    assert "requirements-demo.txt" in demo and "-e ." in demo
    assert "build_interfaces.sh" not in demo and "-r requirements.txt" not in demo
    ros = dry_run("venv", "demo-ros", venv=venv)
    assert "step_planner_interfaces" in ros and "-r requirements.txt" in ros and "test/interfaces" not in ros
    for package in TEST_ONLY:
        assert f"test/interfaces/{package}" in dry_run("test-interfaces", venv=venv)
    test = dry_run("test", venv=venv)
    assert all(f"test/interfaces/{package}" in test for package in TEST_ONLY)
    assert "--durations=10" in test  # make test ends with its ten slowest tests
    assert "--no-print-directory robot-install" in test  # the robot install and its workspace build beside pytest


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
