import os
from glob import glob

from setuptools import find_packages, setup

package_name = "step_planner"


def tree(folder):
    """(share/step_planner/<dir>, [files]) for every directory under ``folder`` that holds files: every
    config subfolder the code reads is installed, including ones added later (a test compares the trees)."""
    out = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
        kept = sorted(os.path.join(root, f) for f in files if not f.startswith("."))
        if kept:
            out.append((os.path.join("share", package_name, root), kept))
    return out


setup(
    name=package_name,
    version="0.1.0",
    packages=find_packages(exclude=["test", "test.*"]),
    # the `step-planner hmi` page (HTML/JS/CSS) is code served from beside its server, not a setting in config/
    package_data={"step_planner.hmi": ["page/*"]},
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + package_name]),
        ("share/" + package_name, ["package.xml"]),
        ("share/" + package_name + "/launch", glob("launch/*.launch.py")),
        *tree("config"),
    ],
    install_requires=["setuptools", "pyyaml", "pydantic>=2", "openai>=1.40"],
    zip_safe=False,  # the hmi server reads its page from the package folder
    maintainer="step_planner maintainers",
    maintainer_email="step-planner@example.org",
    description="STEP subgoal-tree task planning for a Franka arm with MoveIt 2, as ROS 2 actions.",
    license="Apache-2.0",
    tests_require=["pytest"],
    entry_points={
        "console_scripts": [
            "step-planner = step_planner.cli:main",
            "step_planner_node = step_planner.ros.node:main",
            "mujoco_robot = step_planner.ros.mujoco_robot:main",
            "franka_gripper = step_planner.ros.franka_gripper_node:main",
            "hmi = step_planner.hmi.main:main",
        ],
    },
)
