"""Shared pieces of the launch files in launch/: the node with its launch arguments, and dependency checks.

Imported only by launch files (it needs the ROS ``launch`` packages, which the node itself does not).

A launch file imports at module level only ``launch``, ``launch_ros``, ``ament_index_python`` and this
module, and declares every argument at the top level of its description: ``ros2 launch ... --show-args``
imports the file and lists the arguments it finds without running anything (ros2/launch_ros jazzy,
ros2launch/api/api.py:95-124: print_arguments_of_launch_file), and arguments declared inside an
OpaqueFunction are invisible there. Everything that needs MoveIt, Gazebo or another optional package goes
into an OpaqueFunction body that first calls :func:`require` (and :func:`import_from` for Python modules):
a missing package then ends the launch before anything started, with one line naming what to install
(launch prints an exception from an action as "Caught exception in launch (see debug for traceback): <the
message>", ros2/launch jazzy, launch/launch/launch_service.py:351-359), instead of a module-level
ImportError that launch reports as a 35-line traceback and "The launch file may have a syntax error".
"""

import importlib
import os
import sys
from typing import Any

from ament_index_python.packages import PackageNotFoundError, get_package_prefix, get_package_share_directory
from launch.actions import DeclareLaunchArgument, OpaqueFunction, RegisterEventHandler, Shutdown
from launch.event_handlers import OnShutdown
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

from launch import LaunchDescription

PACKAGE = "step_planner"
MOVEIT_ROSDEP = "STEP_PLANNER_MOVEIT=1 rosdep install --from-paths src --ignore-src -y"  # see package.xml


class MissingDependency(RuntimeError):
    """A package a launch file needs is not installed. The message is one line naming what to install."""


class RefusedArguments(RuntimeError):
    """Launch arguments a file does not declare or cannot honour. The message is one line saying which and why."""


# franka_ros2's franka_bringup/launch/franka.launch.py at frankarobotics/franka_ros2@29cb85a (``FBL``): the names
# Franka users type, with its defaults (FBL:221-250) except where FRANKA_DIFFERENCES says why not.
FRANKA_COMMIT = "29cb85a677b8f08888a0eb6f553ba89666ef64f7"
FRANKA_DIFFERENCES = {
    "robot_type": "default fr3, not FBL:221-223's '' (which gives franka_arm.urdf.xacro no arm): fr3 is what "
                  "franka_bringup/config/franka.config.yaml:12 sets for example.launch.py, and the one arm Jazzy's "
                  "franka_ros2 drives",
    "load_gripper": "default true, not FBL:233-237's false: the primitives grasp with the Franka Hand, and "
                    "franka_bringup/config/franka.config.yaml:16 sets true for example.launch.py",
    "controllers_yaml": "default empty, not FBL:257-262's franka_bringup/config/controllers.yaml (which has no "
                        "trajectory controller): this package's config/ros2_controllers_fr3.yaml (checked against "
                        "upstream's by test/test_controllers_yaml_upstream.py), franka_fr3_moveit_config's "
                        "fr3_ros_controllers.yaml for franka.launch.py, or with use_fake_hardware:=true "
                        "config/fr3_moveit/fake_hardware_controllers.yaml; a file given must define the controllers "
                        "spawned (fr3_arm_controller, joint_state_broadcaster, and franka_robot_state_broadcaster "
                        "when loaded)",
}
BOOLEAN_TRUE, BOOLEAN_FALSE = "true", "false"  # compared after .strip().lower(): True, TRUE, false, False ...


def boolean(context, name: str) -> bool:
    """A boolean launch argument as franka_ros2 reads its own: ``.lower() == 'true'`` (FBL:95, 175-178) and
    launch's IfCondition (ros2/launch jazzy, conditions/evaluate_condition_expression_impl.py:28-34) agree on
    any case of true/false, so ``True`` is accepted. They disagree on ``1``/``0`` (IfCondition takes ``1`` as true,
    ``.lower() == 'true'`` as false), so anything but true/false stops the launch with :class:`RefusedArguments`."""
    value = LaunchConfiguration(name).perform(context).strip().lower()
    if value not in (BOOLEAN_TRUE, BOOLEAN_FALSE):
        raise RefusedArguments(f"{name}:={LaunchConfiguration(name).perform(context)!r} is not a boolean: give true "
                               "or false (any case)")
    return value == BOOLEAN_TRUE


def franka_arguments(robot_types: tuple[str, ...], robot_ip: str = "172.16.0.3") -> list:
    """franka_bringup's launch arguments (FBL:221-250) with its defaults but FRANKA_DIFFERENCES', and the
    deprecated ``robot`` this package took before."""
    return [
        DeclareLaunchArgument("robot_type", default_value="fr3",
                              description=f"ID of the type of arm used: {' or '.join(robot_types)} (FBL:221-223)"),
        DeclareLaunchArgument("arm_prefix", default_value="", description="Prefix for arm topics (FBL:224); only '' "
                              "here: the joint names in config/ are unprefixed"),
        DeclareLaunchArgument("namespace", default_value="", description="Namespace for the robot (FBL:225-227)"),
        DeclareLaunchArgument("robot_ip", default_value=robot_ip,
                              description="Hostname or IP address of the robot (FBL:228-232)"),
        DeclareLaunchArgument("load_gripper", default_value="true",
                              description="Use Franka Gripper as an end-effector (FBL:233-237); false stops the "
                                          "launch: the primitives need the hand"),
        DeclareLaunchArgument("use_fake_hardware", default_value="false",
                              description="Use fake hardware (FBL:238-240)"),
        DeclareLaunchArgument("fake_sensor_commands", default_value="false",
                              description="Fake sensor commands (FBL:241-245)"),
        DeclareLaunchArgument("joint_state_rate", default_value="30",
                              description="Rate for joint state publishing (Hz) (FBL:246-250)"),
        DeclareLaunchArgument("load_franka_robot_state_broadcaster", default_value="true",
                              description="Load franka_robot_state_broadcaster on the real arm (FBL:251-256, 174-188; "
                                          "never on fake hardware); false for robots that do not support it. Without "
                                          "it the node does not hear a reflex's error flags"),
        DeclareLaunchArgument("controllers_yaml", default_value="",
                              description="ros2_control_node's controllers file (FBL:257-262, 119, 139-140); empty: "
                                          "the one this file ships for the hardware (see FRANKA_DIFFERENCES)"),
        DeclareLaunchArgument("robot", default_value="", description="DEPRECATED: use robot_type:="),
    ]


def robot_type(context, file_name: str, robot_types: tuple[str, ...]) -> str:
    """robot_type, or the deprecated robot:= with a warning; one of ``robot_types`` or :class:`RefusedArguments`."""
    chosen = LaunchConfiguration("robot_type").perform(context)
    old = LaunchConfiguration("robot").perform(context)
    if old:
        from launch.logging import get_logger

        get_logger("step_planner.launch").warning(
            f"{file_name}: robot:={old} is deprecated; use robot_type:={old} (franka_bringup's name)")
        if chosen not in ("fr3", old):  # robot_type given too (fr3 is its default), and another arm
            raise RefusedArguments(f"{file_name}: robot:={old} and robot_type:={chosen} disagree; give robot_type only")
        chosen = old
    if chosen not in robot_types:
        raise RefusedArguments(f"{file_name}: robot_type:={chosen!r} is not driven here: {' or '.join(robot_types)}")
    return chosen


def franka_checks(context, file_name: str) -> None:
    """What franka_bringup takes but this package cannot honour stops the launch before anything starts."""
    for name in ("use_fake_hardware", "fake_sensor_commands", "load_gripper", "load_franka_robot_state_broadcaster"):
        boolean(context, name)
    if LaunchConfiguration("arm_prefix").perform(context):
        raise RefusedArguments(f"{file_name}: arm_prefix:={LaunchConfiguration('arm_prefix').perform(context)} is not "
                               "supported: the joint and link names of config/franka.yaml and robot_boundary.yaml are "
                               "unprefixed (fr3_joint1 ...)")
    if not boolean(context, "load_gripper"):
        raise RefusedArguments(f"{file_name}: load_gripper:=false cannot be honoured: every primitive but home() "
                               "grasps or pushes with the Franka Hand, and the backends check it at start; nothing "
                               "was started (the hand is neither loaded nor its gripper node run)")
    rate = LaunchConfiguration("joint_state_rate").perform(context)
    if not rate.isdigit() or int(rate) <= 0:
        raise RefusedArguments(f"{file_name}: joint_state_rate:={rate!r} is not a positive whole number of Hz")


# Launch configurations that launch and launch_ros set or read themselves, never a launch file's argument: a parent's
# PushRosNamespace sets ros_namespace (ros2/launch_ros jazzy, launch_ros/actions/push_ros_namespace.py:82), SetRemap
# ros_remaps (set_remap.py:91), SetParameter and SetParametersFromFile global_params (set_parameter.py:91,
# set_parameters_from_file.py:82), and every Node reads them (actions/node.py:400, 426, 468); ros2 launch's
# --launch-prefix and --launch-prefix-filter become launch-prefix:= and launch-prefix-filter:= on its command line
# (ros2launch/api/api.py:156-160), and ExecuteLocal reads emulate_tty (ros2/launch jazzy,
# launch/actions/execute_local.py:560-564). Typed on the command line they do what launch makes of them.
LAUNCH_OWN = ("ros_namespace", "ros_remaps", "global_params", "launch-prefix", "launch-prefix-filter", "emulate_tty")


def launched_directly(file_name: str, argv: list[str] | None = None) -> bool:
    """Whether ``ros2 launch`` was given this file (``ros2 launch step_planner <file> ...`` or a path to it), not a
    parent launch file that includes it: a parent's command line names the parent's arguments, not ours."""
    args = sys.argv[1:] if argv is None else argv
    return any(":=" not in a and os.path.basename(a) == file_name for a in args)


def command_line_names(context) -> list[str]:
    """The names of the ``name:=value`` arguments ``ros2 launch`` was given: it hands them to the LaunchService as
    its argv (ros2launch/api/api.py:162-165), which the context keeps (launch/launch_context.py:52, 77-79)."""
    return [a.split(":=", 1)[0] for a in getattr(context, "argv", None) or [] if ":=" in a]


def refuse_unknown(context, file_name: str, declared: list[str]) -> None:
    """Stop the launch when an argument the file does not declare was typed on the ``ros2 launch`` command line
    that launched this file: launch sets every ``name:=value`` as a launch configuration, declared or not
    (launch/actions/include_launch_description.py:178-185, which ros2 launch uses for the command line), and
    ignores those nothing reads, so a typo would be silently lost. Run after the file's declarations, before anything
    else.

    Only the command line is read, never the launch configurations as a whole: those also hold what a parent launch
    file sets around an include (its own arguments in a forwarding group, and launch_ros's ros_namespace,
    ros_remaps and global_params of PushRosNamespace, SetRemap and SetParameter), which are the parent's business.
    Included by another file, this file checks nothing: the command line is the parent's."""
    if not launched_directly(file_name):
        return
    unknown = sorted({n for n in command_line_names(context) if n not in declared and n not in LAUNCH_OWN})
    if unknown:
        raise RefusedArguments(f"{file_name} does not take {', '.join(f'{n}:=' for n in unknown)} "
                               f"(it takes: {', '.join(sorted(declared))}); nothing was started")


def robot_state_broadcaster(context) -> bool:
    """Whether franka_robot_state_broadcaster is spawned: as FBL:174-188, load_franka_robot_state_broadcaster and not
    use_fake_hardware."""
    return boolean(context, "load_franka_robot_state_broadcaster") and not boolean(context, "use_fake_hardware")


def controllers_file(context, file_name: str, default: str, controllers: list[str]) -> str:
    """controllers_yaml:= (FBL:119, 139-140: ros2_control_node's parameter file), or ``default`` when empty. A file
    given must exist and define every controller this file spawns under controller_manager.ros__parameters, the
    way ros2_control_node reads its type (``<name>.type``): else :class:`RefusedArguments` before anything starts."""
    given = LaunchConfiguration("controllers_yaml").perform(context).strip()
    if not given:
        return default
    import yaml

    try:
        with open(given) as f:
            data = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as exc:
        raise RefusedArguments(f"{file_name}: controllers_yaml:={given} cannot be read: {exc}") from None
    params = ros_parameters(data, "controller_manager")
    missing = [c for c in controllers if not isinstance(params.get(c), dict) or "type" not in params[c]]
    if missing:
        raise RefusedArguments(f"{file_name}: controllers_yaml:={given} does not define {', '.join(missing)} "
                               "(controller_manager: ros__parameters: <name>: type: ...), which this launch spawns "
                               "and the node drives; nothing was started")
    return given


def ros_parameters(document, node: str) -> dict:
    """The ``ros__parameters`` of ``node`` in a ROS params file, keyed by the node's name or under ``/**`` (the
    namespace-agnostic form upstream's files use, franka_bringup/config/controllers.yaml:6)."""
    if not isinstance(document, dict):
        return {}
    for block in (document, document.get("/**")):
        params = ((block or {}).get(node) or {}).get("ros__parameters") if isinstance(block, dict) else None
        if isinstance(params, dict):
            return params
    return {}


def namespace_of(context, namespace: str) -> str:
    """The namespace a Node with ``namespace`` gets: launch_ros puts a relative one under the ros_namespace a parent's
    PushRosNamespace set (launch_ros/actions/node.py:400-402, utilities/namespace_utils.py prefix_namespace)."""
    base = context.launch_configurations.get("ros_namespace") or ""
    if namespace.startswith("/"):
        return "/" + namespace.strip("/")
    return "/" + "/".join(p for p in (base.strip("/"), namespace.strip("/")) if p)


def for_any_namespace(path: str, namespace: str) -> tuple[str, list]:
    """A ROS params file the node reads in ``namespace`` too: a file keyed by bare node names (``controller_manager:``)
    matches only the node of that name in the root namespace (rcl reads the key as ``/controller_manager``), so in
    another namespace its content is written under ``/**`` into a temporary file, removed at shutdown, as upstream's
    own files are keyed (franka_bringup/config/controllers.yaml:6). Returns the path and the actions to add."""
    import tempfile

    import yaml

    if namespace == "/":
        return path, []
    with open(path) as f:
        data = yaml.safe_load(f) or {}
    if not isinstance(data, dict) or all(str(k).startswith("/") for k in data):
        return path, []
    fd, copy = tempfile.mkstemp(prefix="step_planner_controllers_", suffix=".yaml")
    with os.fdopen(fd, "w") as f:
        yaml.safe_dump({"/**": data}, f, sort_keys=False)
    return copy, [removed_at_shutdown(copy)]


def later_in_this_scope(context, actions: list):
    """``actions`` for an event handler (started once a process exits), with the launch configurations of now: launch
    runs a handler's actions in the configurations of the moment the event comes (RegisterEventHandler keeps no scope,
    ros2/launch jazzy launch/actions/register_event_handler.py:52-54), when a parent's scoped GroupAction has popped
    its PushRosNamespace, SetRemap and SetParameter and this file's own arguments. A GroupAction that resets the
    configurations to today's (group_action.py:116-135) and applies the remaps and global parameters again (their
    lists are not text a launch configuration can hold) brings them back."""
    from launch.actions import GroupAction
    from launch_ros.actions import SetParameter, SetParametersFromFile, SetRemap

    configurations = context.launch_configurations
    kept = {name: value for name, value in configurations.items() if isinstance(value, str)}
    again = [SetRemap(src=src, dst=dst) for src, dst in configurations.get("ros_remaps", [])]
    again += [SetParameter(name=p[0], value=p[1]) if isinstance(p, tuple) else SetParametersFromFile(p)
              for p in configurations.get("global_params", [])]
    return GroupAction([*again, *actions], scoped=True, forwarding=False, launch_configurations=kept)


def removed_at_shutdown(path: str) -> RegisterEventHandler:
    """Delete the file or folder ``path`` when the launch shuts down (Ctrl-C, a node's exit, an error in a later
    action): what a launch writes to the temporary folder is not left behind."""
    def remove(event, context) -> None:
        import shutil

        if os.path.isdir(path):
            shutil.rmtree(path, ignore_errors=True)
        elif os.path.exists(path):
            os.unlink(path)

    return RegisterEventHandler(OnShutdown(on_shutdown=remove))


def described(file_name: str, declared: list, *actions) -> LaunchDescription:
    """The description of a launch file: its arguments at the top level (``--show-args``), then the check that no
    other argument was given, then ``actions``."""
    names = [a.name for a in declared]
    return LaunchDescription([*declared, OpaqueFunction(function=refuse_unknown, args=[file_name, names]),
                              *actions])


def apt_package(ros_package: str) -> str:
    """The distribution's package of a ROS package: ros-jazzy-robot-state-publisher."""
    return f"ros-{os.environ.get('ROS_DISTRO') or 'jazzy'}-{ros_package.replace('_', '-')}"


def installed(ros_package: str) -> bool:
    """Whether the ament index knows ``ros_package`` (what ``ros2 pkg prefix`` checks)."""
    try:
        get_package_prefix(ros_package)
    except PackageNotFoundError:
        return False
    return True


def missing_message(needed_by: str, ros_packages: list[str], hint: str = "") -> str:
    """One line: what is missing, as the command that installs it."""
    apt = " ".join(apt_package(p) for p in ros_packages)
    what = "a ROS package that is" if len(ros_packages) == 1 else "ROS packages that are"
    return f"{needed_by} needs {what} not installed: sudo apt install {apt}" + (f" (or {hint})" if hint else "")


def require(needed_by: str, *ros_packages: str, hint: str = "") -> None:
    """Raise :class:`MissingDependency` naming every package of ``ros_packages`` that is not installed."""
    missing = [p for p in ros_packages if not installed(p)]
    if missing:
        raise MissingDependency(missing_message(needed_by, missing, hint))


def import_from(needed_by: str, module: str, name: str, ros_package: str, hint: str = "") -> Any:
    """``from module import name``, where it is used, or :class:`MissingDependency` naming ``ros_package``."""
    try:
        return getattr(importlib.import_module(module), name)
    except ImportError:
        raise MissingDependency(missing_message(needed_by, [ros_package], hint)) from None


def package_file(*parts: str) -> str:
    return os.path.join(get_package_share_directory(PACKAGE), *parts)


def step_planner_node(extra_parameters=(), **node_kwargs) -> Node:
    """The node with the package defaults overlaid by the launch arguments (shared by all launch files)."""
    overrides = {
        "backend": LaunchConfiguration("backend"),
        "scene": LaunchConfiguration("scene"),
        "goal_policy": LaunchConfiguration("goal_policy"),
        "approval_mode": ParameterValue(LaunchConfiguration("approval_mode"), value_type=bool),
        "confirm_goal": ParameterValue(LaunchConfiguration("confirm_goal"), value_type=bool),
        "llm.model": ParameterValue(LaunchConfiguration("llm_model"), value_type=str),
        "llm.base_url": ParameterValue(LaunchConfiguration("llm_base_url"), value_type=str),
        "llm.offline": ParameterValue(LaunchConfiguration("offline"), value_type=bool),
    }
    return Node(
        package=PACKAGE,
        executable="step_planner_node",
        name="step_planner",
        output="screen",
        emulate_tty=True,
        parameters=[LaunchConfiguration("params_file"), overrides, *extra_parameters],
        on_exit=Shutdown(),  # the robot-side nodes of a launch end together (as FBL:146 does for ros2_control_node)
        **node_kwargs,
    )


def arguments(backend: str = "symbolic", confirm_goal: str = "false") -> list:
    """The shared launch arguments. ``confirm_goal``: its default, "true", "false" or the name of another
    launch argument it follows ("approval_mode": the Franka launch confirms the goal in approval mode)."""
    confirm_default = confirm_goal if confirm_goal in ("true", "false") else LaunchConfiguration(confirm_goal)
    return [
        DeclareLaunchArgument("params_file", default_value=package_file("config", "step_planner.yaml"),
                              description="Parameter file of the node"),
        DeclareLaunchArgument("backend", default_value=backend, choices=["symbolic", "sim", "controllers", "moveit"],
                              description="Executor backend"),
        DeclareLaunchArgument("scene", default_value="drawer_desk", description="Scene name or path"),
        DeclareLaunchArgument("goal_policy", default_value="reject", choices=["reject", "preempt", "queue"],
                              description="A goal arriving while another runs"),
        DeclareLaunchArgument("approval_mode", default_value="false",
                              description="Wait for ~/approve_step before every primitive"),
        DeclareLaunchArgument("confirm_goal", default_value=confirm_default,
                              description="Wait for ~/confirm_goal (accept, correct or refuse the interpreted "
                                          "goal) before anything moves"),
        DeclareLaunchArgument("llm_model", default_value="gpt-4o-mini", description="Model at the endpoint"),
        DeclareLaunchArgument("llm_base_url", default_value="",
                              description="OpenAI-compatible endpoint; empty = api.openai.com"),
        DeclareLaunchArgument("rviz", default_value="false",
                              description="Start RViz with config/step_planner.rviz (the robot, /tf and the node's "
                                          "~/markers); where rviz2 is not installed, one line says so"),
        DeclareLaunchArgument("offline", default_value="false",
                              description="Serve the answers shipped in config/replay (recorded from a scripted "
                                          "expert, NOT an LLM) from inside the node: try it with no model"),
    ]


def sim_arguments() -> list:
    """The arguments of the MuJoCo robot that backend:=sim starts (step_planner.launch.py only: the other files start
    a real or Gazebo robot, whose pace is not ours to set)."""
    return [DeclareLaunchArgument("realtime_factor", default_value="1.0",
                                  description="backend sim: the MuJoCo robot's pace (1.0 = real time; 0 = as fast as "
                                              "it computes)")]


def mujoco_robot(context) -> list:
    """backend:=sim: the MuJoCo robot in a process of its own (``mujoco_robot``: FollowJointTrajectory and
    GripperCommand with ros2_controllers' semantics, /joint_states, /clock, /model_poses), the node on the
    ``controllers`` backend talking to it across DDS as to Gazebo or the arm, and robot_state_publisher on the
    simulated URDF so RViz shows the arm. (The node's in-process ``sim`` backend stays for ``ros2 run`` and the
    benchmarks.)

    For an OpaqueFunction body, called before anything is created: the URDF is read (and MuJoCo's Python
    package imported) only for backend sim, and a missing MuJoCo stops the launch before anything started.
    Without robot_state_publisher the robot and the node run, with a warning saying what RViz lacks.
    Returns the actions and the node's parameters for the backend.
    """
    if LaunchConfiguration("backend").perform(context) != "sim":
        return []
    try:
        from step_planner.execution.sim.telemetry import robot_description
    except ImportError as exc:
        raise MissingDependency(f"backend:=sim needs the Python package {exc.name}, not installed: "
                                "pip install -r requirements-robot.txt (docs/install.md: On a robot machine)") from None
    with_rsp = installed("robot_state_publisher")
    # the robot puts its objects on /tf, and its links too when no robot_state_publisher does
    robot = Node(package=PACKAGE, executable="mujoco_robot", name="mujoco_robot", output="screen", emulate_tty=True,
                 on_exit=Shutdown(),
                 parameters=[{"scene": LaunchConfiguration("scene"),
                              "realtime_factor": ParameterValue(LaunchConfiguration("realtime_factor"),
                                                                value_type=float),
                              "tf": True, "tf_links": not with_rsp}])
    if not with_rsp:
        from launch.logging import get_logger

        get_logger("step_planner.launch").warning(
            "backend:=sim without robot_state_publisher: the MuJoCo robot publishes its link frames on /tf itself; "
            f"sudo apt install {apt_package('robot_state_publisher')} for the usual setup")
        return [robot]
    return [robot, Node(package="robot_state_publisher", executable="robot_state_publisher", output="screen",
                        parameters=[{"robot_description": robot_description()}], on_exit=Shutdown())]


def rviz(context, fixed_frame: str = "") -> list:
    """rviz:=true: rviz2 with the package's config/step_planner.rviz (RobotModel, TF, the node's ~/markers), its
    fixed frame ``fixed_frame`` when given (the config's is panda_link0). Without rviz2 nothing more starts and one
    warning line says how to install it: the robot and the node do not need it."""
    if not boolean(context, "rviz"):
        return []
    if not installed("rviz2"):
        from launch.logging import get_logger

        get_logger("step_planner.launch").warning(
            f"rviz:=true but rviz2 is not installed, so RViz is not started: sudo apt install {apt_package('rviz2')}")
        return []
    frame = ["-f", fixed_frame] if fixed_frame else []
    return [Node(package="rviz2", executable="rviz2", name="rviz2", output="screen",
                 arguments=["-d", package_file("config", "step_planner.rviz"), *frame])]
