"""Every config file has a declared schema: a misspelt key or a wrong type in any shipped file is refused by name,
through the loaders, `step-planner plan` and `step-planner config check`; the JSON Schemas, the modelines and
docs/configuration.md are generated from the same models and kept current."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from step_planner import cli
from step_planner.config_check import (
    KINDS,
    infer_kind,
    main_config,
    node_files,
    reference,
    schema_line,
    schema_texts,
    shipped_files,
)
from step_planner.config_schema import ConfigFileError, _element, _model_of, key_path, validate

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "config"
SHIPPED = shipped_files(CONFIG)


def test_every_kind_ships_files_and_every_loader_yaml_has_a_kind():
    assert {k.name for _, k in SHIPPED} == set(KINDS)
    ours = {p for p, _ in SHIPPED}
    ros_params = {"step_planner.yaml", "moveit_cpp.yaml"}  # ROS parameter files: the node's and MoveIt's
    unclaimed = [p for p in CONFIG.rglob("*.yaml") if p not in ours and p.name not in ros_params
                 and not p.name.startswith("ros2_controllers_") and p.parent.name != "fr3_moveit"]
    assert unclaimed == []


def test_the_json_schemas_are_current():
    folder = CONFIG / "schemas"
    expected = schema_texts()
    assert sorted(p.name for p in folder.glob("*.json")) == sorted(expected), "run `make schemas`"
    for name, text in expected.items():
        assert (folder / name).read_text() == text, f"config/schemas/{name} is stale: run `make schemas`"


def test_the_configuration_reference_is_current():
    assert (ROOT / "docs" / "configuration.md").read_text() == reference(), "run `make schemas`"
    assert "docs/configuration.md" in (ROOT / "README.md").read_text()


@pytest.mark.parametrize("path, kind", SHIPPED, ids=lambda v: v.name if isinstance(v, Path) else v.name)
def test_every_shipped_file_names_its_schema_and_matches_it(path, kind):
    first = path.read_text().splitlines()[0]
    assert first == schema_line(path, kind, CONFIG)
    target = (path.parent / first.split("$schema=")[1]).resolve()
    assert target == (CONFIG / "schemas" / f"{kind.name}.schema.json").resolve() and target.is_file()
    validate(kind.schema_model(), yaml.safe_load(path.read_text()), str(path))
    assert infer_kind(path) is kind


# ---- every key of every shipped file, misspelt or given a wrong type ------------------------------------------


def _field(model: type[BaseModel], key: str) -> Any:
    return next((f for n, f in model.model_fields.items() if key in (n, f.alias)), None)


def _settings(tp: Any, data: Any, loc: tuple = ()) -> list[tuple[tuple, Any]]:
    """(key path, value) of every setting of ``data`` the schema ``tp`` declares (a mapping's own names, such as a
    robot's or a group word's, are data, not settings)."""
    model = _model_of(tp)
    if model is not None and set(model.model_fields) == {"root"}:
        tp, model = model.model_fields["root"].annotation, None
    out = []
    if model is not None and isinstance(data, dict):
        for key, value in data.items():
            field = _field(model, key)
            if field is not None:
                out.append((loc + (key,), value))
                out += _settings(field.annotation, value, loc + (key,))
    elif isinstance(data, dict) and _element(tp) is not None:
        for key, value in data.items():
            out += _settings(_element(tp), value, loc + (key,))
    elif isinstance(data, list) and _element(tp) is not None:
        for i, value in enumerate(data):
            out += _settings(_element(tp), value, loc + (i,))
    return out


def _pattern(loc: tuple) -> tuple:
    return tuple("#" if isinstance(p, int) else p for p in loc)


PARSED = {path: yaml.safe_load(path.read_text()) for path, _ in SHIPPED}  # parsed once: the task suites are big


def _data(path: Path) -> Any:
    return copy.deepcopy(PARSED[path])


def _cases() -> list[tuple[Path, Any, tuple, Any]]:
    """One case per distinct key path (list items alike) of each shipped file."""
    cases, seen = [], set()
    for path, kind in SHIPPED:
        data = PARSED[path]
        for loc, value in _settings(kind.schema_model(), data):
            if (kind.name, _pattern(loc)) not in seen:
                seen.add((kind.name, _pattern(loc)))
                cases.append((path, kind, loc, value))
    return cases


CASES = _cases()


def _at(data: Any, loc: tuple) -> Any:
    for part in loc:
        data = data[part]
    return data


def typo(key: str) -> str:
    """A one-letter slip: the middle letter doubled (max_velocity_scaling -> max_velocity_sccaling)."""
    i = len(key) // 2
    return key[:i] + key[i] + key[i:]


def test_the_cases_cover_every_kind_and_many_keys():
    assert {k.name for _, k, _, _ in CASES} == set(KINDS)
    assert len(CASES) > 200


@pytest.mark.parametrize("path, kind, loc, value", CASES, ids=lambda v: key_path(v) if isinstance(v, tuple) else
                         v.name if isinstance(v, Path) else "")
def test_a_misspelt_key_anywhere_is_refused_naming_it_and_the_right_one(path, kind, loc, value):
    data = _data(path)
    parent = _at(data, loc[:-1])
    parent[typo(loc[-1])] = parent.pop(loc[-1])
    with pytest.raises(ConfigFileError) as err:
        validate(kind.schema_model(), data, path.name)
    wrong = key_path(loc[:-1] + (typo(loc[-1]),))
    assert str(err.value).startswith(f"{path.name}: ")
    assert f"{wrong}: unknown key; did you mean {loc[-1]}?" in str(err.value)
    assert "missing" not in str(err.value)  # a misspelt required key is one problem, not two


def _wrong(value: Any) -> Any:
    """A value of another YAML type than ``value``'s."""
    if isinstance(value, bool) or value is None:
        return 12345
    if isinstance(value, (int, float)):
        return "fast"
    if isinstance(value, str):
        return 12345
    return 7  # a list or a mapping


@pytest.mark.parametrize("path, kind, loc, value", CASES, ids=lambda v: key_path(v) if isinstance(v, tuple) else
                         v.name if isinstance(v, Path) else "")
def test_a_wrong_type_anywhere_is_refused_naming_the_key(path, kind, loc, value):
    data = _data(path)
    _at(data, loc[:-1])[loc[-1]] = _wrong(value)
    with pytest.raises(ConfigFileError) as err:
        validate(kind.schema_model(), data, path.name)
    assert str(err.value).startswith(f"{path.name}: ") and f"{key_path(loc)}: " in str(err.value)


def test_every_problem_is_listed_at_once():
    data = yaml.safe_load((CONFIG / "safety.yaml").read_text())
    data["safety"]["max_velocity_scalling"] = data["safety"].pop("max_velocity_scaling")
    data["safety"]["max_gripper_force"] = data["safety"].pop("max_gripper_force_n")
    data["safety"]["max_name_length"] = "x"
    with pytest.raises(ConfigFileError) as err:
        validate(KINDS["safety"].schema_model(), data, "safety.yaml")
    assert len(err.value.problems) == 3
    text = str(err.value)
    assert "safety.max_velocity_scalling: unknown key; did you mean max_velocity_scaling?" in text
    assert "safety.max_gripper_force: unknown key; did you mean max_gripper_force_n?" in text
    assert "safety.max_name_length: input should be a valid integer, got 'x'" in text


def test_a_range_is_named_with_its_limit():
    data = yaml.safe_load((CONFIG / "robot_boundary.yaml").read_text())
    data["velocity_scaling"] = 1.5
    with pytest.raises(ConfigFileError, match=r"velocity_scaling: input should be less than or equal to 1, got 1.5"):
        validate(KINDS["robot_boundary"].schema_model(), data, "robot_boundary.yaml")


# ---- through the real entry points ------------------------------------------------------------------------------


def _edit(tmp_path: Path, name: str, change) -> Path:
    data = yaml.safe_load((CONFIG / name).read_text())
    change(data)
    out = tmp_path / Path(name).name
    out.write_text(yaml.safe_dump(data))
    return out


def _rename(section: str | None, old: str, new: str):
    def change(data: dict) -> None:
        target = data[section] if section else data
        target[new] = target.pop(old)
    return change


def _set(section: str | None, key: str, value: Any):
    def change(data: dict) -> None:
        (data[section] if section else data)[key] = value
    return change


def _first(section: str, key: str, value: Any):
    def change(data: dict) -> None:
        data[section][0][key] = value
    return change


def _first_rename(section: str, old: str, new: str):
    def change(data: dict) -> None:
        data[section][0][new] = data[section][0].pop(old)
    return change


PLAN_CASES = [
    ("--safety", "safety.yaml", _rename("safety", "max_velocity_scaling", "max_velocity_scalling"),
     "safety.max_velocity_scalling: unknown key; did you mean max_velocity_scaling?"),
    ("--safety", "safety.yaml", _set("safety", "max_name_length", "x"), "safety.max_name_length: input should be"),
    ("--primitives", "primitives.yaml", _first_rename("primitives", "preconditions", "precondtions"),
     "primitives[0].precondtions: unknown key; did you mean preconditions?"),
    ("--primitives", "primitives.yaml", _set(None, "generic_nouns", "thing"), "generic_nouns: input should be"),
    ("--scene", "scenes/drawer_desk.yaml", _rename(None, "objects", "object"),
     "object: unknown key; did you mean objects?"),
    ("--scene", "scenes/drawer_desk.yaml", _first("places", "capacity", "four"), "places[0].capacity: input should"),
    ("--llm-config", "llm.yaml", _rename("llm", "max_retries", "max_retrys"),
     "llm.max_retrys: unknown key; did you mean max_retries?"),
    ("--llm-config", "llm.yaml", _set("llm", "timeout_s", "slow"), "llm.timeout_s: input should be"),
    ("--planner-config", "planner.yaml", _rename("planner", "max_depth", "max_dept"),
     "planner.max_dept: unknown key; did you mean max_depth?"),
    ("--planner-config", "planner.yaml", _set("planner", "require_verified_success", "yes"),
     "planner.require_verified_success: input should be"),
]


@pytest.mark.parametrize("flag, name, change, message", PLAN_CASES, ids=lambda v: v if isinstance(v, str) and
                         v.startswith("--") else "")
def test_plan_refuses_a_bad_file_naming_the_key_before_anything_runs(tmp_path, capsys, flag, name, change, message):
    bad = _edit(tmp_path, name, change)
    code = cli.main(["plan", "put the tape in the drawer", flag, str(bad), "--offline"])
    err = capsys.readouterr()
    assert code == 2
    assert f"{bad}: {message}" in err.err
    assert "Traceback" not in err.err and "Offline" not in err.out  # nothing was planned, no answer source opened


@pytest.mark.parametrize("kind, name, change, key", [
    ("safety", "safety.yaml", _rename("safety", "max_acceleration_scaling", "max_aceleration_scaling"),
     "safety.max_aceleration_scaling"),
    ("robot_boundary", "robot_boundary.yaml", _rename(None, "stop_within_s", "stop_within"), "stop_within"),
    ("franka", "franka.yaml", _set("grasp", "lift_hieght", 0.1), "grasp.lift_hieght"),
    ("profiles", "profiles.yaml", _set("profiles", "step", {"conditions": False, "termination": "hybrid",
                                                            "feature": ["verify_done"]}), "profiles.step.feature"),
    ("demo_tasks", "demo_tasks.yaml", lambda d: d[0].update(instrucion="x"), "[0].instrucion"),
])
def test_config_check_refuses_a_bad_file_by_name_and_place(tmp_path, capsys, kind, name, change, key):
    bad = _edit(tmp_path, name, change)
    assert main_config(["check", str(bad)]) == 1
    out = capsys.readouterr().out
    assert f"FAIL {bad} ({kind})" in out and f"{key}: unknown key" in out


def test_config_check_infers_a_renamed_file_from_its_keys_or_takes_kind(tmp_path, capsys):
    bad = _edit(tmp_path, "safety.yaml", _set("safety", "max_gripper_force_n", "strong"))
    renamed = bad.rename(tmp_path / "my_limits.yaml")
    assert main_config(["check", str(renamed)]) == 1
    assert "safety.max_gripper_force_n: input should be a valid number, got 'strong'" in capsys.readouterr().out
    odd = tmp_path / "odd.yaml"
    odd.write_text("whatever: 1\n")
    assert main_config(["check", str(odd)]) == 2
    assert "give --kind" in capsys.readouterr().err
    assert main_config(["check", "--kind", "planner", str(odd)]) == 1
    assert "whatever: unknown key" in capsys.readouterr().out


def test_config_check_follows_the_files_the_node_params_file_names(tmp_path):
    safety = _edit(tmp_path, "safety.yaml", lambda d: None)
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({"/**": {"ros__parameters": {"safety_file": str(safety), "scene": "two_drawers",
                                                                  "moveit": {"config_file": ""}}}}))
    found = {(p, k.name) for p, k in node_files(params)}
    assert found == {(safety, "safety"), (CONFIG / "scenes" / "two_drawers.yaml", "scene")}


def test_config_check_command_passes_a_good_file_and_fails_on_a_misspelt_one(tmp_path):
    """The CLI as CI runs it (a subprocess: exit codes, no traceback). .ci/run checks every shipped file with it."""
    run = [sys.executable, "-m", "step_planner.cli", "config", "check"]
    good = CONFIG / "scenes" / "drawer_desk.yaml"
    bad = _edit(tmp_path, "scenes/drawer_desk.yaml", _rename(None, "locations", "locatons"))
    ok = subprocess.run(run + [str(good), str(CONFIG / "safety.yaml")], cwd=ROOT, capture_output=True, text=True,
                        timeout=120)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "config check: 2 files, 0 with problems" in ok.stdout
    out = subprocess.run(run + [str(good), str(bad)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "locatons: unknown key; did you mean locations?" in out.stdout
    assert "config check: 2 files, 1 with problems" in out.stdout


def test_config_check_without_files_takes_every_shipped_file_and_the_node_params_files():
    listed = shipped_files() + node_files()  # the package's config/, as `config check` lists it
    assert {p for p, _ in SHIPPED} <= {p for p, _ in listed}


def test_the_schemas_are_json_schemas_editors_read():
    for name, text in schema_texts().items():
        schema = json.loads(text)
        assert schema["$schema"].startswith("https://json-schema.org/") and schema["$id"] == name
    safety = json.loads(schema_texts()["safety.schema.json"])
    settings = safety["$defs"]["SafetySettings"]
    assert settings["additionalProperties"] is False
    assert settings["properties"]["max_velocity_scaling"]["exclusiveMinimum"] == 0


def test_a_copy_of_a_shipped_file_loads_the_same(tmp_path):
    """The modeline is a comment: loading is unchanged."""
    text = (CONFIG / "safety.yaml").read_text()
    plain = tmp_path / "safety.yaml"
    plain.write_text("\n".join(text.splitlines()[1:]) + "\n")
    assert yaml.safe_load(plain.read_text()) == copy.deepcopy(yaml.safe_load(text))


def test_the_node_refuses_a_bad_config_file_at_start_naming_the_key(tmp_path):
    """A params file (or -p) pointing the node at a misspelt safety file: the node never comes up, says why."""
    bad = _edit(tmp_path, "safety.yaml", _rename("safety", "max_gripper_force_n", "max_gripper_force"))
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({"/**": {"ros__parameters": {"safety_file": str(bad)}}}))
    out = subprocess.run([sys.executable, "-m", "step_planner.cli", "node", "--ros-args", "--params-file",
                          str(params)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, out.stdout + out.stderr
    text = out.stdout + out.stderr
    assert "safety.max_gripper_force: unknown key; did you mean max_gripper_force_n?" in text
    assert "Traceback" not in text


# ---- ROS params files: each section for the node checked as the node checks it ------------------------------------

BAD = {"planner": {"max_dept": 3}, "confirm_goal": "yes please", "llm": {"timeout_s": 30}}
REFUSED = ["planner.max_dept: not a parameter of this node; did you mean planner.max_depth?",
           "confirm_goal: 'yes please' is not true or false (default False)",
           "llm.timeout_s: 30 is an integer; this parameter is a double: write 30.0"]


@pytest.mark.parametrize("shape, section", [
    ({"/**": {"ros__parameters": BAD}}, "/**"),
    ({"step_planner": {"ros__parameters": BAD}}, "/step_planner"),
    ({"/step_planner": {"ros__parameters": BAD}}, "/step_planner"),
    ({"/robot1/step_planner": {"ros__parameters": BAD}}, "/robot1/step_planner"),
    ({"robot1": {"step_planner": {"ros__parameters": BAD}}}, "/robot1/step_planner"),  # rcl's nested namespace
    ({"/**/step_planner": {"ros__parameters": BAD}}, "/**/step_planner"),
    ({"/*/step_*": {"ros__parameters": BAD}}, "/*/step_*"),
    ({"/robot1/*": {"ros__parameters": BAD}}, "/robot1/*"),
])
def test_config_check_knows_a_params_file_by_its_shape_and_names_each_problem_with_its_section(tmp_path, capsys,
                                                                                               shape, section):
    path = tmp_path / "my_params.yaml"
    path.write_text(yaml.safe_dump({**shape, "/controller_manager": {"ros__parameters": {"update_rate": 1000}}}))
    assert main_config(["check", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"FAIL {path} (params)" in out and "3 parameter problems the node would refuse at start" in out
    for problem in REFUSED:
        assert f"section {section}: {problem}" in out, out


def test_config_check_leaves_other_nodes_sections_alone_and_says_so(tmp_path, capsys):
    path = tmp_path / "bringup.yaml"
    path.write_text(yaml.safe_dump({"/controller_manager": {"ros__parameters": {"update_rate": 1000}},
                                    "/robot1/step_planner": {"ros__parameters": {"goal_policy": "queue"}},
                                    "planner_two": {"ros__parameters": {"confirm_gaol": True}}}))
    assert main_config(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert "section /controller_manager: for another node than /step_planner, left alone" in out
    assert "section /planner_two: for another node than /step_planner, left alone" in out
    assert main_config(["check", "--node", "/planner_two", str(path)]) == 1  # the node as its launch names it
    assert "section /planner_two: confirm_gaol: not a parameter of this node; did you mean confirm_goal?" in \
        capsys.readouterr().out
    assert main_config(["check", str(CONFIG / "ros2_controllers_fr3.yaml")]) == 0
    assert "no section applies to /step_planner" in capsys.readouterr().out


def test_config_check_without_files_checks_the_shipped_params_file_as_params(capsys):
    assert main_config(["check"]) == 0
    assert "ok   " in (out := capsys.readouterr().out) and "step_planner.yaml (params)" in out
