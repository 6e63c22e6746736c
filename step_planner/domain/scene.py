"""Scenes are YAML files in ``config/scenes/``: the initial world state of a task.

Example::

    name: drawer_desk
    places:
      - {name: table, kind: surface}
      - {name: drawer, kind: drawer, open: false, capacity: 4}
    objects:
      - {name: tape, category: tape, at: table, geometry: {shape: cylinder, size: [0.04, 0.03]}}
      - {name: screwdriver, at: drawer}
    locations: [home]

A malformed scene raises :class:`SceneError` naming the file and the entry; nothing is half-loaded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import yaml

from step_planner.domain.world import ObjectState, Place, WorldState

PLACE_KINDS = ("surface", "drawer", "tray", "bin", "box")
_OBJECT_KEYS = {"name", "category", "at", "graspable", "pushable", "reachable", "geometry"}
_PLACE_KEYS = {"name", "kind", "open", "capacity", "reachable", "geometry"}
_NAME_CHARS = set("abcdefghijklmnopqrstuvwxyz0123456789_")


class SceneError(ValueError):
    """A scene file is malformed."""


class SceneGeometryError(SceneError):
    """A scene's geometry cannot be built (names the entity and the field)."""


def geometry_vector(geometry: dict, key: str, n: int, where: str, default=None) -> np.ndarray:
    """``geometry[key]`` as n floats, or a SceneGeometryError naming the field."""
    value = geometry.get(key, default)
    try:
        arr = np.asarray(value, dtype=float).reshape(-1)
    except (TypeError, ValueError) as exc:
        raise SceneGeometryError(f"{where}: geometry.{key} must be {n} numbers, got {value!r}") from exc
    if value is None or arr.shape != (n,):
        raise SceneGeometryError(f"{where}: geometry.{key} must be {n} numbers, got {value!r}")
    return arr


def _geometry(raw: dict, where: str) -> dict[str, Any]:
    geometry = raw.get("geometry") or {}
    if not isinstance(geometry, dict):
        raise SceneError(f"{where}: 'geometry' must be a mapping")
    return dict(geometry)


def _flag(raw: dict, key: str, default: bool, where: str) -> bool:
    value = raw.get(key, default)
    if not isinstance(value, bool):
        raise SceneError(f"{where}: '{key}' must be true or false, got {value!r}")
    return value


def _name(raw: Any, where: str) -> str:
    name = raw.get("name") if isinstance(raw, dict) else None
    if not isinstance(name, str) or not name or not set(name) <= _NAME_CHARS or name == "gripper":
        raise SceneError(f"{where}: 'name' must be a lowercase identifier (a-z, 0-9, _), got {name!r}")
    return name


def scene_from_dict(data: Any, source: str = "<scene>") -> WorldState:
    if not isinstance(data, dict):
        raise SceneError(f"{source}: a scene is a mapping with 'places' and 'objects'")
    world = WorldState()
    for key in ("places", "objects"):
        if not isinstance(data.get(key) or [], list):
            raise SceneError(f"{source}: '{key}' must be a list")
    for i, raw in enumerate(data.get("places") or []):
        where = f"{source}: places[{i}]"
        name = _name(raw, where)
        if unknown := set(raw) - _PLACE_KEYS:
            raise SceneError(f"{where}: unknown keys {sorted(map(str, unknown))}")
        kind = raw.get("kind", "surface")
        if kind not in PLACE_KINDS:
            raise SceneError(f"{where}: kind must be one of {PLACE_KINDS}, got {kind!r}")
        capacity = raw.get("capacity")
        if capacity is not None and (isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 0):
            raise SceneError(f"{where}: capacity must be a non-negative integer")
        if name in world.places:
            raise SceneError(f"{where}: duplicate name '{name}'")
        world.places[name] = Place(
            name=name,
            kind=kind,
            is_open=_flag(raw, "open", kind != "drawer", where),
            capacity=capacity,
            reachable=_flag(raw, "reachable", True, where),
            geometry=_geometry(raw, where),
        )
    for i, raw in enumerate(data.get("objects") or []):
        where = f"{source}: objects[{i}]"
        name = _name(raw, where)
        if name in world.objects or name in world.places:
            raise SceneError(f"{where}: duplicate name '{name}'")
        if True in raw or "on" in raw or "in" in raw:
            raise SceneError(f"{where}: use 'at: <place>' (YAML reads a bare 'on' as true)")
        if unknown := set(raw) - _OBJECT_KEYS:
            raise SceneError(f"{where}: unknown keys {sorted(map(str, unknown))}")
        location = raw.get("at")
        if location not in world.places:
            raise SceneError(f"{where}: '{name}' is at unknown place {location!r}")
        world.objects[name] = ObjectState(
            name=name,
            category=str(raw.get("category", name))[:64],
            location=location,
            graspable=_flag(raw, "graspable", True, where),
            pushable=_flag(raw, "pushable", True, where),
            reachable=_flag(raw, "reachable", True, where),
            geometry=_geometry(raw, where),
        )
    for place in world.places.values():
        if place.capacity is not None and len(world.contents(place.name)) > place.capacity:
            raise SceneError(f"{source}: {place.name} holds more objects than its capacity")
    locations = data.get("locations", ["home"])
    if not isinstance(locations, list) or not all(isinstance(x, str) for x in locations):
        raise SceneError(f"{source}: 'locations' must be a list of names")
    world.locations = list(dict.fromkeys(["home", *locations]))
    return world


def load_scene(path: str | Path) -> WorldState:
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise SceneError(f"cannot read scene {path}: {exc}") from exc
    return scene_from_dict(data, source=str(path))
