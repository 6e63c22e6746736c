"""The generated wordings suite: current, wide, and its goals what its words denote in the scenes.

The denotation checks below re-derive what a phrase means from the scene files with their own small
reading of the phrase (not the generator's code): "the blocks on the table" is every object whose
category noun is *block* and whose location is ``table``.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
import yaml

from step_planner.bench.tasks import PHENOMENA, load_suite
from step_planner.bench.wordings import AMBIGUOUS, generate, load_lexicon, render
from step_planner.domain.scene import load_scene

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "config" / "tasks" / "wordings.yaml"
SCENES = sorted((ROOT / "config" / "scenes").glob("*.yaml"))


@pytest.fixture(scope="module")
def tasks():
    return load_suite("wordings")


def test_committed_suite_is_what_the_generator_writes():
    assert SUITE.read_text() == render(generate()), "re-run scripts/generate_wordings.py"


def test_generation_is_deterministic():
    assert generate() == generate()


def test_suite_is_wide(tasks):
    assert len(tasks) >= 400
    assert {t.scene for t in tasks} == {p.name for p in SCENES}
    assert set(PHENOMENA) | {"polite", "indirect"} == {t.phenomenon for t in tasks}
    per_phenomenon = Counter(t.phenomenon for t in tasks)
    assert min(per_phenomenon.values()) >= 5, per_phenomenon
    assert sum(1 for t in tasks if t.question) >= 30


def _noun(category: str, lex: dict) -> str:
    if category in lex["nouns"]:
        return lex["nouns"][category]
    return " ".join(w for w in category.split() if w not in lex["colours"])


def _plural_to_noun(lex: dict) -> dict[str, str]:
    table = {v: k for k, v in lex["plurals"].items()}
    return table


def _objects_of(phrase: str, world, lex: dict) -> list[str] | None:
    """The objects a quantified/plural/group/exception phrase means, read independently (None: not read)."""
    if phrase.startswith("the one "):
        return None  # a singular description: test_singular_descriptions_pick_out_exactly_the_goal_object
    places = {p.replace("_", " "): p for p in world.places}
    place_re = "|".join(sorted(map(re.escape, places), key=len, reverse=True))
    visible = [n for n in world.objects if world.is_visible(n)]
    plurals = _plural_to_noun(lex)

    def noun_of(word: str) -> str:
        return plurals.get(word, word[:-2] if word.endswith("xes") else word[:-1] if word.endswith("s") else word)

    if m := re.fullmatch(rf"(?:everything|whatever is|all the things) (?:on|in) the ({place_re})"
                         rf"(?: except the ([a-z ]+))?", phrase):
        out = [o for o in visible if world.objects[o].location == places[m.group(1)]]
        return [o for o in out if o != (m.group(2) or "").replace(" ", "_")]
    if m := re.fullmatch(rf"everything else (?:on|in) the ({place_re})", phrase):
        return None  # the exception is in the other sentence; checked by test_exceptions_leave_one_out
    colours = "|".join(lex["colours"])
    if m := re.fullmatch(rf"(?:all the |the |every |each |both |the two )(?:({colours}) )?([a-z ]+?)"
                         rf"(?: that (?:are|is|is sitting|is lying))? (?:on|in) the ({place_re})", phrase):
        colour, word, place = m.group(1), m.group(2), places[m.group(3)]
        if word in lex["groups"]:
            return [o for o in visible if world.objects[o].location == place
                    and world.objects[o].category in lex["groups"][word]]
        noun = noun_of(word)
        return [o for o in visible if world.objects[o].location == place
                and _noun(world.objects[o].category, lex) in (noun, word)
                and (colour is None or colour in o.split("_") or colour in world.objects[o].category.split())]
    if m := re.fullmatch(r"(?:all the |the )([a-z]+)", phrase):
        word = m.group(1)
        if word in lex["groups"]:
            return [o for o in world.objects if world.objects[o].category in lex["groups"][word]]
        noun = noun_of(word)
        found = [o for o in world.objects if _noun(world.objects[o].category, lex) == noun]
        return found if len(found) > 1 or phrase.startswith("all") else None
    return None


def test_plural_quantified_group_and_exception_phrases_denote_what_the_scene_says(tasks):
    lex = load_lexicon()
    checked = 0
    for t in tasks:
        if t.phenomenon not in ("quantifier", "plural", "group", "exception", "relative_clause", "the_one",
                                "colour", "pronoun"):
            continue
        for phrase, names in t.denotes:
            if phrase == "them":  # "The blocks on the table: put them in the box."
                phrase = t.instruction.split(":")[0]
            if phrase.startswith("the ones "):  # "the ones ..." refers to the noun before it
                noun = re.search(r"the ([a-z]+) ", t.instruction.split("the ones")[0]).group(1)
                phrase = phrase.replace("the ones ", f"the {noun} ", 1)
            expected = _objects_of(phrase.lower(), t.world, lex)
            if expected is None:
                continue
            checked += 1
            assert sorted(names) == sorted(expected), (t.id, phrase)
            goal_objects = {a.args[0] for a in t.goal}
            if len(t.denotes) == 1:
                assert goal_objects == set(expected), (t.id, t.instruction, t.goal)
    assert checked >= 90


def test_the_blocks_on_the_table_are_exactly_the_blocks_located_on_the_table(tasks):
    lex = load_lexicon()
    seen = 0
    for t in tasks:
        for phrase, names in t.denotes:
            if phrase in ("the blocks on the table", "all the blocks on the table"):
                seen += 1
                assert sorted(names) == sorted(o for o, s in t.world.objects.items()
                                               if s.location == "table" and _noun(s.category, lex) == "block")
    assert seen >= 3


def test_state_words_pick_out_the_one_place_in_that_state(tasks):
    seen = 0
    for t in tasks:
        for phrase, names in t.denotes:
            if m := re.fullmatch(r"the (open|closed|empty) ([a-z]+)", phrase):
                seen += 1
                state, kind = m.groups()
                places = {n: p for n, p in t.world.places.items() if p.kind == kind}

                def fits(n, state=state, places=places, world=t.world):
                    p = places[n]
                    if state == "empty":
                        return p.is_open and not world.contents(n)
                    return p.is_open == (state == "open")

                assert [n for n in places if fits(n)] == list(names), (t.id, phrase)
    assert seen >= 10


def test_exceptions_leave_one_out(tasks):
    for t in tasks:
        if t.phenomenon != "exception":
            continue
        m = re.search(r"(?:except|Leave) the ([a-z ]+?)(?: in| on| where|$| into)", t.instruction)
        assert m, t.instruction
        out = m.group(1).replace(" ", "_")
        where = re.search(r"(?:on|in) the ([a-z ]+?) (?:except|in|on)", t.instruction.split(";")[-1])
        assert out in t.world.objects and out not in {a.args[0] for a in t.goal}, t.id
        place = t.world.objects[out].location
        assert {a.args[0] for a in t.goal} == {o for o, s in t.world.objects.items()
                                              if s.location == place and o != out}, (t.id, where)


def test_singular_descriptions_pick_out_exactly_the_goal_object(tasks):
    """Relative clauses, places, sides, colours, "the one(s)": the phrase fits the goal object, and other
    things of its noun (the candidates) exist, so the description is what decides."""
    for t in tasks:
        if t.phenomenon not in ("relative_clause", "place", "side", "the_one", "colour") or len(t.goal) != 1:
            continue
        (phrase, names), = t.denotes
        obj = t.goal[0].args[0]
        assert names == (obj,), t.id
        if t.candidates:
            assert obj in t.candidates and len(t.candidates) >= 2, t.id
        if m := re.search(r"(?:that is|that is sitting|that is lying|from|one) (?:on |in )?the ([a-z ]+)$", phrase):
            assert t.world.objects[obj].location == m.group(1).replace(" ", "_"), (t.id, phrase)
            assert sum(1 for c in t.candidates if t.world.objects[c].location == t.world.objects[obj].location) == 1
        if side := re.search(r"\b(left|right)", phrase):
            ys = {c: _y(t.world, c) for c in t.candidates}
            best = max(ys, key=ys.get) if side.group(1) == "left" else min(ys, key=ys.get)
            assert best == obj, (t.id, phrase, ys)


def _y(world, name: str) -> float:
    entity = world.objects.get(name) or world.places.get(name)
    pos = (entity.geometry or {}).get("position") or (entity.geometry or {}).get("cabinet_position")
    if pos is not None:
        return float(pos[1])
    return _y(world, world.objects[name].location)


def test_ambiguous_tasks_have_a_describing_answer_meaning_one_candidate(tasks):
    ambiguous = [t for t in tasks if t.phenomenon in AMBIGUOUS]
    assert len(ambiguous) >= 30
    for t in ambiguous:
        assert t.style == "ambiguous" and t.question and t.answer and t.answer_means in t.candidates, t.id
        assert len(t.candidates) >= 2
        means = t.answer_means
        assert means.replace("_", " ") not in t.answer.lower(), (t.id, t.answer)  # describes, never names
        assert means in {a for f in t.goal for a in f.args}, t.id
        if m := re.fullmatch(r"The one (?:on|in) the ([a-z ]+)\.", t.answer):
            place = m.group(1).replace(" ", "_")
            assert [c for c in t.candidates if t.world.objects[c].location == place] == [means], t.id
        if m := re.fullmatch(r"The (left|right) one\.", t.answer):
            ys = {c: _y(t.world, c) for c in t.candidates}
            assert (max if m.group(1) == "left" else min)(ys, key=ys.get) == means, t.id


def test_hidden_things_are_hidden_and_named_provisionally_only_by_the_instructions_words(tasks):
    lex = load_lexicon()
    for t in tasks:
        if t.phenomenon == "hidden_which":
            assert all(not t.world.is_visible(c) for c in t.candidates), t.id
            drawers = {t.world.objects[c].location for c in t.candidates}
            assert len(drawers) == 1 and set(t.candidates) == set(t.world.contents(drawers.pop())), t.id
            assert t.provisional_goal and t.category.endswith("complex"), t.id
            generic = re.search(r"\b(thing|item|object)\b", t.instruction).group(1)
            assert generic in lex["generic"] and t.provisional_goal[0].split("(")[1].startswith(generic), t.id
        if t.phenomenon == "hidden_adjective":
            obj = t.goal[0].args[0]
            assert not t.world.is_visible(obj), t.id
            adj = re.search(r"an? (\w+) " + obj.replace("_", " "), t.instruction).group(1)
            assert adj in lex["adjectives"], t.id


def test_every_scene_loaded_by_the_generator_is_a_real_scene():
    data = yaml.safe_load(SUITE.read_text())
    for raw in data["tasks"]:
        world = load_scene(ROOT / "config" / "scenes" / raw["scene"])
        for names in raw.get("denotes", {}).values():
            assert all(n in world.objects or n in world.places for n in names), raw["id"]


def test_every_task_is_solvable_in_its_optimal_count(tasks, library):
    from step_planner.bench.tasks import check_optimal

    assert not check_optimal(tasks, library)
