"""Benchmark task suites (``config/tasks/*.yaml``): loading and validation.

A task is an instruction in a scene with a formal goal (atoms of :mod:`step_planner.bench.goals`),
ordered subgoal milestones (for the subgoal success rate) and the optimal primitive count of the
knowledge-model expert. Categories follow STEP's real-robot table (Table III):

- ``short_simple``  fewer than 5 primitives, every goal object visible at the start
- ``short_complex`` fewer than 5 primitives, some goal object hidden in a closed drawer
- ``long_simple``   5 to 8 primitives, every goal object visible
- ``long_complex``  5 to 8 primitives, some goal object hidden

and the long-horizon suite (``config/tasks/long_horizon.yaml``) adds

- ``horizon_simple``  12 to 40 primitives, every goal object visible
- ``horizon_complex`` 12 to 40 primitives, some goal object hidden in a closed drawer

The paraphrase suite (``config/tasks/paraphrase.yaml``) re-words tasks of other suites (``rewords``):
each ``paraphrases`` entry names the task it re-words (``of``), a wording ``style`` (colloquial,
indirect, reference, polite, typo) and the new instruction; everything else (scene, formal goal,
milestones, optimal count unless given) is the original's. Its ``tasks`` are ambiguous instructions
(style ``ambiguous``) with the ``question`` a careful model asks and the person's ``answer``; the
formal goal is what the person means.

The loader checks everything that can be checked without planning (names, categories vs hidden
objects, ``optimal`` vs category); :func:`check_optimal` re-plans each task and compares.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from step_planner.bench.goals import Atom, TaskGoalError, check_atom_names, parse_goal, satisfied
from step_planner.domain.scene import SceneError, load_scene
from step_planner.domain.world import WorldState
from step_planner.resources import config_path

TASKS_DIR = config_path("tasks")
SCENES_DIR = config_path("scenes")
CATEGORIES = ("short_simple", "short_complex", "long_simple", "long_complex", "horizon_simple", "horizon_complex")
STEPS = {"short": (1, 4), "long": (5, 8), "horizon": (12, 40)}  # primitives, by the category's first word
_KEYS = {"id", "category", "scene", "instruction", "goal", "subgoals", "optimal"}
_OPTIONAL_KEYS = {"stated_goal", "style", "question", "answer"}
STYLES = ("colloquial", "indirect", "reference", "polite", "typo", "ambiguous")
_PARAPHRASE_KEYS = {"of", "style", "instruction"}


class TaskError(ValueError):
    """A task file or one of its tasks is malformed; the message names the task and the field."""


@dataclass(frozen=True)
class Task:
    id: str
    category: str
    scene: str
    instruction: str
    goal: tuple[Atom, ...]
    subgoals: tuple[tuple[Atom, ...], ...]
    optimal: int
    world: WorldState  # the initial TRUE world (hidden objects included)
    # What a model can state as the instruction's goal from the instruction and the first observation
    # alone, when ``goal`` names objects nobody has seen yet ("empty the drawer onto the tray": the
    # objects inside are unknown until it is open). Empty: the formal goal is statable as it is.
    stated_goal: tuple[Atom, ...] = ()
    style: str = ""  # paraphrase suite: how the instruction is worded (STYLES)
    question: str = ""  # an ambiguous instruction: what a careful model asks the person ...
    answer: str = ""  # ... and what the person answers (the formal goal is what they mean)
    source: str = ""  # a paraphrase: the id of the task it re-words

    @property
    def goal_as_stated(self) -> tuple[Atom, ...]:
        return self.stated_goal or self.goal

    @property
    def hidden_goal_objects(self) -> list[str]:
        return sorted({o for a in self.goal for o in a.objects if not self.world.is_visible(o)})

    def fresh_world(self) -> WorldState:
        return self.world.copy()


def _category_problem(category: str, optimal: int, hidden: list[str]) -> str | None:
    length = category.split("_")[0]
    low, high = STEPS[length]
    if not low <= optimal <= high:
        return f"a {length} task needs {low}-{high} primitives, optimal is {optimal}"
    if category.endswith("complex") and not hidden:
        return "a complex task needs a goal object hidden in a closed drawer"
    if category.endswith("simple") and hidden:
        return f"a simple task must not hide goal objects ({', '.join(hidden)} hidden)"
    return None


def task_from_dict(raw: Any, source: str, scenes_dir: Path, cache: dict[str, WorldState]) -> Task:
    if not isinstance(raw, dict):
        raise TaskError(f"{source}: a task is a mapping")
    where = f"{source}: task {raw.get('id', '?')!r}"
    if missing := sorted(_KEYS - set(raw)):
        raise TaskError(f"{where}: missing fields {missing}")
    if unknown := sorted(set(raw) - _KEYS - _OPTIONAL_KEYS):
        raise TaskError(f"{where}: unknown fields {unknown}")
    if raw["category"] not in CATEGORIES:
        raise TaskError(f"{where}: category must be one of {CATEGORIES}, got {raw['category']!r}")
    if not isinstance(raw["instruction"], str) or not raw["instruction"].strip():
        raise TaskError(f"{where}: instruction must be a non-empty string")
    if isinstance(raw["optimal"], bool) or not isinstance(raw["optimal"], int):
        raise TaskError(f"{where}: optimal must be an integer")
    scene = str(raw["scene"])
    if scene not in cache:
        try:
            cache[scene] = load_scene(scenes_dir / scene)
        except SceneError as exc:
            raise TaskError(f"{where}: scene {scene!r}: {exc}") from exc
    world = cache[scene]
    try:
        goal = parse_goal(raw["goal"])
        if not isinstance(raw["subgoals"], list) or not raw["subgoals"]:
            raise TaskGoalError("subgoals must be a non-empty list of atom lists")
        subgoals = tuple(parse_goal(s) for s in raw["subgoals"])
        stated = parse_goal(raw["stated_goal"]) if raw.get("stated_goal") else ()
    except TaskGoalError as exc:
        raise TaskError(f"{where}: {exc}") from exc
    for atom in (*goal, *(a for s in subgoals for a in s), *stated):
        if problem := check_atom_names(atom, world):
            raise TaskError(f"{where}: {problem}")
    if unseen := sorted({o for a in stated for o in a.objects if not world.is_visible(o)}):
        raise TaskError(f"{where}: stated_goal names objects hidden at the start: {', '.join(unseen)}")
    if satisfied(goal, world):
        raise TaskError(f"{where}: the goal already holds in the scene")
    style, question, answer = (str(raw.get(k) or "").strip() for k in ("style", "question", "answer"))
    if style and style not in STYLES:
        raise TaskError(f"{where}: style must be one of {STYLES}, got {style!r}")
    if bool(question) != bool(answer) or bool(question) != (style == "ambiguous"):
        raise TaskError(f"{where}: an ambiguous task (style ambiguous) has both a question and an answer")
    task = Task(str(raw["id"]), raw["category"], scene, raw["instruction"].strip(), goal, subgoals,
                raw["optimal"], world, stated, style, question, answer)
    if problem := _category_problem(task.category, task.optimal, task.hidden_goal_objects):
        raise TaskError(f"{where}: {problem}")
    return task


def load_tasks(path: str | Path, scenes_dir: str | Path = SCENES_DIR) -> list[Task]:
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise TaskError(f"cannot read task file {path}: {exc}") from exc
    if not isinstance(data, dict) or not (isinstance(data.get("tasks"), list) and data["tasks"]
                                          or isinstance(data.get("paraphrases"), list) and data["paraphrases"]):
        raise TaskError(f"{path}: expected a mapping with a non-empty 'tasks' (or 'paraphrases') list")
    cache: dict[str, WorldState] = {}
    tasks = paraphrases(data, path) if data.get("paraphrases") else []
    tasks += [task_from_dict(raw, str(path), Path(scenes_dir), cache) for raw in data.get("tasks") or []]
    seen: set[str] = set()
    for task in tasks:
        if task.id in seen:
            raise TaskError(f"{path}: duplicate task id {task.id!r}")
        seen.add(task.id)
    return tasks


def paraphrases(data: dict[str, Any], path: Path) -> list[Task]:
    """The ``paraphrases`` of a suite file: tasks of the ``rewords`` suites with new wording."""
    suites = data.get("rewords")
    if not isinstance(suites, list) or not suites:
        raise TaskError(f"{path}: paraphrases need 'rewords': the suites whose tasks they re-word")
    originals = {t.id: t for name in suites for t in load_suite(str(name))}
    out = []
    for i, raw in enumerate(data["paraphrases"]):
        where = f"{path}: paraphrases[{i}]"
        if not isinstance(raw, dict) or _PARAPHRASE_KEYS - set(raw):
            raise TaskError(f"{where}: needs {sorted(_PARAPHRASE_KEYS)} (and optionally optimal)")
        if unknown := sorted(set(raw) - _PARAPHRASE_KEYS - {"optimal"}):
            raise TaskError(f"{where}: unknown fields {unknown}")
        original = originals.get(str(raw["of"]))
        if original is None:
            raise TaskError(f"{where}: no task {raw['of']!r} in {', '.join(map(str, suites))}")
        if raw["style"] not in STYLES or raw["style"] == "ambiguous":
            raise TaskError(f"{where}: style must be one of {STYLES[:-1]}, got {raw['style']!r}")
        if not isinstance(raw["instruction"], str) or not raw["instruction"].strip():
            raise TaskError(f"{where}: instruction must be a non-empty string")
        optimal = raw.get("optimal", original.optimal)
        if isinstance(optimal, bool) or not isinstance(optimal, int):
            raise TaskError(f"{where}: optimal must be an integer")
        out.append(replace(original, id=f"{original.id}~{raw['style']}", instruction=raw["instruction"].strip(),
                           style=str(raw["style"]), source=original.id, optimal=optimal))
    return out


def load_suite(name_or_path: str) -> list[Task]:
    """``table3`` -> ``config/tasks/table3.yaml``; a path is loaded as is."""
    path = Path(name_or_path)
    if not path.suffix:
        path = TASKS_DIR / f"{name_or_path}.yaml"
    return load_tasks(path)


def check_optimal(tasks: list[Task], library) -> list[str]:
    """Re-plan every task with the symbolic expert; one message per task whose count is wrong."""
    from step_planner.bench.symbolic_planner import PlanningError, solve_online

    problems = []
    for task in tasks:
        try:
            count = len(solve_online(library, task.world, task.goal, task.instruction))
        except PlanningError as exc:
            problems.append(f"{task.id}: not solvable: {exc}")
            continue
        if count != task.optimal:
            problems.append(f"{task.id}: optimal is {count}, the file says {task.optimal}")
    return problems
