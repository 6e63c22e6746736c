"""The wordings_outside suite: current, wide, in words the planner's lexicon files do not hold, and its goals what
its words denote in the scenes (re-read here from the scene files, not with the generator's code)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
import yaml

from step_planner.bench.tasks import OUTSIDE_PHENOMENA, load_suite
from step_planner.bench.wordings_outside import SUITE_FILE, WORDS_FILE, generate, load_words, render, typo
from step_planner.domain.scene import load_scene

ROOT = Path(__file__).resolve().parents[1]
SCENES = sorted((ROOT / "config" / "scenes").glob("*.yaml"))
# known words in an order the reader does not parse ("the blocks, all three of them on the table"): the only
# phenomenon whose instructions need no outside word
CONSTRUCTIONS = {"count_apposition"}


def _tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9_]+", str(text).lower().replace("'", " "))


def _strings(value):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)
    elif value is not None:
        yield str(value)


def lexicon_files() -> list[Path]:
    """The files the resolver reads its words from, found the way it finds them (resolution_lexicon.yaml, the file
    its ``colour_words_from`` names, primitives.yaml), plus any other lexicon or word list under config/."""
    config = ROOT / "config"
    resolution = config / "resolution_lexicon.yaml"
    wordings = config / (yaml.safe_load(resolution.read_text()).get("colour_words_from") or "wordings_lexicon.yaml")
    extra = [p for p in config.glob("*.yaml") if re.search(r"lexicon|words|vocab", p.stem)]
    return sorted({resolution, wordings, config / "primitives.yaml", *extra})


def lexicon_words() -> tuple[set[str], set[str]]:
    """(every phrase, every word) of the lexicon files and the scenes' names, categories and kinds."""
    phrases: set[str] = set()
    for path in lexicon_files():
        phrases |= {" ".join(_tokens(s)) for s in _strings(yaml.safe_load(path.read_text()))}
    for path in SCENES:  # the scene words the resolver reads: names, categories, place kinds
        world = load_scene(path)
        phrases |= {" ".join(_tokens(s)) for s in (*world.objects, *world.places,
                                                  *(o.category or "" for o in world.objects.values()),
                                                  *(p.kind or "" for p in world.places.values()))}
        phrases |= {" ".join(_tokens(s.replace("_", " "))) for s in (*world.objects, *world.places)}
    return phrases, {w for p in phrases for w in p.split()}


def _values(value):
    if isinstance(value, dict):
        for v in value.values():
            yield from _values(v)
    elif isinstance(value, list):
        for v in value:
            yield from _values(v)
    else:
        yield str(value)


def outside_entries(words: dict) -> list[str]:
    """Every phrase of the outside list (values, not section names), templates filled ({side})."""
    out = []
    for s in _values(words):
        out += [s.format(side=side) for side in ("left", "right")] if "{side}" in s else [s]
    return out


def known_entries(entries: list[str]) -> list[str]:
    """The entries the lexicon holds: a phrase of it, or made only of its words."""
    phrases, known = lexicon_words()
    return [e for e in entries if " ".join(_tokens(e)) in phrases or set(_tokens(e)) <= known]


@pytest.fixture(scope="module")
def tasks():
    return load_suite("wordings_outside")


def test_committed_suite_is_what_the_generator_writes():
    assert SUITE_FILE.read_text() == render(generate()), \
        "re-run python scripts/generate_wordings.py --suite wordings_outside"


def test_no_outside_word_is_in_the_resolvers_lexicon_files():
    words = load_words()
    entries = outside_entries(words)
    assert len(entries) >= 50
    assert known_entries(entries) == []


def test_the_lexicon_check_flags_words_the_lexicon_holds():
    """The check above can fail: the lexicon's own words (surface words, exceptions, a placing verb) are flagged."""
    assert known_entries(["bench", "apart from", "put", "chuck"]) == ["bench", "apart from", "put"]


def test_typos_are_words_nobody_listed(tasks):
    _, known = lexicon_words()
    typos = [t for t in tasks if t.phenomenon == "typo"]
    assert len(typos) >= 20
    for t in typos:
        obj = t.goal[0].args[0]
        slipped = [w for w in _tokens(t.instruction) if w not in known and w not in {"the", "put", "move", "to"}]
        assert len(slipped) == 1 and any(typo(w) == slipped[0] for w in obj.split("_")), (t.id, slipped)


def test_no_code_outside_the_bench_reads_the_outside_words():
    readers = [p for p in (ROOT / "step_planner").rglob("*.py")
               if WORDS_FILE.name in p.read_text() or "wordings_outside" in p.read_text()]
    assert readers and all(p.parent.name == "bench" for p in readers), readers
    assert not (ROOT / "config" / WORDS_FILE.name).exists()
    assert "config" not in WORDS_FILE.relative_to(ROOT).parts


def test_suite_is_wide_and_every_clear_instruction_uses_an_outside_word(tasks):
    assert len(tasks) >= 250
    assert {t.scene for t in tasks} == {p.name for p in SCENES}
    assert {t.phenomenon for t in tasks} == set(OUTSIDE_PHENOMENA)
    per = Counter(t.phenomenon for t in tasks)
    assert min(per.values()) >= 5, per
    outside = {w for e in outside_entries(load_words()) for w in _tokens(e)}
    _, known = lexicon_words()
    outside -= known
    for t in tasks:
        if t.phenomenon in CONSTRUCTIONS or t.phenomenon == "typo":
            continue
        assert set(_tokens(t.instruction)) & outside, (t.id, t.instruction)


def test_ambiguous_tasks_ask_once_and_the_answer_describes_one_candidate(tasks):
    ambiguous = [t for t in tasks if t.style == "ambiguous"]
    assert len(ambiguous) >= 10 and all(t.phenomenon == "outside_which" for t in ambiguous)
    assert all(not t.question for t in tasks if t.style != "ambiguous")
    for t in ambiguous:
        assert t.question and t.answer_means in t.candidates and len(t.candidates) >= 2, t.id
        assert t.answer_means.replace("_", " ") not in t.answer.lower(), t.id
        assert t.answer_means in {a for f in t.goal for a in f.args}, t.id


def _where(world, name):
    return world.objects[name].location


def test_goals_are_what_the_words_denote(tasks):
    """Re-read from the scene: disposal goes to the scene's one bin, an exception leaves exactly the named thing, a
    swap trades places, "all N of them" is N things, a clearing takes every such thing off the table."""
    checked = Counter()
    for t in tasks:
        w, moved = t.world, {a.args[0]: a.args[1] for a in t.goal if a.predicate in ("in", "on")}
        if t.phenomenon == "disposal":
            bins = [n for n, p in w.places.items() if p.kind == "bin"]
            assert len(bins) == 1 and set(moved.values()) == set(bins), t.id
        elif t.phenomenon == "outside_exception":
            out = next(o for o in w.objects if re.search(rf"\b(?:bar|save|barring|aside from|excepting|exception of)"
                                                         rf" the {o.replace('_', ' ')}\b", t.instruction.lower()))
            place = _where(w, out)
            assert set(moved) == {o for o in w.objects if _where(w, o) == place} - {out}, t.id
        elif t.phenomenon == "swap":
            a, b = moved
            assert moved[a] == _where(w, b) and moved[b] == _where(w, a), t.id
        elif t.phenomenon == "count_apposition":
            n = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6}[re.search(r"all (\w+) of them", t.instruction)
                                                                      .group(1)]
            assert len(moved) == n and len({_where(w, o) for o in moved}) == 1, t.id
        elif t.phenomenon == "colour_matching":
            assert all(dest.split("_")[0] == o.split("_")[0] for o, dest in moved.items()), t.id
        else:
            continue
        checked[t.phenomenon] += 1
    assert set(checked) == {"disposal", "outside_exception", "swap", "count_apposition", "colour_matching"}


def test_every_task_is_solvable_in_its_optimal_count(tasks, library):
    from step_planner.bench.tasks import check_optimal

    assert not check_optimal(tasks, library)
