"""The node's parameters declared once (issue 37, part 5): descriptors as ``ros2 param describe`` shows them, and a
parameter given for the node that it does not declare -- a misspelt ``-p``, a misspelt key of a ``--params-file``
section for the node or ``/**`` -- stops it at start, naming the parameter and the nearest declared name.

The node runs as ``step_planner_node`` does (its own process, as ``ros2 run`` and ``ros2 launch`` start it) for
the command line and parameter files; in-process for the descriptors, read through its
``describe_parameters`` service by an rclpy client as ``ros2 param describe`` reads them.
"""

from __future__ import annotations

import ast
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import yaml

from step_planner.ros import parameters as params

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "config"
DECLARED = [*params.SPECS, *params.RCLPY_DECLARED]


def _dotted(data: dict, prefix: str = "") -> list[str]:
    out = []
    for key, value in data.items():
        out += _dotted(value, f"{prefix}{key}.") if isinstance(value, dict) and value else [f"{prefix}{key}"]
    return out


# ---- the check itself (no ROS) ----------------------------------------------------------------------------------

@pytest.mark.parametrize("given, expected", [
    ("confirm_gaol", "confirm_gaol: not a parameter of this node; did you mean confirm_goal?"),
    ("llm.mdoel", "llm.mdoel: not a parameter of this node; did you mean llm.model?"),
    ("heartbeat_period", "heartbeat_period: not a parameter of this node; did you mean heartbeat_period_s?"),
    ("planner.max_dept", "planner.max_dept: not a parameter of this node; did you mean planner.max_depth?"),
    ("episodes.keep", "episodes.keep: not a parameter of this node; did you mean episodes.record?"),
    ("sim.qqqqqqqqqqqq", "sim.qqqqqqqqqqqq: not a parameter of this node; the sim.* parameters are: "
                         "camera_rate_hz, joint_state_rate_hz, object_pose_rate_hz, realtime"),
    ("unheard_of", "unheard_of: not a parameter of this node"),
])
def test_an_undeclared_name_is_named_with_the_nearest_declared_name(given, expected):
    assert params.undeclared([given, "confirm_goal", "use_sim_time"], DECLARED, "symbolic") == [expected]


def test_safety_settings_are_refused_saying_where_they_go():
    (problem,) = params.undeclared(["safety.max_velocity_scalling"], DECLARED, "symbolic")
    assert problem.startswith("safety.max_velocity_scalling: not a parameter of this node;")
    assert "safety_file" in problem and "config/safety.yaml" in problem
    (problem,) = params.undeclared(["safety.max_velocity_scaling"], DECLARED, "moveit")  # right spelling: still not
    assert "safety_file" in problem


def test_every_name_of_the_shipped_params_file_and_none_other_is_declared():
    names = _dotted(yaml.safe_load((CONFIG / "step_planner.yaml").read_text())["/**"]["ros__parameters"])
    assert len(names) >= 50 and params.undeclared(names, DECLARED) == []


def _moveit_names(robot: str, tmp_path: Path) -> list[str]:
    from moveit_support import moveit_parameters

    return _dotted(moveit_parameters(robot, tmp_path))


@pytest.mark.parametrize("robot", ["fr3", "panda"])
def test_moveits_parameters_are_left_to_moveitpy_only_on_the_moveit_backend(robot, tmp_path):
    """franka.launch.py writes MoveIt's parameters under /** for the in-process MoveItPy (moveit_params.py), so the
    node gets them too: on the moveit backend they are MoveIt's; on any other backend nothing reads them."""
    names = _moveit_names(robot, tmp_path)
    assert len({n.split(".")[0] for n in names}) >= 3
    assert params.undeclared(names, DECLARED, "moveit") == []
    assert len(params.undeclared(names, DECLARED, "controllers")) == len(names)
    # the moveit backend still refuses a misspelling of one of ours
    assert params.undeclared([*names, "confirm_gaol", "moveit.robto", "markers.fram"], DECLARED, "moveit") == [
        "confirm_gaol: not a parameter of this node; did you mean confirm_goal?",
        "markers.fram: not a parameter of this node; did you mean markers.frame?",
        "moveit.robto: not a parameter of this node; did you mean moveit.robot?"]


def test_moveit_roots_of_move_group_configs_are_not_taken_for_ours():
    """Top-level names a MoveItConfigsBuilder(...).to_dict() gives (gazebo.launch.py hands it to the node): none is
    within the misspelling distance of one of ours."""
    roots = ["robot_description", "robot_description_semantic", "robot_description_kinematics",
             "robot_description_planning", "planning_pipelines", "default_planning_pipeline", "ompl", "chomp", "stomp",
             "pilz_industrial_motion_planner", "moveit_controller_manager", "moveit_simple_controller_manager",
             "moveit_manage_controllers", "trajectory_execution", "planning_scene_monitor_options",
             "plan_request_params", "publish_planning_scene", "publish_geometry_updates", "publish_state_updates",
             "publish_transforms_updates", "publish_robot_description", "publish_robot_description_semantic",
             "sensors", "octomap_frame", "octomap_resolution", "max_range", "capabilities", "disable_capabilities",
             "monitor_dynamics", "allow_trajectory_execution", "ompl_rrtc", "pilz_lin", "joint_limits"]
    assert params.undeclared([f"{r}.x" for r in roots], DECLARED, "moveit") == []


def _launch_parameter_names(path: Path) -> set[str]:
    """Keys of the dict literals a launch file gives the node (``extra_parameters=[...]``, names resolved to the
    dicts they are assigned in the file)."""
    tree = ast.parse(path.read_text())
    assigned = {t.id: n.value for n in ast.walk(tree) if isinstance(n, ast.Assign) for t in n.targets
                if isinstance(t, ast.Name) and isinstance(n.value, ast.Dict)}
    names = set()
    for call in ast.walk(tree):
        if isinstance(call, ast.Call) and getattr(call.func, "id", "") == "step_planner_node":
            for keyword in call.keywords:
                if keyword.arg != "extra_parameters":
                    continue
                for item in ast.walk(keyword.value):
                    item = assigned.get(item.id, item) if isinstance(item, ast.Name) else item
                    if isinstance(item, ast.Dict):
                        names |= {k.value for k in item.keys if isinstance(k, ast.Constant)}
    return names


def test_the_launch_files_give_the_node_only_declared_parameters():
    """launch_common's own overrides are checked in test_launch_files; here the ones each launch file adds."""
    found = {}
    for path in sorted((ROOT / "launch").glob("*.launch.py")):
        found[path.name] = names = _launch_parameter_names(path)
        assert params.undeclared(names, DECLARED) == [], path.name
    assert {"use_sim_time", "controllers.robot"} <= found["gazebo.launch.py"]
    assert {"moveit.robot", "markers.frame"} <= found["franka.launch.py"]


# ---- the node ---------------------------------------------------------------------------------------------------

NODE = Path(sys.executable).with_name("step_planner_node")


def _node_command(name: str, *ros_args: str) -> list[str]:
    start = [str(NODE)] if NODE.exists() else [sys.executable, "-m", "step_planner.cli", "node"]
    return [*start, "--ros-args", "-r", f"__node:={name}", *ros_args]


def _run_node(name: str, *ros_args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(_node_command(name, *ros_args), capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def _name() -> str:
    return f"step_planner_params_{uuid.uuid4().hex[:8]}"


@pytest.mark.ros
def test_a_misspelt_parameter_on_the_command_line_stops_the_node_naming_it():
    pytest.importorskip("step_planner_interfaces")
    name = _name()
    done = _run_node(name, "-p", "confirm_gaol:=true", "-p", "safety.max_velocity_scalling:=0.05",
                     "-p", "llm.timeout_s:=30", "-p", "max_queue:=99")
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert "Traceback" not in done.stderr and "ready:" not in done.stderr + done.stdout
    assert lines[0].startswith(f"/{name}: 4 parameter problems (nothing was started")
    cli = " [-p on the command line]"  # each problem says where its parameter was given
    assert "  confirm_gaol: not a parameter of this node; did you mean confirm_goal?" + cli in lines
    assert any(line.startswith("  safety.max_velocity_scalling: not a parameter") and "safety_file" in line
               and line.endswith(cli) for line in lines)
    assert "  llm.timeout_s: 30 is an integer; this parameter is a double: write 30.0" + cli in lines
    assert "  max_queue must be in [1, 32], got 99" + cli in lines


@pytest.mark.ros
@pytest.mark.parametrize("section", ["own", "wildcard"])
def test_a_misspelt_key_in_a_params_file_stops_the_node_naming_it(section, tmp_path):
    pytest.importorskip("step_planner_interfaces")
    name = _name()
    shipped = yaml.safe_load((CONFIG / "step_planner.yaml").read_text())["/**"]["ros__parameters"]
    shipped["planner"]["max_dept"] = shipped["planner"].pop("max_depth")
    shipped["confirm_goal"] = "yes please"  # a string for a bool
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump({name if section == "own" else "/**": {"ros__parameters": shipped}}))
    done = _run_node(name, "--params-file", str(path))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert lines[0].startswith(f"/{name}: 2 parameter problems"), done.stderr
    source = f" [params.yaml, section {name if section == 'own' else '/**'}]"
    assert "  planner.max_dept: not a parameter of this node; did you mean planner.max_depth?" + source in lines
    assert "  confirm_goal: 'yes please' is not true or false (default False)" + source in lines


@pytest.mark.ros
@pytest.mark.slow
def test_the_shipped_params_file_with_a_launch_files_overrides_starts_the_node(tmp_path):
    """config/step_planner.yaml as the launch files give it, with their -p style overrides: the node gets ready, and
    stops on SIGINT with exit code 0."""
    pytest.importorskip("step_planner_interfaces")
    node = subprocess.Popen(
        _node_command(_name(), "--params-file", str(CONFIG / "step_planner.yaml"), "-p", "llm.offline:=true",
                      "-p", "confirm_goal:=false", "-p", "approval_mode:=false", "-p", "use_sim_time:=false",
                      "-p", "controllers.robot:=fr3", "-p", f"episodes.folder:={tmp_path}"),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    output = []
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = node.stdout.readline()
            if not line:
                break
            output.append(line)
            if "ready:" in line:
                break
        assert any("ready:" in line for line in output), "".join(output)
        node.send_signal(signal.SIGINT)
        assert node.wait(30) == 0, "".join(output) + node.stdout.read()
    finally:
        if node.poll() is None:
            node.kill()
            node.wait(10)


@pytest.mark.ros
def test_in_process_overrides_are_checked_and_moveits_pass_on_the_moveit_backend(tmp_path, monkeypatch):
    pytest.importorskip("step_planner_interfaces")
    import rclpy
    from moveit_support import moveit_parameters

    # moveit_py's stand-in: the node checks the backend's modules at start
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent / "moveit_standin"))
    from rclpy.parameter import Parameter

    from step_planner.ros.node import StepPlannerNode

    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        with pytest.raises(params.ParameterError) as error:
            StepPlannerNode(_name(), context=context, parameter_overrides=[Parameter("confirm_gaol", value=True)])
        assert error.value.problems == ["confirm_gaol: not a parameter of this node; did you mean confirm_goal?"]
        moveit = [Parameter(n, value=v) for n, v in _flat(moveit_parameters("fr3", tmp_path)).items()]
        node = StepPlannerNode(_name(), context=context, parameter_overrides=[
            *moveit, Parameter("backend", value="moveit"), Parameter("moveit.robot", value="fr3"),
            Parameter("episodes.folder", value=str(tmp_path))])
        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)


def _flat(data: dict, prefix: str = "") -> dict:
    out = {}
    for key, value in data.items():
        if isinstance(value, dict):
            out.update(_flat(value, f"{prefix}{key}."))
        elif value != []:  # rclpy cannot type an empty list
            out[f"{prefix}{key}"] = value
    return out


@pytest.mark.ros
def test_describe_parameters_shows_every_descriptor_as_ros2_param_describe_does(tmp_path):
    pytest.importorskip("step_planner_interfaces")
    import rclpy
    from rcl_interfaces.msg import ParameterType
    from rcl_interfaces.srv import DescribeParameters
    from rclpy.executors import MultiThreadedExecutor
    from rclpy.parameter import Parameter

    from step_planner.ros.node import StepPlannerNode

    context = rclpy.Context()
    rclpy.init(context=context)
    name = _name()
    executor = MultiThreadedExecutor(context=context)
    try:
        node = StepPlannerNode(name, context=context,
                               parameter_overrides=[Parameter("episodes.folder", value=str(tmp_path))])
        client_node = rclpy.create_node(f"{name}_client", context=context)
        executor.add_node(node)
        executor.add_node(client_node)
        client = client_node.create_client(DescribeParameters, f"/{name}/describe_parameters")
        assert client.wait_for_service(timeout_sec=15)
        future = client.call_async(DescribeParameters.Request(names=list(params.SPECS)))
        executor.spin_until_future_complete(future, timeout_sec=15)
        descriptors = {d.name: d for d in future.result().descriptors}
        kinds = {bool: ParameterType.PARAMETER_BOOL, int: ParameterType.PARAMETER_INTEGER,
                 float: ParameterType.PARAMETER_DOUBLE, str: ParameterType.PARAMETER_STRING,
                 list: ParameterType.PARAMETER_STRING_ARRAY}
        assert set(descriptors) == set(params.SPECS)
        for spec in params.PARAMETERS:
            d = descriptors[spec.name]
            assert d.type == kinds[type(spec.default)], spec.name
            assert d.description.startswith(spec.description) and d.read_only == spec.read_only, spec.name
            if spec.low is not None and isinstance(spec.default, int):
                assert [(r.from_value, r.to_value) for r in d.integer_range] == [(spec.low, spec.high)], spec.name
            elif spec.low is not None:
                assert [(r.from_value, r.to_value) for r in d.floating_point_range] == [(spec.low, spec.high)]
        assert descriptors["backend"].read_only and "One of: symbolic, sim, controllers, moveit." in \
            descriptors["backend"].description
        client_node.destroy_node()
        node.destroy_node()
    finally:
        executor.shutdown()
        rclpy.try_shutdown(context=context)


def _misspell(word: str) -> str:
    i = next((i for i in range(1, len(word) - 1) if word[i] != word[i + 1] and "_" not in word[i:i + 2]), None)
    return word + "x" if i is None else word[:i] + word[i + 1] + word[i] + word[i + 2:]


def _start(context_args: list[str], overrides=()):
    """StepPlannerNode in a context initialised with ``context_args`` (as ``step_planner_node`` initialises
    rclpy with its command line): the ParameterError it raises, or None when it started (then destroyed)."""
    import rclpy

    from step_planner.ros.node import StepPlannerNode

    context = rclpy.Context()
    rclpy.init(args=["step_planner_node", "--ros-args", *context_args], context=context)
    try:
        StepPlannerNode(_name(), context=context, parameter_overrides=list(overrides)).destroy_node()
    except params.ParameterError as exc:
        return exc
    finally:
        rclpy.try_shutdown(context=context)
    return None


def _shipped() -> dict:
    return yaml.safe_load((CONFIG / "step_planner.yaml").read_text())["/**"]["ros__parameters"]


def _rename(data: dict, path: list[str], new: str) -> None:
    *groups, last = path
    for group in groups:
        data = data[group]
    data[new] = data.pop(last)


@pytest.mark.ros
@pytest.mark.parametrize("level", ["leaf", "group"])
def test_every_key_of_the_shipped_params_file_misspelt_is_refused_by_name(level, tmp_path):
    """Every leaf key of config/step_planner.yaml (or every group: llm, planner, ...) misspelt, all in one file:
    one refusal naming each of them, and the declared name it was meant to be."""
    pytest.importorskip("step_planner_interfaces")
    data = _shipped()
    names = _dotted(data)
    expected = {}
    if level == "leaf":
        for name in names:
            *groups, last = name.split(".")
            wrong = ".".join([*groups, _misspell(last)])
            _rename(data, name.split("."), _misspell(last))
            expected[wrong] = name
    else:
        for group in sorted({n.split(".")[0] for n in names if "." in n}):
            _rename(data, [group], _misspell(group))
            expected |= {_misspell(group) + n[len(group):]: n for n in names if n.startswith(group + ".")}
    path = tmp_path / "misspelt.yaml"
    path.write_text(yaml.safe_dump({"/**": {"ros__parameters": data}}))
    error = _start(["--params-file", str(path)])
    assert error is not None
    refused = {p.split(":", 1)[0]: p for p in error.problems}
    assert set(refused) == set(expected), set(refused) ^ set(expected)
    assert len(expected) >= (50 if level == "leaf" else 8)
    for wrong, meant in expected.items():
        assert refused[wrong] == f"{wrong}: not a parameter of this node; did you mean {meant}?"


@pytest.mark.ros
def test_every_key_of_the_shipped_params_file_with_a_wrong_type_is_refused_by_name(tmp_path):
    pytest.importorskip("step_planner_interfaces")
    data = _shipped()
    wrong_values = {bool: "maybe", int: "many", float: "fast", str: 7, list: "control_flow"}

    def wrong(node: dict) -> None:
        for key, value in node.items():
            if isinstance(value, dict):
                wrong(value)
            elif type(value) in wrong_values:
                node[key] = wrong_values[type(value)]

    wrong(data)
    path = tmp_path / "wrong_types.yaml"
    path.write_text(yaml.safe_dump({"/**": {"ros__parameters": data}}))
    error = _start(["--params-file", str(path)])
    names = _dotted(_shipped())
    refused = {p.split(":", 1)[0].split(" ", 1)[0]: p for p in error.problems}
    assert set(refused) == set(names), set(refused) ^ set(names)
    assert "scene: 7 is not a string (default 'drawer_desk')" in error.problems
    assert "max_queue: 'many' is not an integer (default 4)" in error.problems
    assert "approval_mode: 'maybe' is not true or false (default False)" in error.problems
    assert "planner.features: 'control_flow' is not a list of strings (default [])" in error.problems


@pytest.mark.ros
def test_the_shipped_params_file_alone_starts_the_node_in_process(tmp_path):
    pytest.importorskip("step_planner_interfaces")
    from rclpy.parameter import Parameter

    assert _start(["--params-file", str(CONFIG / "step_planner.yaml")],
                  [Parameter("episodes.folder", value=str(tmp_path))]) is None


def test_where_a_parameter_was_given_is_the_last_source_that_applies_to_the_node(tmp_path):
    """rcl applies the params files in order, then the -p overrides: the source named is the one whose value the
    node got; a section for another node, or a file that is not there, names nothing."""
    first, second = tmp_path / "first.yaml", tmp_path / "second.yaml"
    first.write_text(yaml.safe_dump({"/**": {"ros__parameters": {"planner": {"max_dept": 3}, "scene": "x"}},
                                     "/other_node": {"ros__parameters": {"only_other": 1}}}))
    second.write_text(yaml.safe_dump({"/robot1/step_planner": {"ros__parameters": {"scene": "y", "confirm_gaol": 1}},
                                      "/*/step_*": {"ros__parameters": {"by_star": 1}},
                                      "/robot2/step_planner": {"ros__parameters": {"elsewhere": 1}}}))
    argv = ["--ros-args", "--params-file", str(first), "-r", "__ns:=/robot1", "--params-file", str(second),
            "--params-file", str(tmp_path / "missing.yaml"), "-p", "confirm_gaol:=true", "--", "--foo", "-p", "x:=1"]
    where = params.given_where(argv, "/robot1/step_planner")
    assert where == {"planner.max_dept": "first.yaml, section /**",
                     "scene": "second.yaml, section /robot1/step_planner",
                     "confirm_gaol": "-p on the command line", "by_star": "second.yaml, section /*/step_*"}


@pytest.mark.parametrize(("section", "node", "applies"), [
    ("/**", "/step_planner", True), ("/**", "/a/b/step_planner", True), ("**", "/x", True),
    ("step_planner", "/step_planner", True), ("/step_planner", "/robot1/step_planner", False),
    ("/*/step_planner", "/robot1/step_planner", True), ("/*/step_planner", "/a/b/step_planner", False),
    ("/**/step_planner", "/a/b/step_planner", True), ("/step_planne", "/step_planner", False),
])
def test_a_params_file_section_applies_as_rcl_matches_node_names(section, node, applies):
    assert params._section_matches(section, node) is applies


def test_a_refusal_names_the_source_of_each_parameter_it_knows_and_leaves_the_others():
    error = params.ParameterError("/n", ["confirm_gaol: not a parameter", "max_queue must be in [1, 32], got 99",
                                         "scene: 7 is not a string"])
    located = error.located({"confirm_gaol": "a.yaml, section /**", "max_queue": "-p on the command line"})
    assert located.problems == ["confirm_gaol: not a parameter [a.yaml, section /**]",
                                "max_queue must be in [1, 32], got 99 [-p on the command line]",
                                "scene: 7 is not a string"]
    assert str(located).startswith("/n: 3 parameter problems")


# ---- `step-planner config check` on a params file refuses what the node refuses ---------------------------------

def _typos():
    """benchmarks/config_typos.py's misspellings (the benchmark measures the same generator over every file)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("config_typos", ROOT / "benchmarks" / "config_typos.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.typos


def _config_check(path: Path) -> tuple[int, str]:
    import contextlib
    import io

    from step_planner.config_check import main_config

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = main_config(["check", str(path)])
    return code, out.getvalue()


@pytest.mark.ros
@pytest.mark.parametrize("change", ["typo0", "typo1", "typo2", "typo3", "typo4", "typo5", "wrong_type", "integer"])
def test_config_check_refuses_exactly_what_the_node_refuses_in_a_params_file(change, tmp_path):
    """Every parameter of config/step_planner.yaml misspelt one way (or given a value of another type, or an integer
    for a double), all in one file: `config check` (no node) names the same problems, line for line, as the node
    does at start, each with its section."""
    pytest.importorskip("step_planner_interfaces")
    typos = _typos()
    data = _shipped()
    for name in _dotted(_shipped()):
        *groups, last = name.split(".")
        holder = data
        for group in groups:
            holder = holder[group]
        if change.startswith("typo"):
            options = typos(last)
            k = int(change[-1])
            if k < len(options) and options[k] not in holder:
                holder[options[k]] = holder.pop(last)
        elif change == "wrong_type":
            holder[last] = {bool: "maybe", int: "many", float: "fast", str: 7}.get(type(holder[last]), holder[last])
        elif isinstance(holder[last], float):
            holder[last] = int(holder[last])
    path = tmp_path / "my_params.yaml"  # a name no kind has: its shape says what it is
    path.write_text(yaml.safe_dump({"/**": {"ros__parameters": data}}))
    error = _start(["--params-file", str(path)])
    assert error is not None and len(error.problems) >= 10
    code, out = _config_check(path)
    assert code == 1 and "(params)" in out, out
    checked = [line.strip()[len("section /**: "):] for line in out.splitlines() if "section /**: " in line]
    assert sorted(checked) == sorted(error.problems)


@pytest.mark.ros
def test_what_rclpy_declares_itself_is_what_config_check_lets_through():
    pytest.importorskip("step_planner_interfaces")
    import rclpy

    from step_planner.ros.node import StepPlannerNode

    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = StepPlannerNode(_name(), context=context)
        try:
            assert set(node.list_parameters([], 0).names) == set(params.SPECS) | set(params.RCLPY_DECLARED)
        finally:
            node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)
