"""Our ros2_control files against the parameters upstream declares (issue 37, part 6).

ros2_control loads config/ros2_controllers_*.yaml and config/fr3_moveit/fake_hardware_controllers.yaml on the robot,
where a key nobody declares is ignored: a misspelt ``constraints.goal_time`` leaves the default (0: wait forever)
without a word. Here every key under each node's ``ros__parameters`` must exist in the declarations of the node it
configures -- the controller manager, or the controller whose type the manager's section names -- as
generate_parameter_library files and C++ read them upstream (test/data/upstream_params/, with repository, branch
and commit in its README), map-of-joints keys (``constraints.<joint>.goal``, ``gains.<joint>.p``) against the
section's ``joints``, and values of the declared type and validators (comparisons, one_of, not_empty, unique).
A controller type with no stored declarations must be listed in NOT_CHECKED, with the reason.
"""

from __future__ import annotations

import copy
import difflib
import functools
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_package_data import installed_files

ROOT = Path(__file__).resolve().parents[1]
UPSTREAM = ROOT / "test" / "data" / "upstream_params"
PARAMS = "ros__parameters"
MANAGER = "controller_manager"

# controller type (plugin class name) -> declaration files of UPSTREAM (plugin xml files: see the README)
BASE = ("code_declared.yaml:controller_interface",)
TYPES: dict[str, tuple[str, ...]] = {
    "joint_trajectory_controller/JointTrajectoryController": ("joint_trajectory_controller_parameters.yaml", *BASE),
    "position_controllers/GripperActionController": ("gripper_action_controller_parameters.yaml", *BASE),
    "effort_controllers/GripperActionController": ("gripper_action_controller_parameters.yaml",
                                                   "code_declared.yaml:effort_gripper_action_controller", *BASE),
    "parallel_gripper_action_controller/GripperActionController": (
        "parallel_gripper_action_controller_parameters.yaml", *BASE),
    "joint_state_broadcaster/JointStateBroadcaster": ("joint_state_broadcaster_parameters.yaml", *BASE),
    "franka_robot_state_broadcaster/FrankaRobotStateBroadcaster": (
        "franka_robot_state_broadcaster_parameters.yaml", *BASE),
}
MANAGER_FILES = ("controller_manager_parameters.yaml", "code_declared.yaml:controller_manager")
NOT_CHECKED: dict[str, str] = {}  # controller type -> why its keys are not checked (none at present)

PY_TYPES = {"bool": (bool,), "int": (int,), "double": (float,), "string": (str,)}


def _merge(into: dict, other: dict) -> dict:
    for key, value in other.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict) and not is_leaf(value):
            _merge(into[key], value)
        else:
            into[key] = value
    return into


def declarations(files: tuple[str, ...]) -> dict:
    """One declaration tree from generate_parameter_library files (``file`` or ``file:top key``)."""
    return copy.deepcopy(_declarations(files))


@functools.cache
def _declarations(files: tuple[str, ...]) -> dict:
    tree: dict = {}
    for spec in files:
        name, _, key = spec.partition(":")
        data = yaml.safe_load((UPSTREAM / name).read_text())
        (section,) = [data[key]] if key else data.values()  # a library file has one top key: its namespace
        _merge(tree, copy.deepcopy(section))
    return tree


def is_leaf(entry: Any) -> bool:
    """A declared parameter ({type: int, ...}), not a group (a group may hold a parameter named ``type``)."""
    return isinstance(entry, dict) and isinstance(entry.get("type"), str)


def type_ok(declared: str, value: Any) -> bool:
    for option in declared.split("|"):
        if option.endswith("_array"):
            item = PY_TYPES.get(option[: -len("_array")])
            if isinstance(value, list) and item and all(isinstance(v, item) and not
                                                         (item == (int,) and isinstance(v, bool)) for v in value):
                return True
        elif option.startswith("string_fixed"):
            if isinstance(value, str):
                return True
        elif (kinds := PY_TYPES.get(option)) and isinstance(value, kinds) and not (
                option in ("int", "double") and isinstance(value, bool)):
            return True
    return False


COMPARE = {"gt": (lambda v, a: v > a, ">"), "gt_eq": (lambda v, a: v >= a, ">="),
           "lt": (lambda v, a: v < a, "<"), "lt_eq": (lambda v, a: v <= a, "<=")}


def invalid(name: str, validation: dict, value: Any) -> str | None:
    """The first of the declaration's comparisons, one_of, not_empty and unique validators that ``value`` fails
    (generate_parameter_library's names; ``<>`` marks its templated forms). Others (size_gt, subset_of, ...) are
    not checked here."""
    for rule, argument in validation.items():
        rule = rule.removesuffix("<>")
        arg = argument[0] if isinstance(argument, list) and len(argument) == 1 else argument
        if rule in COMPARE and isinstance(value, (int, float)) and not COMPARE[rule][0](value, arg):
            return f"{name}: {value!r} fails the declared {COMPARE[rule][1]} {arg!r}"
        if rule == "one_of" and value not in arg:
            return f"{name}: {value!r} is not one of {arg}"
        if rule == "not_empty" and not value:
            return f"{name}: must not be empty"
        if rule == "unique" and isinstance(value, list) and len(set(value)) != len(value):
            return f"{name}: {value!r} repeats an entry"
    return None


def flatten(data: dict, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten(value, name + "."))
        else:
            out[name] = value
    return out


def node_sections(document: dict) -> dict[str, dict]:
    """{node name: its ros__parameters}, from node keys at the top or under wildcard / namespace keys (``/**``)."""
    out: dict[str, dict] = {}
    for key, value in (document or {}).items():
        if not isinstance(value, dict):
            continue
        if PARAMS in value:
            out[key.rsplit("/", 1)[-1]] = value[PARAMS] or {}
        elif key.startswith("/"):
            out.update(node_sections(value))
    return out


def unknown(name: str, tree: dict, section: dict[str, Any]) -> str | None:
    """Why the dotted ``name`` is not declared in ``tree`` (None when it is): the first segment that matches nothing,
    with the nearest declared name. ``__map_<param>`` levels take the entries of ``section[param]``."""
    node = tree
    segments = name.split(".")
    for i, segment in enumerate(segments):
        here = ".".join(segments[: i + 1])
        if is_leaf(node):
            return f"{here}: {'.'.join(segments[:i])} takes no sub-keys"
        if segment in node and not segment.startswith("__"):
            node = node[segment]
            continue
        maps = [k for k in node if k.startswith("__map_")]
        entries = set()
        for key in maps:
            value = section.get(key[len("__map_"):], [])
            entries |= {value} if isinstance(value, str) else set(value)
        if segment in entries:
            (map_key,) = [k for k in maps if segment in (lambda v: {v} if isinstance(v, str) else set(v))(
                section.get(k[len("__map_"):], []))]
            node = node[map_key]
            continue
        known = sorted([k for k in node if not k.startswith("__")] + sorted(entries))
        near = difflib.get_close_matches(segment, known, n=1)
        hint = f"; did you mean {near[0]}?" if near else f"; known here: {', '.join(known) or '(none)'}"
        return f"{here}: not declared{hint}"
    if not is_leaf(node):
        return f"{name}: a group, not a parameter"
    return None


def check(document: dict) -> tuple[list[str], dict[str, str]]:
    """(problems, {controller: its type} of types left unchecked) for one ros2_control parameter file."""
    sections = node_sections(document)
    problems: list[str] = []
    unchecked: dict[str, str] = {}
    manager = sections.get(MANAGER)
    if manager is None:
        return [f"no {MANAGER} section"], unchecked
    manager_tree = declarations(MANAGER_FILES)
    each = manager_tree.pop("__each_controller")
    controllers = {k: v for k, v in manager.items() if isinstance(v, dict) and k not in manager_tree}
    for name, entries in controllers.items():
        manager_tree[name] = copy.deepcopy(each)
        if "type" not in entries:
            problems.append(f"{MANAGER}: {name}: no type (a controller the manager cannot load)")
    for node, params in sections.items():
        if node == MANAGER:
            tree = manager_tree
        elif node not in controllers:
            near = difflib.get_close_matches(node, list(controllers), n=1)
            problems.append(f"{node}: no controller of that name in {MANAGER}"
                            + (f"; did you mean {near[0]}?" if near else ""))
            continue
        else:
            kind = controllers[node].get("type")
            if kind in NOT_CHECKED or kind not in TYPES:
                unchecked[node] = kind
                continue
            tree = declarations(TYPES[kind])
        for name, value in flatten(params).items():
            problem = unknown(name, tree, params)
            if problem is None:
                leaf = _leaf(tree, name, params)
                if not type_ok(leaf["type"], value):
                    problem = f"{name}: {value!r} is not of the declared type {leaf['type']}"
                else:
                    problem = invalid(name, leaf.get("validation") or {}, value)
            if problem:
                problems.append(f"{node}: {problem}")
    return problems, unchecked


def _leaf(tree: dict, name: str, section: dict) -> dict:
    node = tree
    for segment in name.split("."):
        if segment in node:
            node = node[segment]
        else:
            node = next(v for k, v in node.items() if k.startswith("__map_") and segment in (
                {section.get(k[6:])} if isinstance(section.get(k[6:]), str) else set(section.get(k[6:], []))))
    return node


def ros2_control_files() -> list[Path]:
    """Every config file holding a controller_manager section: the files ros2_control loads."""
    found = []
    for path in sorted((ROOT / "config").rglob("*.yaml")):
        text = path.read_text()
        if MANAGER not in text:  # its section is a key of that name: no need to parse the tasks and lexicons (1 s)
            continue
        document = yaml.safe_load(text)
        if isinstance(document, dict) and MANAGER in node_sections(document):
            found.append(path)
    return found


FILES = ros2_control_files()


def _id(path: Path) -> str:
    return str(path.relative_to(ROOT / "config"))


def test_the_ros2_control_files_are_found():
    names = {_id(p) for p in FILES}
    assert {"ros2_controllers_fr3.yaml", "ros2_controllers_panda.yaml", "fr3_moveit/fake_hardware_controllers.yaml"} \
        <= names, names


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_every_key_is_declared_upstream_with_its_type(path):
    problems, unchecked = check(yaml.safe_load(path.read_text()))
    assert not problems, "\n".join(problems)
    assert set(unchecked.values()) <= set(NOT_CHECKED), (
        f"no upstream declarations stored for {unchecked}: add them to test/data/upstream_params (README) or list "
        "the type in NOT_CHECKED with the reason")


def test_the_controller_types_in_use_are_all_checked():
    """Listed explicitly: which controllers of our files are checked, and which are not (none)."""
    kinds = set()
    for path in FILES:
        manager = node_sections(yaml.safe_load(path.read_text()))[MANAGER]
        kinds |= {v["type"] for v in manager.values() if isinstance(v, dict) and "type" in v}
    assert kinds <= set(TYPES) | set(NOT_CHECKED)
    assert {"joint_trajectory_controller/JointTrajectoryController", "joint_state_broadcaster/JointStateBroadcaster",
            "position_controllers/GripperActionController"} <= kinds
    assert not kinds & set(NOT_CHECKED)


def test_a_misspelt_goal_time_fails_naming_it_and_the_declared_name():
    document = yaml.safe_load((ROOT / "config" / "ros2_controllers_panda.yaml").read_text())
    constraints = document["panda_arm_controller"][PARAMS]["constraints"]
    constraints["goal_tme"] = constraints.pop("goal_time")
    problems, _ = check(document)
    assert problems == ["panda_arm_controller: constraints.goal_tme: not declared; did you mean goal_time?"]


@pytest.mark.parametrize("key, value, expected", [
    ("constraints.panda_joint8.goal", 0.1, "constraints.panda_joint8: not declared; did you mean panda_joint7?"),
    ("constraints.panda_joint1.goal", 1, "constraints.panda_joint1.goal: 1 is not of the declared type double"),
    ("constraints.goal_time", {"x": 0.1}, "constraints.goal_time.x: constraints.goal_time takes no sub-keys"),
    ("gains.panda_joint1.pp", 1.0, "gains.panda_joint1.pp: not declared; did you mean p?"),
    ("allow_partial_joints_goal", "yes", "allow_partial_joints_goal: 'yes' is not of the declared type bool"),
    ("constraints", 0.1, "constraints: a group, not a parameter"),
    ("constraints.goal_time", -1.0, "constraints.goal_time: -1.0 fails the declared >= 0.0"),
    ("action_monitor_rate", 0.0, "action_monitor_rate: 0.0 fails the declared >= 0.1"),
    ("interpolation_method", "cubic", "interpolation_method: 'cubic' is not one of ['splines', 'none']"),
    ("state_interfaces", ["position", "position"], "state_interfaces: ['position', 'position'] repeats an entry"),
])
def test_map_of_joints_keys_and_types_are_checked(key, value, expected):
    document = yaml.safe_load((ROOT / "config" / "ros2_controllers_panda.yaml").read_text())
    params = document["panda_arm_controller"][PARAMS]
    node = params
    *groups, last = key.split(".")
    for group in groups:
        node = node.setdefault(group, {})
    node[last] = value
    problems, _ = check(document)
    assert problems == [f"panda_arm_controller: {expected}"]


def test_manager_keys_and_controller_names_are_checked():
    document = yaml.safe_load((ROOT / "config" / "ros2_controllers_fr3.yaml").read_text())
    manager = document[MANAGER][PARAMS]
    manager["update_rate"] = 1000.0  # declared int: rclcpp refuses a double
    manager["thread_priorty"] = 98
    document["fr3_arm_controler"] = document.pop("fr3_arm_controller")
    problems, _ = check(document)
    assert "controller_manager: update_rate: 1000.0 is not of the declared type int" in problems
    assert any(p.startswith("controller_manager: thread_priorty: not declared; did you mean thread_priority?")
               for p in problems), problems
    assert "fr3_arm_controler: no controller of that name in controller_manager; did you mean fr3_arm_controller?" \
        in problems


def _leaves(document: dict) -> list[tuple[str, ...]]:
    """(top key, ..., leaf key) paths of every leaf under a ros__parameters."""
    out = []

    def walk(path: tuple[str, ...], data: Any, inside: bool) -> None:
        if isinstance(data, dict):
            for key, value in data.items():
                walk((*path, key), value, inside or key == PARAMS)
        elif inside:
            out.append(path)

    walk((), document, False)
    return out


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_every_key_misspelt_is_refused_naming_it(path):
    """Each segment of every leaf key under ros__parameters, with two letters swapped: refused, the message naming
    the misspelt segment (for a controller renamed in the manager's list, its section names it as the near name).
    A controller of the manager's list that has no section of its own (joint_state_broadcaster) renamed is a new
    controller, which nothing here can tell from a typo: the launch files' spawners name the controllers
    (test_fr3_controllers_launch.py, test_gazebo_launch.py, test_franka_launch.py)."""
    original = yaml.safe_load(path.read_text())
    mutated = 0
    for leaf in _leaves(original):
        start = leaf.index(PARAMS) + 1
        for i in range(start, len(leaf)):
            word = leaf[i]
            if len(word) < 3 or word[1] == word[2]:
                continue
            wrong = word[0] + word[2] + word[1] + word[3:]
            if leaf[start - 2] == MANAGER and i == start and leaf[-1] == "type" and word not in node_sections(original):
                continue
            document = copy.deepcopy(original)
            node = document
            for key in leaf[:i]:
                node = node[key]
            node[wrong] = node.pop(word)
            problems, _ = check(document)
            assert any(wrong in p for p in problems), (leaf, wrong, problems)
            mutated += 1
    assert mutated >= len(_leaves(original))


def test_the_upstream_declarations_are_not_installed(monkeypatch):
    installed = installed_files(monkeypatch)
    assert not [src for src in installed.values() if Path(src).parts[0] == "test"]
    assert (UPSTREAM / "README.md").read_text().count("jazzy") >= 6


def test_franka_robot_state_broadcaster_and_the_manager_thread_priority_are_checked():
    """franka_bringup's controllers.yaml (franka_ros2 jazzy 29cb85a) runs franka_robot_state_broadcaster with the
    manager at thread_priority 98: both are declared; a key of the broadcaster that it does not declare is not."""
    document = yaml.safe_load((ROOT / "config" / "ros2_controllers_fr3.yaml").read_text())
    manager = document[MANAGER][PARAMS]
    manager["thread_priority"] = 98
    manager["franka_robot_state_broadcaster"] = {
        "type": "franka_robot_state_broadcaster/FrankaRobotStateBroadcaster"}
    document["franka_robot_state_broadcaster"] = {PARAMS: {"arm_prefix": "", "robot_type": "fr3"}}
    assert check(document) == ([], {})
    document["franka_robot_state_broadcaster"][PARAMS]["robot_typ"] = "fr3"
    assert check(document)[0] == [
        "franka_robot_state_broadcaster: robot_typ: not declared; did you mean robot_type?"]
