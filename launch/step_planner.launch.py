"""The step_planner node alone (symbolic or sim backend, or MoveIt already running elsewhere).

    ros2 launch step_planner step_planner.launch.py offline:=true          # no model: the shipped answers
    ros2 launch step_planner step_planner.launch.py llm_base_url:=http://localhost:11434/v1 llm_model:=qwen2.5:14b
    ros2 launch step_planner step_planner.launch.py goal_policy:=queue approval_mode:=true
    ros2 launch step_planner step_planner.launch.py backend:=sim offline:=true   # + robot_state_publisher

offline:=true serves answers recorded from a scripted expert (config/replay), NOT an LLM, and the node says so.
With backend:=sim the node publishes /joint_states and /robot_description, and this file also starts
robot_state_publisher on the simulator's URDF so RViz shows the arm (without robot_state_publisher
installed the node runs alone, with a warning; without MuJoCo nothing starts and one line says what to install).

The API key is read from the environment variable named by the llm.api_key_env parameter
(OPENAI_API_KEY by default); export it before launching. It is never a launch argument.
"""

from launch.actions import OpaqueFunction

from launch import LaunchDescription
from step_planner.ros.launch_common import arguments, sim_robot_state_publisher, step_planner_node


def launch_setup(context) -> list:
    viewer = sim_robot_state_publisher(context)  # checked first: a missing dependency stops nothing half-started
    return [step_planner_node(), *viewer]


def generate_launch_description() -> LaunchDescription:
    return LaunchDescription([*arguments(), OpaqueFunction(function=launch_setup)])
