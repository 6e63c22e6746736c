"""Shared fixtures: the shipped primitive library and scenes, and a scripted in-process LLM.

The scripted LLM implements the planner's ``complete()`` interface directly; it is for unit tests
of planning logic. End-to-end tests go through the real ``openai`` client and a loopback server.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic import BaseModel

from step_planner.domain.primitives import PrimitiveLibrary
from step_planner.domain.scene import load_scene
from step_planner.domain.world import WorldState

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "config"

DRAWER_TASK = "put the tape and the screwdriver in the drawer"
DRAWER_PLANS = {  # a two-level decomposition of the drawer task, for scripted models
    DRAWER_TASK: ["open_drawer(drawer)", "put the tape in the drawer", "put the screwdriver in the drawer",
                  "close_drawer(drawer)"],
    "put the tape in the drawer": ["pick(tape)", "place(tape, drawer)"],
    "put the screwdriver in the drawer": ["pick(screwdriver)", "place(screwdriver, drawer)"],
}

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")


@pytest.fixture(scope="session")
def library() -> PrimitiveLibrary:
    return PrimitiveLibrary.load(CONFIG / "primitives.yaml")


@pytest.fixture
def drawer_world() -> WorldState:
    return load_scene(CONFIG / "scenes" / "drawer_desk.yaml")


def section(text: str, title: str) -> str:
    m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    return m.group(1).strip() if m else ""


class ScriptedLLM:
    """Answers from a function of (purpose, user message); records every prompt it saw."""

    def __init__(self, answer: Callable[[str, str], dict]) -> None:
        self.answer = answer
        self.prompts: list[tuple[str, str]] = []

    def complete(self, messages, schema: type[BaseModel], purpose: str) -> BaseModel:
        user = messages[-1]["content"]
        self.prompts.append((purpose, user))
        return schema.model_validate(self.answer(purpose, user))


def children_so_far(user: str) -> list[str]:
    body = section(user, "Children of this subgoal so far (in order, with outcomes)")
    if body == "(none yet)":
        return []
    return [re.sub(r"^\d+\. ", "", line) for line in body.splitlines()]


def table_plan(plans: dict[str, list[str]]) -> Callable[[str, str], dict]:
    """Decompose each subgoal into a fixed list, skipping children that already succeeded."""

    def answer(purpose: str, user: str) -> dict:
        if purpose == "termination":  # natural-language subgoals in these plans are compound
            return {"verdict": "decompose", "reason": "needs several actions"}
        parent = section(user, "Subgoal to decompose")
        done = [c.rsplit(" -> ", 1)[0] for c in children_so_far(user) if c.endswith("-> succeeded")]
        remaining = [s for s in plans[parent] if s not in done]
        if not remaining:
            return {"done": True}
        return {"done": False, "subgoal": remaining[0]}

    return answer
