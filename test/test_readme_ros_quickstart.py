"""The README's ROS quick start "on this machine", run verbatim: node offline, goal, tree, clean stop.

The block is taken from README.md as it stands, so a README that drifts from what works fails here. It
runs in this checkout (it uses ``.venv/bin``), in a DDS domain of its own, with episodes in a temp folder.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.ros, pytest.mark.timeout(300)]


def quickstart_block() -> str:
    text = (ROOT / "README.md").read_text()
    after = text.split("**On this machine**", 1)[1]
    return re.search(r"```bash\n(.*?)```", after, re.S).group(1)


def test_the_block_is_the_offline_node_send_watch_and_stop():
    lines = [line.split("  #")[0].strip() for line in quickstart_block().strip().splitlines()]
    assert lines[1].startswith(".venv/bin/step_planner_node ") and "llm.offline:=true" in lines[1]
    assert lines[2].startswith(".venv/bin/step-planner send ") and lines[3].startswith(".venv/bin/step-planner watch")
    assert lines[-1].startswith("kill %1")


@pytest.mark.skipif(not (ROOT / ".venv" / "bin" / "step_planner_node").exists(), reason="needs make venv")
def test_the_readme_quickstart_runs_command_by_command_without_a_model(tmp_path):
    script = "set -euo pipefail\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n" + quickstart_block()
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "STEP_PLANNER_BASE_URL")}
    domain = os.environ.get("STEP_PLANNER_SPARE_DOMAIN", str(150 + os.getpid() % 50))  # conftest: xdist workers
    env.update(STEP_PLANNER_EPISODES=str(tmp_path / "episodes"), ROS_DOMAIN_ID=domain)
    done = subprocess.run(["bash", "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=240, env=env,
                          stdin=subprocess.DEVNULL)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-4000:]
    assert "outcome: SUCCESS" in done.stdout
    assert "scripted expert, not an LLM" in done.stderr  # the node says the answers are not an LLM's
    assert re.search(r"^goal \w+ rev \d+: put the tape and the screwdriver in the drawer$", done.stdout, re.M)
    assert list((tmp_path / "episodes").glob("*/summary.json"))
