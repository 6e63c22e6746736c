"""The bench counts what the person sees (issue 43): a run that moved an object nobody asked for fails whatever its
formal goal says, and the report lists it; the meaning mistakes ``wrong_place`` (the goal's place swapped for one the
words never name) and ``kept_exception`` (the excepted thing moved too)."""

from __future__ import annotations

import json
import random

import pytest
from conftest import bench_config

from step_planner.bench import runner as runner_module
from step_planner.bench.cli import _mistakes, main_bench
from step_planner.bench.goals import parse_goal
from step_planner.bench.metrics import meaning_mistakes, unasked_runs, wrong_succeeded
from step_planner.bench.mistakes import (
    MEANING_KINDS,
    excepted_objects,
    kept_exception_reading,
    meaning_readings,
    wrong_place_reading,
)
from step_planner.bench.referents import places_named, task_referred, words_of
from step_planner.bench.report import markdown, unasked_section
from step_planner.bench.runner import in_process_expert, new_expert, person_sees_success, run_one
from step_planner.bench.tasks import load_suite
from step_planner.domain.primitives import PrimitiveCall
from step_planner.domain.world import ObjectState, Place, WorldState
from step_planner.execution.symbolic import SymbolicExecutor
from step_planner.planner.result import GoalError, GoalResult


@pytest.fixture(scope="module")
def suites():
    return {name: load_suite(name) for name in ("table3", "wordings", "wordings_outside")}


def _world() -> WorldState:
    world = WorldState()
    for name, kind, capacity in (("table", "surface", None), ("tray", "tray", 4), ("bin", "bin", 3),
                                 ("box", "box", 3)):
        world.places[name] = Place(name=name, kind=kind, capacity=capacity)
    for name, category, at in (("tape", "tape roll", "table"), ("wrench", "wrench", "table"),
                               ("cup", "cup", "table"), ("red_block", "block", "tray")):
        world.objects[name] = ObjectState(name=name, category=category, location=at)
    return world


# ---- a run that moved something nobody asked for fails ---------------------------------------------------------
def test_a_goal_that_holds_with_something_else_moved_is_not_a_success():
    world = _world()
    task = type("T", (), {"goal": parse_goal(["in(tape, bin)"]), "world": world})()
    final = world.copy()
    final.objects["tape"].location = "bin"
    assert person_sees_success(task, final) == (True, True, [])
    final.objects["wrench"].location = "bin"
    assert person_sees_success(task, final) == (False, True, ["wrench"])


def test_run_one_fails_a_run_that_reported_success_after_moving_an_unasked_object(suites, library, monkeypatch):
    """The planner (stubbed) carries the goal out, moves one more object and reports SUCCEEDED: the record is a
    failure, its goal held, it is a wrong SUCCEEDED, and the report lists it."""
    task = next(t for t in suites["wordings"] if len(t.goal) == 1 and t.goal[0].predicate == "in"
                and not t.hidden_goal_objects and t.scene == "blocks_tray.yaml")
    obj, dest = task.goal[0].args
    other = next(o for o, s in task.world.objects.items()
                 if o != obj and s.location != dest and task.world.is_visible(o))

    def stub(planner, instruction, *, executor, **_):
        done = []
        for name in (obj, other):
            for call in (PrimitiveCall.make("pick", {"object": name}),
                         PrimitiveCall.make("place", {"object": name, "target": dest})):
                done.append((call, executor.execute(call)))
        return GoalResult(True, GoalError.NONE, "done", executed=done)

    monkeypatch.setattr(runner_module, "run_planner", stub)
    record = run_one(task, "grounded", 0.0, 0, library=library, config=bench_config(),
                     make_llm=in_process_expert(library, "mixed", ()),
                     make_executor=lambda lib, world: SymbolicExecutor(lib, world))
    assert record.claimed_success and record.goal_holds and record.moved_unasked == [other]
    assert not record.success and record.failure_type == "moved_unasked" and wrong_succeeded(record)
    listed = unasked_runs([record])
    assert listed == [{"task": task.id, "planner": "grounded", "noise": 0.0, "seed": 0, "confirm_goal": False,
                       "moved": [other], "reported_succeeded": True, "goal_holds": True, "reading": "",
                       "unresolved": []}]
    assert meaning_mistakes([record])[0]["wrong_goal_holding"] == 1
    text = "\n".join(unasked_section(listed))
    assert task.id in text and other in text
    meta = {"suite": "wordings", "tasks": 1, "answer_source": "x", "command": "c", "runs": 1, "wall_s": 0.0,
            "seeds": 1, "backend": "symbolic", "tokenizer": "t", "planners": ["grounded"]}
    from step_planner.bench.metrics import aggregate

    assert "## Runs that moved an object nobody asked for" in markdown(aggregate([record]), meta, None, None, listed)


# ---- wrong_place --------------------------------------------------------------------------------------------
def test_wrong_place_swaps_a_named_place_for_one_the_words_never_name():
    world = _world()
    goal = parse_goal(["in(tape, bin)", "in(wrench, bin)"])
    reading = wrong_place_reading("Put the tape and the wrench in the bin.", goal, (), world)
    places = {a.args[1] for a in reading.goal}
    assert reading.kind == "wrong_place" and len(places) == 1 and places != {"bin"}
    assert places.pop() not in places_named(world, set(words_of("Put the tape and the wrench in the bin.")))
    assert [a.args[0] for a in reading.goal] == ["tape", "wrench"]
    # a place implied, not named ("chuck it"): no place word decides it, so no swap is against the words
    assert wrong_place_reading("Chuck the tape.", parse_goal(["in(tape, bin)"]), (), world) is None
    # every other place is named: nothing to swap to
    assert wrong_place_reading("Put the tape in the bin, not the tray, the box or on the table.",
                               parse_goal(["in(tape, bin)"]), (), world) is None


def test_wrong_place_respects_room_and_swaps_the_stated_goal_too():
    world = _world()
    world.places["box"].capacity = 1
    goal = parse_goal(["in(tape, bin)", "in(wrench, bin)"])
    for seed in range(10):
        reading = wrong_place_reading("Put the tape and the wrench in the bin.", goal, goal, world,
                                      random.Random(seed))
        assert {a.args[1] for a in reading.goal} == {"tray"}  # the box has room for one, the table holds both
        assert reading.stated == reading.goal


# ---- kept_exception -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("words", ["Put everything on the table except the cup in the bin.",
                                   "Put everything on the table, bar the cup, in the bin.",
                                   "Save the cup, everything on the table goes in the bin.",
                                   "Leave the cup where it is; put everything else on the table in the bin."])
def test_kept_exception_moves_the_thing_the_words_leave_out(words):
    world = _world()
    goal = parse_goal(["in(tape, bin)", "in(wrench, bin)"])
    assert excepted_objects(words, goal, world) == ["cup"]
    reading = kept_exception_reading(words, goal, (), world)
    assert reading.kind == "kept_exception" and reading.goal == (*goal, *parse_goal(["in(cup, bin)"]))


def test_kept_exception_needs_an_exception_and_room():
    world = _world()
    goal = parse_goal(["in(tape, bin)", "in(wrench, bin)"])
    assert kept_exception_reading("Put the tape and the wrench in the bin.", goal, (), world) is None
    world.places["bin"].capacity = 2
    assert kept_exception_reading("Put everything on the table except the cup in the bin.", goal, (), world) is None


def test_both_kinds_apply_on_the_suites_and_are_meaning_kinds(suites, library):
    assert {"wrong_place", "kept_exception"} <= set(MEANING_KINDS) <= set(_mistakes("meaning"))
    counts = {"wrong_place": 0, "kept_exception": 0}
    for name in ("wordings", "wordings_outside"):
        for t in suites[name]:
            stated = parse_goal(list(t.provisional_goal)) if t.provisional_goal else t.stated_goal
            readings = meaning_readings(t.instruction, t.goal, stated, t.candidates, set(t.hidden_goal_objects),
                                        world=t.world, referred=task_referred(t), rng=random.Random(0))
            for kind in counts:
                counts[kind] += kind in readings
            if t.phenomenon in ("exception", "outside_exception") and "kept_exception" in readings:
                kept = readings["kept_exception"].goal[-1].args[0]
                assert kept not in {a.args[0] for a in t.goal} and kept in t.instruction.replace(" ", "_") or \
                    kept.replace("_", " ") in t.instruction, t.id
    assert counts["wrong_place"] >= 300 and counts["kept_exception"] >= 40, counts
    task = next(t for t in suites["table3"] if "wrong_place" in meaning_readings(
        t.instruction, t.goal, t.stated_goal, t.candidates, set(t.hidden_goal_objects), world=t.world,
        referred=task_referred(t)))
    expert = new_expert(library, task, 1.0, 0, mistakes=("wrong_place",))
    assert [i.kind for i in expert.injections] == ["wrong_place"]
    assert next(iter(expert.goals.values())) != task.goal


def test_the_cli_runs_the_new_kinds_and_reports_them(tmp_path, suites):
    ids = [t.id for t in suites["wordings"] if t.phenomenon == "exception"][:2]
    out = tmp_path / "b"
    assert main_bench(["--suite", "wordings", "--tasks", ",".join(ids), "--planners", "grounded", "--noise", "1",
                       "--mistakes", "kept_exception,wrong_place", "--backend", "symbolic", "--quiet",
                       "--out", str(out)]) == 0
    data = json.loads((out / "results.json").read_text())
    assert {r["reading"] for r in data["runs"]} <= {"kept_exception", "wrong_place"}
    assert all(r["reading"] for r in data["runs"])
    assert "moved_unasked_runs" in data
    for run in data["runs"]:
        assert not (run["success"] and run["moved_unasked"])  # what the person sees


def test_a_place_said_another_way_or_with_a_typo_counts_as_named():
    """wrong_place may only swap to a place the words never name: "the bench", "the countertop" name the table, "the
    bni" the bin, so none of them is offered as the place nobody named."""
    world = _world()
    said = set(words_of("Tidy the bench and put the tape in the bni; the crate gets the cup."))
    assert {"table", "bin", "box"} <= places_named(world, said)
    assert "table" in places_named(world, set(words_of("Take the cup off the countertop.")))
    assert "table" not in places_named(world, set(words_of("Put the tape on the work tray.")))  # not "work surface"
    goal = parse_goal(["in(tape, bin)"])
    reading = wrong_place_reading("Put the tape off the benchtop in the bin.", goal, (), world)
    assert reading is not None and reading.goal[0].args[1] not in {"bin", "table"}
