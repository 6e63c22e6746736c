"""A stand-in for the ROS ``launch`` and ``launch_ros`` packages, which cannot be installed here, to load the
launch files as ``ros2 launch`` does and run their descriptions far enough to see what they would start.

What has behaviour is what the launch files and ``step_planner.ros.launch_common`` use: LaunchDescription
(and its ``get_launch_arguments``, which ``ros2 launch --show-args`` prints: like launch's, it finds
arguments declared at the top level, in nested descriptions and groups, never inside an OpaqueFunction),
DeclareLaunchArgument, OpaqueFunction, LaunchConfiguration, launch_ros's Node and ParameterValue, and
``launch.logging.get_logger``; and what a parent launch file composes them with: GroupAction (scoped, forwarding),
IncludeLaunchDescription of a PythonLaunchDescriptionSource, SetLaunchConfiguration, and launch_ros's
PushRosNamespace, SetRemap and SetParameter, each doing to the context's launch configurations what upstream's does
(ros2/launch @ jazzy 09403fc, ros2/launch_ros @ jazzy 62c56e5: file and line at each). A started Node is resolved
as launch_ros resolves it (``Node.resolved``: name, namespace, remappings, parameters), and :func:`run` runs a
description as ``ros2 launch <file> name:=value ...`` does (the context's argv, the process's command line).
Any other name of ``launch.*``/``launch_ros.*`` is a generic :class:`Entity`
that records its arguments, so a launch file that uses more of the API still loads. Every module of MoveIt,
Gazebo and ros2_control raises ModuleNotFoundError unless the test provides it: a launch file that imports
one at module level fails to load, as it does under ``ros2 launch`` on a machine without it.

The ament index is the real ``ament_index_python`` over a prefix this module writes, holding exactly the
ROS packages a test says are installed (and ``step_planner``, whose share folder is this checkout).
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FAKED = ("launch", "launch_ros")
BLOCKED = ("moveit", "moveit_configs_utils", "moveit_py", "ros_gz", "ros_gz_sim", "gz", "controller_manager",
           "franka_msgs", "control_msgs")


class Entity:
    """Any launch entity or substitution this stand-in has no behaviour for: records what it was given."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args, self.kwargs = args, kwargs

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.args}, {self.kwargs})"


class LaunchDescription(Entity):
    def __init__(self, initial_entities=None, **kwargs: Any) -> None:
        super().__init__(initial_entities, **kwargs)
        self.entities = list(initial_entities or [])

    def add_action(self, action) -> None:
        self.entities.append(action)

    def get_launch_arguments(self) -> list[DeclareLaunchArgument]:
        found: list[DeclareLaunchArgument] = []

        def walk(entities) -> None:
            for entity in entities:
                if isinstance(entity, DeclareLaunchArgument) and entity.name not in [a.name for a in found]:
                    found.append(entity)
                elif isinstance(entity, LaunchDescription):
                    walk(entity.entities)
                elif type(entity).__name__ == "GroupAction":
                    walk(entity.kwargs.get("actions", entity.args[0] if entity.args else []))

        walk(self.entities)
        return found


class DeclareLaunchArgument(Entity):
    def __init__(self, name: str, *, default_value=None, description=None, choices=None, **kwargs: Any) -> None:
        super().__init__(name, default_value=default_value, description=description, choices=choices, **kwargs)
        self.name, self.default_value, self.description, self.choices = name, default_value, description, choices


class OpaqueFunction(Entity):
    def __init__(self, *, function, args=None, kwargs=None, **more: Any) -> None:
        super().__init__(function=function, args=args, kwargs=kwargs, **more)
        self.function, self.fargs, self.fkwargs = function, list(args or []), dict(kwargs or {})

    def execute(self, context) -> list:
        return list(self.function(context, *self.fargs, **self.fkwargs) or [])


class SubstitutionFailure(RuntimeError):
    pass


class LaunchConfiguration(Entity):
    def __init__(self, variable_name: str, *, default=None) -> None:
        super().__init__(variable_name, default=default)
        self.variable_name, self.default = variable_name, default

    def perform(self, context) -> str:
        if self.variable_name in context.launch_configurations:
            return context.launch_configurations[self.variable_name]
        if self.default is not None:
            return str(self.default)
        raise SubstitutionFailure(f"launch configuration '{self.variable_name}' does not exist")


def perform(context, value) -> Any:
    """A substitution, a list of them (concatenated, as launch's perform_substitutions) or a plain value."""
    if isinstance(value, (LaunchConfiguration, ParameterValue)):
        return value.perform(context)
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, (str, LaunchConfiguration)) for v in value) \
            and any(isinstance(v, LaunchConfiguration) for v in value):
        return "".join(str(perform(context, v)) for v in value)
    return value


def prefix_namespace(base: str | None, ns: str | None) -> str | None:
    """launch_ros/utilities/namespace_utils.py:34-83: ``ns`` under ``base`` unless absolute; trailing / stripped."""
    if base is None and ns is None:
        return None
    if ns is None:
        combined = base
    elif not base or ns.startswith("/"):
        combined = ns
    else:
        combined = ("" if base == "/" else base) + "/" + ns
    return combined if combined == "/" else combined.rstrip("/")


class Node(Entity):
    def __init__(self, *, executable, package=None, name=None, parameters=None, namespace=None, remappings=None,
                 **kwargs: Any) -> None:
        super().__init__(executable=executable, package=package, name=name, parameters=parameters,
                         namespace=namespace, remappings=remappings, **kwargs)
        self.package, self.executable, self.node_name, self.parameters = package, executable, name, parameters
        self.resolved: dict[str, Any] = {}

    def resolve(self, context) -> dict[str, Any]:
        """What launch_ros's Node._perform_substitutions makes of the node in ``context`` (launch_ros/actions/
        node.py:391-481): the namespace under the pushed ros_namespace, made absolute (400-402, namespace_utils.py
        :89-94); the global parameters of SetParameter before the node's own, so its own win (422-438, then
        440-461); the global remappings of SetRemap before the node's own (467-475). Parameter files stay paths."""
        name = perform(context, self.node_name) if self.node_name is not None else None
        ns = perform(context, self.kwargs.get("namespace"))
        ns = prefix_namespace(context.launch_configurations.get("ros_namespace"), ns)
        ns = "/" + ns if ns is not None and not ns.startswith("/") else ns
        params: list[Any] = [tuple(p) if isinstance(p, tuple) else p
                             for p in context.launch_configurations.get("global_params", [])]
        for entry in self.parameters or []:
            params.append({k: perform(context, v) for k, v in entry.items()} if isinstance(entry, dict)
                          else str(perform(context, entry)))
        remaps = [*context.launch_configurations.get("ros_remaps", []),
                  *[(perform(context, a), perform(context, b)) for a, b in self.kwargs.get("remappings") or []]]
        self.resolved = {"name": name, "namespace": ns or "/", "parameters": params, "remappings": remaps}
        return self.resolved

    def parameter(self, key: str) -> Any:
        """The value the node would get for ``key`` from its dict parameters and global ones (the last wins, as the
        command line's order does); parameter files are not read."""
        found = None
        for entry in self.resolved["parameters"]:
            if isinstance(entry, tuple) and entry[0] == key:
                found = entry[1]
            elif isinstance(entry, dict) and key in entry:
                found = entry[key]
        return found


class ParameterValue(Entity):
    def __init__(self, value, *, value_type=None) -> None:
        super().__init__(value, value_type=value_type)
        self.value, self.value_type = value, value_type

    def perform(self, context) -> Any:
        """launch_ros/utilities/evaluate_parameters.py: the substituted text, as YAML unless value_type is str."""
        import yaml

        text = perform(context, self.value)
        if self.value_type is str or not isinstance(text, str):
            return text
        return yaml.safe_load(text)


class GroupAction(Entity):
    """launch/actions/group_action.py:68-142: ``scoped`` pushes the launch configurations and pops them after the
    group (PushLaunchConfigurations / PopLaunchConfigurations); ``forwarding=False`` clears them inside the group
    but for ``launch_configurations`` (ResetLaunchConfigurations, reset_launch_configurations.py:75-88)."""

    def __init__(self, actions, *, scoped: bool = True, forwarding: bool = True, launch_configurations=None,
                 **kwargs: Any) -> None:
        super().__init__(actions=actions, scoped=scoped, forwarding=forwarding,
                         launch_configurations=launch_configurations, **kwargs)
        self.actions, self.scoped, self.forwarding = list(actions), scoped, forwarding
        self.configurations = dict(launch_configurations or {})


class SetLaunchConfiguration(Entity):
    """launch/actions/set_launch_configuration.py:71-74."""

    def __init__(self, name, value, **kwargs: Any) -> None:
        super().__init__(name, value, **kwargs)
        self.name, self.value = name, value

    def execute(self, context) -> None:
        context.launch_configurations[perform(context, self.name)] = str(perform(context, self.value))


class PushRosNamespace(Entity):
    """launch_ros/actions/push_ros_namespace.py:67-82: the pushed namespace under the previous one, absolute."""

    def __init__(self, namespace, **kwargs: Any) -> None:
        super().__init__(namespace, **kwargs)
        self.namespace = namespace

    def execute(self, context) -> None:
        pushed = perform(context, self.namespace)
        combined = prefix_namespace(context.launch_configurations.get("ros_namespace"), pushed)
        context.launch_configurations["ros_namespace"] = combined if combined.startswith("/") else "/" + combined


class SetRemap(Entity):
    """launch_ros/actions/set_remap.py:85-91: (src, dst) appended to the ros_remaps list."""

    def __init__(self, src, dst, **kwargs: Any) -> None:
        super().__init__(src, dst, **kwargs)
        self.src, self.dst = src, dst

    def execute(self, context) -> None:
        remaps = context.launch_configurations.get("ros_remaps", [])
        remaps.append((perform(context, self.src), perform(context, self.dst)))
        context.launch_configurations["ros_remaps"] = remaps


class SetParameter(Entity):
    """launch_ros/actions/set_parameter.py:86-91: (name, value) appended to the global_params list."""

    def __init__(self, name, value, **kwargs: Any) -> None:
        super().__init__(name, value, **kwargs)
        self.name, self.value = name, value

    def execute(self, context) -> None:
        params = context.launch_configurations.get("global_params", [])
        params.append((perform(context, self.name), perform(context, self.value)))
        context.launch_configurations["global_params"] = params


class OnProcessExit(Entity):
    """launch/event_handlers/on_process_exit.py: ``on_exit`` (actions, or a function of the event and context) once
    ``target_action`` exited."""

    def __init__(self, *, target_action=None, on_exit=None, **kwargs: Any) -> None:
        super().__init__(target_action=target_action, on_exit=on_exit, **kwargs)
        self.target_action, self.on_exit = target_action, on_exit


class RegisterEventHandler(Entity):
    """launch/actions/register_event_handler.py:52-54: registers the handler with the context, nothing else; its
    actions run when the event comes, in the launch configurations of that moment (no scope is kept: a group's
    pushed namespace is popped by then)."""

    def __init__(self, event_handler, **kwargs: Any) -> None:
        super().__init__(event_handler, **kwargs)
        self.event_handler = event_handler


class PythonLaunchDescriptionSource(Entity):
    """launch/launch_description_sources/python_launch_description_source.py: the file's description."""

    def __init__(self, launch_file_path, **kwargs: Any) -> None:
        super().__init__(launch_file_path, **kwargs)
        self.path = launch_file_path

    def get_launch_description(self, context) -> LaunchDescription:
        return load_launch_file(Path(perform(context, self.path))).generate_launch_description()


class IncludeLaunchDescription(Entity):
    """launch/actions/include_launch_description.py:146-185: the launch arguments set as launch configurations in
    the current scope (not a scope of its own), then the included description."""

    def __init__(self, launch_description_source, *, launch_arguments=None, **kwargs: Any) -> None:
        super().__init__(launch_description_source, launch_arguments=launch_arguments, **kwargs)
        self.source, self.launch_arguments = launch_description_source, list(launch_arguments or [])

    def execute(self, context) -> list:
        description = self.source.get_launch_description(context)
        INCLUDED.append((str(perform(context, self.source.path)),
                         [(perform(context, k), perform(context, v)) for k, v in self.launch_arguments]))
        return [*[SetLaunchConfiguration(k, v) for k, v in self.launch_arguments], description]


INCLUDED: list[tuple[str, list[tuple[Any, Any]]]] = []  # (file, launch arguments) of every include run, in order


class Logger:
    """``launch.logging.get_logger``: what was logged goes to :data:`LOGGED` as (level, name, message)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __getattr__(self, level: str):
        return lambda message, *args, **kwargs: LOGGED.append((level, self.name, str(message)))


LOGGED: list[tuple[str, str, str]] = []

BEHAVIOUR: dict[str, dict[str, Any]] = {
    "launch": {"LaunchDescription": LaunchDescription},
    "launch.actions": {"DeclareLaunchArgument": DeclareLaunchArgument, "OpaqueFunction": OpaqueFunction,
                       "GroupAction": GroupAction, "IncludeLaunchDescription": IncludeLaunchDescription,
                       "SetLaunchConfiguration": SetLaunchConfiguration,
                       "RegisterEventHandler": RegisterEventHandler},
    "launch.launch_description_sources": {"PythonLaunchDescriptionSource": PythonLaunchDescriptionSource},
    "launch.event_handlers": {"OnProcessExit": OnProcessExit},
    "launch.substitutions": {"LaunchConfiguration": LaunchConfiguration},
    "launch.substitutions.substitution_failure": {"SubstitutionFailure": SubstitutionFailure},
    "launch.logging": {"get_logger": Logger},
    "launch_ros.actions": {"Node": Node, "PushRosNamespace": PushRosNamespace, "PushROSNamespace": PushRosNamespace,
                           "SetRemap": SetRemap, "SetParameter": SetParameter},
    "launch_ros.parameter_descriptions": {"ParameterValue": ParameterValue},
}


class _FakeModule(types.ModuleType):
    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        made = type(name, (Entity,), {"__module__": self.__name__})
        setattr(self, name, made)
        return made


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Fakes ``launch``/``launch_ros`` (and any module a test provides); blocks MoveIt, Gazebo, ros2_control."""

    def __init__(self, provided: dict[str, types.ModuleType]) -> None:
        self.provided = provided

    def find_spec(self, fullname: str, path, target=None):
        top = fullname.split(".")[0]
        if fullname in self.provided or top in FAKED:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        if top in BLOCKED:
            raise ModuleNotFoundError(f"No module named '{fullname}'", name=fullname)
        return None

    def create_module(self, spec):
        if spec.name in self.provided:
            return self.provided[spec.name]
        module = _FakeModule(spec.name)
        module.__path__ = []
        module.__dict__.update(BEHAVIOUR.get(spec.name, {}))
        return module

    def exec_module(self, module) -> None:
        pass


def _owned(name: str) -> bool:
    return name.split(".")[0] in (*FAKED, *BLOCKED) or name == "step_planner.ros.launch_common"


@contextlib.contextmanager
def fake_launch(prefix: Path, installed: set[str] = frozenset(),
                provided: dict[str, types.ModuleType] | None = None) -> Iterator[None]:
    """Within: ``launch``/``launch_ros`` are this stand-in, ``installed`` ROS packages (and step_planner) are
    in the ament index, MoveIt/Gazebo modules are missing unless ``provided`` ({module name: module})."""
    index = prefix / "share" / "ament_index" / "resource_index" / "packages"
    index.mkdir(parents=True, exist_ok=True)
    for package in {*installed, "step_planner"}:
        (index / package).write_text("")
    share = prefix / "share" / "step_planner"
    if not share.exists():
        share.symlink_to(ROOT, target_is_directory=True)
    saved_env = os.environ.get("AMENT_PREFIX_PATH")
    saved = {name: sys.modules.pop(name) for name in list(sys.modules) if _owned(name)}
    finder = _Finder(dict(provided or {}))
    sys.meta_path.insert(0, finder)
    os.environ["AMENT_PREFIX_PATH"] = str(prefix)
    LOGGED.clear()
    INCLUDED.clear()
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        for name in [n for n in sys.modules if _owned(n)]:
            del sys.modules[name]
        sys.modules.update(saved)
        if saved_env is None:
            os.environ.pop("AMENT_PREFIX_PATH", None)
        else:
            os.environ["AMENT_PREFIX_PATH"] = saved_env


LOADED: list[str] = []  # the file names load_launch_file loaded, newest last: what run() launches by default


def load_launch_file(path: Path) -> types.ModuleType:
    """As launch does (launch_description_sources/python_launch_file_utilities.py:32-40): a module from the file."""
    loader = importlib.machinery.SourceFileLoader("python_launch_file", str(path))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(module)
    LOADED.append(Path(path).name)
    return module


class Context:
    """launch/launch_context.py: the launch configurations (a stack of scopes, 191-200) and ``argv`` (52, 77-79)."""

    def __init__(self, configurations: dict[str, str], argv: list[str] | None = None) -> None:
        self.launch_configurations = dict(configurations)
        self.argv = list(argv or [])
        self._stack: list[dict[str, Any]] = []

    def push(self) -> None:
        self._stack.append(self.launch_configurations.copy())  # launch_context.py:191-192: a shallow copy

    def pop(self) -> None:
        self.launch_configurations = self._stack.pop()


def run(description: LaunchDescription, arguments: dict[str, str], launched: str | None = None
        ) -> tuple[list[Node], Exception | None]:
    """Visit the description in order as ``ros2 launch <launched> name:=value ...`` does: ``arguments`` are the
    command line's (the LaunchService's argv, ros2launch/api/api.py:162-165, set as launch configurations by the
    include that wraps the file, 170-176), ``launched`` the file named on it (default: the file loaded last; None
    there: a description run by a program, not by ros2 launch). Returns the nodes it would start, each resolved in
    its context (Node.resolved), and the exception an action raised (launch logs it and shuts down; the nodes
    visited before it were already started)."""
    argv = [f"{k}:={v}" for k, v in arguments.items()]
    launched = launched if launched is not None else (LOADED[-1] if LOADED else "")
    context = Context(arguments, argv)
    started: list[Node] = []

    def visit(entities) -> None:
        for entity in entities:
            if isinstance(entity, DeclareLaunchArgument):
                if entity.name not in context.launch_configurations and entity.default_value is not None:
                    context.launch_configurations[entity.name] = perform(context, entity.default_value)
            elif isinstance(entity, LaunchDescription):
                visit(entity.entities)
            elif isinstance(entity, (OpaqueFunction, IncludeLaunchDescription)):
                visit(entity.execute(context) or [])
            elif isinstance(entity, (SetLaunchConfiguration, PushRosNamespace, SetRemap, SetParameter)):
                entity.execute(context)
            elif isinstance(entity, GroupAction):
                if entity.scoped:
                    context.push()
                if entity.scoped and not entity.forwarding:  # reset_launch_configurations.py:75-87
                    kept = {perform(context, k): perform(context, v) for k, v in entity.configurations.items()}
                    context.launch_configurations.clear()
                    context.launch_configurations.update(kept)
                else:
                    for k, v in entity.configurations.items():
                        context.launch_configurations[perform(context, k)] = perform(context, v)
                try:
                    visit(entity.actions)
                finally:
                    if entity.scoped:
                        context.pop()
            elif isinstance(entity, Node):
                entity.resolve(context)
                started.append(entity)
            elif isinstance(entity, RegisterEventHandler) and isinstance(entity.event_handler, OnProcessExit):
                handlers.append(entity.event_handler)

    handlers: list[OnProcessExit] = []

    def exits() -> None:
        """Every process started exits (the spawners do), after the launch description was visited: each
        OnProcessExit handler whose target started runs its actions in the configurations of then."""
        while ready := [h for h in handlers if any(h.target_action is n for n in started)]:
            for handler in ready:
                handlers.remove(handler)
                actions = handler.on_exit(None, context) if callable(handler.on_exit) else handler.on_exit
                visit(actions if isinstance(actions, list) else [actions])

    saved = sys.argv
    sys.argv = ["ros2", "launch", "step_planner", launched, *argv] if launched else saved
    try:
        visit(description.entities)
        exits()
    except Exception as exc:  # what LaunchService.run_async catches and logs in one line
        return started, exc
    finally:
        sys.argv = saved
    return started, None
