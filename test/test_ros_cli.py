"""``step-planner send`` and ``step-planner watch`` as separate processes against a running node."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("step_planner_interfaces", reason="build the interfaces first: make interfaces")

from ros_support import PLANS, TASK, RosHarness, ScriptedPlans  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.timeout(120)]


def _cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [os.getcwd(), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-m", "step_planner.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env=env, stdin=subprocess.DEVNULL)


def test_send_shows_the_tree_and_the_result_then_watch_sees_the_final_tree():
    ros = RosHarness(ScriptedPlans(PLANS))
    try:
        sent = _cli("send", TASK, "--node", ros.name, "--wait", "20")
        assert sent.returncode == 0, sent.stderr
        assert "outcome: SUCCESS" in sent.stdout
        assert "-- tree rev" in sent.stdout and "[+] put the tape in the drawer" in sent.stdout
        assert "close_drawer(drawer=drawer) -> SUCCESS" in sent.stdout
        watched = _cli("watch", "--node", ros.name, "--once", "--timeout", "20")
        assert watched.returncode == 0, watched.stderr
        assert f"[+] {TASK}" in watched.stdout and "pick(tape)" in watched.stdout
    finally:
        ros.close()


def test_send_reports_a_missing_server_quickly():
    sent = _cli("send", TASK, "--node", "/nobody_here", "--wait", "1")
    assert sent.returncode == 2 and "no action server /nobody_here/execute_task" in sent.stderr
