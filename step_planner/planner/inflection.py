"""English plurals and singulars for the reader, from inflect, loaded at the first plural it is asked for.

Importing inflect takes about 1.7 s (typeguard instruments its functions at import), which every process importing
the planner paid: `step-planner send --help`, each node start.
"""

from __future__ import annotations

from functools import cache, lru_cache


@cache
def _engine():
    """inflect's engine, made at the first plural (see the module's docstring)."""
    import inflect

    return inflect.engine()


@lru_cache(maxsize=4096)
def plural(noun: str) -> str:
    """The plural of a noun ("box" -> "boxes", "battery" -> "batteries", "box of nuts" -> "boxes of nuts")."""
    return _engine().plural_noun(noun) or noun


@lru_cache(maxsize=4096)
def singular(word: str) -> str | None:
    """The singular of a plural noun, or None when ``word`` is not a plural (inflect's reading)."""
    out = _engine().singular_noun(word)
    return out or None
