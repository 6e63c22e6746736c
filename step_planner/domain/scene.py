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

The schema is :class:`SceneFile`. A malformed scene raises :class:`SceneError` naming the file and every bad key;
nothing is half-loaded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field, field_validator, model_validator

from step_planner.config_schema import ConfigFileError, ConfigModel, read_yaml, validate
from step_planner.domain.world import ObjectState, Place, WorldState

PLACE_KINDS = ("surface", "drawer", "tray", "bin", "box")
_NAME_CHARS = set("abcdefghijklmnopqrstuvwxyz0123456789_")


class SceneError(ConfigFileError):
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


Vec3 = Annotated[list[float], Field(min_length=3, max_length=3)]


class Geometry(ConfigModel):
    """Where an entity is and what it looks like, for the simulators and motion planning (metres, base frame)."""

    shape: Literal["box", "cylinder"] | None = Field(None, description="An object's shape (default box).")
    size: list[Annotated[float, Field(gt=0)]] | None = Field(None, min_length=2, max_length=3, description=(
        "m: a box's full extent (x, y, z), a cylinder's (radius, height)."))
    position: Vec3 | None = Field(None, description="m: the centre (a place: its top surface's centre).")
    yaw: float | None = Field(None, description="Degrees about z.")
    mass: float | None = Field(None, gt=0, description="kg.")
    rgba: list[Annotated[float, Field(ge=0, le=1)]] | None = Field(None, min_length=4, max_length=4,
                                                                   description="Colour, each in [0, 1].")
    cabinet_position: Vec3 | None = Field(None, description="m, a drawer: its cabinet's footprint centre.")
    inner_size: Vec3 | None = Field(None, description="m, a drawer: its inside (x, y, wall height).")
    slide: float | None = Field(None, gt=0, lt=1, description="m, a drawer: how far it opens.")
    level: int | None = Field(None, ge=0, description="A drawer: its level in a cabinet of several (0 lowest).")
    pull_direction: Vec3 | None = Field(None, description="A drawer: the direction it opens along (default "
                                        "config/franka.yaml's drawer.pull_direction).")
    handle_position: Vec3 | None = Field(None, description="m, a drawer: its handle (default in front of it).")


def _entity_name(name: str) -> str:
    if not name or not set(name) <= _NAME_CHARS or name == "gripper":
        raise ValueError(f"'name' must be a lowercase identifier (a-z, 0-9, _), got {name!r}")
    return name


class PlaceModel(ConfigModel):
    """Somewhere objects can be: a surface or a container."""

    name: str = Field(description="A lowercase identifier (a-z, 0-9, _).")
    kind: Literal[PLACE_KINDS] = Field("surface", description="What it is.")
    open: bool | None = Field(None, description="Whether it is open at the start (default: true but for drawers).")
    capacity: int | None = Field(None, ge=0, description="How many objects it holds (none: no limit).")
    reachable: bool = Field(True, description="Whether the arm can reach it.")
    geometry: Geometry = Field(Geometry(), description="Its pose and size.")

    _name = field_validator("name")(_entity_name)


class ObjectModel(ConfigModel):
    """A movable object and where it starts."""

    name: str = Field(description="A lowercase identifier (a-z, 0-9, _).")
    category: str | None = Field(None, max_length=64, description="What kind of thing it is (default its name).")
    at: str = Field(description="The place it starts in or on.")
    graspable: bool = Field(True, description="Whether the gripper can grasp it.")
    pushable: bool = Field(True, description="Whether it can be pushed.")
    reachable: bool = Field(True, description="Whether the arm can reach it.")
    geometry: Geometry = Field(Geometry(), description="Its shape, pose, mass and colour.")

    _name = field_validator("name")(_entity_name)

    @model_validator(mode="before")
    @classmethod
    def _bare_on(cls, raw: Any) -> Any:
        if isinstance(raw, dict) and (True in raw or "on" in raw or "in" in raw):
            raise ValueError("use 'at: <place>' (YAML reads a bare 'on' as true)")
        return raw


class SceneFile(ConfigModel):
    """A scene (``config/scenes/*.yaml``): the initial world state of a task."""

    name: str = Field("", description="The scene's name.")
    description: str = Field("", description="What is where, in a sentence.")
    places: list[PlaceModel] = Field([], description="Surfaces and containers.")
    objects: list[ObjectModel] = Field([], description="Movable objects.")
    locations: list[str] = Field(["home"], description="Named poses move_to may target (home is always one).")


def scene_from_dict(data: Any, source: str = "<scene>") -> WorldState:
    scene = validate(SceneFile, data, source, SceneError)
    world = WorldState()
    for i, raw in enumerate(scene.places):
        if raw.name in world.places:
            raise SceneError(f"{source}: places[{i}]: duplicate name '{raw.name}'")
        world.places[raw.name] = Place(
            name=raw.name, kind=raw.kind, is_open=raw.kind != "drawer" if raw.open is None else raw.open,
            capacity=raw.capacity, reachable=raw.reachable, geometry=raw.geometry.model_dump(exclude_none=True))
    for i, raw in enumerate(scene.objects):
        where = f"{source}: objects[{i}]"
        if raw.name in world.objects or raw.name in world.places:
            raise SceneError(f"{where}: duplicate name '{raw.name}'")
        if raw.at not in world.places:
            raise SceneError(f"{where}: '{raw.name}' is at unknown place {raw.at!r}")
        world.objects[raw.name] = ObjectState(
            name=raw.name, category=raw.name if raw.category is None else raw.category, location=raw.at,
            graspable=raw.graspable, pushable=raw.pushable, reachable=raw.reachable,
            geometry=raw.geometry.model_dump(exclude_none=True))
    for place in world.places.values():
        if place.capacity is not None and len(world.contents(place.name)) > place.capacity:
            raise SceneError(f"{source}: {place.name} holds more objects than its capacity")
    world.locations = list(dict.fromkeys(["home", *scene.locations]))
    return world


def load_scene(path: str | Path) -> WorldState:
    return scene_from_dict(read_yaml(path, SceneError), source=str(path))
