"""Point the ROS wheels' exported CMake files at THIS interpreter's include dirs.

The ROS 2 wheels on PyPI are built in a manylinux container; their ``share/*/cmake/*.cmake`` files keep
that container's paths (``/opt/python/cp311-cp311/include/python3.11`` and numpy's include dir under it).
CMake refuses targets whose include dirs do not exist, so building any interface package against the
wheels fails until those paths are rewritten. Idempotent: a second run finds nothing to change.
Each file is replaced, not written in place: uv hard-links installed files to its cache, so an in-place write would
change the cached wheel (and every other environment made from it) too.

    python scripts/fix_ros_cmake_paths.py VENV
"""

from __future__ import annotations

import re
import sys
import sysconfig
from pathlib import Path

PYTHON_INCLUDE = re.compile(r"/opt/python/cp3\d+-cp3\d+/include/python3\.\d+t?")
NUMPY_INCLUDE = re.compile(r"/opt/python/cp3\d+-cp3\d+/lib/python3\.\d+t?/site-packages/numpy/(?:_core|core)/include")


def fix(venv: Path) -> list[Path]:
    import numpy

    python_include = sysconfig.get_paths()["include"]
    numpy_include = numpy.get_include()
    changed: list[Path] = []
    for path in sorted((venv / "share").glob("*/cmake/*.cmake")):
        text = path.read_text()
        if "/opt/python/" not in text:
            continue
        new = NUMPY_INCLUDE.sub(numpy_include, text)  # numpy first: its path contains the other's prefix
        new = PYTHON_INCLUDE.sub(python_include, new)
        if new != text:
            tmp = path.with_name(f".{path.name}.tmp")
            tmp.write_text(new)
            tmp.replace(path)  # a new file: the hard-linked one in uv's cache stays as the wheel has it
            changed.append(path)
    return changed


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    venv = Path(argv[0])
    if not (venv / "share").is_dir():
        print(f"fix_ros_cmake_paths: {venv}/share does not exist; install the ROS wheels first", file=sys.stderr)
        return 2
    changed = fix(venv)
    print(f"fix_ros_cmake_paths: rewrote {len(changed)} CMake file(s) under {venv}/share")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
