"""Gazebo Fortress's physics on a scene's world: run the native checker, read its figures, judge them.

WHY: the world passing the SDF checker says nothing of whether Gazebo's physics keeps it still or lets a drawer
slide. ``test/gz_physics_check`` (built by ``make gz-physics-check``) constructs an exported world the way gz-sim
Fortress's Physics system does (ignition-physics 5, DART plugin, Debian bookworm's packages), steps it and prints
one JSON object per line; this module runs it, and :func:`verdicts` holds the limits the test and the benchmark
report against, so both judge alike.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

REST_S = 5.0  # untouched for this long
OBJECT_TOL_M = 0.005  # every object within 5 mm of its start after REST_S
TABLE_TOL_M = 0.001  # no object's lowest point below the table top by more than this
JOINT_TOL_M = 0.001  # a drawer untouched stays within this; a driven one reaches its target within this
MARGIN_M = 0.01  # the velocity drive stops this short of each limit (the checker's kMargin)


@dataclass(frozen=True)
class Verdict:
    """One judged figure: what, where, the measured value, the limit and whether it holds."""

    world: str
    what: str
    subject: str
    value: float
    limit: str
    ok: bool


def run_checker(binary: Path, sdf: Path, timeout: float = 280.0) -> list[dict]:
    """The checker's records for one world; a failed run raises with its stderr."""
    done = subprocess.run([str(binary), str(sdf), "--seconds", str(REST_S)], capture_output=True, text=True,
                          timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{binary} {sdf} exited {done.returncode}: {done.stderr[-2000:]}")
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def verdicts(records: list[dict], table_top: float) -> list[Verdict]:
    """Every check of the issue on one world's records: objects still and above the table, drawers still when
    untouched, sliding their travel under a force and under a velocity command (the latter short of the limits)."""
    out: list[Verdict] = []
    for r in records:
        w = r["world"]
        if r["kind"] == "object":
            out.append(Verdict(w, "object displacement", r["model"], r["displacement"],
                               f"<= {OBJECT_TOL_M}", r["displacement"] <= OBJECT_TOL_M))
            if r["lowest_start"] >= table_top - TABLE_TOL_M:  # started on or above the table top
                out.append(Verdict(w, "object lowest point - table top", r["model"], r["lowest_end"] - table_top,
                                   f">= -{TABLE_TOL_M}", r["lowest_end"] >= table_top - TABLE_TOL_M))
        elif r["kind"] == "fixture":
            subject = f"{r['model']}::{r['link']}"
            out.append(Verdict(w, "fixture displacement", subject, r["displacement"], f"<= {JOINT_TOL_M}",
                               r["displacement"] <= JOINT_TOL_M))
        elif r["kind"] == "joint_rest":
            moved = abs(r["end"] - r["start"])
            out.append(Verdict(w, "untouched drawer joint moved", r["joint"], moved, f"<= {JOINT_TOL_M}",
                               moved <= JOINT_TOL_M))
        elif r["kind"] == "joint_drive" and r["mode"] == "force":
            lo, hi, j = r["lower"], r["upper"], r["joint"]
            out += [
                Verdict(w, "forced open: upper limit - reached", j, hi - r["opened"], f"<= {JOINT_TOL_M}",
                        abs(hi - r["opened"]) <= JOINT_TOL_M),
                Verdict(w, "forced open: overshoot past upper", j, r["max"] - hi, f"<= {JOINT_TOL_M}",
                        r["max"] - hi <= JOINT_TOL_M),
                Verdict(w, "forced closed: reached - lower limit", j, r["closed"] - lo, f"<= {JOINT_TOL_M}",
                        abs(r["closed"] - lo) <= JOINT_TOL_M),
                Verdict(w, "forced closed: overshoot past lower", j, lo - r["min"], f"<= {JOINT_TOL_M}",
                        lo - r["min"] <= JOINT_TOL_M),
            ]
        elif r["kind"] == "joint_drive" and r["mode"] == "velocity":
            lo, hi, j = r["lower"], r["upper"], r["joint"]
            out += [
                Verdict(w, "velocity open: reached - target", j, r["opened"] - (hi - MARGIN_M), f"|.| <= {JOINT_TOL_M}",
                        abs(r["opened"] - (hi - MARGIN_M)) <= JOINT_TOL_M),
                Verdict(w, "velocity closed: reached - target", j, r["closed"] - (lo + MARGIN_M),
                        f"|.| <= {JOINT_TOL_M}", abs(r["closed"] - (lo + MARGIN_M)) <= JOINT_TOL_M),
            ]
    return out


def servo_at_limit(records: list[dict]) -> list[tuple[str, float, float]]:
    """DART 6.12's servo at a limit (dartsim/dart#1683), measured, not judged: per joint, how far a velocity
    command moved it in 0.5 s from its closed limit and from its open limit."""
    return [(r["joint"], r["opened"] - r["start"], r["upper"] - r["closed"]) for r in records
            if r["kind"] == "joint_drive" and r["mode"] == "servo_at_limit"]
