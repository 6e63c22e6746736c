"""Optimal primitive plans for goal atoms, over what the robot KNOWS (the scripted expert's brain).

Search is A* over a compact abstract state (who is held, where each relevant object is, which
drawers are open) with the pick / place / open_drawer / close_drawer transitions of
``config/primitives.yaml`` mirrored for speed. The heuristic counts the primitives no plan can
avoid (a pick and a place per misplaced object, an open per closed drawer that must be entered,
a close per drawer that must end closed); no primitive lowers it by more than one, so it is
consistent and the first plan found is a shortest one, and with it a 40-primitive plan takes
milliseconds where breadth-first search ran out at 12. Every returned plan is replayed through
the domain's own ``check_call`` / ``apply_call`` so a drift between the two is a loud error, not
a silently wrong benchmark.

Knowledge model: the planner sees only the observed world plus what it believes (objects it put
into a drawer that is now closed). An object named by the goal but not seen is assumed to be in
a closed drawer not yet searched — the plan opens that drawer first, like a person looking for
it; after the drawer is opened the caller plans again with the new observation.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import count

from step_planner.bench.goals import Atom, satisfied
from step_planner.domain.primitives import PrimitiveCall, PrimitiveLibrary
from step_planner.domain.transitions import apply_call, check_call
from step_planner.domain.world import GRIPPER, ObjectState, WorldState

MAX_PLAN = 80  # longest plan searched for (the long-horizon suite needs up to 40)
MAX_EXPANSIONS = 50_000  # states expanded before the search gives up (a goal that cannot be met)


class PlanningError(RuntimeError):
    """No plan exists within the search bound, or a plan does not replay in the domain."""


@dataclass(frozen=True)
class _State:
    held: str | None
    locs: tuple[tuple[str, str], ...]  # (object, place or "gripper"), sorted
    opened: frozenset[str]


@dataclass(frozen=True)
class _Wants:
    """What the goal asks of one object: be at ``target`` (a place or the gripper), not be at ``avoid``."""

    target: str | None
    avoid: frozenset[str]

    def met(self, loc: str) -> bool:
        return (self.target is None or loc == self.target) and loc not in self.avoid


class _Space:
    """Static facts of one search: places, drawers, which objects may move, what the goal wants."""

    def __init__(self, world: WorldState, movable: Iterable[str], goal: tuple[Atom, ...]) -> None:
        self.places = {n: p for n, p in world.places.items()}
        self.drawers = [n for n, p in world.places.items() if p.openable]
        self.movable = sorted(set(movable))
        self.objects = world.objects
        self.goal = goal
        self.fixed_counts: dict[str, int] = {}
        for obj in world.objects.values():
            if obj.name not in self.movable and obj.location in self.places:
                self.fixed_counts[obj.location] = self.fixed_counts.get(obj.location, 0) + 1
        self.wants = self._object_wants(goal)
        self.want_open = {a.args[0] for a in goal if a.predicate in ("open", "closed")
                          and (a.predicate == "open") != a.negated}
        self.want_closed = {a.args[0] for a in goal if a.predicate in ("open", "closed")
                            and (a.predicate == "closed") != a.negated}
        self.want_empty = any(a.predicate == "gripper_empty" and not a.negated for a in goal)
        # whether some object may still be in the hand at the end (then one "take it out of
        # there" needs no place)
        self.may_end_holding = not self.want_empty and all(w.target != GRIPPER for w in self.wants.values())

    @staticmethod
    def _object_wants(goal: tuple[Atom, ...]) -> dict[str, _Wants]:
        target: dict[str, str] = {}
        avoid: dict[str, set[str]] = {}
        for a in goal:
            if a.predicate in ("at", "in", "on", "holding"):
                where = GRIPPER if a.predicate == "holding" else a.args[1]
                if a.negated:
                    avoid.setdefault(a.args[0], set()).add(where)
                else:
                    target[a.args[0]] = where
        return {o: _Wants(target.get(o), frozenset(avoid.get(o, ()))) for o in {*target, *avoid}}

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

    def estimate(self, state: _State) -> int:
        """Primitives every plan from ``state`` still needs (a consistent lower bound)."""
        cost = 0
        away = 0  # objects that must only leave where they are: a pick, and a place unless it ends in the hand
        enter: set[str] = set()  # drawers some pick or place must reach into
        for obj, loc in state.locs:
            wants = self.wants.get(obj)
            if wants is None or wants.met(loc):
                continue
            if loc == GRIPPER:
                cost += 1  # a place (a held object only misses a place target)
            elif wants.target is None:
                away += 1
                enter.add(loc)
            elif wants.target == GRIPPER:
                cost += 1  # a pick satisfies it
                enter.add(loc)
            else:
                cost += 2
                enter.add(loc)
            if wants.target in self.places:
                enter.add(wants.target)
        cost += 2 * away - (away > 0 and self.may_end_holding and self._one_may_stay(state))
        held = state.held
        if held is not None and (held not in self.wants or self.wants[held].met(GRIPPER)) and (self.want_empty or cost):
            cost += 1  # the held object must go down first
        for d in self.drawers:
            must_open = d not in state.opened and (d in enter or d in self.want_open)
            cost += must_open + (d in self.want_closed and (must_open or d in state.opened))
        return cost

    def _one_may_stay(self, state: _State) -> bool:
        """Whether some object that only has to leave its place could leave last, picked and never
        put down: its place must hold it until then, with everything else that arrives there
        (a full tray makes the block of the wrong colour go down elsewhere first)."""
        locs = dict(state.locs)
        for obj, loc in state.locs:
            wants = self.wants.get(obj)
            if wants is None or wants.target is not None or wants.met(loc) or loc not in self.places:
                continue
            capacity = self.places[loc].capacity
            if capacity is None:
                return True
            here = [o for o, at in state.locs if at == loc]
            leaving = sum(1 for o in here if o in self.wants and not self.wants[o].met(loc))
            arriving = sum(1 for o, w in self.wants.items() if w.target == loc and locs.get(o) != loc)
            if self.fixed_counts.get(loc, 0) + len(here) - (leaving - 1) + arriving <= capacity:
                return True
        return False

    def capacity_problem(self) -> str | None:
        """A place the goal sends more objects to than it holds (no search could succeed)."""
        sent: dict[str, int] = {}
        for wants in self.wants.values():
            if wants.target in self.places:
                sent[wants.target] = sent.get(wants.target, 0) + 1
        for place, n in sent.items():
            capacity = self.places[place].capacity
            if capacity is not None and n + self.fixed_counts.get(place, 0) > capacity:
                return f"{place} holds {capacity} objects; the goal puts {n} more there"
        return None


def _search(world: WorldState, goal: tuple[Atom, ...], max_len: int) -> list[PrimitiveCall] | None:
    movable = {o for atom in goal for o in atom.objects if o in world.objects}
    if world.held:
        movable.add(world.held)
    space = _Space(world, movable, goal)
    start = space.start(world)
    if all(space.holds(a, start) for a in goal):
        return []
    if problem := space.capacity_problem():
        raise PlanningError(problem)
    parents: dict[_State, tuple[_State, PrimitiveCall] | None] = {start: None}
    best = {start: 0}
    tie = count()  # among equal f, deeper first, then in successor order (deterministic plans)
    frontier = [(space.estimate(start), 0, next(tie), start)]
    expanded = 0
    while frontier:
        _, neg_g, _, state = heapq.heappop(frontier)
        depth = -neg_g
        if depth > best[state]:
            continue  # a stale entry: reached more cheaply since
        if all(space.holds(a, state) for a in goal):
            plan = []
            cur = state
            while (link := parents[cur]) is not None:
                cur, step = link
                plan.append(step)
            return plan[::-1]
        expanded += 1
        if expanded > MAX_EXPANSIONS:
            raise PlanningError(f"search gave up after {MAX_EXPANSIONS} states for {', '.join(map(str, goal))}")
        for call, nxt in space.successors(state):
            g = depth + 1
            if g >= best.get(nxt, max_len + 1):
                continue
            f = g + space.estimate(nxt)
            if f > max_len:
                continue
            best[nxt] = g
            parents[nxt] = (state, call)
            heapq.heappush(frontier, (f, -g, next(tie), nxt))
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
    """Drawers an instruction names (``bottom drawer`` / ``bottom_drawer``, typos read as a model would:
    ``botom drawer``): where to look first."""
    from step_planner.planner.grounding import spell_corrected

    lowered = f" {spell_corrected(text, world)} "
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
                 instruction: str = "", max_steps: int = MAX_PLAN,
                 timings: list[tuple[float, int]] | None = None) -> list[PrimitiveCall]:
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
        t0 = time.perf_counter()
        plan = knowledge_plan(library, observed, goal, beliefs, searched, preferred)
        if timings is not None:
            timings.append((time.perf_counter() - t0, len(plan)))
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
