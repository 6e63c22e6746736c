"""Every argument a launch file declares does something (issue 45, part 3): ``rviz:=true`` on a file that never read
it was silently ignored.

For each launch file and each argument it declares (read from the file as ``ros2 launch --show-args`` reads them),
the file runs twice against fake_launch: with a base command line, and with that argument set to another valid
value. What the launch would do must differ: the nodes it starts (package, executable, resolved name and namespace,
remaps, parameters, command-line arguments), the launch files it includes with their arguments, what it logs, or a
refusal that stops it. Temporary files the launch writes are compared by content, not by their random names.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import sys
import tempfile
import types
from pathlib import Path

import pytest
import yaml
from fake_launch import INCLUDED, LOGGED, fake_launch, load_launch_file, run
from moveit_support import fr3_config_share
from test_fr3_controllers_launch import INSTALLED as FR3_CONTROLLERS_INSTALLED
from test_franka_launch import FR3
from test_gazebo_launch import INSTALLED as GAZEBO_INSTALLED

ROOT = Path(__file__).resolve().parents[1]
TEMPORARY = re.compile(re.escape(tempfile.gettempdir()) + r"/step_planner_[^\s'\",)\]]*")
REAL_ARM = {"robot_ip": "172.16.0.2"}
FILES = {  # file: (ROS packages installed, the base command line)
    "step_planner.launch.py": ({"robot_state_publisher", "rviz2"}, {}),
    "fr3_controllers.launch.py": (FR3_CONTROLLERS_INSTALLED | {"rviz2"}, REAL_ARM),
    "franka.launch.py": (FR3 | {"rviz2"}, REAL_ARM),
    "gazebo.launch.py": (GAZEBO_INSTALLED | {"rviz2"}, {}),
}
# an argument whose effect shows only with another one set: (file or "*", argument) -> the base's additions
NEEDS = {("step_planner.launch.py", "realtime_factor"): {"backend": "sim"}}
SPAWNED = (("fr3_arm_controller", "joint_trajectory_controller/JointTrajectoryController"),
           ("joint_state_broadcaster", "joint_state_broadcaster/JointStateBroadcaster"),
           ("franka_robot_state_broadcaster", "franka_robot_state_broadcaster/FrankaRobotStateBroadcaster"))
CONTROLLERS_YAML = {"controller_manager": {"ros__parameters": {name: {"type": kind} for name, kind in SPAWNED}}}


def xacro_module() -> types.ModuleType:
    """xacro.process_file whose document carries the file and the mappings, as the real URDF carries robot_ip and
    use_fake_hardware into its ros2_control hardware parameters."""
    module = types.ModuleType("xacro")

    def process_file(path, mappings=None):
        text = f'<robot name="fr3"><!-- {Path(path).name} {sorted((mappings or {}).items())} --></robot>'
        return types.SimpleNamespace(toprettyxml=lambda indent="": text)

    module.process_file = process_file
    return module


def other_value(argument, tmp_path: Path) -> str:
    """Another valid value of ``argument`` than its default."""
    default = str(argument.default_value) if isinstance(argument.default_value, str) else ""
    if argument.choices:
        return next(c for c in argument.choices if c != default)
    if default.lower() in ("true", "false"):
        return "false" if default.lower() == "true" else "true"
    if argument.name == "confirm_goal":  # follows approval_mode (false in the base)
        return "true"
    if argument.name == "params_file":
        copy = tmp_path / "my_params.yaml"
        shutil.copy(ROOT / "config" / "step_planner.yaml", copy)
        return str(copy)
    if argument.name == "controllers_yaml":
        path = tmp_path / "my_controllers.yaml"
        path.write_text(yaml.safe_dump(CONTROLLERS_YAML))
        return str(path)
    return {"scene": "workshop", "llm_model": "qwen2.5:14b", "llm_base_url": "http://localhost:11434/v1",
            "realtime_factor": "2.0", "robot_type": "panda", "arm_prefix": "left", "namespace": "arm1",
            "robot_ip": "172.16.0.9", "joint_state_rate": "50", "robot": "fr3", "seed": "3",
            "description_file": str(ROOT / "config" / "gazebo" / "panda_gazebo.urdf.xacro")}[argument.name]


def contents(text: str) -> str:
    """Temporary files and folders the launch wrote, by their content."""
    def digest(match: re.Match) -> str:
        path = Path(match.group(0))
        if path.is_dir():
            return "dir:" + ",".join(f"{p.name}={hashlib.sha1(p.read_bytes()).hexdigest()[:12]}"
                                     for p in sorted(path.iterdir()))
        return "file:" + (hashlib.sha1(path.read_bytes()).hexdigest()[:12] if path.exists() else "gone")

    return TEMPORARY.sub(digest, text)


def what_it_does(name: str, arguments: dict[str, str], tmp_path: Path) -> str:
    installed, _ = FILES[name]
    for package in installed:
        (tmp_path / "share" / package).mkdir(parents=True, exist_ok=True)
    fr3_config_share(tmp_path / "share")
    gz = tmp_path / "share" / "ros_gz_sim" / "launch"
    gz.mkdir(parents=True, exist_ok=True)
    (gz / "gz_sim.launch.py").write_text("from launch import LaunchDescription\n\n\n"
                                         "def generate_launch_description():\n    return LaunchDescription([])\n")
    before = set(Path(tempfile.gettempdir()).glob("step_planner_*"))
    sys.modules.pop("xacro", None)
    with fake_launch(tmp_path, installed=set(installed), provided={"xacro": xacro_module()}):
        started, error = run(load_launch_file(ROOT / "launch" / name).generate_launch_description(), arguments)
        logged, included = list(LOGGED), list(INCLUDED)
    sys.modules.pop("xacro", None)
    nodes = [(n.package, n.executable, n.resolved, n.kwargs.get("arguments")) for n in started]
    text = contents(repr((nodes, included, type(error).__name__, str(error), logged)))
    text = text.replace(str(tmp_path), "<prefix>")  # the two runs' ament prefixes
    for path in set(Path(tempfile.gettempdir()).glob("step_planner_*")) - before:  # what the shutdown would remove
        shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)
    return text


def declared(name: str, tmp_path: Path) -> list:
    with fake_launch(tmp_path / "show", installed=set()):
        return load_launch_file(ROOT / "launch" / name).generate_launch_description().get_launch_arguments()


CASES = [(name, argument.name) for name in FILES for argument in declared(name, Path(tempfile.mkdtemp()))]


@pytest.mark.parametrize("name, argument", CASES, ids=[f"{n}:{a}" for n, a in CASES])
def test_every_declared_argument_changes_what_the_launch_does(tmp_path, name, argument):
    (spec,) = [a for a in declared(name, tmp_path) if a.name == argument]
    base = {**FILES[name][1], **NEEDS.get((name, argument), {})}
    value = other_value(spec, tmp_path)
    default = what_it_does(name, base, tmp_path / "a")
    changed = what_it_does(name, {**base, argument: value}, tmp_path / "b")
    assert "RefusedArguments" not in default and "MissingDependency" not in default, default[-600:]
    assert changed != default, f"{name} {argument}:={value} changes nothing"


def test_the_fr3_launch_no_longer_declares_realtime_factor(tmp_path):
    """Its robot is the real arm (or fake hardware), whose pace is not ours: only step_planner.launch.py, whose
    backend:=sim starts the MuJoCo robot, declares it."""
    names = {n: {a.name for a in declared(n, tmp_path / n)} for n in FILES}
    assert [n for n in FILES if "realtime_factor" in names[n]] == ["step_planner.launch.py"]
    assert {"rviz", "load_franka_robot_state_broadcaster", "controllers_yaml"} <= names["fr3_controllers.launch.py"]


def spawned(name: str, arguments: dict[str, str], tmp_path: Path) -> tuple[list[str], str]:
    sys.modules.pop("xacro", None)
    installed = FILES[name][0]
    for package in installed:
        (tmp_path / "share" / package).mkdir(parents=True, exist_ok=True)
    fr3_config_share(tmp_path / "share")
    with fake_launch(tmp_path, installed=set(installed), provided={"xacro": xacro_module()}):
        started, error = run(load_launch_file(ROOT / "launch" / name).generate_launch_description(), arguments)
    sys.modules.pop("xacro", None)
    return [n.kwargs["arguments"][0] for n in started if n.executable == "spawner"], repr(error)


@pytest.mark.parametrize("name", ["fr3_controllers.launch.py", "franka.launch.py"])
def test_load_franka_robot_state_broadcaster_as_franka_bringup_reads_it(tmp_path, name):
    """FBL:174-188: spawned when true and the hardware is real; never on fake hardware."""
    on, _ = spawned(name, REAL_ARM, tmp_path / "on")
    off, _ = spawned(name, {**REAL_ARM, "load_franka_robot_state_broadcaster": "False"}, tmp_path / "off")
    fake, _ = spawned(name, {**REAL_ARM, "use_fake_hardware": "true"}, tmp_path / "fake")
    assert "franka_robot_state_broadcaster" in on
    assert "franka_robot_state_broadcaster" not in off and "franka_robot_state_broadcaster" not in fake


@pytest.mark.parametrize("name", ["fr3_controllers.launch.py", "franka.launch.py"])
def test_a_controllers_yaml_without_the_spawned_controllers_stops_the_launch(tmp_path, name):
    lacking = tmp_path / "lacking.yaml"
    lacking.write_text(yaml.safe_dump({"/**": {"controller_manager": {"ros__parameters": {
        "joint_state_broadcaster": {"type": "joint_state_broadcaster/JointStateBroadcaster"}}}}}))
    started, error = spawned(name, {**REAL_ARM, "controllers_yaml": str(lacking)}, tmp_path / "p")
    assert started == [] and "RefusedArguments" in error and "fr3_arm_controller" in error, error
    given = tmp_path / "given.yaml"  # namespace-agnostic, as upstream's files are keyed: taken as it is
    given.write_text(yaml.safe_dump({"/**": CONTROLLERS_YAML}))
    started, error = spawned(name, {**REAL_ARM, "controllers_yaml": str(given)}, tmp_path / "q")
    assert error == "None" and "fr3_arm_controller" in started
