#!/usr/bin/env bash
# The README's install on a robot machine (ROS 2 Jazzy from the distribution), simulated on this machine:
#
#   scripts/robot_install.sh [--system|--workspace] ROOT
#
# --system builds ROOT/opt_ros_jazzy and ROOT/venv only; --workspace (re)builds ROOT/ws over them (what a code
# change needs: the Makefile's two stamps); neither: both.
#
# ROOT/opt_ros_jazzy  stands in for /opt/ros/jazzy plus the python3-* packages rosdep installs from the
#                     distribution: the ros-* wheels pinned in requirements.txt, colcon, catkin-pkg, empy and
#                     their Python dependencies (numpy, PyYAML, lark, ...), installed with `pip --prefix` into
#                     a prefix of their own, and a setup.bash that sets what /opt/ros/jazzy/setup.bash sets
#                     (PYTHONPATH, LD_LIBRARY_PATH, AMENT_PREFIX_PATH, CMAKE_PREFIX_PATH, PATH, ROS_DISTRO).
# ROOT/venv           the README's venv, step by step: `python3 -m venv --system-site-packages`, activated
#                     over the sourced ROS, then `pip install -r requirements-robot.txt` (no ros-* wheel).
# ROOT/ws             the README's workspace: a copy of this checkout in src/, built by `python -m colcon build`
#                     from the venv (so the console scripts' shebang is the venv's python).
#
# Then ROOT/env.bash sources all three, as a user's shell would. What this does not prove (no apt, no rosdep,
# no Ubuntu 24.04 / Python 3.12, PyPI builds instead of the distribution's): see the README.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
steps=(system workspace)
case "${1:-}" in --system) steps=(system); shift ;; --workspace) steps=(workspace); shift ;; esac
root="${1:?usage: robot_install.sh [--system|--workspace] ROOT}"
python="${PYTHON:-python3}"
start=$(date +%s)
[ "${steps[0]}" = workspace ] || rm -rf "$root"
mkdir -p "$root"
root="$(cd "$root" && pwd)"
sys="$root/opt_ros_jazzy"
pyver="$("$python" -c 'import sys; print(f"python{sys.version_info[0]}.{sys.version_info[1]}")')"
site="$sys/lib/$pyver/site-packages"
export PIP_ROOT_USER_ACTION=ignore

if [ "${steps[0]}" = system ]; then

# 1. "The distribution": ROS from the ros-* wheels (their pins), the build tools, nothing of this package.
grep -E '^ros-' "$repo/requirements.txt" >"$root/system-packages.txt"
printf '%s\n' colcon-common-extensions catkin-pkg empy >>"$root/system-packages.txt"
# --no-warn-conflicts: pip would judge the interpreter's own unrelated packages against this prefix
"$python" -m pip install --quiet --no-input --prefix "$sys" --ignore-installed --no-warn-script-location \
  --no-warn-conflicts -c "$repo/requirements.txt" -r "$root/system-packages.txt" 2> >(grep -v "is ignored: it is neither" >&2)
cat >"$sys/setup.bash" <<EOF
# what /opt/ros/jazzy/setup.bash sets, for this prefix
export ROS_DISTRO=jazzy ROS_VERSION=2 ROS_PYTHON_VERSION=3
export AMENT_PREFIX_PATH="$sys\${AMENT_PREFIX_PATH:+:\$AMENT_PREFIX_PATH}"
export CMAKE_PREFIX_PATH="$sys\${CMAKE_PREFIX_PATH:+:\$CMAKE_PREFIX_PATH}"
export PYTHONPATH="$site\${PYTHONPATH:+:\$PYTHONPATH}"
export LD_LIBRARY_PATH="$sys/lib:$(find "$site" -maxdepth 1 -name '*.libs' -type d | sort | paste -sd:)\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
export PATH="$sys/bin:\$PATH"
EOF
set +u  # setup files read unset variables
# shellcheck disable=SC1091
source "$sys/setup.bash"
set -u
# the wheels' exported CMake files name their build machine's include dirs (see fix_ros_cmake_paths.py)
"$python" "$here/fix_ros_cmake_paths.py" "$sys" >/dev/null

# 2. The README's venv over the sourced ROS: the package's own Python dependencies, and no ros-* wheel.
"$python" -m venv --system-site-packages "$root/venv"
set +u
# shellcheck disable=SC1091
source "$root/venv/bin/activate"
set -u
python -m pip install --quiet --no-input -r "$repo/requirements-robot.txt" \
  2> >(grep -v "is ignored: it is neither" >&2)
if python -m pip list --path "$root/venv/lib/$pyver/site-packages" --format=freeze | grep -iE '^ros-'; then
  echo "robot_install: requirements-robot.txt pulled ros-* wheels into the venv (above)" >&2
  exit 1
fi
set +u; deactivate; set -u
fi

if [ "${steps[-1]}" = workspace ]; then
# 3. The README's workspace, built by the venv's python (colcon itself comes from the "distribution").
set +u
# shellcheck disable=SC1091
source "$sys/setup.bash"
# shellcheck disable=SC1091
source "$root/venv/bin/activate"
set -u
"$here/colcon_workspace.sh" --sourced "$root/ws"
cat >"$root/env.bash" <<EOF
# a robot user's shell: ROS, the venv, the workspace
source "$sys/setup.bash"
source "$root/venv/bin/activate"
source "$root/ws/install/setup.bash"
EOF
fi
echo "robot_install: built ${steps[*]} in $root in $(( $(date +%s) - start )) s"
