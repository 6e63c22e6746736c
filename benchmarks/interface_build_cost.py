"""CPU and wall time of building the test-only interface packages with every rosidl generator against C and Python
only (test/interfaces/c_and_python_only.cmake), side by side in one run (issue 44).

    python benchmarks/interface_build_cost.py [--packages control_msgs,franka_msgs] [--venv .venv]

Each package of test/interfaces/ is copied twice into a temporary directory: once as committed (its CMakeLists
includes c_and_python_only.cmake) and once with that include line removed (every generator, as
rosidl_default_generators registers them). Both are configured and built with the flags scripts/build_interfaces.sh
uses, into a throwaway prefix (never the venv), one after the other, and the CPU seconds of cmake and its children
(user + system) and the wall time of each are printed with the number of compiled files. The venv must hold the
ROS wheels (make venv). The product's step_planner_interfaces is not measured: it keeps every generator.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INCLUDE = re.compile(r"^include\(\$\{CMAKE_CURRENT_SOURCE_DIR\}/\.\./c_and_python_only\.cmake\)\n", re.M)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def build(src: Path, work: Path, venv: Path) -> tuple[float, float, int]:
    """(CPU s, wall s, compiled files) of configuring and building ``src`` in ``work``."""
    env = {**os.environ, "AMENT_PREFIX_PATH": str(venv), "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    cpu, wall = children_cpu(), time.monotonic()
    subprocess.run(["cmake", "-S", str(src), "-B", str(work / "build"), f"-DCMAKE_INSTALL_PREFIX={work / 'install'}",
                    "-DCMAKE_BUILD_TYPE=", f"-DPython3_EXECUTABLE={venv / 'bin' / 'python'}", "-DBUILD_TESTING=OFF",
                    "-Wno-dev"], check=True, env=env, stdout=subprocess.DEVNULL)
    out = subprocess.run(["cmake", "--build", str(work / "build"), "-j", "2"], check=True, env=env, text=True,
                         stdout=subprocess.PIPE).stdout
    return children_cpu() - cpu, time.monotonic() - wall, out.count("Building C")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packages", default="control_msgs,franka_msgs,tf2_msgs,controller_manager_msgs",
                        help="packages of test/interfaces/, comma-separated")
    parser.add_argument("--venv", type=Path, default=ROOT / ".venv", help="the venv holding the ROS wheels")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    venv = args.venv.resolve()
    subprocess.run([str(venv / "bin" / "python"), str(ROOT / "scripts" / "fix_ros_cmake_paths.py"), str(venv)],
                   check=True, stdout=subprocess.DEVNULL)
    print(f"{os.cpu_count()} CPUs; builds one after another, cmake --build -j 2; NOT an LLM figure")
    print("| package | every generator: CPU s / wall s / files | C and Python only: CPU s / wall s / files "
          "| CPU ratio |")
    print("|---|---|---|---|")
    totals = [0.0, 0.0]
    with tempfile.TemporaryDirectory(prefix="iface_cost_") as tmp:
        shutil.copy(ROOT / "test" / "interfaces" / "c_and_python_only.cmake", tmp)
        for package in args.packages.split(","):
            committed = ROOT / "test" / "interfaces" / package
            every = Path(tmp) / package
            shutil.copytree(committed, every)
            cmake = (every / "CMakeLists.txt").read_text()
            if not INCLUDE.search(cmake):
                print(f"{package}: its CMakeLists does not include c_and_python_only.cmake", file=sys.stderr)
                return 1
            (every / "CMakeLists.txt").write_text(INCLUDE.sub("", cmake))
            full = build(every, Path(tmp) / f"{package}-every", venv)
            only = build(committed, Path(tmp) / f"{package}-c-py", venv)
            totals[0] += full[0]
            totals[1] += only[0]
            print(f"| {package} | {full[0]:.1f} / {full[1]:.1f} / {full[2]} | {only[0]:.1f} / {only[1]:.1f} / "
                  f"{only[2]} | {only[0] / full[0]:.2f} |")
    print(f"all: {totals[0]:.1f} s of CPU with every generator, {totals[1]:.1f} s with C and Python only "
          f"({totals[1] / totals[0]:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
