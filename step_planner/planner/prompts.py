"""Scoped prompts (STEP Eq. 2-3): a node sees its parent, its previous siblings, the observation.

Nothing from other branches enters a prompt: the prompt grows with depth (the ancestor path),
not with the number of steps already executed elsewhere in the tree.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from step_planner.domain.primitives import PrimitiveLibrary
from step_planner.llm.schemas import CompletionAnswer, DecompositionAnswer, TerminationAnswer
from step_planner.planner.tree import NodeStatus, SubgoalNode, SubgoalTree
from step_planner.resources import ResourceError, config_path

_PLACEHOLDERS = ("instruction", "parent", "ancestors", "siblings", "feedback", "observation", "subgoal", "extra")
_TEMPLATES = ("decompose_system", "decompose_user", "terminate_system", "terminate_user", "verify_system",
              "verify_user")


class PromptError(ValueError):
    """A prompt template is missing or has an unknown placeholder."""


def _find_prompts_dir(configured: str) -> Path:
    if configured:
        return Path(configured)
    try:
        return config_path("prompts")
    except ResourceError as exc:
        raise PromptError(f"cannot find the prompt templates: {exc}") from exc


def describe_outcome(node: SubgoalNode) -> str:
    """One line per sibling: what was tried and how it ended (with the reason on failure)."""
    status = node.status
    if status is NodeStatus.SUCCEEDED:
        return "succeeded" + (f" ({node.summary})" if node.summary else "")
    if status is NodeStatus.FAILED:
        reason = node.outcome.get("message", "") if node.outcome else ""
        if node.outcome and node.outcome.get("code"):
            reason = f"{node.outcome['code']}: {reason}"
        elif node.verdicts:
            reason = node.verdicts[-1].reason
        return f"failed: {reason}" if reason else "failed"
    if status is NodeStatus.ABANDONED:
        reason = node.verdicts[-1].reason if node.verdicts else "dropped by a re-plan"
        return f"rejected: {reason}"
    return status.value


@dataclass
class PromptBook:
    library: PrimitiveLibrary
    templates: dict[str, str]

    @classmethod
    def load(cls, library: PrimitiveLibrary, prompts_dir: str = "") -> PromptBook:
        folder = _find_prompts_dir(prompts_dir)
        templates = {}
        for name in _TEMPLATES:
            path = folder / f"{name}.txt"
            try:
                templates[name] = path.read_text()
            except OSError as exc:
                raise PromptError(f"missing prompt template {path}: {exc}") from exc
        book = cls(library, templates)
        book._check()
        return book

    def _check(self) -> None:
        probe = dict.fromkeys(("embodiment", "primitives", "schema", *_PLACEHOLDERS), "")
        for name, text in self.templates.items():
            try:
                text.format(**probe)
            except (KeyError, IndexError, ValueError) as exc:
                raise PromptError(f"prompt template {name}: bad placeholder {exc}") from exc

    def _system(self, name: str, schema: type) -> str:
        return self.templates[name].format(
            embodiment=self.library.embodiment_summary(),
            primitives=self.library.describe(),
            schema=json.dumps(schema.model_json_schema(), separators=(",", ":")),
        )

    @staticmethod
    def siblings_text(tree: SubgoalTree, parent_id: int, before: int | None = None, collapse: bool = False) -> str:
        """The node's children so far. With ``collapse`` (the summaries feature), proposals that
        were rejected in rounds already resolved are folded into one count instead of listed."""
        children = [c for c in tree.children(parent_id) if before is None or c.id < before]
        last_live = max((i for i, c in enumerate(children) if c.status is not NodeStatus.ABANDONED), default=-1)
        lines, folded = [], 0
        for i, child in enumerate(children, start=1):
            if collapse and child.status is NodeStatus.ABANDONED and i - 1 < last_live:
                folded += 1
                continue
            note = f" (after {folded} rejected proposal{'s' if folded > 1 else ''})" if folded else ""
            folded = 0
            lines.append(f"{i}. {child.text} -> {describe_outcome(child)}{note}")
        return "\n".join(lines) if lines else "(none yet)"

    def _messages(self, kind: str, schema: type, **fields: str) -> list[dict[str, str]]:
        """System + user message of one prompt kind; placeholders a template does not use are ignored,
        and the feature sections (``extra``) are appended when the template does not place them."""
        template = self.templates[f"{kind}_user"]
        values = dict.fromkeys(_PLACEHOLDERS, "") | fields
        user = template.format(**values)
        if values["extra"] and "{extra}" not in template:
            user = f"{user.rstrip()}\n\n{values['extra']}\n"
        return [
            {"role": "system", "content": self._system(f"{kind}_system", schema)},
            {"role": "user", "content": user},
        ]

    def decomposition(
        self, tree: SubgoalTree, node_id: int, observation: str, feedback: list[str], extra: str = "",
        collapse: bool = False,
    ) -> list[dict[str, str]]:
        node = tree.node(node_id)
        path = [a.text for a in tree.ancestors(node_id)] + [node.text]
        return self._messages(
            "decompose", DecompositionAnswer,
            instruction=tree.instruction,
            parent=node.text,
            ancestors="\n".join(f"{'  ' * i}- {t}" for i, t in enumerate(path)),
            siblings=self.siblings_text(tree, node_id, collapse=collapse),
            feedback="\n".join(f"- {f}" for f in feedback) if feedback else "(none)",
            observation=observation,
            extra=extra,
        )

    def termination(self, tree: SubgoalTree, node_id: int, observation: str) -> list[dict[str, str]]:
        node = tree.node(node_id)
        assert node.parent is not None, "the root is never judged as a leaf"
        return self._messages(
            "terminate", TerminationAnswer,
            subgoal=node.text,
            parent=tree.node(node.parent).text,
            siblings=self.siblings_text(tree, node.parent, before=node.id),
            observation=observation,
            instruction=tree.instruction,
        )

    def verification(self, tree: SubgoalTree, node_id: int, observation: str) -> list[dict[str, str]]:
        return self._messages(
            "verify", CompletionAnswer,
            instruction=tree.instruction,
            subgoal=tree.node(node_id).text,
            siblings=self.siblings_text(tree, node_id, collapse=True),
            observation=observation,
        )
