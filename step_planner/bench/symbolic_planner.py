"""Optimal primitive plans for goal atoms, over what the robot KNOWS (the scripted expert's brain).

Search is breadth-first over a compact abstract state (who is held, where each relevant object
is, which drawers are open) with the pick / place / open_drawer / close_drawer transitions of
``config/primitives.yaml`` mirrored for speed; every returned plan is then replayed through the
domain's own ``check_call`` / ``apply_call`` so a drift between the two is a loud error, not a
silently wrong benchmark.

Knowledge model: the planner sees only the observed world plus what it believes (objects it put
into a drawer that is now closed). An object named by the goal but not seen is assumed to be in
a closed drawer not yet searched — the plan opens that drawer first, like a person looking for
it; after the drawer is opened the caller plans again with the new observation.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

from step_planner.bench.goals import Atom, satisfied
from step_planner.domain.primitives import PrimitiveCall, PrimitiveLibrary
from step_planner.domain.validation import apply_call, check_call
from step_planner.domain.world import GRIPPER, ObjectState, WorldState

MAX_PLAN = 12


class PlanningError(RuntimeError):
    """No plan exists within the search bound, or a plan does not replay in the domain."""


@dataclass(frozen=True)
class _State:
    held: str | None
    locs: tuple[tuple[str, str], ...]  # (object, place or "gripper"), sorted
    opened: frozenset[str]


class _Space:
    """Static facts of one search: places, drawers, which objects may move."""

    def __init__(self, world: WorldState, movable: Iterable[str]) -> None:
        self.places = {n: p for n, p in world.places.items()}
        self.drawers = [n for n, p in world.places.items() if p.openable]
        self.movable = sorted(set(movable))
        self.objects = world.objects
        self.fixed_counts: dict[str, int] = {}
        for obj in world.objects.values():
            if obj.name not in self.movable and obj.location in self.places:
                self.fixed_counts[obj.location] = self.fixed_counts.get(obj.location, 0) + 1

    def start(self, world: WorldState) -> _State:
        locs = tuple(sorted((o, world.objects[o].location or "") for o in self.movable))
        opened = frozenset(d for d in self.drawers if world.places[d].is_open)
        return _State(world.held, locs, opened)

    def _visible(self, loc: str, opened: frozenset[str]) -> bool:
        place = self.places.get(loc)
        return loc == GRIPPER or place is None or not place.openable or loc in opened

    def _room(self, place: str, state: _State) -> bool:
        spec = self.places[place]
        if spec.openable and place not in state.opened:
            return False
        if spec.capacity is None:
            return True
        inside = self.fixed_counts.get(place, 0) + sum(1 for _, loc in state.locs if loc == place)
        return inside < spec.capacity

    def successors(self, state: _State) -> list[tuple[PrimitiveCall, _State]]:
        out: list[tuple[PrimitiveCall, _State]] = []
        locs = dict(state.locs)
        if state.held is None:
            for obj in self.movable:
                spec = self.objects[obj]
                if spec.graspable and spec.reachable and self._visible(locs[obj], state.opened):
                    new = dict(locs, **{obj: GRIPPER})
                    out.append((PrimitiveCall.make("pick", {"object": obj}),
                                _State(obj, tuple(sorted(new.items())), state.opened)))
            for d in self.drawers:
                if not self.places[d].reachable:
                    continue
                if d in state.opened:
                    out.append((PrimitiveCall.make("close_drawer", {"drawer": d}),
                                _State(None, state.locs, state.opened - {d})))
                else:
                    out.append((PrimitiveCall.make("open_drawer", {"drawer": d}),
                                _State(None, state.locs, state.opened | {d})))
        elif state.held in locs:
            for place, spec in self.places.items():
                if spec.reachable and self._room(place, state):
                    new = dict(locs, **{state.held: place})
                    out.append((PrimitiveCall.make("place", {"object": state.held, "target": place}),
                                _State(None, tuple(sorted(new.items())), state.opened)))
        return out

    def holds(self, atom: Atom, state: _State) -> bool:
        locs = dict(state.locs)
        p, a = atom.predicate, atom.args
        if p in ("at", "in", "on"):
            value = locs.get(a[0], self.objects[a[0]].location if a[0] in self.objects else None) == a[1]
        elif p == "holding":
            value = state.held == a[0]
        elif p == "gripper_empty":
            value = state.held is None
        elif p in ("open", "closed"):
            value = a[0] in self.drawers and ((a[0] in state.opened) == (p == "open"))
        else:  # pragma: no cover - parse_atom forbids it
            raise PlanningError(f"unknown goal predicate {p}")
        return value != atom.negated


def _search(world: WorldState, goal: tuple[Atom, ...], max_len: int) -> list[PrimitiveCall] | None:
    movable = {o for atom in goal for o in atom.objects if o in world.objects}
    if world.held:
        movable.add(world.held)
    space = _Space(world, movable)
    start = space.start(world)
    if all(space.holds(a, start) for a in goal):
        return []
    parents: dict[_State, tuple[_State, PrimitiveCall] | None] = {start: None}
    frontier = deque([(start, 0)])
    while frontier:
        state, depth = frontier.popleft()
        if depth >= max_len:
            continue
        for call, nxt in space.successors(state):
            if nxt in parents:
                continue
            parents[nxt] = (state, call)
            if all(space.holds(a, nxt) for a in goal):
                plan = []
                cur: _State = nxt
                while (link := parents[cur]) is not None:
                    cur, step = link
                    plan.append(step)
                return plan[::-1]
            frontier.append((nxt, depth + 1))
    return None


def replay(library: PrimitiveLibrary, world: WorldState, plan: list[PrimitiveCall]) -> WorldState:
    """Run ``plan`` through the domain's checks on a copy of ``world``; raise on the first refusal."""
    state = world.copy()
    for call in plan:
        problems = check_call(call, library, state)
        if problems:
            raise PlanningError(f"{call} does not replay: {'; '.join(map(str, problems))}")
        apply_call(call, library, state)
    return state


def optimal_plan(library: PrimitiveLibrary, world: WorldState, goal: tuple[Atom, ...],
                 max_len: int = MAX_PLAN) -> list[PrimitiveCall]:
    """Shortest plan to ``goal`` in a FULLY KNOWN ``world`` (hidden objects included)."""
    plan = _search(world, goal, max_len)
    if plan is None:
        raise PlanningError(f"no plan of at most {max_len} primitives reaches {', '.join(map(str, goal))}")
    final = replay(library, world, plan)
    if not satisfied(goal, final):
        raise PlanningError("the plan replays but does not reach the goal (search/domain drift)")
    return plan


# ---- the knowledge model ---------------------------------------------------------------------
def drawers_named(text: str, world: WorldState) -> list[str]:
    """Drawers an instruction names (``bottom drawer`` / ``bottom_drawer``): where to look first."""
    lowered = f" {text.lower().replace(',', ' ').replace('.', ' ')} "
    return [n for n, p in world.places.items()
            if p.openable and (f" {n} " in lowered or f" {n.replace('_', ' ')} " in lowered)]


def believed_world(observed: WorldState, goal: tuple[Atom, ...], beliefs: dict[str, str] | None = None,
                   searched: Iterable[str] = (), preferred: Iterable[str] = ()) -> WorldState:
    """The observed world plus believed and hypothesised positions of unseen goal objects.

    ``beliefs`` maps an unseen object to where the robot put it (a now-closed drawer). A goal
    object neither seen nor believed is hypothesised to be in the first closed drawer not yet
    ``searched`` (all closed drawers are candidates again when every one has been searched),
    trying the ``preferred`` drawers (named in the instruction) first.
    """
    world = observed.copy()
    for obj, place in (beliefs or {}).items():
        if obj not in world.objects and place in world.places:
            world.objects[obj] = ObjectState(name=obj, category=obj, location=place)
    closed = [n for n, p in world.places.items() if p.openable and not p.is_open]
    searched, preferred = set(searched), list(preferred)
    candidates = [d for d in closed if d not in searched] or closed
    candidates.sort(key=lambda d: preferred.index(d) if d in preferred else len(preferred))
    for atom in goal:
        for obj in atom.objects:
            if obj not in world.objects and candidates:
                world.objects[obj] = ObjectState(name=obj, category=obj, location=candidates[0])
    return world


def knowledge_plan(library: PrimitiveLibrary, observed: WorldState, goal: tuple[Atom, ...],
                   beliefs: dict[str, str] | None = None, searched: Iterable[str] = (),
                   preferred: Iterable[str] = (), max_len: int = MAX_PLAN) -> list[PrimitiveCall]:
    """The plan the robot would follow now, knowing only ``observed`` (+ beliefs, hypotheses)."""
    world = believed_world(observed, goal, beliefs, searched, preferred)
    unknown = [o for a in goal for o in a.objects if o not in world.objects]
    if unknown:
        raise PlanningError(f"{', '.join(unknown)} not seen and no closed drawer left to search")
    return optimal_plan(library, world, goal, max_len)


def solve_online(library: PrimitiveLibrary, truth: WorldState, goal: tuple[Atom, ...],
                 instruction: str = "", max_steps: int = 20) -> list[PrimitiveCall]:
    """What the knowledge-model expert executes: plan on the observation, run one step, repeat.

    The length of this sequence is a task's ``optimal`` primitive count: the fewest primitives
    for a robot that cannot see into closed drawers and searches them in scene order.
    """
    world = truth.copy()
    executed: list[PrimitiveCall] = []
    beliefs: dict[str, str] = {}
    searched: set[str] = set()
    preferred = drawers_named(instruction, truth)
    while not satisfied(goal, world):
        if len(executed) >= max_steps:
            raise PlanningError(f"no solution within {max_steps} primitives")
        observed = world.observed()
        plan = knowledge_plan(library, observed, goal, beliefs, searched, preferred)
        if not plan:
            raise PlanningError("the expert believes the goal holds but it does not")
        call = plan[0]
        problems = check_call(call, library, observed)
        if problems:
            raise PlanningError(f"{call} refused: {'; '.join(map(str, problems))}")
        apply_call(call, library, world)
        executed.append(call)
        if call.name == "open_drawer":
            searched.add(call.kwargs["drawer"])
        if call.name == "place" and world.places[call.kwargs["target"]].openable:
            beliefs[call.kwargs["object"]] = call.kwargs["target"]
    return executed
