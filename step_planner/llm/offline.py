"""The shipped answers, served offline: a loopback OpenAI-compatible server over ``config/replay/``.

WHY one home: the CLI (``step-planner plan`` with no endpoint) and the ROS node (``llm.offline``) must
serve the same answers the same way and say the same thing about them. The answers were recorded from
the scripted expert (``step-planner record-answers``), **not from an LLM**; every user-facing message
built here says so. The real ``openai`` client still does the HTTP round trips, so offline runs take
the same code path as a real endpoint; an instruction that was not recorded fails loudly (404 naming
the request), it is never answered with something invented.

The answers are keyed by the request's model, temperature and max_tokens (``llm.replay.request_key``),
so :meth:`OfflineAnswers.settings` pins those to the values the answers were recorded with.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from step_planner.llm.loopback import LoopbackServer
from step_planner.llm.replay import ReplayHandler

PINNED = ("model", "temperature", "max_tokens")  # request fields that are part of the answers' key


def demo_tasks(folder: Path) -> Path:
    """The list of the instructions the answers in ``folder`` (config/replay) cover: config/demo_tasks.yaml."""
    return folder.parent / "demo_tasks.yaml"


def notice(folder: Path) -> str:
    """What every offline run tells its user, once, before planning."""
    return (f"OFFLINE: answers recorded with the project ({folder}), produced by a scripted expert, not an LLM "
            f"(step-planner record-answers). They are SCRIPTED: they cover the instructions in {demo_tasks(folder)}; "
            "any other fails with LLM_UNAVAILABLE naming the request.")


def recorded_settings(folder: Path) -> dict[str, Any]:
    """The model/temperature/max_tokens the answers in ``folder`` were recorded with (the first file's)."""
    for path in sorted(folder.glob("*.json")):
        try:
            request = json.loads(path.read_text(encoding="utf-8"))["request"]
        except (OSError, ValueError, KeyError, TypeError):
            continue  # an unreadable file is reported by ReplayHandler when it is asked for
        return {name: request[name] for name in PINNED if request.get(name) is not None}
    return {}


class OfflineAnswers:
    """A started loopback server answering from ``folder`` (a context manager; ``close()`` joins it)."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise FileNotFoundError(f"no offline answers folder {self.folder}")
        self.handler = ReplayHandler(self.folder, miss_hint=f"offline answers cover only the instructions in "
                                     f"{demo_tasks(self.folder)}; for others, use a real LLM endpoint")
        self.server = LoopbackServer(self.handler).start()
        self.recorded = recorded_settings(self.folder)

    @property
    def base_url(self) -> str:
        return self.server.base_url

    def settings(self, settings: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """``settings`` pointed at this server with the recorded key fields; and what was overridden."""
        out = {**settings, "base_url": self.base_url}
        changed = []
        for name, value in self.recorded.items():
            if name in out and out[name] != value:
                changed.append(f"llm.{name} {out[name]!r} -> {value!r}")
            out[name] = value
        return out, changed

    def notice(self) -> str:
        return notice(self.folder)

    def close(self) -> None:
        self.server.close()

    def __enter__(self) -> OfflineAnswers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
