"""What the planner believes: the observation, plus where things it cannot see now were left.

An object the arm put into a drawer disappears from the observation when the drawer closes. The
planner still knows where it is, because its own primitive put it there and the last observation
before the drawer closed showed it inside. Conditions about such an object are judged from this
belief, and say so (:class:`JudgedFrom.BELIEF`); an object never seen is unknown, and a condition
naming it is not true yet (:class:`JudgedFrom.UNKNOWN`).

A belief ends when the world contradicts it: the drawer is opened and the object is not there. Whether
a container is empty is known only once its inside has been seen (a drawer never opened is unknown).
"""

from __future__ import annotations

from collections.abc import Iterable

from step_planner.domain.conditions import Condition, holds
from step_planner.domain.world import WorldState
from step_planner.planner.kinds import JudgedFrom


class Beliefs:
    """The believed world: an observed view with believed hidden objects added back."""

    def __init__(self, observed: WorldState | None = None) -> None:
        self.world = WorldState()
        self._observed: WorldState | None = None
        self.believed: set[str] = set()  # objects in ``world`` that are not observed now
        self.seen_inside: set[str] = set()  # containers whose contents have been observed
        self.first_seen_at: dict[str, str] = {}  # object -> where it was first observed (what a drawer held)
        if observed is not None:
            self.update(observed)

    def update(self, observed: WorldState) -> None:
        """Take a new observation (an observed view: nothing hidden in it; the beliefs keep it, uncopied)."""
        previous = self.world
        world = observed
        self._observed = None
        believed: set[str] = set()
        for name, obj in previous.objects.items():
            if name in world.objects:
                continue
            place = world.places.get(obj.location or "")
            if place is not None and place.openable and not place.is_open:  # went out of sight inside it
                world.objects[name] = obj
                believed.add(name)
        self.world = world
        self.believed = believed
        self.seen_inside |= {n for n, p in world.places.items() if p.is_container and p.is_open}
        for name, obj in world.objects.items():
            self.first_seen_at.setdefault(name, obj.location or "")

    @property
    def observed(self) -> WorldState:
        """The observed view (shared until the next update: do not modify it)."""
        if self._observed is None:
            view = self.world.copy()
            view.objects = {n: o for n, o in view.objects.items() if n not in self.believed}
            self._observed = view
        return self._observed

    def held_when_seen(self, container: str) -> list[str]:
        """What ``container`` held when it was first seen inside: the things first observed there."""
        return sorted(o for o, where in self.first_seen_at.items() if where == container)

    def knows(self, name: str) -> bool:
        return bool(self.world.entity_type(name))

    def judge(self, fact: Condition) -> tuple[bool, JudgedFrom]:
        """Whether a fact holds, and from what it was judged."""
        if any(o not in self.world.objects for o in fact.objects):
            return False, JudgedFrom.UNKNOWN
        if fact.predicate == "empty" and fact.args[0] not in self.seen_inside:
            return False, JudgedFrom.UNKNOWN
        if fact.predicate == "empty":
            place = self.world.places.get(fact.args[0])
            shut = place is not None and place.openable and not place.is_open  # seen empty before it closed
            if shut or any(o in self.believed for o in self.world.contents(fact.args[0])):
                return holds(fact, {}, self.world), JudgedFrom.BELIEF
        value = holds(fact, {}, self.world)
        source = JudgedFrom.BELIEF if any(o in self.believed for o in fact.objects) else JudgedFrom.OBSERVATION
        return value, source

    def unmet(self, facts: Iterable[Condition]) -> list[Condition]:
        return [f for f in facts if not self.judge(f)[0]]

    def describe_believed(self) -> str:
        """Prompt lines for believed objects ('' when there are none)."""
        lines = [f"object {name} [{self.world.objects[name].category or 'object'}]: "
                 f"{self.world.preposition(self.world.objects[name].location)} "
                 f"{self.world.objects[name].location} (not visible now; left there by an earlier action)"
                 for name in sorted(self.believed)]
        return "\n".join(lines)
