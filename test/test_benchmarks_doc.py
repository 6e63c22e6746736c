"""BENCHMARKS.md cannot drift from the commands it quotes.

Every command in ``benchmarks/commands.yaml``, in the template and in the rendered BENCHMARKS.md parses with
its own script's parser (``step-planner bench`` -> ``step_planner.bench.cli.build_parser()``, ``python
benchmarks/x.py`` -> that module's ``build_parser()``); the template and the document quote the same
commands; the committed document is exactly what ``make bench`` renders from what is stored; and every
script in ``benchmarks/`` keeps the house convention and is quoted somewhere (a script nobody runs rots).
"""

from __future__ import annotations

import ast
import inspect
import json
import sys
from argparse import ArgumentParser

import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))

import benchdoc  # noqa: E402

SCRIPTS = sorted(p for p in (ROOT / "benchmarks").glob("*.py") if 'if __name__ == "__main__"' in p.read_text())
MEASURING = [p for p in SCRIPTS if p.name != "make_bench.py"]


@pytest.fixture(scope="module")
def commands() -> dict[str, benchdoc.BenchCommand]:
    return benchdoc.load_commands()


@pytest.fixture(scope="module")
def template() -> str:
    return benchdoc.TEMPLATE.read_text()


def test_every_listed_command_parses_with_its_own_parser(commands):
    for entry in commands.values():
        benchdoc.parse_command(entry.command)


def test_the_document_quotes_the_templates_commands_and_each_parses(commands, template):
    document = benchdoc.DOCUMENT.read_text()
    quoted = benchdoc.quoted_commands(document)
    assert quoted == benchdoc.template_commands(template, commands)
    assert len(quoted) >= len(commands)  # every entry, plus the literal ones
    for command in quoted:
        benchdoc.parse_command(command)


def test_the_template_fits_the_commands_file(commands, template):
    assert benchdoc.check_template(template, commands) == []


def test_benchmarks_md_is_what_make_bench_renders():
    assert benchdoc.DOCUMENT.read_text() == benchdoc.render_document(), \
        "BENCHMARKS.md was edited by hand or not re-rendered: python benchmarks/make_bench.py --render-only"


def test_every_stored_output_was_printed_by_the_command_quoted_above_it(commands):
    stale = [name for name, entry in commands.items() if (run := benchdoc.STORE / name / benchdoc.RUN_FILE).exists()
             and benchdoc.stale_command(entry, json.loads(run.read_text()))]
    assert stale == [], f"commands.yaml changed since these ran: make bench ONLY={','.join(stale)}"


def test_a_changed_command_renders_as_stale_not_as_its_old_output(commands, tmp_path):
    entry = commands["core_perf"]
    (tmp_path / "core_perf").mkdir()
    meta = {"command": entry.command + " --quick", "started": "x", "wall_s": 1, "commit": "c", "machine": "m",
            "exit_code": 0}
    (tmp_path / "core_perf" / benchdoc.RUN_FILE).write_text(json.dumps(meta))
    text = benchdoc.render("{{ran core_perf}}", commands, store=tmp_path)
    assert "Stale" in text and "ONLY=core_perf" in text


def test_a_note_added_to_a_run_record_is_shown_with_it(commands, tmp_path):
    """A record completed by hand (e.g. the runner died while the command went on) says so where it is quoted."""
    entry = commands["core_perf"]
    (tmp_path / "core_perf").mkdir()
    meta = {"command": entry.command, "started": "x", "wall_s": 1, "commit": "c", "machine": "m", "exit_code": 0,
            "note": "Recorded by hand: see the note."}
    (tmp_path / "core_perf" / benchdoc.RUN_FILE).write_text(json.dumps(meta))
    assert "commit `c`, 1 s wall, m. Recorded by hand: see the note._" in benchdoc.render("{{ran core_perf}}", commands,
                                                                                          store=tmp_path)


@pytest.mark.parametrize("command", [
    "python benchmarks/core_perf.py --no-such-option",
    "python benchmarks/core_perf.py --repeats many",
    "step-planner bench --planners grounded,no_such_profile",
    "step-planner bench --noise 2",
    "step-planner plan",  # the instruction is missing
    "python benchmarks/no_such_script.py",
    "bash -c true",
])
def test_a_command_its_parser_refuses_is_reported(command):
    with pytest.raises(benchdoc.BenchDocError):
        benchdoc.parse_command(command)


def test_a_template_naming_unknown_entries_or_files_is_refused(commands):
    template = "{{command core_perf}}\n{{output nothing_like_it}}\n{{file table3 results.csv}}\n{{shout table3}}\n"
    problems = benchdoc.check_template(template, commands)
    assert any("nothing_like_it" in p for p in problems)
    assert any("results.csv" in p for p in problems)
    assert any("'shout'" in p for p in problems)
    assert any("table3 is never quoted" in p for p in problems)


def test_a_wrapped_command_reads_back_as_the_same_command():
    command = "step-planner bench " + " ".join(f"--planners grounded+feature_{i}" for i in range(12))
    block = f"```bash\n{benchdoc.quote(command)}\n```\n"
    assert "\\\n" in block
    assert benchdoc.quoted_commands(block) == [command]


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_every_script_has_build_parser_and_main_taking_argv(script):
    module = benchdoc.script_module(str(script.relative_to(ROOT)))
    assert isinstance(module.build_parser(), ArgumentParser)
    argv = inspect.signature(module.main).parameters.get("argv")
    assert argv is not None and argv.default is None, "main(argv: list[str] | None = None) -> int"
    mains = [n for n in ast.walk(ast.parse(script.read_text())) if isinstance(n, ast.FunctionDef) and n.name == "main"]
    assert mains and mains[0].returns is not None and ast.unparse(mains[0].returns) == "int"


@pytest.mark.parametrize("script", MEASURING, ids=lambda p: p.name)
def test_every_measuring_script_says_where_answers_came_from_and_is_quoted(script, commands):
    assert "NOT an LLM" in script.read_text(), "print where the answers came from (e.g. 'scripted expert, NOT an LLM')"
    rel = script.relative_to(ROOT).as_posix()
    assert any(e.argv[:2] == ["python", rel] for e in commands.values()), f"{rel}: no benchmarks/commands.yaml entry"
