#!/usr/bin/env python3
"""Write a generated wordings suite from the scenes; --check: exit 1 if the committed file is stale.

    python scripts/generate_wordings.py                              # config/tasks/wordings.yaml
    python scripts/generate_wordings.py --suite wordings_outside     # benchmarks/data/tasks/wordings_outside.yaml
    python scripts/generate_wordings.py --check                      # is the committed file current?

``wordings`` (step_planner/bench/wordings.py) uses the people's words the reader holds; ``wordings_outside``
(step_planner/bench/wordings_outside.py) the words of benchmarks/data/outside_words.yaml, which it does not.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from step_planner.bench import wordings, wordings_outside
from step_planner.resources import config_path

SUITES = {"wordings": (wordings, lambda: config_path("tasks") / "wordings.yaml"),
          "wordings_outside": (wordings_outside, lambda: wordings_outside.SUITE_FILE)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--suite", choices=sorted(SUITES), default="wordings")
    p.add_argument("--out", default=None, help="default: the suite's committed file")
    p.add_argument("--seed", type=int, default=None, help="default: the suite's seed")
    p.add_argument("--check", action="store_true", help="compare with --out instead of writing it")
    args = p.parse_args(argv)
    module, default_out = SUITES[args.suite]
    seed = module.SEED if args.seed is None else args.seed
    text = module.render(module.generate(seed=seed), seed=seed)
    out = Path(args.out or default_out())
    out.parent.mkdir(parents=True, exist_ok=True)
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
