"""The step_planner node alone (symbolic or sim backend, or MoveIt already running elsewhere).

    ros2 launch step_planner step_planner.launch.py llm_base_url:=http://localhost:11434/v1 llm_model:=qwen2.5:14b
    ros2 launch step_planner step_planner.launch.py goal_policy:=queue approval_mode:=true

The API key is read from the environment variable named by the llm.api_key_env parameter
(OPENAI_API_KEY by default); export it before launching. It is never a launch argument.
"""

from launch import LaunchDescription
from step_planner.ros.launch_common import arguments, step_planner_node


def generate_launch_description() -> LaunchDescription:
    return LaunchDescription([*arguments(), step_planner_node()])
