"""The pure core (planner/, domain/, llm/) imports neither ROS nor MoveIt, directly or indirectly."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORE = ("planner", "domain", "llm")


def core_modules() -> list[str]:
    return [
        ".".join(p.relative_to(ROOT).with_suffix("").parts)
        for pkg in CORE
        for p in sorted((ROOT / "step_planner" / pkg).glob("*.py"))
        if p.name != "__init__.py"
    ]


def test_core_modules_pull_in_no_ros_or_moveit():
    code = (
        "import importlib, sys\n"
        f"for m in {core_modules()!r}: importlib.import_module(m)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('rclpy', 'moveit', 'rosidl_runtime_py', "
        "'step_planner_interfaces', 'mujoco'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"the pure core imported {out.stdout.strip()}"
    assert len(core_modules()) > 15
