"""The reader's plurals and singulars come from inflect imported without typeguard's instrumentation
(step_planner/planner/inflection.py): every answer must be the one inflect gives with its checks on."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

from step_planner.planner.inflection import plural, singular

CHECKED = """
import json, sys
import inflect, typeguard
engine = inflect.engine()
words = json.load(sys.stdin)
print(json.dumps({w: [engine.plural_noun(w) or w, engine.singular_noun(w) or None] for w in words}))
"""


def _words() -> list[str]:
    """Every word of the task suites' instructions (the bench's wordings, paraphrases, the corpus of words the
    reader does not hold) and of the shipped lexicons: thousands of nouns, verbs and plurals, not a chosen few."""
    text = " ".join(p.read_text() for p in sorted((ROOT / "config").glob("**/*.yaml")))
    return sorted({w for w in re.findall(r"[a-z]+", text.lower()) if len(w) > 1})


def test_every_word_of_the_configs_inflects_as_inflect_with_its_checks_does():
    words = _words()
    assert len(words) > 1000  # 1512 at the time of writing
    done = subprocess.run([sys.executable, "-c", CHECKED], input=json.dumps(words), capture_output=True, text=True,
                          check=True, cwd=Path(ROOT))
    checked = json.loads(done.stdout)
    differ = [(w, checked[w], [plural(w), singular(w)]) for w in words if checked[w] != [plural(w), singular(w)]]
    assert not differ, differ[:10]


def test_an_empty_word_is_its_own_plural_and_no_plural():
    assert plural("") == "" and singular("") is None


def test_typeguard_keeps_its_decorator_for_everyone_else():
    import typeguard
    from typeguard import _decorators

    plural("box")
    assert typeguard.typechecked is _decorators.typechecked
