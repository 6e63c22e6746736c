"""The demo builds and loads what the product needs, not the test-only interfaces (issue 31).

control_msgs, franka_msgs and tf2_msgs of test/interfaces/ stand in for /opt/ros/jazzy's on a robot; only the
controllers/MoveIt backends and the MuJoCo robot process import them. `make venv`/`make demo` must not build
them (they cost ~50 s of a fresh machine's demo) and `make demo` must run with them absent.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEST_ONLY = ("control_msgs", "franka_msgs", "tf2_msgs")


def dry_run(*targets: str, venv: Path) -> str:
    """What make would run for ``targets`` in an empty venv (nothing is executed: make -n)."""
    done = subprocess.run(["make", "-n", f"VENV={venv}", *targets], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_make_demo_builds_no_test_interface_and_make_test_does(tmp_path):
    venv = tmp_path / "venv"
    demo = dry_run("demo", venv=venv)
    assert "build_interfaces.sh" in demo and "step_planner_interfaces" in demo  # the product's own interfaces
    assert "test/interfaces" not in demo
    assert "test/interfaces" not in dry_run("venv", "demo-ros", venv=venv)
    for package in TEST_ONLY:
        assert f"test/interfaces/{package}" in dry_run("test-interfaces", venv=venv)
    test = dry_run("test", venv=venv)
    assert all(f"test/interfaces/{package}" in test for package in TEST_ONLY)
    assert "--durations=10" in test  # make test ends with its ten slowest tests


def test_the_demo_plans_and_executes_with_the_test_interfaces_absent(tmp_path):
    script = f"""
import sys
for name in {TEST_ONLY!r}:
    sys.modules[name] = None  # `import control_msgs` now raises ImportError
from step_planner.cli import main
code = main(["plan", "put the tape and the screwdriver in the drawer", "--scene", "config/scenes/drawer_desk.yaml"])
assert not any(sys.modules.get(name) for name in {TEST_ONLY!r})
sys.exit(code)
"""
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "STEP_PLANNER_BASE_URL")}
    env.update(STEP_PLANNER_EPISODES=str(tmp_path / "episodes"), PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env=env, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    assert "outcome: SUCCESS" in done.stdout
