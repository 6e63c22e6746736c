"""The robot-machine install (docs/install.md, "On a robot machine"): ROS 2 Jazzy from the distribution, rosdep
for the ROS packages (package.xml), pip for the rest (requirements-robot.txt) in a venv that sees the system.

Static: requirements-robot.txt pins what requirements.txt pins and holds no ROS wheel; every module the code
imports is provided by the distribution (package.xml, for rosdep) or by requirements-robot.txt; MoveIt is
installed by rosdep only when asked for (package.xml conditions, evaluated by catkin_pkg as rosdep does).

Simulated: ``make robot-install`` (scripts/robot_install.sh) installs the ros-* wheels as "the system" in a
prefix of their own with an /opt/ros-like setup.bash, the documented venv over it, and the documented workspace
built from the venv; its install holds every config file, launch file and executable (and no test-only interface
package), and the node from it, after ``source install/setup.bash``, finds its data through the ament index and
completes the demo goal offline, with rclpy from "the system", the package's dependencies from the venv and nothing
from this checkout's .venv. What that does not prove is listed in docs/install.md.
"""

from __future__ import annotations

import ast
import importlib.metadata
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import workspace_from_make

ROOT = Path(__file__).resolve().parents[1]
VENV_INDEX = Path(sys.prefix) / "share" / "ament_index" / "resource_index" / "packages"
# ROS packages the code imports that are not installed here (so not in the venv's ament index)
ROS_NOT_HERE = {"launch", "launch_ros", "control_msgs", "moveit_configs_utils", "franka_msgs"}
ROSDEP_PYTHON = {"yaml": "python3-yaml", "numpy": "python3-numpy"}  # Python modules rosdep installs
DEV_ONLY = ("step_planner/bench/",)  # benchmarks: a development tool, requirements.txt only
MOVEIT = {"moveit_py", "moveit_configs_utils", "moveit_resources_panda_moveit_config"}


def pins(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"{path.name}: {line!r} is not pinned with =="
            out[re.sub(r"[-_.]+", "-", name).lower()] = version
    return out


def test_robot_requirements_pin_what_this_machine_tests_and_no_ros_wheel():
    robot, here = pins(ROOT / "requirements-robot.txt"), pins(ROOT / "requirements.txt")
    assert robot, "requirements-robot.txt is empty"
    assert not [n for n in robot if n.startswith("ros-") or n in ("rclpy", "colcon-common-extensions")]
    for name, version in robot.items():
        assert here.get(name) == version, f"{name}=={version} in requirements-robot.txt, {here.get(name)} here"


def imports() -> dict[str, set[str]]:
    """Top-level module -> files importing it, over the package and the launch files."""
    found: dict[str, set[str]] = {}
    for path in [*(ROOT / "step_planner").rglob("*.py"), *(ROOT / "launch").glob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module else []
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in ("step_planner", "__future__"):
                    found.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return found


def declared(env: dict[str, str]) -> set[str]:
    from catkin_pkg.package import parse_package

    package = parse_package(str(ROOT / "package.xml"))
    package.evaluate_conditions(env)  # what rosdep does (rosdep2/rospkg_loader.py:144-146)
    deps = [*package.build_depends, *package.exec_depends, *package.build_export_depends]
    return {d.name for d in deps if d.evaluated_condition}


def test_every_imported_module_comes_from_rosdep_or_the_robot_requirements():
    ros = declared({"STEP_PLANNER_MOVEIT": "1"})
    robot = set(pins(ROOT / "requirements-robot.txt"))
    providers = importlib.metadata.packages_distributions()
    problems = []
    for module, files in sorted(imports().items()):
        if module in ROSDEP_PYTHON:
            ok = ROSDEP_PYTHON[module] in ros
        elif module in ROS_NOT_HERE or (VENV_INDEX / module).exists():
            ok = module in ros
        elif module in providers:
            dists = {re.sub(r"[-_.]+", "-", d).lower() for d in providers[module]}
            ok = bool(dists & robot) or all(f.startswith(DEV_ONLY) for f in files)
        else:
            ok = False
        if not ok:
            problems.append(f"{module} (imported by {sorted(files)[0]})")
    assert not problems, ("not provided on a robot machine; add the ROS package to package.xml or the pip "
                          f"package to requirements-robot.txt (and classify it here): {problems}")


def test_moveit_is_installed_by_rosdep_only_when_asked_for():
    assert not declared({}) & MOVEIT
    assert declared({"STEP_PLANNER_MOVEIT": "1"}) >= MOVEIT
    assert {"rclpy", "launch", "launch_ros", "robot_state_publisher", "python3-yaml"} <= declared({})


def test_the_simulation_runs_the_documented_robot_block():
    text = (ROOT / "docs" / "install.md").read_text().split("## On a robot machine", 1)[1]
    block = re.search(r"```bash\n(.*?)```", text, re.S).group(1)
    script = "".join((ROOT / "scripts" / name).read_text() for name in ("robot_install.sh", "colcon_workspace.sh"))
    for readme, simulated in [
        ("rosdep install --from-paths src --ignore-src -y", None),  # rosdep cannot run here (no index)
        ("python3 -m venv --system-site-packages ", '"$python" -m venv --system-site-packages '),
        # pip's result, by uv: requirements-robot.txt resolved, what the venv sees already left out, the rest installed
        ("pip install -r src/step_planner/requirements-robot.txt",
         '-c "$repo/requirements.txt" "$repo/requirements-robot.txt" -o "$root/venv-resolved.txt"'),
        ("python -m colcon build --base-paths src/step_planner src/step_planner/step_planner_interfaces",
         "colcon=(python -m colcon)"),
    ]:
        assert readme in block, readme
        assert simulated is None or simulated in script, simulated
    assert "build --base-paths src/step_planner src/step_planner/step_planner_interfaces" in script


@pytest.fixture(scope="module")
def robot(tmp_path_factory) -> Path:
    """The simulated robot machine: ``make robot-install``'s (``$STEP_PLANNER_ROBOT_INSTALL``), else built."""
    given = workspace_from_make("STEP_PLANNER_ROBOT_INSTALL")
    if given:
        root = given
        assert (root / "env.bash").is_file(), f"STEP_PLANNER_ROBOT_INSTALL={given} holds no install"
        return root
    root = tmp_path_factory.mktemp("robot") / "robot"
    done = subprocess.run([str(ROOT / "scripts" / "robot_install.sh"), str(root)], capture_output=True, text=True,
                          timeout=1200)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return root


def in_robot_shell(robot: Path, script: str, tmp_path: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    """``script`` in a shell that sourced the robot's env.bash and nothing of this machine's venv."""
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8",
           **{k: v for k, v in os.environ.items() if k.startswith("ROS_") or k in ("HF_HUB_OFFLINE", "MUJOCO_GL")}}
    return subprocess.run(["bash", "-c", f"set -eo pipefail; source {robot}/env.bash; {script}"], capture_output=True,
                          text=True, timeout=timeout, cwd=tmp_path, env=env, stdin=subprocess.DEVNULL)



def files_under(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_the_install_holds_every_config_file_and_the_executables(robot: Path):
    """What docs/install.md's `colcon build` line installs, in the robot machine's workspace."""
    workspace = robot / "ws"
    share = workspace / "install" / "step_planner" / "share" / "step_planner"
    assert files_under(share / "config") == files_under(ROOT / "config")
    assert {p.name for p in (share / "launch").glob("*.launch.py")} == {p.name for p in (ROOT / "launch").glob(
        "*.launch.py")}
    for exe in ("step_planner_node", "step-planner", "hmi"):  # hmi: `ros2 run step_planner hmi`
        assert os.access(workspace / "install" / "step_planner" / "lib" / "step_planner" / exe, os.X_OK), exe
    # the `step-planner hmi` page is package data, installed beside its server (not in share/)
    (site,) = (workspace / "install" / "step_planner" / "lib").glob("python3*/site-packages/step_planner")
    assert sorted(p.name for p in (site / "hmi" / "page").iterdir()) == ["hmi.css", "hmi.js", "index.html"]
    interfaces = workspace / "install" / "step_planner_interfaces" / "share" / "step_planner_interfaces"
    assert (interfaces / "action" / "ExecuteTask.action").is_file()
    # the test-only control_msgs / franka_msgs of test/interfaces are never built into the product workspace
    assert sorted(p.name for p in (workspace / "install").iterdir() if p.is_dir()) == [
        "step_planner", "step_planner_interfaces"]


@pytest.mark.ros
@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_ros_from_the_system_and_dependencies_from_the_venv(robot: Path, tmp_path: Path):
    modules = ["rclpy", "rcl_interfaces", "numpy", "yaml", "step_planner_interfaces", "step_planner", "openai",
               "pydantic", "mujoco", "mink", "ompl", "toppra", "rosbags", "sentence_transformers"]
    done = in_robot_shell(robot, "python -c 'import importlib, sys\n"
                                 "for m in sys.argv[1:]: print(m, list(importlib.import_module(m).__path__)[0])' "
                          + " ".join(modules) + " && python -c 'from step_planner.execution.sim.telemetry import "
                          "robot_description; print(len(robot_description()))'", tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    where = dict(line.split(" ", 1) for line in done.stdout.splitlines()[:-1])
    system, venv, ws = robot / "opt_ros_jazzy", robot / "venv", robot / "ws" / "install"
    for module in ("rclpy", "rcl_interfaces", "numpy", "yaml"):
        assert where[module].startswith(f"{system}/"), (module, where[module])
    for module in ("openai", "pydantic", "mujoco", "mink", "ompl", "toppra", "rosbags", "sentence_transformers"):
        assert where[module].startswith(f"{venv}/"), (module, where[module])
    for module in ("step_planner", "step_planner_interfaces"):
        assert where[module].startswith(f"{ws}/"), (module, where[module])
    assert not [m for m, f in where.items() if str(ROOT) in f and not f.startswith(str(robot))]
    assert int(done.stdout.splitlines()[-1]) > 1000  # the sim backend's URDF, with pybullet's meshes
    venv_dists = {d.metadata["Name"].lower() for d in importlib.metadata.distributions(
        path=[str(p) for p in venv.glob("lib/python3*/site-packages")])}
    assert venv_dists and not {d for d in venv_dists if d.startswith("ros-") or d == "rclpy"}


@pytest.mark.ros
@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_the_node_from_the_robot_install_completes_the_demo_goal_offline(robot: Path, tmp_path: Path):
    """scripts/demo_ros.sh (make demo-ros) with the robot install's executables: node, goal, tree, SIGTERM."""
    install = robot / "ws" / "install"
    params = install / "step_planner" / "share" / "step_planner" / "config" / "step_planner.yaml"
    done = in_robot_shell(robot, f"export PATH={install}/step_planner/lib/step_planner:$PATH "
                                 f"STEP_PLANNER_PARAMS={params} STEP_PLANNER_EPISODES={tmp_path}/episodes && "
                                 f"head -1 $(command -v step_planner_node) && {ROOT}/scripts/demo_ros.sh", tmp_path)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-4000:]
    assert done.stdout.splitlines()[0] == f"#!{robot}/venv/bin/python"  # built by the venv's python
    (where,) = re.findall(r"\(step_planner from (\S+), data from (\S+)\)", out)
    assert where[0].startswith(f"{install}/step_planner/lib/python3")
    assert where[1] == f"{install}/step_planner/share/step_planner/config"
    assert "scripted expert, not an LLM" in out
    assert "outcome: SUCCESS" in done.stdout and "demo-ros: node stopped (exit 0)" in done.stdout
    assert "[+] put the tape and the screwdriver in the drawer" in done.stdout.split("as a late viewer sees it:")[1]
    assert list((tmp_path / "episodes").glob("*/summary.json")), "the goal was not recorded"
