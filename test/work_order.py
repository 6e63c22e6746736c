"""The order ``make test``'s workers take the tests in: the longest work units first, from the durations last measured.

A work unit is one test, or a whole file whose tests share an expensive module fixture (conftest.py GROUPED). With
two workers and units from under a second to a minute, the order decides the end of the run: a one-minute test
taken last keeps one worker busy while the other has nothing left (test_two_arms did, the last 55 s of a run).
Taking the longest first (LPT scheduling) leaves short tests for the end. Durations come from
``test/durations.json``; a test it does not list counts as short and keeps its place in collection order, so a stale
file only makes the order less good, never a test skipped.

Refresh the file from a run's ``--cpu-log`` (each line: CPU seconds, node id, worker, start, end):

    make test PYTEST_ARGS="--cpu-log=/tmp/cpu.log" && python test/work_order.py /tmp/cpu.log

(with ``=``: pytest would take a path after a space for a test path, and then never load this folder's conftest.py,
which declares the option)
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

DURATIONS = Path(__file__).with_name("durations.json")
LISTED_FROM_S = 1.0  # shorter tests are not listed: they keep their place


def load_durations(path: Path = DURATIONS) -> dict[str, float]:
    try:
        return {str(k): float(v) for k, v in json.loads(path.read_text()).items()}
    except (OSError, ValueError, AttributeError):
        return {}


def file_of(nodeid: str) -> str:
    return nodeid.split("::")[0]


def order(nodeids: Sequence[str], durations: dict[str, float], grouped: Iterable[str], late: Iterable[str] = (),
          late_at: float = 0.8) -> list[str]:
    """``nodeids`` with the longest work units first (a unit's tests stay together, in their order), ties in
    collection order; the tests of the ``late`` files after ``late_at`` of the others (they wait for something
    built beside the run)."""
    grouped, late = set(grouped), set(late)
    unit = {n: file_of(n) if file_of(n) in grouped else n for n in nodeids}
    total: dict[str, float] = {}
    first: dict[str, int] = {}
    for i, n in enumerate(nodeids):
        total[unit[n]] = total.get(unit[n], 0.0) + durations.get(n, 0.0)
        first.setdefault(unit[n], i)
    rest = [n for n in nodeids if file_of(n) not in late]
    rest.sort(key=lambda n: (-total[unit[n]], first[unit[n]]))  # stable: a unit's tests keep their order
    at = int(len(rest) * late_at)
    return rest[:at] + [n for n in nodeids if file_of(n) in late] + rest[at:]


def durations_from_log(lines: Iterable[str]) -> dict[str, float]:
    """Wall seconds per test from ``--cpu-log`` lines (tests under LISTED_FROM_S left out); the last run of a test
    counts."""
    out: dict[str, float] = {}
    for line in lines:
        fields = line.rstrip("\n").split("\t")
        if len(fields) >= 5:
            out[fields[1]] = float(fields[4]) - float(fields[3])
    return {k: round(v, 1) for k, v in sorted(out.items()) if v >= LISTED_FROM_S}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print(__doc__)
        return 2
    found = durations_from_log(Path(args[0]).read_text().splitlines())
    DURATIONS.write_text(json.dumps(found, indent=0, sort_keys=True) + "\n")
    print(f"{DURATIONS}: {len(found)} tests of {LISTED_FROM_S:g} s or more, {sum(found.values()):.0f} s together")
    return 0


if __name__ == "__main__":
    sys.exit(main())
