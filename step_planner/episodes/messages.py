"""rosbags message objects for episodes, built from plain data with every unnamed field at its default.

WHY a generic builder: rosbags' message classes need every field; filling the ones we do not name from
the type's definition keeps the recorder working when step_planner_interfaces' messages gain fields.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from step_planner.episodes.bag import JOINT_STATE, OBJECT_POSES, PRIMITIVE, STRING, TF, TREE
from step_planner.msg_fields import call_text, tree_fields

BASE, NAME, ARRAY, SEQUENCE = 1, 2, 3, 4  # rosbags.typesys Nodetype values
DTYPES = {"bool": np.bool_, "byte": np.uint8, "char": np.uint8, "octet": np.uint8, "int8": np.int8,
          "uint8": np.uint8, "int16": np.int16, "uint16": np.uint16, "int32": np.int32, "uint32": np.uint32,
          "int64": np.int64, "uint64": np.uint64, "float32": np.float32, "float64": np.float64}


def make(store: Any, typename: str, **values: Any) -> Any:
    """A message of ``typename``; nested messages may be given as dicts, sequences as lists."""
    _, fields = store.fielddefs[typename]
    unknown = set(values) - {name for name, _ in fields}
    if unknown:
        raise TypeError(f"{typename} has no field(s) {sorted(unknown)}")
    kwargs = {name: _value(store, kind, values[name]) if name in values else _default(store, kind)
              for name, kind in fields}
    return store.types[typename](**kwargs)


def _default(store: Any, kind: tuple) -> Any:
    nodetype, spec = int(kind[0]), kind[1]
    if nodetype == BASE:
        base = spec[0]
        return "" if base in ("string", "wstring") else False if base == "bool" else 0.0 if "float" in base else 0
    if nodetype == NAME:
        return make(store, spec)
    sub, length = spec
    if nodetype == ARRAY:
        return _value(store, kind, [_default(store, sub) for _ in range(length)])
    return _value(store, kind, [])


def _value(store: Any, kind: tuple, value: Any) -> Any:
    nodetype, spec = int(kind[0]), kind[1]
    if nodetype == NAME:
        return make(store, spec, **value) if isinstance(value, dict) else value
    if nodetype in (ARRAY, SEQUENCE):
        sub = spec[0]
        if int(sub[0]) == BASE and sub[1][0] in DTYPES:
            return np.asarray(value, dtype=DTYPES[sub[1][0]])
        return [_value(store, sub, v) for v in value]
    return value


def time_fields(stamp_ns: int) -> dict[str, int]:
    return {"sec": stamp_ns // 1_000_000_000, "nanosec": stamp_ns % 1_000_000_000}


def string(store: Any, text: str) -> Any:
    return make(store, STRING, data=text)


def tree(store: Any, snapshot: dict[str, Any], stamp_ns: int) -> Any:
    fields = tree_fields(snapshot)
    return make(store, TREE, stamp=time_fields(stamp_ns), **fields)


def primitive_step(store: Any, index: int, call: dict[str, Any], outcome: dict[str, Any],
                   world_before: dict[str, Any] | None, world_after: dict[str, Any] | None, stamp_ns: int) -> Any:
    args = call.get("args") or {}
    return make(store, PRIMITIVE, stamp=time_fields(stamp_ns), index=index, call=call_text(call),
                name=str(call.get("name", "")), arg_names=[str(k) for k in args],
                arg_values=[str(v) for v in args.values()], outcome_code=str(outcome.get("code", "")),
                outcome_message=str(outcome.get("message", "")),
                duration_s=float(outcome.get("duration_s") or 0.0), call_json=_json(call),
                outcome_json=_json(outcome), world_before_json=_json(world_before) if world_before else "",
                world_after_json=_json(world_after) if world_after else "")


def step_document(msg: Any) -> dict[str, Any]:
    """A PrimitiveStep back to the recorder's dict: {"call", "outcome", "world_before", "world_after"}."""
    return {"call": json.loads(msg.call_json), "outcome": json.loads(msg.outcome_json),
            "world_before": json.loads(msg.world_before_json) if msg.world_before_json else None,
            "world_after": json.loads(msg.world_after_json) if msg.world_after_json else None}


def joint_state(store: Any, sample: Any, stamp_ns: int) -> Any:
    return make(store, JOINT_STATE, header={"stamp": time_fields(stamp_ns)}, name=list(sample.names),
                position=sample.position, velocity=sample.velocity, effort=sample.effort)


def transforms(store: Any, links: list[Any], stamp_ns: int) -> Any:
    """A TFMessage from (parent, child, translation, rotation xyzw) tuples."""
    return make(store, TF, transforms=[
        {"header": {"stamp": time_fields(stamp_ns), "frame_id": parent}, "child_frame_id": child,
         "transform": {"translation": dict(zip("xyz", t, strict=True)),
                       "rotation": dict(zip("xyzw", q, strict=True))}}
        for parent, child, t, q in links])


def object_poses(store: Any, samples: list[Any], world: Any, frame: str, stamp_ns: int) -> Any:
    header = {"stamp": time_fields(stamp_ns), "frame_id": frame}
    objects = []
    for s in samples:
        state = world.objects.get(s.name) if world is not None else None
        objects.append({"name": s.name, "class_name": state.category if state else "",
                        "container": (state.location or "") if state else "",
                        "pose": {"header": header, "pose": {"position": dict(zip("xyz", s.position, strict=True)),
                                                            "orientation": dict(zip("xyzw", s.orientation,
                                                                                    strict=True))}}})
    return make(store, OBJECT_POSES, header=header, objects=objects)


def _json(document: Any) -> str:
    return json.dumps(document, default=str, separators=(",", ":"))
