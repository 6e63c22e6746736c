"""The meaning mistakes ``extra_object`` and ``swapped_object`` (issue 36): each moves an object the words never
refer to, on every suite and every scene; the expert states and carries the reading out; a run that moves what
nobody asked for counts as wrong SUCCEEDED; the report counts per phenomenon, per kind, with and without
confirmation, and the phrases the resolver could not read."""

from __future__ import annotations

import json
import random
import re
from types import SimpleNamespace

import pytest
from conftest import bench_config

from step_planner.bench.cli import _mistakes, main_bench
from step_planner.bench.goals import parse_goal, satisfied
from step_planner.bench.metrics import meaning_mistakes, wrong_succeeded
from step_planner.bench.mistakes import (
    MEANING_KINDS,
    extra_object_reading,
    meaning_readings,
    swapped_object_reading,
)
from step_planner.bench.referents import referred_objects, task_referred
from step_planner.bench.report import markdown
from step_planner.bench.runner import (
    RunRecord,
    in_process_expert,
    moved_unasked,
    new_expert,
    run_one,
    unresolved_phrases,
)
from step_planner.bench.tasks import load_suite
from step_planner.bench.wordings import SceneWords, load_lexicon
from step_planner.domain.world import ObjectState, Place, WorldState
from step_planner.execution.symbolic import SymbolicExecutor
from step_planner.planner.result import GoalError, GoalResult

SUITES = ("table3", "long_horizon", "paraphrase", "wordings")
LEXICON = load_lexicon()


@pytest.fixture(scope="module")
def suites():
    return {name: load_suite(name) for name in SUITES}


def _stated(task):
    """What the expert is told it can state first (as ``new_expert`` registers it)."""
    return parse_goal(list(task.provisional_goal)) if task.provisional_goal else task.stated_goal


def _readings(task, seed=0):
    return meaning_readings(task.instruction, task.goal, _stated(task), task.candidates,
                            set(task.hidden_goal_objects), world=task.world, referred=task_referred(task),
                            rng=random.Random(seed))


def _said_about(task, obj) -> list[str]:
    """Words of the instruction (or the answer) that name ``obj``, read with the wordings generator's own words
    (its noun, plural and group) and the words of its name: an independent check of 'never referred to'."""
    words = SceneWords(task.scene, task.world, LEXICON)
    said = set(re.findall(r"[a-z0-9]+", f"{task.instruction} {task.answer}".lower()))
    noun = words.noun(obj)
    names = {noun, words.plural(noun), words.group_of(obj), *obj.split("_")} - {""} - set(LEXICON["colours"])
    return sorted(names & said)


def _denoted(task) -> set[str]:
    return {n for _, names in task.denotes for n in names} | set(task.candidates) | {task.answer_means} - {""}


def _check_unreferenced(task, obj):
    assert obj not in {o for a in task.goal for o in a.objects}, (task.id, obj)
    assert obj not in _denoted(task), (task.id, obj)
    assert task.world.is_visible(obj) and task.world.objects[obj].graspable, (task.id, obj)
    assert not _said_about(task, obj), (task.id, obj, _said_about(task, obj))


@pytest.mark.parametrize("suite", SUITES)
def test_extra_object_adds_one_fact_moving_an_object_the_words_never_refer_to(suites, suite):
    tasks = suites[suite]
    held = 0
    for task in tasks:
        reading = _readings(task).get("extra_object")
        if reading is None:
            continue
        held += 1
        assert reading.goal[:-1] == task.goal, task.id  # the task's goal, and one more fact
        extra = reading.goal[-1]
        assert extra.predicate in ("in", "on") and not extra.negated, (task.id, extra)
        obj, place = extra.args
        _check_unreferenced(task, obj)
        assert place in {a.args[1] for a in task.goal if a.predicate in ("in", "on", "at") and not a.negated}
        assert task.world.objects[obj].location != place
        if _stated(task):
            assert reading.stated == (*_stated(task), extra), task.id
        assert not task.provisional_goal, task.id  # "the thing in the drawer": no goal to add to before the look
    assert held >= len(tasks) // 4, f"{suite}: the reading applies to {held} of {len(tasks)} tasks"


@pytest.mark.parametrize("suite", SUITES)
def test_swapped_object_replaces_a_named_object_by_one_of_another_kind_the_words_never_refer_to(suites, suite):
    tasks = suites[suite]
    held = 0
    for task in tasks:
        reading = _readings(task).get("swapped_object")
        if reading is None:
            continue
        held += 1
        assert len(reading.goal) == len(task.goal), task.id
        pairs = {(x, y) for a, b in zip(task.goal, reading.goal, strict=True) for x, y in zip(a.args, b.args,
                                                                                               strict=True) if x != y}
        assert len(pairs) == 1, (task.id, pairs)  # one object swapped, everywhere it appears
        (named, other), = pairs
        assert all((a.predicate, a.negated) == (b.predicate, b.negated)
                   for a, b in zip(task.goal, reading.goal, strict=True))
        assert task.world.is_visible(named)
        assert task.world.objects[named].category != task.world.objects[other].category, (task.id, named, other)
        _check_unreferenced(task, other)
        assert not satisfied(reading.goal, task.world)
    assert held >= len(tasks) // 10, f"{suite}: the reading applies to {held} of {len(tasks)} tasks"


def test_both_readings_apply_in_every_scene_of_the_generated_suite(suites):
    scenes: dict[str, set[str]] = {}
    for task in suites["wordings"]:
        scenes.setdefault(task.scene, set()).update(k for k in _readings(task)
                                                    if k in ("extra_object", "swapped_object"))
    assert len(scenes) >= 9
    assert all(kinds == {"extra_object", "swapped_object"} for kinds in scenes.values()), scenes


def _world() -> WorldState:
    world = WorldState()
    for name, kind, capacity in (("table", "surface", None), ("tray", "tray", 4), ("bin", "bin", 1),
                                 ("drawer", "drawer", 3)):
        world.places[name] = Place(name=name, kind=kind, capacity=capacity, is_open=kind != "drawer")
    for name, category, at in (("tape", "tape roll", "table"), ("wrench", "wrench", "table"),
                               ("red_block", "block", "table"), ("blue_block", "block", "tray"),
                               ("pen", "pen", "drawer")):
        world.objects[name] = ObjectState(name=name, category=category, location=at)
    return world


def test_what_the_words_refer_to_on_a_made_world():
    world = _world()
    assert referred_objects("Put the tape in the bin.", world) == {"tape"}
    assert referred_objects("Put the blocks on the tray.", world) == {"red_block", "blue_block"}
    assert referred_objects("Put the tools in the bin.", world) == {"wrench"}  # a group word
    assert referred_objects("Put the wrnech in the bin.", world) == {"wrench"}  # a typo
    in_bin = parse_goal(["in(blue_block, bin)"])
    assert referred_objects("Put everything on the tray in the bin.", world, goal=in_bin) == {"blue_block"}
    # no place but where things go: everything
    assert referred_objects("Put everything in the bin.", world, goal=in_bin) == set(world.objects)
    assert referred_objects("Clear the table, the tape first.", world) == set(world.objects)
    pen = parse_goal(["on(pen, tray)"])
    assert referred_objects("Put the thing in the drawer on the tray.", world, goal=pen) == {"pen"}
    assert referred_objects("Of the blocks, put the red one on the tray.", world) >= {"red_block", "blue_block"}
    assert "pen" in referred_objects("Put the tape in the bin.", world, goal=parse_goal(["in(pen, bin)"]))


def test_readings_on_a_made_world_respect_room_and_kinds():
    world = _world()
    goal = parse_goal(["in(tape, bin)"])
    referred = referred_objects("Put the tape in the bin.", world, goal=goal)
    # the bin holds one thing: the tape fills it, so nothing more fits there
    assert extra_object_reading(goal, (), world, referred) is None
    tray_goal = parse_goal(["in(tape, tray)"])
    extra = extra_object_reading(tray_goal, (), world, referred)
    assert extra is not None and extra.goal[0] == tray_goal[0] and extra.goal[1].args[1] == "tray"
    assert extra.goal[1].args[0] in {"wrench", "red_block"}  # visible, not referred to, not already on the tray
    swapped = swapped_object_reading(goal, (), world, referred, random.Random(1))
    assert swapped is not None and swapped.goal[0].args == (swapped.goal[0].args[0], "bin")
    assert swapped.goal[0].args[0] in {"wrench", "red_block"}  # the pen is hidden in the closed drawer
    block = parse_goal(["in(red_block, tray)"])
    # the blue block is of the same kind and the words refer to it; wrench and tape are of another kind
    found = {swapped_object_reading(block, (), world, referred_objects("Put the red block on the tray.", world,
                                                                       goal=block), random.Random(s)).goal[0].args[0]
             for s in range(20)}
    assert found == {"tape", "wrench"}
    # without a world (the old call) the new kinds do not apply: the existing kinds' readings are unchanged
    assert set(meaning_readings("Put the tape in the tray.", tray_goal, (), ())) == set()


def test_the_kinds_are_meaning_kinds_drawn_once_per_run_and_opt_in(suites, library):
    assert {"extra_object", "swapped_object"} <= set(MEANING_KINDS)
    task = next(t for t in suites["table3"] if "extra_object" in _readings(t))
    assert not new_expert(library, task, 1.0, 0).misread  # the default (step) kinds: none
    assert not new_expert(library, task, 0.0, 0, mistakes=MEANING_KINDS).misread  # p = 0: none
    a, b = (new_expert(library, task, 1.0, 4, mistakes=("extra_object",)) for _ in range(2))
    assert [i.kind for i in a.injections] == [i.kind for i in b.injections] == ["extra_object"]
    assert a.goals == b.goals and len(next(iter(a.goals.values()))) == len(task.goal) + 1
    three = new_expert(library, task, 1.0, 4, mistakes=("narrow_group", "wrong_referent", "adjective_name"))
    assert all(i.kind not in ("extra_object", "swapped_object") for i in three.injections)


def _run(task, library, kind, confirm=False):
    make = in_process_expert(library, "mixed", (kind,))
    return run_one(task, "grounded", 1.0, 0, library=library, config=bench_config(), make_llm=make,
                   make_executor=lambda lib, world: SymbolicExecutor(lib, world), confirm_goal=confirm)


def test_the_expert_carries_an_extra_object_out_and_it_counts_as_wrong_succeeded(suites, library):
    """One task per wordings scene: the expert states the goal with the extra fact and carries it out; whatever
    the planner reports, the object moved is recorded, and a SUCCEEDED is a wrong one. With confirmation the
    person corrects the goal and nothing unasked moves."""
    seen: set[str] = set()
    for task in suites["wordings"]:
        if task.scene in seen or (reading := _readings(task).get("extra_object")) is None:
            continue
        seen.add(task.scene)
        record = _run(task, library, "extra_object")
        assert record.reading == "extra_object", task.id
        obj = new_expert(library, task, 1.0, 0, mistakes=("extra_object",)).misread
        extra = next(iter(obj.values())).goal[-1]
        assert record.claimed_success or record.goal_rejections, (task.id, record.message)  # carried out or refused
        if record.claimed_success:  # today's checks let it through: the object was moved, and it is counted
            assert record.moved_unasked == [extra.args[0]] and record.goal_holds and not record.success, task.id
            assert wrong_succeeded(record)
        confirmed = _run(task, library, "extra_object", confirm=True)
        assert not confirmed.moved_unasked and not wrong_succeeded(confirmed), task.id
        # the person corrects the goal at confirmation, or the checks refuse it before it reaches the person
        assert (confirmed.success and confirmed.goal_corrections >= 1) or confirmed.goal_rejections, task.id
        del reading
    assert len(seen) >= 9


def test_a_swapped_goal_is_held_and_never_a_wrong_succeeded_with_confirmation(suites, library):
    tasks = [t for t in suites["table3"] if "swapped_object" in _readings(t)][:3]
    for task in tasks:
        expert = new_expert(library, task, 1.0, 0, mistakes=("swapped_object",))
        reading = next(iter(expert.misread.values()))
        assert reading.kind == "swapped_object" and expert.goals[next(iter(expert.goals))] == reading.goal
        record = _run(task, library, "swapped_object")
        assert record.reading == "swapped_object"
        assert wrong_succeeded(record) == record.claimed_success  # the task's goal cannot hold: the named one stays
        confirmed = _run(task, library, "swapped_object", confirm=True)
        # the person corrects what reaches them; a goal grounding refuses first never does
        assert not wrong_succeeded(confirmed), task.id
        assert (confirmed.success and not confirmed.moved_unasked) or confirmed.goal_rejections, task.id


# ---- judging and counting ----------------------------------------------------------------------------
def _rec(**kw) -> RunRecord:
    base = dict(task_id="t", category="short_simple", planner="grounded", noise=1.0, seed=0, success=True,
                claimed_success=True, verified=True, error="NONE", message="", subgoals_reached=1, subgoals_total=1,
                primitives=2, primitives_ok=2, optimal=2, llm_calls=2, prompt_tokens=10, completion_tokens=5,
                max_prompt_tokens=5)
    base.update(kw)
    return RunRecord(**base)


def test_moved_unasked_is_what_the_goal_does_not_move_and_ended_elsewhere():
    world = _world()
    task = SimpleNamespace(goal=parse_goal(["in(tape, tray)"]), world=world)
    final = world.copy()
    final.objects["tape"].location = "tray"
    assert moved_unasked(task, final) == []
    final.objects["wrench"].location = "tray"
    del final.objects["pen"]  # not shown (in a closed drawer): not judged
    assert moved_unasked(task, final) == ["wrench"]


def test_wrong_succeeded_counts_a_goal_not_holding_or_something_moved_nobody_asked_for():
    assert not wrong_succeeded(_rec())
    assert wrong_succeeded(_rec(success=False))
    assert wrong_succeeded(_rec(moved_unasked=["wrench"]))
    assert not wrong_succeeded(_rec(claimed_success=False, success=False, moved_unasked=["wrench"]))


def test_the_report_counts_per_phenomenon_kind_confirmation_and_unresolved_phrases():
    records = [
        _rec(phenomenon="exception", reading="extra_object", moved_unasked=["wrench"], success=False,
             goal_holds=True),  # wrong, goal holds (a failure: something nobody asked for moved)
        _rec(phenomenon="exception", reading="narrow_group", success=False),  # wrong
        _rec(phenomenon="side", reading="swapped_object", claimed_success=False, success=False),  # refused
        _rec(phenomenon="side", reading="", unresolved_phrases=["the bench"]),  # right, one unresolved phrase
        _rec(phenomenon="group", reading="swapped_object", success=False, unresolved_phrases=["the bench", "x"]),
        _rec(phenomenon="exception", reading="extra_object", confirm_goal=True),  # corrected: right
        _rec(phenomenon="side", reading="narrow_group", confirm_goal=True, success=False),  # wrong even so
    ]
    off, on = meaning_mistakes(records)
    assert (off["confirm_goal"], on["confirm_goal"]) == (False, True)
    assert off["runs"] == 5 and off["wrong_succeeded"] == 3 and off["wrong_succeeded_rate"] == pytest.approx(0.6)
    assert off["wrong_goal_holding"] == 1
    assert off["by_phenomenon"] == {"exception": {"runs": 2, "wrong_succeeded": 2, "moved_unasked": 1},
                                    "group": {"runs": 1, "wrong_succeeded": 1, "moved_unasked": 0},
                                    "side": {"runs": 2, "wrong_succeeded": 0, "moved_unasked": 0}}
    assert off["by_kind"] == {"extra_object": {"runs": 1, "wrong_succeeded": 1, "moved_unasked": 1},
                              "narrow_group": {"runs": 1, "wrong_succeeded": 1, "moved_unasked": 0},
                              "none": {"runs": 1, "wrong_succeeded": 0, "moved_unasked": 0},
                              "swapped_object": {"runs": 2, "wrong_succeeded": 1, "moved_unasked": 0}}
    assert (off["unresolved_phrases"], off["runs_with_unresolved"]) == (3, 2)
    assert (off["wrong_with_unresolved"], off["wrong_without_unresolved"]) == (1, 2)
    assert off["top_unresolved"][0] == ("the bench", 2)
    assert on["runs"] == 2 and on["wrong_succeeded"] == 1 and on["by_kind"]["extra_object"]["wrong_succeeded"] == 0

    rows = [{"planner": "grounded", "noise": 1.0, "category": "all", "runs": 7, "success_rate": 0.5,
             "subgoal_success_rate": 0.5, "false_done_rate": 0.0, "verified_rate": 1.0, "primitives_mean": 1,
             "optimal_mean": 1, "llm_calls_mean": 1, "llm_calls_per_primitive": 1, "prompt_tokens_mean": 1,
             "prompt_tokens_per_primitive": 1, "max_prompt_tokens_mean": 1, "max_prompt_tokens_max": 1,
             "prompt_growth": 1, "planner_time_ms_mean": 1, "failure_types": {}, "mistakes_in_failed_runs": {},
             "mistakes_injected": {}}]
    meta = {"suite": "s", "tasks": 7, "planners": ["grounded"], "answer_source": "x", "command": "c", "runs": 7,
            "wall_s": 1.0, "seeds": 1, "backend": "symbolic", "tokenizer": "t", "mistakes": list(MEANING_KINDS)}
    text = markdown(rows, meta, [], [off, on])
    assert "## Wrong SUCCEEDED by meaning mistake" in text
    assert "| grounded | 1 | off | 5 | 3 (60%) | 1 | 3 | 2 | 1 / 2 |" in text
    assert "| grounded | 1 | off | swapped_object | 2 | 1 | 0 |" in text
    assert "| grounded | 1 | on | side | 1 | 1 |" in text
    assert "| grounded | 1 | off | 2 | the bench |" in text
    assert "## Wrong SUCCEEDED by meaning mistake" not in markdown(rows, {**meta, "mistakes": "step"}, [],
                                                                    meaning_mistakes([_rec()]))


def test_unresolved_phrases_are_read_from_whatever_the_planner_exposes():
    plain = GoalResult(True, GoalError.NONE, "")
    assert unresolved_phrases(plain) == []
    assert unresolved_phrases(GoalResult(True, GoalError.NONE, "", unresolved_phrases=["the bench"])) == ["the bench"]
    assert unresolved_phrases(SimpleNamespace(unresolved=2, tree={})) == ["?", "?"]
    assert unresolved_phrases(SimpleNamespace(unresolved=[{"said": "tidy"}], tree={})) == ["tidy"]
    tree = {"readings": [{"said": "the blue block", "resolved": ["b"], "from": "your answer"},
                         {"said": "the bench", "resolved": ["rag"], "from": "the model's reading: the resolver "
                          "could not read it"},
                         {"said": "the mess", "resolved": [], "unresolved": True}]}
    assert unresolved_phrases(GoalResult(True, GoalError.NONE, "", tree=tree)) == ["the bench", "the mess"]
    assert GoalResult(True, GoalError.NONE, "").to_dict()["unresolved_phrases"] == []


# ---- the CLI -------------------------------------------------------------------------------------------
def test_the_cli_accepts_the_new_kinds_alone_and_in_the_meaning_group(tmp_path, suites):
    assert _mistakes("extra_object,swapped_object") == ("extra_object", "swapped_object")
    assert {"extra_object", "swapped_object"} <= set(_mistakes("meaning"))
    ids = [t.id for t in suites["table3"] if "extra_object" in _readings(t)][:2]
    out = tmp_path / "b"
    assert main_bench(["--suite", "table3", "--tasks", ",".join(ids), "--planners", "grounded", "--noise", "1",
                       "--mistakes", "extra_object", "--backend", "symbolic", "--quiet", "--out", str(out)]) == 0
    data = json.loads((out / "results.json").read_text())
    assert data["meta"]["mistakes"] == ["extra_object"]
    assert data["meaning"][0]["by_kind"]["extra_object"]["runs"] == 2
    assert all(r["reading"] == "extra_object" for r in data["runs"])
    assert "## Wrong SUCCEEDED by meaning mistake" in (out / "summary.md").read_text()
