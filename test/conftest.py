"""Shared fixtures: the shipped primitive library, scenes and planner config, and scripted models.

The scripted models implement the planner's ``complete()`` interface directly; they are for unit
tests of planning logic. End-to-end tests go through the real ``openai`` client and a loopback
server. ``ScriptedLLM`` accepts answers in the compact form older tests use (``{"subgoal": ...}``,
a termination ``call`` as ``{"name", "args"}``) and turns them into the schema's shape.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from step_planner.domain.primitives import PrimitiveLibrary
from step_planner.domain.scene import load_scene
from step_planner.domain.world import WorldState
from step_planner.planner.config import PlannerConfig

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "config"

DRAWER_TASK = "put the tape and the screwdriver in the drawer"
DRAWER_GOAL = ["in(tape, drawer)", "in(screwdriver, drawer)", "closed(drawer)"]
DRAWER_PLANS = {  # a two-level decomposition of the drawer task, for scripted models (STEP's text style)
    DRAWER_TASK: ["open_drawer(drawer)", "put the tape in the drawer", "put the screwdriver in the drawer",
                  "close_drawer(drawer)"],
    "put the tape in the drawer": ["pick(tape)", "place(tape, drawer)"],
    "put the screwdriver in the drawer": ["pick(screwdriver)", "place(screwdriver, drawer)"],
}
GROUNDED_PLANS = {  # the same decomposition with calls and success_when (the grounded profile)
    DRAWER_TASK: [("open the drawer", "open_drawer(drawer=drawer)", []),
                  ("put the tape in the drawer", None, ["in(tape, drawer)"]),
                  ("put the screwdriver in the drawer", None, ["in(screwdriver, drawer)"]),
                  ("close the drawer", "close_drawer(drawer=drawer)", [])],
    "put the tape in the drawer": [("pick up the tape", "pick(object=tape)", []),
                                   ("place the tape in the drawer", "place(object=tape, target=drawer)", [])],
    "put the screwdriver in the drawer": [("pick up the screwdriver", "pick(object=screwdriver)", []),
                                          ("place it in the drawer", "place(object=screwdriver, target=drawer)", [])],
}

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")


def _xdist_worker_ros_env() -> None:
    """Under pytest-xdist (``make test``), give each worker its own DDS domain and ROS log directory.

    Test files reuse node, topic and action names (``/step_planner``, ``/mujoco_robot``), so two workers in one
    domain would discover each other's servers. Worker ``gwN`` takes ``ROS_DOMAIN_ID + 2N``; ``+ 2N + 1`` is its
    spare domain (``STEP_PLANNER_SPARE_DOMAIN``) for a test that needs a graph of its own. The Makefile picks
    ``ROS_DOMAIN_ID`` so that every worker's domains stay within ROS's 0..232.
    """
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")  # set by xdist before this file is imported
    if not re.fullmatch(r"gw\d+", worker):
        return
    index = int(worker[2:])
    base = int(os.environ.get("ROS_DOMAIN_ID") or 0)
    domain = base + 2 * index
    if domain + 1 > 232:
        raise pytest.UsageError(f"ROS_DOMAIN_ID={base} leaves no domain for xdist worker {worker} (max 232)")
    os.environ["ROS_DOMAIN_ID"] = str(domain)
    os.environ["STEP_PLANNER_SPARE_DOMAIN"] = str(domain + 1)
    if os.environ.get("ROS_LOG_DIR"):
        os.environ["ROS_LOG_DIR"] = os.path.join(os.environ["ROS_LOG_DIR"], worker)


_xdist_worker_ros_env()


# Files whose module fixture is a robot process, a build or a recorded episode: under ``make test``'s ``--dist
# loadgroup`` their tests stay on one worker, so the fixture is made once. Every other file's tests spread over the
# workers one by one; a cheap module fixture (a library, a client node, the moveit_py stand-in's servers) is then
# made once per worker, which costs less than one worker's long queue of a file's slow tests (test_sim_scenes).
GROUPED = {f"test/test_{name}.py" for name in (
    "robot_install", "colcon_install",  # the robot-machine install, the colcon workspace (built when not given)
    "controllers_backend", "controllers_fr3", "controllers_replay", "fr3_reflex", "ros_fr3_reflex",  # a robot process
    "episodes_typed",  # an episode recorded on the in-process MuJoCo
)}


# The file that uses what ``make test`` builds beside pytest (the robot-machine install and its workspace): run
# late, after four fifths of the other tests, so the build has had the cores' idle time (Makefile, test:), and not
# last, so the other worker still has tests while these wait or run. Their module fixture then only waits for the
# build, so they are not grouped either: a worker that has nothing else to do takes the next of their tests.
LATE = ("test/test_robot_install.py",)


def _grouped() -> set[str]:
    return GROUPED - set(LATE) if os.environ.get("STEP_PLANNER_WORKSPACES_BUILD") else GROUPED


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The longest work units first (test/work_order.py), the LATE files late when make builds what they use."""
    from work_order import load_durations, order

    late = LATE if os.environ.get("STEP_PLANNER_WORKSPACES_BUILD") else ()
    position = {nodeid: i for i, nodeid in enumerate(order([i.nodeid for i in items], load_durations(), _grouped(),
                                                           late))}
    items.sort(key=lambda item: position[item.nodeid])


def workspace_from_make(variable: str) -> Path | None:
    """The folder ``make test`` names in ``variable`` (STEP_PLANNER_ROBOT_INSTALL), once
    its build beside pytest has ended (``$STEP_PLANNER_WORKSPACES_BUILD.exit`` holds make's exit code); None when
    not given (the test builds its own). A failed build fails the test with the end of the build's log."""
    import time

    given = os.environ.get(variable)
    if not given:
        return None
    log = os.environ.get("STEP_PLANNER_WORKSPACES_BUILD")
    if log:
        done, deadline = Path(log + ".exit"), time.monotonic() + 500  # within the tests' 600 s timeout
        while not done.exists():
            assert time.monotonic() < deadline, f"the workspaces' build beside pytest did not end; its log: {log}"
            time.sleep(1.0)
        code = done.read_text().strip()
        tail = Path(log).read_text()[-3000:] if Path(log).exists() else "(no log)"
        assert code == "0", f"make robot-install failed (exit {code}):\n{tail}"
    return Path(given)


@pytest.hookimpl(optionalhook=True)  # an xdist hook: pytest -p no:xdist knows no such hook
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup``'s scheduler with the ``GROUPED`` files as groups, taken in collection order.

    Not ``xdist_group`` marks: xdist 3.8 puts a mark's group into ``item._nodeid``, which pytest 9 no longer reads
    (``Node.nodeid`` is ``str(self._id)``), so every mark was lost and each module fixture was made on every worker
    (the robot install twice when not given). The scheduler takes a work unit's scope from the node id instead."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    config.option.loadscopereorder = False  # the units in collection order: longest first (pytest_collection_...)
    grouped = _grouped()

    class FileGroups(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::")[0]
            return path if path in grouped else nodeid

    return FileGroups(config, log)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--cpu-log", metavar="FILE", default=None,
                     help="append each test's CPU seconds (its worker process and the child processes it reaped: "
                          "nodes, robots, builds), node id, xdist worker and wall-clock start and end (Unix "
                          "seconds) to FILE, tab-separated, one line each (where CI's CPU and time go)")


def _cpu_seconds() -> float:
    import resource

    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    """With ``--cpu-log``: a module fixture's robot process counts where it is torn down (its last test)."""
    import time

    log = item.config.getoption("--cpu-log")
    start, began = (_cpu_seconds(), time.time()) if log else (0.0, 0.0)
    yield
    if log:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        with open(log, "a") as out:
            out.write(f"{_cpu_seconds() - start:.2f}\t{item.nodeid}\t{worker}\t{began:.2f}\t{time.time():.2f}\n")


@pytest.fixture(scope="session")
def library() -> PrimitiveLibrary:
    return PrimitiveLibrary.load(CONFIG / "primitives.yaml")


@pytest.fixture
def drawer_world() -> WorldState:
    return load_scene(CONFIG / "scenes" / "drawer_desk.yaml")


def shipped_config(**changes: Any) -> PlannerConfig:
    """The shipped ``config/planner.yaml``, with ``changes`` (a profile, a budget)."""
    config = PlannerConfig.from_yaml(CONFIG / "planner.yaml")
    return config.with_changes(**changes) if changes else config


def section(text: str, title: str) -> str:
    m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    return m.group(1).strip() if m else ""


FEEDBACK = "Feedback on your last proposals"
CHILDREN = "Children of this subgoal so far (in order, with outcomes)"


def _call_text(call: Any) -> Any:
    if isinstance(call, dict):
        args = ", ".join(f"{k}={v}" for k, v in (call.get("args") or {}).items())
        return f"{call.get('name')}({args})"
    return call


def _shape(answer: dict, schema: type[BaseModel]) -> dict:
    """Old compact answers -> the fields of ``schema``."""
    fields = schema.model_fields
    out = dict(answer)
    if "next" in fields and "subgoal" in out:
        subgoal = out.pop("subgoal")
        plan = out.pop("plan", [])
        out["next"] = {"subgoal": subgoal} if subgoal is not None else None
        if "then" in fields and plan:
            out["then"] = [{"subgoal": p} for p in plan[1:]]
    out.pop("plan", None) if "then" not in fields else None
    if "call" in fields and "verdict" in fields:
        out["call"] = _call_text(out.get("call"))
    if "reason" in out or "missing" in out:
        out["reasoning"] = " ".join(str(out.pop(k, "")) for k in ("reasoning", "reason", "missing")).strip()
    return {k: v for k, v in out.items() if k in fields}


class ScriptedLLM:
    """Answers from a function of (purpose, user message); records every prompt it saw."""

    def __init__(self, answer: Callable[[str, str], dict]) -> None:
        self.answer = answer
        self.prompts: list[tuple[str, str]] = []
        self.schemas: list[type[BaseModel]] = []

    def complete(self, messages, schema: type[BaseModel], purpose: str) -> BaseModel:
        user = messages[-1]["content"]
        self.prompts.append((purpose, user))
        self.schemas.append(schema)
        return schema.model_validate(_shape(self.answer(purpose, user), schema))


def children_so_far(user: str) -> list[str]:
    body = section(user, CHILDREN)
    if body == "(none yet)":
        return []
    return [re.sub(r"^\d+\. ", "", line) for line in body.splitlines()]


def parent_of(user: str) -> str:
    return section(user, "Subgoal to decompose").splitlines()[0]


def table_plan(plans: dict[str, list[str]]) -> Callable[[str, str], dict]:
    """STEP's text style: decompose each subgoal into a fixed list, skipping children that succeeded."""

    def answer(purpose: str, user: str) -> dict:
        if purpose == "termination":  # natural-language subgoals in these plans are compound
            return {"verdict": "decompose", "reason": "needs several actions"}
        if purpose == "verification":
            return {"achieved": True}
        done = [c.rsplit(" -> ", 1)[0] for c in children_so_far(user) if c.endswith("-> succeeded")]
        remaining = [s for s in plans[parent_of(user)] if s not in done]
        if not remaining:
            return {"done": True}
        return {"done": False, "subgoal": remaining[0], "plan": remaining}

    return answer


def grounded_plan(plans: dict[str, list[tuple[str, str | None, list[str]]]],
                  goal: list[str]) -> Callable[[str, str], dict]:
    """The grounded style: children with calls and success_when, the goal on the root's first answer."""

    def child(spec: tuple[str, str | None, list[str]]) -> dict:
        return {"subgoal": spec[0], "call": spec[1], "success_when": spec[2]}

    def answer(purpose: str, user: str) -> dict:
        done = {re.sub(r" \[.*\]$", "", c.rsplit(" -> ", 1)[0]) for c in children_so_far(user)
                if c.endswith("-> succeeded")}
        remaining = [s for s in plans[parent_of(user)] if s[0] not in done]
        out: dict[str, Any] = {"reasoning": "scripted", "goal": list(goal)}
        if not remaining:
            return {**out, "done": True, "next": None}
        return {**out, "done": False, "next": child(remaining[0]), "then": [child(s) for s in remaining[1:]]}

    return answer


def expert_client(handler):
    """The real LLMClient calling a scripted handler in process (no HTTP)."""
    from step_planner.llm.client import LLMClient
    from step_planner.llm.config import LLMConfig

    return LLMClient(LLMConfig(model="scripted-expert"), handler=handler)


def bench_config(**changes: Any) -> PlannerConfig:
    """The benchmark's budgets (``config/bench.yaml``): claims of every profile are kept."""
    config = PlannerConfig.from_yaml(CONFIG / "bench.yaml")
    return config.with_changes(**changes) if changes else config
