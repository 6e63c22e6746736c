"""The test-only control_msgs, franka_msgs and tf2_msgs (test/interfaces/) are upstream Jazzy's types on the wire.

Those packages are written here from upstream's field lists (see docs/test_interfaces.md) and built into the venv
by ``make venv``. A RIHS01 type hash is computed from field names and types (nested types included), so equal
hashes mean equal wire types: a renamed field, a changed type or Rolling's extra feedback fields change it.
Constants and default values do not enter the hash, so the ones code relies on are checked separately.

Where the expected hashes come from: upstream's own packages, built with this venv's Jazzy rosidl generators
(rosidl_generator_type_description 4.6.6, common_interfaces 5.3.6) in a throwaway prefix outside this repository,
read from the generated ``<Type>.json`` files:
- control_msgs: ros-controls/control_msgs, branch jazzy = tag 5.8.0, commit f901df2662f22a39a06aa04a85a34602c47e3cc0
  (FollowJointTrajectory, GripperCommand and JointTolerance also agree with shared/notes/robot-interfaces.md);
- franka_msgs: frankarobotics/franka_ros2, branch jazzy (franka_msgs 3.4.0), commit
  29cb85a677b8f08888a0eb6f553ba89666ef64f7;
- tf2_msgs: ros2/geometry2, branch jazzy (tf2_msgs 0.36.4), commit 646342c6164e837d69460e3d28e7a025396544f6;
- controller_manager_msgs: ros-controls/ros2_control, branch jazzy (4.46.0), commit
  9ffbf97fd6798085db22797fed44da59089dc10a (only the rosidl type-description target was built, in /tmp; the
  Jazzy field set changed in May 2025, 4.30: HardwareInterface.data_type, so an older Jazzy install hashes otherwise).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.ros

CONTROL_MSGS = "ros-controls/control_msgs@f901df2662f22a39a06aa04a85a34602c47e3cc0 (jazzy, 5.8.0)"
FRANKA_MSGS = "frankarobotics/franka_ros2@29cb85a677b8f08888a0eb6f553ba89666ef64f7 (jazzy, franka_msgs 3.4.0)"
TF2_MSGS = "ros2/geometry2@646342c6164e837d69460e3d28e7a025396544f6 (jazzy, tf2_msgs 0.36.4)"
CM_MSGS = "ros-controls/ros2_control@9ffbf97fd6798085db22797fed44da59089dc10a (jazzy, controller_manager_msgs 4.46.0)"

# type -> (upstream's RIHS01 hash, where it came from)
UPSTREAM = {
    "control_msgs/action/FollowJointTrajectory":
        ("RIHS01_738ebcb7a2d7cfa42f9f1001cc99ce3a4383d1cfe508015d9be8485e4b1c66f6", CONTROL_MSGS),
    "control_msgs/action/GripperCommand":
        ("RIHS01_e17c0e644eccf14bea84a0a93e0977182872c2eb7873ca6694900059b46dbc84", CONTROL_MSGS),
    "control_msgs/action/ParallelGripperCommand":
        ("RIHS01_adfd3c1ebe8abc38ebcc0e454b6423d291d4010dd5697d14eca5b9be4726ae18", CONTROL_MSGS),
    "control_msgs/msg/GripperCommand":
        ("RIHS01_57eb8f326c9889ca8bb34ead82cc94cc09bf6bc5c3b6c09546dca3a00b589890", CONTROL_MSGS),
    "control_msgs/msg/JointTolerance":
        ("RIHS01_c254f9cece0f3b733017b6990fd46d1326e25242d6b8844398c97d9a88e7d648", CONTROL_MSGS),
    "control_msgs/msg/JointComponentTolerance":
        ("RIHS01_739ea7566931944d33830fa10f1bf5e7a7fbdc3172bce7a7eaac642bd6e3ffa4", CONTROL_MSGS),
    "franka_msgs/action/Grasp":
        ("RIHS01_8e8a4bb9d96564ae56fb2d47e932c65656316f5c10365958a26df3517a06bb92", FRANKA_MSGS),
    "franka_msgs/action/Move":
        ("RIHS01_ff1f93537cae0ce92792433e368199606771ad62bb819d78078bfe37144d3ef1", FRANKA_MSGS),
    "franka_msgs/action/Homing":
        ("RIHS01_2156a4bd902561e59e6081ba94428daf9a453f960596f8b7ca12e8281e0caeeb", FRANKA_MSGS),
    "franka_msgs/action/ErrorRecovery":
        ("RIHS01_6c5dbf0517672f7127a92796e6a162d096e286c26f88c96177cb4c5448dfc5f5", FRANKA_MSGS),
    "franka_msgs/msg/GraspEpsilon":
        ("RIHS01_387fda91ae7324c144958fa617e7d5dc21f99d6b054b141b073ead3d082f46d3", FRANKA_MSGS),
    "franka_msgs/msg/FrankaRobotState":
        ("RIHS01_fd225b337bab54d06047858c866442b98e3a882a4717cefc6ddd783fcbf17332", FRANKA_MSGS),
    "franka_msgs/msg/Errors":
        ("RIHS01_eaf7a9752f64efac239306101020545cebebff8b5130875d95bf0ed4d8bb774d", FRANKA_MSGS),
    "franka_msgs/msg/Elbow":
        ("RIHS01_f54141b92a05447bfa2f993ac28c289b477358a3d543ad099e1a34c10d70d9bb", FRANKA_MSGS),
    "franka_msgs/msg/CollisionIndicators":
        ("RIHS01_17d02113f0e8ec3768433baafd4f27fe5eaacf95d6c21f591bf3473e541e0840", FRANKA_MSGS),
    "controller_manager_msgs/msg/ChainConnection":
        ("RIHS01_2daecd1da4b171f48b291c79747657a651eb1ab8821b68e38b1c88c736bba91c", CM_MSGS),
    "controller_manager_msgs/msg/ControllerState":
        ("RIHS01_9a8780ab9814b6032978a07c6c7033cf1a7894ac8d948a6fb72afea07b04cc83", CM_MSGS),
    "controller_manager_msgs/msg/HardwareComponentState":
        ("RIHS01_8723f76b60e3ea54920065e3e777d93c68b76fc12839ad6a6ca4e0a6439b384c", CM_MSGS),
    "controller_manager_msgs/msg/HardwareInterface":
        ("RIHS01_b4c556991db81ca56a49338b5e8f0675a6707faee54fba161d2bbd4d963d418a", CM_MSGS),
    "controller_manager_msgs/srv/ListControllers":
        ("RIHS01_4f8e36bb1fa5afdeba45c2d56ae6a2097b1493a253f961dd6290c085033bd189", CM_MSGS),
    "controller_manager_msgs/srv/ListHardwareComponents":
        ("RIHS01_2ff105e609928671af16413362c0fdd089e1dd50c5a49d830db603ba8e4439c8", CM_MSGS),
    "controller_manager_msgs/srv/SetHardwareComponentState":
        ("RIHS01_940b15846ed3e1fb561ab45edf77a992b811fd59c574f45d5205a84a0deb2f65", CM_MSGS),
    "controller_manager_msgs/srv/SwitchController":
        ("RIHS01_d4ad10aa5da7808bc522d55d4123d8ef79de73d049d165639d7663ac37cc9895", CM_MSGS),
    "tf2_msgs/msg/TFMessage":
        ("RIHS01_e369d0f05a23ae52508854b66f6aa0437f3449d652e8cbf22d5abe85d020f087", TF2_MSGS),
}
# What an action's feedback topic carries (<Action>_FeedbackMessage), from the same upstream builds.
UPSTREAM_FEEDBACK = {
    "control_msgs/action/FollowJointTrajectory":
        "RIHS01_80398fcb9674a79081a9906e2ccf0c804dd7cb15e22e362e606ee87186beab71",
    "control_msgs/action/GripperCommand": "RIHS01_392ff03fcd872f9dc2405cbeb2897fcf011ad9998458b6aa85c603b8a49e431d",
    "franka_msgs/action/Grasp": "RIHS01_7b7a00a66aed431831ac3b2fda6e165401a3f9789c4f9dbdd2092ba75961b603",
}
TEST_PACKAGES = ("control_msgs", "franka_msgs", "tf2_msgs", "controller_manager_msgs")
SOURCES = Path(__file__).resolve().parent / "interfaces"


def built_hashes(type_name: str) -> dict[str, str]:
    """Every hash in the installed ``share/<pkg>/<kind>/<Type>.json`` (the type and the types it uses)."""
    from ament_index_python.packages import get_package_share_directory

    pkg, kind, name = type_name.split("/")
    path = Path(get_package_share_directory(pkg)) / kind / f"{name}.json"
    assert path.is_file(), f"{path} missing: `make venv` builds test/interfaces/{pkg} into the venv"
    return {h["type_name"]: h["hash_string"] for h in json.loads(path.read_text())["type_hashes"]}


def python_type(type_name: str):
    import importlib

    pkg, kind, name = type_name.split("/")
    return getattr(importlib.import_module(f"{pkg}.{kind}"), name)


def test_every_interface_file_of_the_test_packages_is_checked_here():
    """A type added to test/interfaces without its upstream hash here fails, rather than going unchecked."""
    written = {f"{p.parents[1].name}/{p.parent.name}/{p.stem}" for pkg in TEST_PACKAGES
               for kind in ("msg", "action", "srv") for p in (SOURCES / pkg / kind).glob(f"*.{kind}")}
    assert written == set(UPSTREAM)


@pytest.mark.parametrize("type_name", sorted(UPSTREAM))
def test_the_built_type_hash_equals_upstream_jazzys(type_name):
    expected, source = UPSTREAM[type_name]
    assert built_hashes(type_name)[type_name] == expected, f"{type_name} differs from {source}"


@pytest.mark.parametrize("type_name", sorted(UPSTREAM))
def test_the_installed_python_types_come_from_the_venv_build_not_a_stand_in(type_name):
    """The module rclpy loads is rosidl-generated (it has type support), so it is the package hashed above."""
    cls = python_type(type_name)
    assert "site-packages" in Path(__import__(type_name.split("/")[0]).__file__).parts
    cls.__class__.__import_type_support__()  # raises for a Python-only stand-in
    if type_name.split("/")[1] == "action":
        assert {"Goal", "Result", "Feedback"} <= set(vars(cls))
    if type_name.split("/")[1] == "srv":
        assert {"Request", "Response"} <= set(vars(cls))


def test_the_hashes_advertised_on_dds_are_upstreams():
    """What actually goes on the wire: the feedback topic's type hash as Fast DDS reports it for a live
    action server of each kind, and a plain message topic's."""
    import rclpy
    from rclpy.action import ActionServer

    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("test_interfaces_hashes", context=context)
    try:
        servers = [ActionServer(node, python_type(t), f"/hash_check/a{i}", lambda handle: None)
                   for i, t in enumerate(UPSTREAM_FEEDBACK)]
        node.create_publisher(python_type("control_msgs/msg/GripperCommand"), "/hash_check/gripper_command", 1)
        node.create_publisher(python_type("franka_msgs/msg/FrankaRobotState"), "/hash_check/robot_state", 1)
        advertised: dict[str, str] = {}
        deadline = time.monotonic() + 10.0
        while time.monotonic() < deadline and len(advertised) < len(UPSTREAM_FEEDBACK) + 2:
            for i, t in enumerate(UPSTREAM_FEEDBACK):
                for info in node.get_publishers_info_by_topic(f"/hash_check/a{i}/_action/feedback"):
                    advertised[t] = str(info.topic_type_hash)
            for info in node.get_publishers_info_by_topic("/hash_check/gripper_command"):
                advertised["control_msgs/msg/GripperCommand"] = str(info.topic_type_hash)
            for info in node.get_publishers_info_by_topic("/hash_check/robot_state"):
                advertised["franka_msgs/msg/FrankaRobotState"] = str(info.topic_type_hash)
            time.sleep(0.05)
        assert advertised == {**UPSTREAM_FEEDBACK,
                              "control_msgs/msg/GripperCommand": UPSTREAM["control_msgs/msg/GripperCommand"][0],
                              "franka_msgs/msg/FrankaRobotState": UPSTREAM["franka_msgs/msg/FrankaRobotState"][0]}
        for server in servers:
            server.destroy()
    finally:
        node.destroy_node()
        rclpy.shutdown(context=context)


def test_constants_and_defaults_code_relies_on_match_upstream():
    """Not part of the hash, so checked one by one (values from the upstream files at the commits above)."""
    from control_msgs.action import FollowJointTrajectory
    from control_msgs.msg import JointComponentTolerance
    from franka_msgs.msg import GraspEpsilon

    result = FollowJointTrajectory.Result
    assert {n: getattr(result, n) for n in ("SUCCESSFUL", "INVALID_GOAL", "INVALID_JOINTS", "OLD_HEADER_TIMESTAMP",
                                            "PATH_TOLERANCE_VIOLATED", "GOAL_TOLERANCE_VIOLATED")} == {
        "SUCCESSFUL": 0, "INVALID_GOAL": -1, "INVALID_JOINTS": -2, "OLD_HEADER_TIMESTAMP": -3,
        "PATH_TOLERANCE_VIOLATED": -4, "GOAL_TOLERANCE_VIOLATED": -5}
    assert [getattr(JointComponentTolerance, n) for n in ("X_AXIS", "Y_AXIS", "Z_AXIS", "TRANSLATION", "ROTATION")] \
        == [1, 2, 3, 4, 5]
    epsilon = GraspEpsilon()
    assert (epsilon.inner, epsilon.outer) == (0.005, 0.005)  # franka_gripper's grasp tolerance when none is set
    from controller_manager_msgs.srv import SwitchController
    from franka_msgs.msg import FrankaRobotState

    assert [getattr(SwitchController.Request, n) for n in ("BEST_EFFORT", "STRICT", "AUTO", "FORCE_AUTO")] \
        == [1, 2, 3, 4]
    assert [getattr(FrankaRobotState, f"ROBOT_MODE_{n}") for n in (
        "OTHER", "IDLE", "MOVE", "GUIDING", "REFLEX", "USER_STOPPED", "AUTOMATIC_ERROR_RECOVERY")] == list(range(7))


def test_the_test_packages_stay_out_of_the_product_and_the_product_declares_the_real_ones():
    """colcon and rosdep skip test/interfaces (COLCON_IGNORE); step_planner's manifest names the real packages."""
    from catkin_pkg.package import parse_package
    from catkin_pkg.packages import find_packages

    root = SOURCES.parents[1]
    assert (SOURCES / "COLCON_IGNORE").is_file()
    assert [p.name for p in find_packages(str(root / "test")).values()] == []
    product = parse_package(str(root / "package.xml"))
    product.validate()
    assert {"control_msgs", "franka_msgs", "tf2_msgs", "trajectory_msgs", "controller_manager_msgs", "lifecycle_msgs",
            "std_srvs"} <= {d.name for d in product.exec_depends}
    for pkg in TEST_PACKAGES:
        manifest = parse_package(str(SOURCES / pkg))
        assert manifest.name == pkg and "FOR TESTS ONLY" in manifest.description
