"""English plurals and singulars for the reader, from inflect, loaded at the first plural it is asked for.

inflect decorates its engine's methods with typeguard's ``@typechecked``, which rewrites and recompiles each one at
import: 1.7 s of CPU in every process that read an instruction (each node's first goal, each benchmark script, each
`step-planner plan`). The checks only reject what these wrappers never pass (a non-string, an empty word), so inflect
is imported with the decorator as a no-op, what typeguard itself does under ``python -O``
(typeguard/_decorators.py: "When Python is run in optimized mode ... this decorator is a no-op"); 0.1 s instead.
"""

from __future__ import annotations

import threading
from functools import cache, lru_cache

_IMPORT_LOCK = threading.Lock()


def _unchecked(target=None, **_options):
    """typeguard.typechecked as ``python -O`` has it: the function itself (bare or with options)."""
    return target if target is not None else (lambda function: function)


@cache
def _engine():
    """inflect's engine, made at the first plural (see the module's docstring)."""
    import sys

    import typeguard

    with _IMPORT_LOCK:
        if "inflect" not in sys.modules:
            checked = typeguard.typechecked
            typeguard.typechecked = _unchecked
            try:
                import inflect  # noqa: F401  (binds typechecked at its import)
            finally:
                typeguard.typechecked = checked
    import inflect

    return inflect.engine()


@lru_cache(maxsize=4096)
def plural(noun: str) -> str:
    """The plural of a noun ("box" -> "boxes", "battery" -> "batteries", "box of nuts" -> "boxes of nuts")."""
    if not noun:
        return noun
    return _engine().plural_noun(noun) or noun


@lru_cache(maxsize=4096)
def singular(word: str) -> str | None:
    """The singular of a plural noun, or None when ``word`` is not a plural (inflect's reading)."""
    if not word:
        return None
    out = _engine().singular_noun(word)
    return out or None
