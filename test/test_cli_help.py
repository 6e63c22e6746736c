"""Every ``step-planner`` subcommand answers ``--help`` with its usage and exit code 0, and starts nothing.

Run as separate processes with a timeout: a subcommand that ignored ``--help`` and started (the node
used to) would hang or fail here instead of passing.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

import pytest

from step_planner.cli import DELEGATED, build_parser


def subcommands() -> list[str]:
    (sub,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return sorted(sub.choices)


def test_the_list_covers_the_delegated_commands_and_the_node():
    assert set(DELEGATED) <= set(subcommands()) and {"plan", "replay", "node", "send", "watch"} <= set(subcommands())


@pytest.mark.parametrize("command", [None, *subcommands()])
def test_help_prints_usage_and_exits_0(command):
    argv = [sys.executable, "-m", "step_planner.cli", *([command] if command else []), "--help"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL,
                          env={**os.environ, "ROS_DOMAIN_ID": "232"})  # a node that started anyway stays alone
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: step-planner"), done.stdout[:200]
    if command:
        assert f"step-planner {command}" in done.stdout.splitlines()[0]
