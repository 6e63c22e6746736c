"""A stand-in for the ROS ``launch`` and ``launch_ros`` packages, which cannot be installed here, to load the
launch files as ``ros2 launch`` does and run their descriptions far enough to see what they would start.

What has behaviour is what the launch files and ``step_planner.ros.launch_common`` use: LaunchDescription
(and its ``get_launch_arguments``, which ``ros2 launch --show-args`` prints: like launch's, it finds
arguments declared at the top level, in nested descriptions and groups, never inside an OpaqueFunction),
DeclareLaunchArgument, OpaqueFunction, LaunchConfiguration, launch_ros's Node and ParameterValue, and
``launch.logging.get_logger``. Any other name of ``launch.*``/``launch_ros.*`` is a generic :class:`Entity`
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


class Node(Entity):
    def __init__(self, *, executable, package=None, name=None, parameters=None, **kwargs: Any) -> None:
        super().__init__(executable=executable, package=package, name=name, parameters=parameters, **kwargs)
        self.package, self.executable, self.node_name, self.parameters = package, executable, name, parameters


class ParameterValue(Entity):
    def __init__(self, value, *, value_type=None) -> None:
        super().__init__(value, value_type=value_type)


class Logger:
    """``launch.logging.get_logger``: what was logged goes to :data:`LOGGED` as (level, name, message)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __getattr__(self, level: str):
        return lambda message, *args, **kwargs: LOGGED.append((level, self.name, str(message)))


LOGGED: list[tuple[str, str, str]] = []

BEHAVIOUR: dict[str, dict[str, Any]] = {
    "launch": {"LaunchDescription": LaunchDescription},
    "launch.actions": {"DeclareLaunchArgument": DeclareLaunchArgument, "OpaqueFunction": OpaqueFunction},
    "launch.substitutions": {"LaunchConfiguration": LaunchConfiguration},
    "launch.substitutions.substitution_failure": {"SubstitutionFailure": SubstitutionFailure},
    "launch.logging": {"get_logger": Logger},
    "launch_ros.actions": {"Node": Node},
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


def load_launch_file(path: Path) -> types.ModuleType:
    """As launch does (launch_description_sources/python_launch_file_utilities.py:32-40): a module from the file."""
    loader = importlib.machinery.SourceFileLoader("python_launch_file", str(path))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(module)
    return module


class Context:
    def __init__(self, configurations: dict[str, str]) -> None:
        self.launch_configurations = dict(configurations)


def run(description: LaunchDescription, arguments: dict[str, str]) -> tuple[list[Node], Exception | None]:
    """Visit the description in order as launch does: the nodes it would start, and the exception an action
    raised (launch logs it and shuts down; the nodes visited before it were already started)."""
    context = Context(arguments)
    started: list[Node] = []

    def visit(entities) -> None:
        for entity in entities:
            if isinstance(entity, DeclareLaunchArgument):
                if entity.name not in context.launch_configurations and entity.default_value is not None:
                    context.launch_configurations[entity.name] = entity.default_value
            elif isinstance(entity, LaunchDescription):
                visit(entity.entities)
            elif isinstance(entity, OpaqueFunction):
                visit(entity.execute(context))
            elif isinstance(entity, Node):
                started.append(entity)

    try:
        visit(description.entities)
    except Exception as exc:  # what LaunchService.run_async catches and logs in one line
        return started, exc
    return started, None
