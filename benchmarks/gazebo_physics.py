"""Gazebo Fortress's physics on every shipped scene's world, per world, object and drawer.

    make gz-physics-check      # once: Debian's ignition-physics 5 (DART) and the checker, built into build/
    python benchmarks/gazebo_physics.py --checker build/gz_physics_check/gz_physics_check

Each scene is exported as `step-planner export-world` does (seed 0) and run through the checker
(test/gz_physics_check: the world built as gz-sim Fortress's Physics system builds it, ignition-physics 5 with its
DART plugin), which leaves it untouched for 5 s, then drives every drawer's joint at once (in a fresh
world) by a force and by a velocity command. No LLM, no planner, no arm. The limits are those of
test/test_gazebo_physics.py (step_planner.execution.gazebo.physics_check), printed next to the figures.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checker", default="build/gz_physics_check/gz_physics_check",
                        help="the checker `make gz-physics-check` builds")
    parser.add_argument("--scenes", default="", help="comma-separated scene names (default: every shipped scene)")
    return parser


def main(argv: list[str] | None = None) -> int:
    from step_planner.domain.scene import load_scene
    from step_planner.domain.scene_geometry import scene_geometry
    from step_planner.execution.gazebo import physics_check as pc
    from step_planner.execution.gazebo.world_sdf import world_sdf

    args = build_parser().parse_args(argv)
    checker = Path(args.checker)
    if not checker.is_file():
        print(f"{checker} is missing: run `make gz-physics-check`", file=sys.stderr)
        return 2
    names = [n for n in args.scenes.split(",") if n]
    scenes = [ROOT / "config/scenes" / f"{n}.yaml" for n in names] or sorted((ROOT / "config/scenes").glob("*.yaml"))
    print("Gazebo Fortress physics (ignition-physics 5.1.0 + DART 6.12, Debian bookworm), not Harmonic's gz-physics 7;"
          " no arm, no planner, NOT an LLM.")
    print(f"Limits: objects within {pc.OBJECT_TOL_M * 1000:g} mm after {pc.REST_S:g} s untouched, lowest point not "
          f"below the table top by more than {pc.TABLE_TOL_M * 1000:g} mm; drawers within "
          f"{pc.JOINT_TOL_M * 1000:g} mm when untouched and of each target when driven (velocity: "
          f"{pc.MARGIN_M * 1000:g} mm short of each limit).")
    total = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for path in scenes:
            geometry = scene_geometry(load_scene(path), 0)
            sdf = Path(tmp) / f"{path.stem}.sdf"
            sdf.write_text(world_sdf(geometry, path.stem))
            table_top = max(b.pos[2] + b.half[2] for b in geometry.world_boxes)
            records = pc.run_checker(checker, sdf)
            verdicts = pc.verdicts(records, table_top)
            bad = [v for v in verdicts if not v.ok]
            total, failed = total + len(verdicts), failed + len(bad)
            objects = [r for r in records if r["kind"] == "object"]
            print(f"\n{path.stem}: {len(objects)} objects, {len(geometry.drawers)} drawers, {len(verdicts)} checks, "
                  f"{len(bad)} failed")
            print("  object            moved mm   lowest - table top mm")
            for r in objects:
                low = 1000 * (r["lowest_end"] - table_top)
                print(f"  {r['model']:<16} {1000 * r['displacement']:9.3f}   {low:9.3f}")
            rest = {r["joint"]: r for r in records if r["kind"] == "joint_rest"}
            drives = {(r["joint"], r["mode"]): r for r in records if r["kind"] == "joint_drive"}
            servo = {j: (a, b) for j, a, b in pc.servo_at_limit(records)}
            if rest:
                print("  drawer joint            travel m  untouched mm  force open/closed err mm  "
                      "velocity open/closed err mm  servo from closed/open limit mm")
            for j, r in rest.items():
                f, v = drives[(j, "force")], drives[(j, "velocity")]
                print(f"  {j:<23} {r['upper'] - r['lower']:8.3f}  {1000 * abs(r['end'] - r['start']):12.4f}  "
                      f"{1000 * (f['opened'] - f['upper']):11.4f} / {1000 * (f['closed'] - f['lower']):8.4f}  "
                      f"{1000 * (v['opened'] - v['upper'] + pc.MARGIN_M):13.4f} / "
                      f"{1000 * (v['closed'] - v['lower'] - pc.MARGIN_M):9.4f}  "
                      f"{1000 * servo[j][0]:13.3f} / {1000 * servo[j][1]:8.3f}")
            for v in bad:
                print(f"  FAILED {v.subject}: {v.what} = {v.value:.6g} (want {v.limit})")
    print(f"\n{len(scenes)} worlds, {total} checks, {failed} failed (target: 0). The servo column is DART 6.12's "
          "velocity servo at a joint limit (dartsim/dart#1683), measured, not judged.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
