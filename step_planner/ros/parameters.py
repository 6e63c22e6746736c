"""The node's parameters: one table of specs, declared with descriptors, read into plain settings.

``PARAMETERS`` is the single source: the node declares every entry with a ParameterDescriptor (type, range,
read_only, description: what ``ros2 param describe`` shows), ``step_planner_node --help`` lists them, and a
parameter given for the node that the table does not hold stops the node at start, naming it and the nearest
declared name (:func:`declare_all`). generate_parameter_library, ros2_control's answer to the same problem, has
no Python flavour on PyPI, so the table is plain Python.

Defaults live here and in ``config/step_planner.yaml`` (a test keeps the two equal). LLM and planner
settings are read when a goal starts, so a ``ros2 param set`` applies to the next goal; the backend and
file paths are read-only (changing them means a different robot setup: restart the node). The API key is
never a parameter: ``llm.api_key_env`` names the environment variable that holds it.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from step_planner.config_schema import parse_yaml
from step_planner.execution.factory import BACKENDS
from step_planner.llm.config import STRUCTURED_MODES
from step_planner.planner.config import PlannerConfig
from step_planner.planner.features import KNOWN_FEATURES
from step_planner.planner.profiles import shipped_profiles
from step_planner.ros.goal_policy import POLICIES


@dataclass(frozen=True)
class ParamSpec:
    name: str
    default: Any
    description: str
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    read_only: bool = False
    item_choices: frozenset[str] = field(default_factory=frozenset)  # for string arrays

    def problem(self, value: Any) -> str | None:
        """Why ``value`` is not acceptable (ranges are also enforced by rclpy through the descriptor)."""
        if self.choices and value not in self.choices:
            return f"{self.name} must be one of {', '.join(self.choices)}, got {value!r}"
        if self.item_choices and (bad := sorted({v.lstrip("+-") for v in value} - self.item_choices)):
            return f"{self.name}: unknown {bad}; known: {sorted(self.item_choices)}"
        if self.low is not None and not (self.low <= value <= self.high):
            return f"{self.name} must be in [{self.low}, {self.high}], got {value!r}"
        return None


PARAMETERS: tuple[ParamSpec, ...] = (
    ParamSpec("backend", "symbolic", "Executor backend: symbolic (no motion), sim (MuJoCo Panda in this process), "
              "controllers (a robot behind ros2_control's FollowJointTrajectory and gripper actions: the arm, Gazebo "
              "or the MuJoCo robot process) or moveit (a real or Gazebo Franka through MoveIt 2).", choices=BACKENDS,
              read_only=True),
    ParamSpec("scene", "drawer_desk", "Scene (name in config/scenes or a path) the symbolic and sim backends "
              "start each goal from when the goal names none; for controllers and moveit, the model of the robot's "
              "own world (fixed geometry and object list; poses come from the robot)."),
    ParamSpec("primitives_file", "", "Primitive library YAML; empty = the package's config/primitives.yaml.",
              read_only=True),
    ParamSpec("safety_file", "", "Safety envelope YAML; empty = the package's config/safety.yaml.", read_only=True),
    ParamSpec("goal_policy", "reject", "A goal arriving while another runs: reject (BUSY), preempt (cancel the "
              "running goal) or queue.", choices=POLICIES, read_only=True),
    ParamSpec("max_queue", 4, "Goals that may wait with goal_policy queue; more are answered BUSY.", 1, 32,
              read_only=True),
    ParamSpec("heartbeat_period_s", 1.0, "Period of re-publishing ~/tree (changed=false) for viewers.", 0.1, 60.0,
              read_only=True),
    ParamSpec("approval_mode", False, "Wait for ~/approve_step before every primitive; a refusal never moves "
              "the arm."),
    ParamSpec("approval_timeout_s", 120.0, "How long a primitive waits for approval before it is refused.",
              1.0, 3600.0),
    ParamSpec("confirm_goal", False, "Before anything moves, wait for a person to accept, correct or refuse the "
              "goal the model read into the instruction (~/confirm_goal; shown on ~/pending_goal and in the "
              "feedback). Not for dry_run goals, nor for goals whose client states success_when."),
    ParamSpec("person_timeout_s", 300.0, "How long a goal waits for a person to confirm its goal or answer the "
              "model's question (~/answer_question) before it ends GOAL_NOT_CONFIRMED or CLARIFICATION_NEEDED.",
              1.0, 86400.0),
    ParamSpec("auto_recover", False, "FR3 (a robot_boundary.yaml entry with franka_hardware): after a reflex stopped "
              "the robot, run ~/recover (franka_ros2's three recovery steps) by itself when the goal ends and before "
              "the next one. Off: a person looks at why it stopped first, then calls ~/recover (step-planner "
              "recover)."),
    ParamSpec("episodes.record", True, "Record every goal that runs as an episode (MCAP bag + summary.json: "
              "tree revisions, LLM exchanges without headers or key, primitives, result)."),
    ParamSpec("episodes.folder", "", "Episode folder; empty = $STEP_PLANNER_EPISODES or ~/.step_planner/episodes."),
    ParamSpec("episodes.max_episodes", 200, "Keep at most this many episodes (the oldest are pruned).", 1, 100000),
    ParamSpec("episodes.max_megabytes", 2000, "Keep the episode folder under this size.", 1, 1000000),
    ParamSpec("episodes.max_age_days", 30.0, "Prune episodes older than this.", 0.01, 3650.0),
    ParamSpec("episodic.store", "", "Episodic memory store (JSONL) used when planner.features has episodic_memory; "
              "empty = $STEP_PLANNER_EPISODIC or ~/.step_planner/episodic.jsonl (as the CLI)."),
    ParamSpec("controllers.robot", "", "backend controllers: the robot entry of the boundary file (panda, fr3); "
              "empty = the file's default.", read_only=True),
    ParamSpec("controllers.boundary_file", "", "backend controllers: action names, joint names and timeouts per "
              "robot; empty = the package's config/robot_boundary.yaml.", read_only=True),
    ParamSpec("controllers.namespace", "", "backend controllers: where the robot's actions, joint states, gripper "
              "and controller manager are: empty = the node's own namespace (the arm launched beside it, as "
              "franka_bringup's namespace puts it); /name = that namespace; / = the root (a robot that is not "
              "namespaced, e.g. gazebo.launch.py's gz_ros2_control).", read_only=True),
    ParamSpec("controllers.fake_hardware", False, "backend controllers: the robot runs on franka_ros2's fake "
              "hardware (use_fake_hardware:=true); the backend says at start what it does about homing the hand and "
              "its width check.", read_only=True),
    ParamSpec("moveit.robot", "", "backend moveit: the robot of the config file (panda, fr3); empty = the file's "
              "default. franka.launch.py sets it to its robot_type:= argument.", read_only=True),
    ParamSpec("moveit.config_file", "", "backend moveit: groups, frames, controllers, gripper and motion settings per "
              "robot; empty = the package's config/franka.yaml.", read_only=True),
    ParamSpec("perception.tf_topic", "", "Object and drawer poses as TF frames (tf2_msgs/TFMessage: a tag detector, a "
              "pose estimator, Gazebo's pose bridge on /model_poses); frames named after scene objects and drawers "
              "(the last '/' part, after perception.frame_prefix), composed down to the robot's base frame. Empty: "
              "none. The controllers backend reads its own (config/robot_boundary.yaml).", read_only=True),
    ParamSpec("perception.frame_prefix", "", "Prefix of the tracked frames' names (e.g. 'object_').", read_only=True),
    ParamSpec("perception.max_age_s", 0.5, "A tracked frame older than this says nothing: the object is unknown, "
              "not where it was last seen.", 0.01, 60.0, read_only=True),
    ParamSpec("sim.realtime", True, "backend sim: run the physics at real-time pace (motions take their "
              "physical duration, as on the robot); false runs as fast as it computes.", read_only=True),
    ParamSpec("sim.joint_state_rate_hz", 50.0, "backend sim: /joint_states rate in simulated time while the "
              "physics runs.", 1.0, 500.0, read_only=True),
    ParamSpec("sim.object_pose_rate_hz", 10.0, "backend sim: ~/sim/object_poses rate in simulated time.",
              0.1, 500.0, read_only=True),
    ParamSpec("sim.camera_rate_hz", 4.0, "backend sim: at most this many rendered frames a second on "
              "~/sim/camera/image/compressed while a goal runs and someone watches (0: no camera).", 0.0, 30.0,
              read_only=True),
    ParamSpec("markers.frame", "panda_link0", "The robot base frame ~/markers are drawn in (the scenes' frame): "
              "panda_link0, or fr3_link0 on an FR3.", read_only=True),
    ParamSpec("llm.offline", False, "Serve the answers shipped in config/replay (recorded from a scripted expert, "
              "NOT an LLM) from a loopback server inside the node; llm.base_url and the API key are not used."),
    ParamSpec("llm.model", "gpt-4o-mini", "Model name at the endpoint."),
    ParamSpec("llm.base_url", "", "OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 (Ollama); "
              "empty = api.openai.com."),
    ParamSpec("llm.api_key_env", "OPENAI_API_KEY", "Name of the environment variable holding the API key "
              "(the key itself is never a parameter).", read_only=True),
    ParamSpec("llm.timeout_s", 30.0, "Per-request timeout in seconds.", 1.0, 600.0),
    ParamSpec("llm.max_retries", 3, "Transport retries after the first attempt.", 0, 10),
    ParamSpec("llm.temperature", 0.0, "Sampling temperature.", 0.0, 2.0),
    ParamSpec("llm.max_tokens", 800, "Upper bound of tokens in one answer.", 16, 32768),
    ParamSpec("llm.structured", "auto", "Structured output mode: auto, json_schema or json_object.",
              choices=STRUCTURED_MODES),
    ParamSpec("llm.strict", True, "Ask for strict structured outputs (json_schema strict=true); an endpoint "
              "that refuses them is asked again without strict."),
    ParamSpec("planner.profile", "grounded", "Planner profile from config/profiles.yaml: grounded (conditions "
              "checked in the world), step, paper, react, oneshot, ...", choices=tuple(shipped_profiles())),
    ParamSpec("planner.features", [], "Feature changes to the profile: +name adds, -name removes (names: "
              + ", ".join(sorted(KNOWN_FEATURES)) + ").", item_choices=KNOWN_FEATURES),
    ParamSpec("planner.require_verified_success", True, "A goal succeeds only when the instruction's conditions "
              "were checked against the world; a profile that states none ends PLANNING_FAILED instead."),
    ParamSpec("planner.overlap_min_motion_s", 0.25, "Feature overlap: prepare the next answer during a primitive "
              "only when the previous one took at least this long (no motion to hide behind otherwise).", 0.0, 60.0),
    ParamSpec("planner.max_depth", 4, "Deepest subgoal level (the instruction is depth 0).", 1, 10),
    ParamSpec("planner.max_children", 8, "Live children of one subgoal (plus children_per_condition per fact "
              "of that subgoal).", 1, 64),
    ParamSpec("planner.children_per_condition", 2, "Extra children a subgoal may have per fact it must "
              "achieve.", 0, 16),
    ParamSpec("planner.max_replans_per_node", 3, "Rejected proposals for one child before its parent fails.", 1, 10),
    ParamSpec("planner.max_llm_calls", 40, "LLM calls per goal (plus llm_calls_per_condition per goal fact) "
              "before BUDGET_EXCEEDED.", 1, 10000),
    ParamSpec("planner.llm_calls_per_condition", 12, "Extra LLM calls per fact of the instruction's goal.", 0, 1000),
    ParamSpec("planner.max_primitives", 16, "Primitives per goal (plus primitives_per_condition per goal fact) "
              "before BUDGET_EXCEEDED.", 1, 5000),
    ParamSpec("planner.primitives_per_condition", 6, "Extra primitives per fact of the instruction's goal.", 0, 100),
    ParamSpec("planner.wall_clock_s", 300.0, "Seconds per goal (plus wall_clock_per_condition_s per goal fact) "
              "before BUDGET_EXCEEDED.", 1.0, 86400.0),
    ParamSpec("planner.wall_clock_per_condition_s", 120.0, "Extra seconds per fact of the instruction's goal.",
              0.0, 86400.0),
)
SPECS = {spec.name: spec for spec in PARAMETERS}


# What rclpy declares on every node before ours (rclpy/node.py, jazzy: Node.__init__ declares use_sim_time, and
# start_type_description_service for the type description service): a params file may set them.
# test_ros_parameters.py checks this against a real node's list_parameters.
RCLPY_DECLARED = ("use_sim_time", "start_type_description_service")

# Names that look like settings of this node but are not parameters: what to do instead.
NOT_PARAMETERS = {
    "safety": "the safety envelope is not set by parameters: write it in a YAML file (as config/safety.yaml) and "
              "give its path as safety_file",
}
# backend moveit: MoveItPy inside the node reads its own parameters from the process's parameter files
# (step_planner/ros/moveit_params.py: under /**, so they reach this node too; gazebo.launch.py gives MoveIt's
# under this node's name). Names whose first part is none of ours and not close to one of ours are left to it.
MOVEIT_BACKEND = "moveit"
NEAR = 0.8  # difflib ratio above which an unknown first part is taken for a misspelling of one of ours


class ParameterError(ValueError):
    """Parameters given for the node that it cannot take: every problem, one a line, each naming the parameter."""

    def __init__(self, node: str, problems: list[str]) -> None:
        self.node = node
        self.problems = problems
        super().__init__(f"{node}: {len(problems)} parameter problem{'s' if len(problems) > 1 else ''} (nothing "
                         "was started; `step_planner_node --help` lists the parameters):\n"
                         + "\n".join(f"  {p}" for p in problems))

    def located(self, where: dict[str, str]) -> ParameterError:
        """The same problems, each followed by where its parameter was given (``where``: name -> source)."""
        return ParameterError(self.node, [f"{p} [{where[name]}]" if (name := _problem_name(p)) in where else p
                                          for p in self.problems])


def _problem_name(problem: str) -> str:
    return re.split(r"[:\s]", problem, maxsplit=1)[0]


def given_where(argv: Iterable[str], node: str) -> dict[str, str]:
    """Where each parameter name given on a command line (``argv``, with its ``--ros-args`` sections) for the node
    ``node`` (fully qualified) came from: ``-p`` or a ``--params-file`` and its section. The last source wins, as
    it does for the value (rcl applies the files in order, then the ``-p`` overrides). A file that cannot be read
    is left out: rcl has already refused it."""
    files: list[str] = []
    overrides: list[str] = []
    in_ros = False
    args = list(argv)
    for i, arg in enumerate(args):
        if arg == "--ros-args":
            in_ros = True
        elif arg == "--":
            in_ros = False
        elif in_ros and arg in ("-p", "--param") and i + 1 < len(args):
            overrides.append(args[i + 1].split(":=", 1)[0])
        elif in_ros and arg == "--params-file" and i + 1 < len(args):
            files.append(args[i + 1])
    where: dict[str, str] = {}
    for path in files:
        try:
            data = parse_yaml(Path(path).read_text()) or {}
        except (OSError, yaml.YAMLError):
            continue
        for section, body in data.items() if isinstance(data, dict) else ():
            if not (isinstance(body, dict) and isinstance(body.get("ros__parameters"), dict)
                    and _section_matches(str(section), node)):
                continue
            for name in flatten_yaml({section: body}):
                where[name] = f"{Path(path).name}, section {section}"
    for name in overrides:
        where[name] = "-p on the command line"
    return where


def _section_matches(section: str, node: str) -> bool:
    """A params file's section applies to the node (rcl's node name wildcards: ``*`` one name, ``**`` any)."""
    pattern = section if section.startswith("/") else "/" + section
    parts = re.split(r"(\*\*|\*)", pattern)
    regex = "".join(".*" if part == "**" else "[^/]*" if part == "*" else re.escape(part) for part in parts)
    return re.fullmatch(regex, node) is not None


def undeclared(given: Iterable[str], declared: Iterable[str], backend: str = "") -> list[str]:
    """One line for each name in ``given`` that is not in ``declared``, with the nearest declared name."""
    declared = sorted(set(declared))
    ours = sorted({name.split(".", 1)[0] for name in declared})
    problems = []
    for name in sorted(set(given) - set(declared)):
        root = name.split(".", 1)[0]
        if root in NOT_PARAMETERS:
            problems.append(f"{name}: not a parameter of this node; {NOT_PARAMETERS[root]}")
            continue
        if backend == MOVEIT_BACKEND and root not in ours and not difflib.get_close_matches(root, ours, 1, NEAR):
            continue  # MoveIt's (see MOVEIT_BACKEND)
        near = difflib.get_close_matches(name, declared, n=1)
        group = [n.split(".", 1)[1] for n in declared if n.startswith(root + ".")]
        hint = f"; did you mean {near[0]}?" if near else f"; the {root}.* parameters are: {', '.join(group)}" \
            if group else ""
        problems.append(f"{name}: not a parameter of this node{hint}")
    return problems


def check(values: dict[str, Any]) -> list[str]:
    """Problems with a set of (name, value) pairs; unknown names are left to rclpy."""
    return [p for name, value in values.items() if name in SPECS and (p := SPECS[name].problem(value))]


def llm_settings(values: dict[str, Any]) -> dict[str, Any]:
    """The ``LLMConfig.from_dict`` input from ``llm.*`` parameters (empty base_url = the default endpoint)."""
    out = {name.split(".", 1)[1]: value for name, value in values.items()
           if name.startswith("llm.") and name != "llm.offline"}
    out["base_url"] = out.get("base_url") or None
    return out


def planner_config(values: dict[str, Any]) -> PlannerConfig:
    data = {name.split(".", 1)[1]: value for name, value in values.items() if name.startswith("planner.")}
    data["extra_features"] = list(data.pop("features", None) or [])
    return PlannerConfig.from_dict(data)


def flatten_yaml(params_file: dict[str, Any]) -> dict[str, Any]:
    """``{"/**": {"ros__parameters": {"llm": {"model": ..}}}}`` -> ``{"llm.model": ..}``."""
    (section,) = params_file.values()
    flat: dict[str, Any] = {}

    def walk(prefix: str, data: dict[str, Any]) -> None:
        for key, value in data.items():
            name = f"{prefix}{key}"
            if isinstance(value, dict):
                walk(name + ".", value)
            else:
                flat[name] = value

    walk("", section["ros__parameters"])
    return flat


def declare_all(node) -> None:
    """Declare every parameter on ``node`` with a descriptor, then check what the node was given.

    Raises :class:`ParameterError` listing every problem at once: a given value of the wrong type, out of its
    range or not one of its choices, and every name given for this node (``-p``, a ``--params-file`` section for
    this node or ``/**``, the constructor's ``parameter_overrides``) that it does not declare. rclpy (Jazzy, 7.1)
    has no public accessor for those given names: they are ``Node._parameter_overrides`` (rclpy/node.py:215-219:
    rcl's overrides for this node's name, updated with the constructor's), read once here.
    """
    from rclpy.exceptions import InvalidParameterTypeException, InvalidParameterValueException

    given = dict(getattr(node, "_parameter_overrides", {}))
    problems = []
    for spec in PARAMETERS:
        try:
            _declare(node, spec)
        except (InvalidParameterTypeException, InvalidParameterValueException):
            problems.append(_given_problem(spec, given[spec.name].value if spec.name in given else None))
            continue
        if (problem := spec.problem(read_one(node, spec))) is not None:
            problems.append(problem)
    backend = given["backend"].value if "backend" in given else SPECS["backend"].default
    problems += undeclared(given, [*node.list_parameters([], 0).names, *SPECS], str(backend))
    if problems:
        raise ParameterError(node.get_fully_qualified_name(), problems)


def given_problems(given: dict[str, Any]) -> list[str]:
    """What :func:`declare_all` would refuse in these values given for the node (a params file's section for it), one
    line each, without a node: the same table, the same type and range rules as rclpy's declare_parameter with the
    descriptor (a value of another type, or out of range, is refused as given), then the same choice checks and the
    same unknown-name lines."""
    problems = []
    for spec in PARAMETERS:
        if spec.name not in given:
            continue
        value = given[spec.name]
        if not _fits(spec, value):
            problems.append(_given_problem(spec, value))
        elif (problem := spec.problem(value)) is not None:
            problems.append(problem)
    backend = given.get("backend", SPECS["backend"].default)
    return problems + undeclared(given, [*RCLPY_DECLARED, *SPECS], str(backend))


def _fits(spec: ParamSpec, value: Any) -> bool:
    """rclpy takes ``value`` for the declared type and range (no dynamic typing: an integer is not a double)."""
    default = spec.default
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, (int, float)):
        kind = int if isinstance(default, int) else float
        if not isinstance(value, kind) or isinstance(value, bool):
            return False
        return spec.low is None or spec.low <= value <= spec.high
    if isinstance(default, list):
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    return isinstance(value, str)


def _given_problem(spec: ParamSpec, value: Any) -> str:
    """Why rclpy refused the value given for ``spec`` (its own message names types by enum)."""
    kind = {bool: "true or false", int: "an integer", float: "a number with a decimal point",
            list: "a list of strings"}.get(type(spec.default), "a string")
    if isinstance(spec.default, float) and isinstance(value, int) and not isinstance(value, bool):
        return f"{spec.name}: {value!r} is an integer; this parameter is a double: write {float(value)!r}"
    if spec.low is not None and isinstance(value, (int, float)) and not isinstance(value, bool) and \
            type(value) is type(spec.default):
        return f"{spec.name} must be in [{spec.low:g}, {spec.high:g}], got {value!r}"
    return f"{spec.name}: {value!r} is not {kind} (default {spec.default!r})"


def _declare(node, spec: ParamSpec) -> None:
    """Declare one parameter with its descriptor (type, description, range, read_only)."""
    from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor, ParameterType

    extra = f" One of: {', '.join(spec.choices)}." if spec.choices else ""
    descriptor = ParameterDescriptor(description=spec.description + extra, read_only=spec.read_only)
    if isinstance(spec.default, bool):
        descriptor.type = ParameterType.PARAMETER_BOOL
    elif isinstance(spec.default, int):
        descriptor.type = ParameterType.PARAMETER_INTEGER
        if spec.low is not None:
            descriptor.integer_range = [IntegerRange(from_value=int(spec.low), to_value=int(spec.high), step=0)]
    elif isinstance(spec.default, float):
        descriptor.type = ParameterType.PARAMETER_DOUBLE
        if spec.low is not None:
            descriptor.floating_point_range = [
                FloatingPointRange(from_value=float(spec.low), to_value=float(spec.high), step=0.0)
            ]
    elif isinstance(spec.default, list):
        descriptor.type = ParameterType.PARAMETER_STRING_ARRAY
    else:
        descriptor.type = ParameterType.PARAMETER_STRING
    if isinstance(spec.default, list):
        from rclpy.exceptions import ParameterUninitializedException
        from rclpy.parameter import Parameter

        node.declare_parameter(spec.name, Parameter.Type.STRING_ARRAY, descriptor)
        try:  # a params file cannot hold an empty list: unset means the (empty) default
            node.get_parameter(spec.name)
        except ParameterUninitializedException:
            node.set_parameters([Parameter(spec.name, Parameter.Type.STRING_ARRAY, list(spec.default))])
    else:
        node.declare_parameter(spec.name, spec.default, descriptor)


def read_one(node, spec: ParamSpec) -> Any:
    value = node.get_parameter(spec.name).value
    return list(value) if isinstance(spec.default, list) else value


def read_all(node) -> dict[str, Any]:
    return {spec.name: read_one(node, spec) for spec in PARAMETERS}
