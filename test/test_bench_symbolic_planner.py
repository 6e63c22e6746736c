"""The expert's A* planner: shortest plans (checked against breadth-first search on small goals),
long plans, and clear errors for goals no plan can meet."""

from __future__ import annotations

import random
from collections import deque
from pathlib import Path

import pytest

from step_planner.bench.goals import parse_goal, satisfied
from step_planner.bench.symbolic_planner import PlanningError, _Space, optimal_plan, replay
from step_planner.domain.scene import load_scene

SCENES = Path(__file__).resolve().parents[1] / "config" / "scenes"


def bfs_length(world, goal) -> int | None:
    """Shortest plan length by plain breadth-first search over the same transitions."""
    movable = {o for a in goal for o in a.objects if o in world.objects} | ({world.held} - {None})
    space = _Space(world, movable, goal)
    start = space.start(world)
    seen, frontier = {start}, deque([(start, 0)])
    while frontier:
        state, depth = frontier.popleft()
        if all(space.holds(a, state) for a in goal):
            return depth
        for _, nxt in space.successors(state):
            if nxt not in seen:
                seen.add(nxt)
                frontier.append((nxt, depth + 1))
    return None


def random_goal(world, rng: random.Random) -> list[str]:
    objects = sorted(world.objects)
    places = sorted(world.places)
    drawers = [p for p in places if world.places[p].openable]
    atoms = []
    for obj in rng.sample(objects, rng.randint(1, 3)):
        kind = rng.random()
        if kind < 0.7:
            atoms.append(f"at({obj}, {rng.choice(places)})")
        elif kind < 0.85:
            atoms.append(f"not at({obj}, {world.objects[obj].location})")
        else:
            atoms.append(f"holding({obj})")
    for d in rng.sample(drawers, min(len(drawers), rng.randint(0, 2))):
        atoms.append(f"{rng.choice(['open', 'closed'])}({d})")
    return atoms


@pytest.mark.parametrize("scene", ["supply_cabinet", "workshop_drawers", "colour_sort", "two_drawers"])
def test_a_star_plans_are_as_short_as_breadth_first_search(scene, library):
    """The heuristic must never overestimate: on random small goals (objects in closed drawers,
    full containers, negations, drawers to leave open or closed) A* finds BFS's length."""
    world = load_scene(SCENES / f"{scene}.yaml")
    rng = random.Random(scene)
    checked = 0
    for _ in range(40):
        goal = parse_goal(random_goal(world, rng))
        if sum(a.predicate == "holding" for a in goal) > 1 or satisfied(goal, world):
            continue
        shortest = bfs_length(world, goal)
        if shortest is None:
            with pytest.raises(PlanningError):
                optimal_plan(library, world, goal)
            continue
        plan = optimal_plan(library, world, goal)
        assert len(plan) == shortest, [str(a) for a in goal]
        assert satisfied(goal, replay(library, world, plan))
        checked += 1
    assert checked >= 25


def test_a_32_primitive_plan_is_found_and_replays(library):
    world = load_scene(SCENES / "colour_sort.yaml")
    goal = parse_goal([f"in({o}, {o.split('_')[0]}_tray)" for o in world.objects])
    plan = optimal_plan(library, world, goal)
    assert len(plan) == 2 * len(world.objects) == 32  # a pick and a place each: nothing shorter exists
    assert satisfied(goal, replay(library, world, plan))


def test_a_full_container_forces_the_stranger_out_first(library):
    world = load_scene(SCENES / "colour_sort.yaml")  # red_tray holds blue_block_4
    world.places["red_tray"].capacity = 4
    reds = [f"in(red_block_{i}, red_tray)" for i in (1, 2, 3, 4)]
    with pytest.raises(PlanningError, match="red_tray holds 4 objects"):
        optimal_plan(library, world, parse_goal(reds))  # blue_block_4 may not move: no room for four reds
    plan = optimal_plan(library, world, parse_goal([*reds, "not in(blue_block_4, red_tray)"]))
    assert len(plan) == 10
    moved = [str(c) for c in plan if "blue_block_4" in str(c)]
    assert moved[0] == "pick(object=blue_block_4)" and moved[1].startswith("place(object=blue_block_4")
