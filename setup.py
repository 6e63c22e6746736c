from glob import glob

from setuptools import find_packages, setup

package_name = "step_planner"

setup(
    name=package_name,
    version="0.1.0",
    packages=find_packages(exclude=["test", "test.*"]),
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + package_name]),
        ("share/" + package_name, ["package.xml"]),
        ("share/" + package_name + "/launch", glob("launch/*.py")),
        ("share/" + package_name + "/config", glob("config/*.yaml")),
        ("share/" + package_name + "/config/scenes", glob("config/scenes/*.yaml")),
        ("share/" + package_name + "/config/tasks", glob("config/tasks/*.yaml")),
        ("share/" + package_name + "/config/prompts", glob("config/prompts/*")),
        ("share/" + package_name + "/config/replay", glob("config/replay/*.json")),
    ],
    install_requires=["setuptools", "pyyaml", "pydantic>=2", "openai>=1.40"],
    zip_safe=True,
    maintainer="step_planner maintainers",
    maintainer_email="step-planner@example.org",
    description="STEP subgoal-tree task planning for a Franka arm with MoveIt 2, as ROS 2 actions.",
    license="Apache-2.0",
    tests_require=["pytest"],
    entry_points={
        "console_scripts": [
            "step-planner = step_planner.cli:main",
            "step_planner_node = step_planner.ros.node:main",
        ],
    },
)
