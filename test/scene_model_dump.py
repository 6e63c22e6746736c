"""The scene part of a compiled MuJoCo model as plain data: what test_scene_geometry.py compares with the model
the builder compiled before the scene geometry became one description (test/data/scene_models.json).

    python test/scene_model_dump.py --write    # regenerate the fixture (only when the geometry changes on purpose)

Everything the scene adds to the Panda is dumped: bodies (parent, pose, mass, inertia), geoms (type, size, pose,
rgba, friction, contact settings), joints (type, axis, range, damping, friction loss, armature), sites, light, the
model's counts, and the SceneInfo the builder returns; at a nonzero seed (object poses jittered) the
bodies and counts only. Floats are rounded to 1e-9 m so the file stays readable.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "test" / "data" / "scene_models.json"
SEEDS = (0, 3)  # 0: the scene as written; 3: jittered object poses (only the bodies and counts are kept)


def _r(values) -> list[float] | float:
    arr = np.round(np.asarray(values, dtype=float), 9) + 0.0  # + 0.0: no -0.0 in the file
    return arr.tolist()


def dump_model(model, info) -> dict:
    """The scene's bodies and everything on them (the Panda's own are left out: the scene does not change them)."""
    import mujoco

    def name(kind, i: int) -> str:
        return mujoco.mj_id2name(model, kind, int(i)) or ""

    scene = [b for b in range(1, model.nbody) if not name(mujoco.mjtObj.mjOBJ_BODY, b).startswith("panda_")]
    out: dict = {"counts": {k: int(getattr(model, k)) for k in
                            ("nbody", "ngeom", "njnt", "nsite", "nq", "nv", "nu", "neq", "nexclude", "nlight")}}
    out["bodies"] = {
        name(mujoco.mjtObj.mjOBJ_BODY, b): {
            "parent": name(mujoco.mjtObj.mjOBJ_BODY, model.body_parentid[b]),
            "pos": _r(model.body_pos[b]), "quat": _r(model.body_quat[b]), "mass": _r(model.body_mass[b]),
            "inertia": _r(model.body_inertia[b]), "ipos": _r(model.body_ipos[b]), "iquat": _r(model.body_iquat[b]),
        } for b in scene}
    out["geoms"] = {
        name(mujoco.mjtObj.mjOBJ_GEOM, g): {
            "body": name(mujoco.mjtObj.mjOBJ_BODY, model.geom_bodyid[g]), "type": int(model.geom_type[g]),
            "size": _r(model.geom_size[g]), "pos": _r(model.geom_pos[g]), "quat": _r(model.geom_quat[g]),
            "rgba": _r(model.geom_rgba[g]), "friction": _r(model.geom_friction[g]), "condim": int(model.geom_condim[g]),
            "contype": int(model.geom_contype[g]), "conaffinity": int(model.geom_conaffinity[g]),
            "priority": int(model.geom_priority[g]), "solref": _r(model.geom_solref[g]),
            "solimp": _r(model.geom_solimp[g]),
        } for g in range(model.ngeom) if model.geom_bodyid[g] in scene or model.geom_bodyid[g] == 0}
    out["joints"] = {
        name(mujoco.mjtObj.mjOBJ_JOINT, j): {
            "body": name(mujoco.mjtObj.mjOBJ_BODY, model.jnt_bodyid[j]), "type": int(model.jnt_type[j]),
            "axis": _r(model.jnt_axis[j]), "pos": _r(model.jnt_pos[j]), "range": _r(model.jnt_range[j]),
            "limited": int(model.jnt_limited[j]), "damping": _r(model.dof_damping[model.jnt_dofadr[j]]),
            "frictionloss": _r(model.dof_frictionloss[model.jnt_dofadr[j]]),
            "armature": _r(model.dof_armature[model.jnt_dofadr[j]]), "qposadr": int(model.jnt_qposadr[j]),
        } for j in range(model.njnt) if model.jnt_bodyid[j] in scene}
    out["sites"] = {
        name(mujoco.mjtObj.mjOBJ_SITE, s): {
            "body": name(mujoco.mjtObj.mjOBJ_BODY, model.site_bodyid[s]), "pos": _r(model.site_pos[s]),
            "quat": _r(model.site_quat[s]),
        } for s in range(model.nsite) if model.site_bodyid[s] in scene}
    out["lights"] = [{"pos": _r(model.light_pos[i]), "dir": _r(model.light_dir[i]),
                      "castshadow": int(model.light_castshadow[i])} for i in range(model.nlight)]
    out["info"] = dump_info(info)
    return out


def dump_info(info) -> dict:
    return {
        "table": info.table, "table_size": _r(info.table_size), "table_center": _r(info.table_center),
        "objects": {n: {"shape": o.shape, "half": _r(o.half), "body_id": o.body_id, "qpos_adr": o.qpos_adr,
                        "dof_adr": o.dof_adr} for n, o in info.objects.items()},
        "trays": {n: {"position": _r(t.position), "size": _r(t.size)} for n, t in info.trays.items()},
        "drawers": {n: {"slide": _r(d.slide), "inner": _r(d.inner), "floor_z": _r(d.floor_z),
                        "closed_center": _r(d.closed_center), "reach_x": _r(d.reach_x), "above": d.above,
                        "headroom": _r(d.headroom), "body_id": d.body_id, "joint_id": d.joint_id,
                        "qpos_adr": d.qpos_adr, "handle_site": d.handle_site, "geom_ids": sorted(d.geom_ids)}
                    for n, d in info.drawers.items()},
    }


def dump_scenes() -> dict:
    """Every shipped scene at every seed of SEEDS: the dump, or the error the builder refuses it with."""
    from step_planner.domain.scene import SceneError, load_scene
    from step_planner.execution.sim.scene_builder import build_scene

    out = {}
    for path in sorted((ROOT / "config" / "scenes").glob("*.yaml")):
        world = load_scene(path)
        for seed in SEEDS:
            try:
                model, info = build_scene(world, seed)
            except SceneError as exc:
                out[f"{path.stem}@{seed}"] = {"error": str(exc).replace(str(ROOT) + "/", "")}
                continue
            dumped = dump_model(model, info)
            out[f"{path.stem}@{seed}"] = dumped if seed == 0 else {k: dumped[k] for k in ("counts", "bodies")}
    return out


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit(__doc__)
    FIXTURE.write_text(json.dumps(dump_scenes(), indent=None, separators=(",", ":"), sort_keys=True) + "\n")
    print(f"wrote {FIXTURE} ({FIXTURE.stat().st_size} bytes)")
