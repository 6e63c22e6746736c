"""The step_planner node (symbolic backend, a simulated robot, or a robot already running elsewhere).

    ros2 launch step_planner step_planner.launch.py offline:=true          # no model: the shipped answers
    ros2 launch step_planner step_planner.launch.py llm_base_url:=http://localhost:11434/v1 llm_model:=qwen2.5:14b
    ros2 launch step_planner step_planner.launch.py goal_policy:=queue approval_mode:=true
    ros2 launch step_planner step_planner.launch.py backend:=sim offline:=true   # the MuJoCo robot + the node
    ros2 launch step_planner step_planner.launch.py backend:=controllers         # a robot already running
    ros2 launch step_planner step_planner.launch.py backend:=sim offline:=true rviz:=true   # and RViz

offline:=true serves answers recorded from a scripted expert (config/replay), NOT an LLM, and the node says so.
backend:=sim starts the MuJoCo robot in a process of its own (`mujoco_robot`: the controllers' actions,
/joint_states, /clock, /model_poses) and the node on the controllers backend, which talks to it across DDS
exactly as to Gazebo or the arm, and robot_state_publisher on the simulated URDF so RViz shows the arm (without
robot_state_publisher installed the robot and the node run, with a warning; without MuJoCo nothing starts and
one line says what to install). The node's in-process sim backend remains for `ros2 run` and the benchmarks.

Included by a parent launch file, a PushRosNamespace, SetRemap or SetParameter around the include reaches every
node it starts; with backend:=sim the MuJoCo robot and the node share the namespace, so two includes in two
namespaces run two arms side by side (docs/launch.md).

The API key is read from the environment variable named by the llm.api_key_env parameter
(OPENAI_API_KEY by default); export it before launching. It is never a launch argument.
"""

from launch.actions import OpaqueFunction

from launch import LaunchDescription
from step_planner.ros.launch_common import arguments, described, mujoco_robot, rviz, sim_arguments, step_planner_node


def launch_setup(context) -> list:
    robot = mujoco_robot(context)  # checked first: a missing dependency stops nothing half-started
    return [*robot, step_planner_node(extra_parameters=[{"backend": "controllers"}] if robot else []), *rviz(context)]


def generate_launch_description() -> LaunchDescription:
    return described("step_planner.launch.py", [*arguments(), *sim_arguments()], OpaqueFunction(function=launch_setup))
