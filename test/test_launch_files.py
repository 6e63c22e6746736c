"""The launch files compile and reference only things the package has.

``launch``/``launch_ros``/MoveIt are not installable here, so the files are checked statically: each
parses; every executable of package step_planner is a console script in setup.py; every package-local
file given to ``package_file(...)`` exists in the repository (and is installed by setup.py's data_files);
every parameter name the launch code sets on the node is a declared parameter; launch arguments used
through LaunchConfiguration are declared.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from step_planner.ros.parameters import SPECS

ROOT = Path(__file__).resolve().parents[1]
LAUNCH_FILES = sorted((ROOT / "launch").glob("*.launch.py"))
COMMON = ROOT / "step_planner" / "ros" / "launch_common.py"
SOURCES = [*LAUNCH_FILES, COMMON]


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def _calls(tree: ast.AST, name: str) -> list[ast.Call]:
    def called(node: ast.Call) -> str:
        f = node.func
        return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""

    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and called(n) == name]


def _kw(call: ast.Call, name: str):
    for kw in call.keywords:
        if kw.arg == name and isinstance(kw.value, ast.Constant):
            return kw.value.value
    return None


def _console_scripts() -> set[str]:
    setup = _tree(ROOT / "setup.py")
    scripts = set()
    for node in ast.walk(setup):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and " = " in node.value:
            scripts.add(node.value.split(" = ")[0].strip())
    return scripts


def test_there_are_the_four_launch_files():
    assert {p.name for p in LAUNCH_FILES} == {"step_planner.launch.py", "franka.launch.py", "gazebo.launch.py",
                                              "fr3_controllers.launch.py"}


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_compiles_and_defines_what_ros2_launch_calls(path: Path):
    compile(path.read_text(), str(path), "exec")
    if path in LAUNCH_FILES:
        names = {n.name for n in _tree(path).body if isinstance(n, ast.FunctionDef)}
        assert "generate_launch_description" in names


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_our_executables_exist(path: Path):
    scripts = _console_scripts()
    for call in _calls(_tree(path), "Node"):
        package = _kw(call, "package")
        if package in ("step_planner", None) and _kw(call, "executable"):
            assert _kw(call, "executable") in scripts, f"{path.name}: no console script {_kw(call, 'executable')}"
    assert "step_planner_node" in scripts


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_package_files_exist_and_are_installed(path: Path, monkeypatch):
    from test_package_data import installed_files

    installed = {dest.removeprefix("share/step_planner/") for dest in installed_files(monkeypatch)}
    for call in _calls(_tree(path), "package_file"):
        parts = [a.value for a in call.args if isinstance(a, ast.Constant)]
        assert len(parts) == len(call.args), f"{path.name}: package_file with a non-literal part"
        assert (ROOT.joinpath(*parts)).is_file(), f"{path.name}: {'/'.join(parts)} does not exist"
        assert "/".join(parts) in installed, f"{path.name}: setup.py does not install {'/'.join(parts)}"


def test_parameters_set_by_launch_are_declared_and_arguments_are_declared():
    tree = _tree(COMMON)
    (node_fn,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "step_planner_node"]
    overrides = [n for n in ast.walk(node_fn) if isinstance(n, ast.Dict)]
    keys = {k.value for d in overrides for k in d.keys if isinstance(k, ast.Constant)}
    assert keys and keys <= set(SPECS), f"undeclared parameters: {keys - set(SPECS)}"
    for path in SOURCES:
        t = _tree(path)
        declared = {c.args[0].value for p in SOURCES for c in _calls(_tree(p), "DeclareLaunchArgument")}
        used = {c.args[0].value for c in _calls(t, "LaunchConfiguration") if isinstance(c.args[0], ast.Constant)}
        assert used <= declared, f"{path.name}: undeclared launch arguments {used - declared}"


def test_launch_argument_choices_match_the_parameter_specs():
    for call in _calls(_tree(COMMON), "DeclareLaunchArgument"):
        name = call.args[0].value
        choices = next((kw.value for kw in call.keywords if kw.arg == "choices"), None)
        spec = SPECS.get(name)
        if spec is not None and spec.choices and choices is not None:
            assert set(ast.literal_eval(choices)) == set(spec.choices), name
        default = _kw(call, "default_value")
        if spec is not None and isinstance(default, str) and spec.choices:
            assert default in spec.choices


def test_moveit_cpp_config_has_the_plan_request_blocks_franka_yaml_loads():
    import yaml

    moveit_cpp = yaml.safe_load((ROOT / "config" / "moveit_cpp.yaml").read_text())
    franka = (ROOT / "config" / "franka.yaml").read_text()
    for namespace in ("ompl_rrtc", "pilz_lin"):
        assert f"params_namespace: {namespace}" in franka
        assert moveit_cpp[namespace]["plan_request_params"]["planning_pipeline"] in (
            moveit_cpp["planning_pipelines"]["pipeline_names"])


def test_every_launch_file_has_the_offline_argument_mapped_to_llm_offline():
    """offline:=true in every launch file: the shipped answers, so the ROS path can be tried with no model."""
    declared = {c.args[0].value: c for c in _calls(_tree(COMMON), "DeclareLaunchArgument")}
    assert "offline" in declared and _kw(declared["offline"], "default_value") == "false"
    assert "llm.offline" in SPECS and SPECS["llm.offline"].default is False
    source = COMMON.read_text()
    assert '"llm.offline": ParameterValue(LaunchConfiguration("offline"), value_type=bool)' in source
    for path in LAUNCH_FILES:
        assert _calls(_tree(path), "arguments"), f"{path.name} does not declare the shared arguments"
        assert _calls(_tree(path), "step_planner_node"), f"{path.name} does not start the node"
