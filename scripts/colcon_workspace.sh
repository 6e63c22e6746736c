#!/usr/bin/env bash
# Build the README's ROS 2 workspace from this checkout, the way a ROS user does, in a throwaway folder:
#
#   scripts/colcon_workspace.sh VENV WS
#   scripts/colcon_workspace.sh --sourced WS   (the ROS underlay sourced and a venv active: robot_install.sh)
#
# WS/src/step_planner gets a copy of this repository's files (what git tracks plus new files it does not
# ignore), then, in WS, exactly the README's line:
#
#   colcon build --base-paths src/step_planner src/step_planner/step_planner_interfaces
#
# colcon comes from PyPI (requirements.txt) and the venv is the ROS underlay: its Jazzy wheels are the ROS
# install, so AMENT_PREFIX_PATH/CMAKE_PREFIX_PATH point at it and its bin/ comes first on PATH (the python
# colcon finds for the generators and for the console scripts' shebangs). Nothing is installed into the
# venv; WS/install is what `source install/setup.bash` uses. Colcon's logs stay in WS/log.
# With --sourced, the environment is taken as it is and colcon runs as `python -m colcon` with the active
# venv's python, as the ROS docs have it for a venv (the console scripts' shebang is then that python).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
venv="${1:?usage: colcon_workspace.sh VENV|--sourced WS}"
ws="${2:?usage: colcon_workspace.sh VENV|--sourced WS}"
start=$(date +%s)

if [ "$venv" = --sourced ]; then
  colcon=(python -m colcon)
else
  venv="$(cd "$venv" && pwd)"
  [ -x "$venv/bin/colcon" ] || { echo "colcon_workspace: no colcon in $venv (make venv installs it)" >&2; exit 2; }
  colcon=(colcon)
fi
rm -rf "$ws"
mkdir -p "$ws/src/step_planner"
ws="$(cd "$ws" && pwd)"
if git -C "$repo" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  # --ignore-failed-read: a tracked file deleted in the work tree is simply not copied
  git -C "$repo" ls-files -z --cached --others --exclude-standard \
    | tar -C "$repo" --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -C "$ws/src/step_planner" -xf -
else
  tar -C "$repo" --exclude=./.venv --exclude=./build --exclude=./install --exclude=./log --exclude=./.git -cf - . \
    | tar -C "$ws/src/step_planner" -xf -
fi
if [ "$venv" != --sourced ]; then
  "$venv/bin/python" "$here/fix_ros_cmake_paths.py" "$venv" >/dev/null
  export AMENT_PREFIX_PATH="$venv" CMAKE_PREFIX_PATH="$venv" PATH="$venv/bin:$PATH"
fi
cd "$ws"
"${colcon[@]}" build --base-paths src/step_planner src/step_planner/step_planner_interfaces >"$ws/colcon_build.log" 2>&1 \
  || { tail -60 "$ws/colcon_build.log" >&2; exit 1; }
test -x "$ws/install/step_planner/lib/step_planner/step_planner_node" \
  || { echo "colcon_workspace: no install/step_planner/lib/step_planner/step_planner_node" >&2; exit 1; }
echo "colcon_workspace: built $ws (step_planner + step_planner_interfaces) in $(( $(date +%s) - start )) s"
