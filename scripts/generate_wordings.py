#!/usr/bin/env python3
"""Write config/tasks/wordings.yaml from the scenes (step_planner/bench/wordings.py); --check: exit 1 if stale.

    python scripts/generate_wordings.py          # regenerate
    python scripts/generate_wordings.py --check  # is the committed file current?
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from step_planner.bench.wordings import SEED, generate, render
from step_planner.resources import config_path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default=str(config_path("tasks") / "wordings.yaml"))
    p.add_argument("--seed", type=int, default=SEED)
    p.add_argument("--check", action="store_true", help="compare with --out instead of writing it")
    args = p.parse_args(argv)
    text = render(generate(seed=args.seed), seed=args.seed)
    out = Path(args.out)
    if args.check:
        current = out.read_text() if out.exists() else ""
        if current != text:
            print(f"{out} is not what scripts/generate_wordings.py generates; re-run it", file=sys.stderr)
            return 1
        print(f"{out} is current")
        return 0
    out.write_text(text)
    print(f"wrote {out} ({text.count(chr(10) + '- id: ') + text.count(chr(10) + '  - id: ')} tasks)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
