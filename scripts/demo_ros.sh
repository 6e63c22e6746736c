#!/usr/bin/env bash
# make demo-ros: the README's ROS quick start in one go, with no model: start the node offline (answers
# shipped in config/replay, recorded from a scripted expert, NOT an LLM), send the demo goal through the
# action server, show the final tree from the latched topic, stop the node cleanly.
#
#   scripts/demo_ros.sh ["instruction"]
#
# Uses step_planner_node and step-planner from PATH (the Makefile puts the venv's bin/ first; the install
# test puts a colcon install's lib/step_planner/ first). STEP_PLANNER_PARAMS: the parameter file
# (default: this checkout's config/step_planner.yaml). ROS_DOMAIN_ID: a random one unless set.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
instruction="${1:-put the tape and the screwdriver in the drawer}"
params="${STEP_PLANNER_PARAMS:-$repo/config/step_planner.yaml}"
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST ROS_DOMAIN_ID="${ROS_DOMAIN_ID:-$(( RANDOM % 100 + 101 ))}"
name="step_planner_demo_$$"

echo "demo-ros: ROS_DOMAIN_ID=$ROS_DOMAIN_ID, node /$name, offline (scripted answers, not an LLM)"
step_planner_node --ros-args --params-file "$params" -p llm.offline:=true -r __node:="$name" &
node=$!
trap 'kill "$node" 2>/dev/null || true' EXIT
step-planner send "$instruction" --node "/$name"
echo "demo-ros: the latched tree, as a late viewer sees it:"
step-planner watch --once --node "/$name"
kill -TERM "$node"
code=0
wait "$node" || code=$?
trap - EXIT
echo "demo-ros: node stopped (exit $code)"
exit "$code"
