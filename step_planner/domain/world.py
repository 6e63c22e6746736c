"""The symbolic world state the planner reasons over, and the observation text the LLM sees.

One :class:`WorldState` holds the truth (what a simulator or the scene file knows); its
:meth:`WorldState.observed` view drops what the robot cannot see — objects inside a closed
drawer — which is what the planner and the LLM receive (STEP's hidden objects).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

GRIPPER = "gripper"


def _clone(item: Any) -> Any:
    """A copy of an ObjectState or Place: its fields, and its geometry copied."""
    new = object.__new__(type(item))
    new.__dict__.update(item.__dict__)
    new.geometry = _copy_geometry(item.geometry)
    return new


def _copy_geometry(value: Any) -> Any:
    """Geometry is numbers, strings and small lists/dicts of them: copied without deepcopy's bookkeeping."""
    if isinstance(value, dict):
        return {k: _copy_geometry(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy_geometry(v) for v in value]
    return value


@dataclass
class ObjectState:
    """A movable object. ``location`` names the place it is on/in, or ``gripper`` when held."""

    name: str
    category: str = ""
    location: str | None = None
    graspable: bool = True
    pushable: bool = True
    reachable: bool = True
    geometry: dict[str, Any] = field(default_factory=dict)  # shape, size, pose, colour: for sims


@dataclass
class Place:
    """A surface or container objects can be on or in. Drawers are openable containers."""

    name: str
    kind: str = "surface"  # surface | drawer | tray | bin | box
    is_open: bool = True
    capacity: int | None = None
    reachable: bool = True
    geometry: dict[str, Any] = field(default_factory=dict)

    @property
    def openable(self) -> bool:
        return self.kind == "drawer"

    @property
    def is_container(self) -> bool:
        return self.kind != "surface"


@dataclass
class WorldState:
    objects: dict[str, ObjectState] = field(default_factory=dict)
    places: dict[str, Place] = field(default_factory=dict)
    locations: list[str] = field(default_factory=lambda: ["home"])
    held: str | None = None
    robot_at: str = "home"

    # ---- queries -------------------------------------------------------------------------
    def copy(self) -> WorldState:
        """An independent copy (the planner copies worlds on every decision: no deepcopy)."""
        return WorldState(objects={n: _clone(o) for n, o in self.objects.items()},
                          places={n: _clone(p) for n, p in self.places.items()},
                          locations=list(self.locations), held=self.held, robot_at=self.robot_at)

    def contents(self, place: str) -> list[str]:
        return [o.name for o in self.objects.values() if o.location == place]

    def is_visible(self, name: str) -> bool:
        if name in self.places or name in self.locations:
            return True
        obj = self.objects.get(name)
        if obj is None:
            return False
        seen: set[str] = set()
        loc = obj.location
        while loc is not None and loc not in seen:  # an object on a tray inside a drawer...
            seen.add(loc)
            place = self.places.get(loc)
            if place is None:
                return loc == GRIPPER
            if place.openable and not place.is_open:
                return False
            nested = self.objects.get(loc)
            loc = nested.location if nested else None
        return True

    def is_reachable(self, name: str) -> bool:
        if name in self.locations:
            return True
        entity = self.objects.get(name) or self.places.get(name)
        return bool(entity and entity.reachable)

    def has_room(self, place_name: str) -> bool:
        place = self.places.get(place_name)
        if place is None:
            return False
        if place.openable and not place.is_open:
            return False
        return place.capacity is None or len(self.contents(place_name)) < place.capacity

    def entity_type(self, name: str) -> set[str]:
        """The argument types a name satisfies (see ``ARG_TYPES``)."""
        types: set[str] = set()
        if name in self.objects:
            types |= {"object", "location"}
        if name in self.places:
            place = self.places[name]
            types |= {"place", "location", "container" if place.is_container else "surface"}
            if place.openable:
                types.add("drawer")
        if name in self.locations:
            types.add("location")
        return types

    def observed(self) -> WorldState:
        """What the robot can see: objects inside closed drawers are removed."""
        view = self.copy()
        view.objects = {n: o for n, o in view.objects.items() if self.is_visible(n)}
        return view

    # ---- effects -------------------------------------------------------------------------
    def apply(self, predicate: str, args: tuple[str, ...]) -> None:
        """Apply one effect term of a primitive (see ``config/primitives.yaml``)."""
        if predicate == "holding":
            self.held = args[0]
            self.objects[args[0]].location = GRIPPER
        elif predicate == "released":
            if self.held == args[0]:
                self.held = None
        elif predicate == "put":
            self.objects[args[0]].location = args[1]
        elif predicate in ("open", "closed"):
            self.places[args[0]].is_open = predicate == "open"
        elif predicate == "robot_at":
            self.robot_at = args[0]
        elif predicate == "pushed":
            obj = self.objects[args[0]]
            obj.geometry = {**obj.geometry, "pushed": args[1]}
        else:
            raise ValueError(f"{predicate} is not an effect")

    # ---- text and serialisation ------------------------------------------------------------
    def preposition(self, place: str | None) -> str:
        """How a fact places an object there: ``in`` a container (drawer, tray, bin, box), ``on`` a surface."""
        spec = self.places.get(place or "")
        if spec is None:
            return "at"
        return "in" if spec.is_container else "on"

    def describe(self) -> str:
        """The observation text shown to the LLM, one fact per line, visible things only.

        Call it on :meth:`observed` views; it never mentions hidden objects.
        """
        lines = [f"gripper: holding {self.held}" if self.held else "gripper: empty"]
        for place in self.places.values():
            state = ""
            if place.openable:
                state = " (open)" if place.is_open else " (closed, contents not visible)"
            inside = [o for o in self.contents(place.name) if self.is_visible(o)]
            rel = "contains" if place.is_container else "has on it"
            items = ", ".join(inside) if inside else "nothing"
            if place.openable and not place.is_open:
                lines.append(f"{place.name} [{place.kind}]{state}")
            else:
                lines.append(f"{place.name} [{place.kind}]{state}: {rel} {items}")
        for obj in self.objects.values():
            if not self.is_visible(obj.name):
                continue
            where = "in the gripper" if obj.location == GRIPPER else f"{self.preposition(obj.location)} {obj.location}"
            flags = "" if obj.reachable else " (out of reach)"
            lines.append(f"object {obj.name} [{obj.category or 'object'}]: {where}{flags}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "objects": {n: asdict(o) for n, o in self.objects.items()},
            "places": {n: asdict(p) for n, p in self.places.items()},
            "locations": list(self.locations),
            "held": self.held,
            "robot_at": self.robot_at,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WorldState:
        return cls(
            objects={n: ObjectState(**o) for n, o in data.get("objects", {}).items()},
            places={n: Place(**p) for n, p in data.get("places", {}).items()},
            locations=list(data.get("locations", ["home"])),
            held=data.get("held"),
            robot_at=data.get("robot_at", "home"),
        )
