"""The package's import graph has no cycle (module level or inside functions), so every module can be
imported on its own and a leaf module (errors, kinds, resources) never pulls in the machinery above it."""

from __future__ import annotations

import ast
from pathlib import Path

import step_planner

PACKAGE = Path(step_planner.__file__).resolve().parent


def _module(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    modules = {_module(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text())):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base
                                                                                                        else []))
                submodules = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in modules]
                # ``from pkg import submodule`` needs the submodule, ``from pkg import name`` the package
                targets = submodules + ([base] if len(submodules) < len(node.names) else [])
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name and target != "step_planner":
                    graph[name].add(target)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return []


def test_no_import_cycle_inside_the_package():
    graph = import_graph()
    assert len(graph) > 80 and graph["step_planner.planner.runner"]  # the graph was really built
    assert find_cycle(graph) == []


def test_the_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]



# Layers, bottom up: a module may import its own layer and those below, never one above. The arrows that ran
# up (the sim recorder importing the benchmark and the planner) made the execution edge depend on everything.
# Modules outside the table (resources, msg_fields, console, cli) are leaves or the top and are not checked.
LAYERS = {"domain": 0, "llm": 0, "execution": 1, "planner": 2, "episodes": 3, "bench": 4, "ros": 4}


def _layer(module: str) -> int | None:
    parts = module.split(".")
    return LAYERS.get(parts[1]) if len(parts) > 2 else None


def upward_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    return sorted((a, b) for a, targets in graph.items() for b in targets
                  if None not in (_layer(a), _layer(b)) and _layer(b) > _layer(a))


def test_no_module_imports_a_layer_above_it():
    assert upward_imports(import_graph()) == []


def test_the_layer_check_finds_an_upward_import():
    assert upward_imports({"step_planner.execution.sim.x": {"step_planner.bench.runner", "step_planner.domain.w"}}) \
        == [("step_planner.execution.sim.x", "step_planner.bench.runner")]
