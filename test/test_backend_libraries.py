"""A backend whose Python modules are missing stops the node at start, in one line, not at the first goal
(issue 38: the node said ``ready: backend=moveit`` where moveit_py is not installed, and only the first goal failed).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from step_planner.execution.errors import BackendUnavailable
from step_planner.execution.factory import BACKENDS, LIBRARIES, check_libraries

ROOT = Path(__file__).resolve().parents[1]


def test_every_backend_lists_its_modules():
    assert set(LIBRARIES) == set(BACKENDS)
    assert "moveit.planning" in LIBRARIES["moveit"] and "control_msgs.action" in LIBRARIES["controllers"]


@pytest.mark.parametrize("backend", ["sim", "controllers", "moveit"])
def test_a_missing_module_is_named_in_one_line_with_how_to_install_it(backend, monkeypatch):
    real = importlib.util.find_spec
    gone = LIBRARIES[backend][0]
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == gone else real(name, *a))
    with pytest.raises(BackendUnavailable) as refused:
        check_libraries(backend)
    text = str(refused.value)
    assert gone in text and "\n" not in text and ("install" in text or "make venv" in text)


def test_symbolic_needs_nothing():
    check_libraries("symbolic")


@pytest.mark.skipif(importlib.util.find_spec("moveit") is not None, reason="moveit_py is installed here")
def test_the_node_on_the_moveit_backend_without_moveit_py_stops_at_start():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-m", "step_planner.cli", "node", "--ros-args", "-r", "__node:=sp_nomoveit",
                           "-p", "backend:=moveit"], capture_output=True, text=True, timeout=120, env=env,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "ready:" not in done.stdout + done.stderr
    assert "step_planner_node: backend moveit needs Python modules that are not importable here: moveit.planning" \
        in done.stderr and "Traceback" not in done.stderr
