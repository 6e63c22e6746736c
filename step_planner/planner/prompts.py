"""Scoped prompts (STEP Eq. 2-3): a node sees its parent, its previous siblings, the observation.

Nothing from other branches enters a prompt: the prompt grows with depth (the ancestor path),
not with the number of steps already executed elsewhere in the tree. The templates are text
files in ``config/prompts/`` and the worked examples are data (``examples.yaml``), filtered to
the fields of the answer schema in use. A prompt is a pure function of the tree, the beliefs and
the feedback, so the same situation always gives byte-identical messages (replay, speculation).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from step_planner.config_schema import ConfigFileError, ConfigModel, read_yaml, validate
from step_planner.domain.conditions import FACT_SYNTAX, explain_failure
from step_planner.domain.primitives import PrimitiveLibrary, call_shape
from step_planner.llm.schemas import CompletionAnswer, TerminationAnswer, answer_schema, json_schema
from step_planner.planner.beliefs import Beliefs
from step_planner.planner.kinds import NodeStatus
from step_planner.planner.tree import SubgoalNode, SubgoalTree
from step_planner.resources import ResourceError, config_path

_PLACEHOLDERS = ("instruction", "parent", "ancestors", "siblings", "feedback", "observation", "subgoal", "extra",
                 "clarifications")
_TEMPLATES = ("decompose_system", "decompose_user", "decompose_rules_grounded", "decompose_rules_text",
              "decompose_rules_calls", "terminate_system", "terminate_user", "verify_system", "verify_user")
# Sections a decomposition prompt adds when they apply (``section_<name>.txt``), with their placeholders.
SECTIONS = {"goal": (), "goal_restate": ("names", "inside"),
            "goal_restate_contents": ("containers", "held"), "ambiguity": ("unset",), "depth_limit": (),
            "control_flow_choose": (), "control_flow_fixed": ("control",), "remaining_plan": ("plan",),
            "plan_ahead": ()}
ANSWER_STYLES = ("grounded", "text", "calls")


class PromptError(ConfigFileError):
    """A prompt template is missing or has an unknown placeholder, or examples.yaml is malformed."""


class ExampleChild(ConfigModel):
    subgoal: str = Field(min_length=1, description="A short instruction or a primitive call.")
    call: str | None = Field(None, description="Grounded answers: the primitive call, when one action.")
    success_when: list[str] = Field([], description="Grounded answers: facts that hold once it is achieved.")


class ExampleDecomposition(ConfigModel):
    """A worked decomposition answer (every field any decomposition schema has; it is filtered to the one in use)."""

    reasoning: str = Field("", description="Brief thinking.")
    question: str | None = Field(None, description="A question for the person instead.")
    goal: list[str] = Field([], description="The instruction's goal facts.")
    done: bool = Field(False, description="The subgoal is already achieved.")
    next: ExampleChild | None = Field(None, description="The next child.")
    then: list[ExampleChild] = Field([], description="The children planned after next.")
    control: Literal["sequence", "fallback", "parallel"] = Field("sequence", description="How children combine.")


class DecomposeExample(ConfigModel):
    situation: str = Field(description="The task, subgoal and observation the answer is for.")
    grounded: ExampleDecomposition | None = Field(None, description="The answer in the grounded style.")
    text: ExampleDecomposition | None = Field(None, description="The answer in STEP's text style.")
    calls: ExampleDecomposition | None = Field(None, description="The answer of a flat (calls) planner.")


class TerminationExample(ConfigModel):
    reasoning: str = Field("", description="Brief thinking.")
    verdict: Literal["execute", "decompose", "replan"] = Field(description="The verdict.")
    call: str | None = Field(None, description="The call, when execute.")


class CompletionExample(ConfigModel):
    reasoning: str = Field("", description="Brief thinking.")
    achieved: bool = Field(description="The subgoal is achieved.")


class TerminateExample(ConfigModel):
    situation: str = Field(description="The subgoal and observation the answer is for.")
    answer: TerminationExample


class VerifyExample(ConfigModel):
    situation: str = Field(description="The subgoal and observation the answer is for.")
    answer: CompletionExample


class ExamplesFile(ConfigModel):
    """``config/prompts/examples.yaml``: one short worked example per prompt kind."""

    decompose: DecomposeExample | None = Field(None, description="Decomposition prompts.")
    terminate: TerminateExample | None = Field(None, description="Termination prompts.")
    verify: VerifyExample | None = Field(None, description="Completion prompts.")


def _find_prompts_dir(configured: str) -> Path:
    if configured:
        return Path(configured)
    try:
        return config_path("prompts")
    except ResourceError as exc:
        raise PromptError(f"cannot find the prompt templates: {exc}") from exc


def describe_outcome(node: SubgoalNode) -> str:
    """How a child ended, with the reason on failure — worded for what happened."""
    status = node.status
    if status is NodeStatus.SUCCEEDED:
        return "succeeded" + (f" ({node.summary})" if node.summary else "")
    if status is NodeStatus.FAILED:
        if node.outcome and node.outcome.get("code"):
            return f"executed, failed: {node.outcome['code']}: {node.outcome.get('message', '')}".rstrip(": ")
        reason = node.verdicts[-1].reason if node.verdicts else ""
        return f"failed: {reason}" if reason else "failed"
    if status is NodeStatus.ABANDONED:
        reason = node.verdicts[-1].reason if node.verdicts else "dropped by a re-plan"
        return f"rejected: {reason}"
    return status.value


def _filter(answer: Any, schema: dict[str, Any], defs: dict[str, Any]) -> Any:
    """Keep only the keys of ``answer`` that ``schema`` (a JSON schema node) has."""
    if "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
    if "anyOf" in schema:
        for option in schema["anyOf"]:
            if option.get("type") != "null":
                return _filter(answer, option, defs) if answer is not None else None
    if isinstance(answer, dict) and "properties" in schema:
        props = schema["properties"]
        return {k: _filter(v, props[k], defs) for k, v in answer.items() if k in props}
    if isinstance(answer, list) and "items" in schema:
        return [_filter(v, schema["items"], defs) for v in answer]
    return answer


@dataclass
class PromptBook:
    library: PrimitiveLibrary
    templates: dict[str, str]
    examples: dict[str, Any] = field(default_factory=dict)
    history: str = "tree"  # tree | whole_task (STEP's "w/o tree structure" ablation)

    @classmethod
    def load(cls, library: PrimitiveLibrary, prompts_dir: str = "", history: str = "tree") -> PromptBook:
        folder = _find_prompts_dir(prompts_dir)
        templates = {}
        for name in (*_TEMPLATES, *(f"section_{n}" for n in SECTIONS)):
            path = folder / f"{name}.txt"
            try:
                templates[name] = path.read_text()
            except OSError as exc:
                raise PromptError(f"missing prompt template {path}: {exc}") from exc
        examples = read_yaml(folder / "examples.yaml", PromptError) or {}
        validate(ExamplesFile, examples, str(folder / "examples.yaml"), PromptError)
        if history not in ("tree", "whole_task"):
            raise PromptError(f"history must be tree or whole_task, got {history!r}")
        book = cls(library, templates, examples, history)
        book._check()
        return book

    def _check(self) -> None:
        probe = dict.fromkeys(("embodiment", "primitives", "poses", "schema", "answer_rules", "facts", "example",
                               *_PLACEHOLDERS, *(p for names in SECTIONS.values() for p in names)), "")
        for name, text in self.templates.items():
            try:
                text.format(**probe)
            except (KeyError, IndexError, ValueError) as exc:
                raise PromptError(f"prompt template {name}: bad placeholder {exc}") from exc

    def section(self, name: str, **values: str) -> str:
        """A section of a decomposition prompt (``section_<name>.txt``), filled in."""
        return self.templates[f"section_{name}"].format(**values).rstrip("\n")

    # ---- system messages -------------------------------------------------------------------
    def _example(self, kind: str, style: str, schema: type[BaseModel]) -> str:
        data = self.examples.get(kind) or {}
        answer = data.get(style) if kind == "decompose" else data.get("answer")
        if not answer:
            return "(none)"
        full = json_schema(schema)
        shown = _filter(answer, full, full.get("$defs", {}))
        return f"{str(data.get('situation', '')).strip()}\nAnswer: {json.dumps(shown)}"

    def _system(self, kind: str, schema: type[BaseModel], world_poses: list[str], style: str = "") -> str:
        rules = self.templates.get(f"decompose_rules_{style}", "") if kind == "decompose" else ""
        rules = rules.format(facts=", ".join(FACT_SYNTAX)).rstrip("\n")
        return self.templates[f"{kind}_system"].format(
            embodiment=self.library.embodiment_summary(),
            primitives=self.library.describe(),
            poses=", ".join(world_poses) or "(none)",
            answer_rules=rules,
            facts=", ".join(FACT_SYNTAX),
            example=self._example(kind, style, schema),
            schema=json.dumps(answer_schema(schema), separators=(",", ":")),
        )

    def _messages(self, kind: str, schema: type[BaseModel], poses: list[str], style: str = "",
                  **fields: str) -> list[dict[str, str]]:
        template = self.templates[f"{kind}_user"]
        values = dict.fromkeys(_PLACEHOLDERS, "") | fields
        for name in ("extra", "clarifications"):
            if values[name]:
                values[name] = "\n" + values[name].strip() + "\n"
        user = template.format(**values)
        for name in ("clarifications", "extra"):  # a custom template without the placeholder still gets it
            if values[name] and f"{{{name}}}" not in template:
                user = f"{user.rstrip()}\n{values[name]}"
        return [
            {"role": "system", "content": self._system(kind, schema, poses, style)},
            {"role": "user", "content": user},
        ]

    # ---- shared sections ---------------------------------------------------------------------
    @staticmethod
    def observation(beliefs: Beliefs) -> str:
        text = beliefs.observed.describe()
        if believed := beliefs.describe_believed():
            text += f"\nNot visible now, where earlier actions left them:\n{believed}"
        return text

    @staticmethod
    def conditions_text(node: SubgoalNode, beliefs: Beliefs, unfinished: str = "") -> str:
        """``in(tape, drawer): not yet (tape is on table, not in drawer)`` per condition of a node.

        A fact that holds now but must be undone on the way (a closed drawer that an unmet fact needs
        opened) says so, and ``unfinished`` (what is left half-done although the facts hold) is added."""
        from step_planner.domain.conditions import parse_fact

        facts = [parse_fact(r.text) for r in node.conditions]
        unmet = [f for f, r in zip(facts, node.conditions, strict=True) if not r.holds]
        lines = []
        for record, fact in zip(node.conditions, facts, strict=True):
            if record.holds:
                needs = [u for u in unmet if u.predicate in ("in", "at") and not u.negated and len(u.args) > 1
                         and u.args[1] == fact.args[0]] if fact.predicate == "closed" and not fact.negated else []
                if needs:
                    lines.append(f"- {record.text}: holds now, but {needs[0]} needs {fact.args[0]} open first: "
                                 f"close it again afterwards")
                else:
                    lines.append(f"- {record.text}: holds")
                continue
            if fact.predicate == "empty" and fact.args[0] not in beliefs.seen_inside:
                why = f"the inside of {fact.args[0]} has not been seen"
            elif any(o not in beliefs.world.objects for o in fact.objects):
                why = ", ".join(o for o in fact.objects if o not in beliefs.world.objects) + " not seen yet"
            else:
                why = explain_failure(fact, {}, beliefs.world)
            lines.append(f"- {record.text}: not yet ({why})")
        if unfinished:
            lines.append(f"- not finished yet: {unfinished}")
        return "\n".join(lines)

    @staticmethod
    def clarifications_text(tree: SubgoalTree) -> str:
        """The person's answers to the model's questions ('' when there are none)."""
        pairs = tree.clarifications
        if not pairs:
            return ""
        lines = [f"- Q: {q}\n  A: {a}" for q, a in pairs]
        return "## Answers from the person\n" + "\n".join(lines)

    @staticmethod
    def siblings_text(tree: SubgoalTree, parent_id: int, before: int | None = None, collapse: bool = False,
                      feedback_has_current: bool = False) -> str:
        """The node's children so far. With ``collapse`` (the summaries feature), proposals that
        were rejected in rounds already resolved are folded into one count instead of listed. With
        ``feedback_has_current`` (a decomposition prompt), the proposals rejected since the last child
        that ran point at the feedback, which gives their reasons, instead of repeating them."""
        children = [c for c in tree.children(parent_id) if before is None or c.id < before]
        last_live = max((i for i, c in enumerate(children) if c.status is not NodeStatus.ABANDONED), default=-1)
        lines, folded = [], 0
        for i, child in enumerate(children, start=1):
            if collapse and child.status is NodeStatus.ABANDONED and i - 1 < last_live:
                folded += 1
                continue
            note = f" (after {folded} rejected proposal{'s' if folded > 1 else ''})" if folded else ""
            folded = 0
            shown = child.text
            if child.call is not None and call_shape(child.text) is None:
                shown += f" [{child.call}]"  # what a natural-language child ran
            outcome = describe_outcome(child)
            if feedback_has_current and child.status is NodeStatus.ABANDONED and i - 1 > last_live:
                outcome = "rejected (why: see the feedback below)"
            lines.append(f"{i}. {shown} -> {outcome}{note}")
        return "\n".join(lines) if lines else "(none yet)"

    @staticmethod
    def _whole_task_history(tree: SubgoalTree) -> str:
        leaves = [n for n in sorted(tree.nodes.values(), key=lambda n: n.id) if n.outcome is not None]
        lines = [f"{i}. {n.call or n.text} -> {describe_outcome(n)}" for i, n in enumerate(leaves, 1)]
        return "Actions executed so far (whole task):\n" + ("\n".join(lines) if lines else "(none yet)")

    # ---- the three prompt kinds ------------------------------------------------------------
    def decomposition(self, tree: SubgoalTree, node_id: int, beliefs: Beliefs, feedback: list[str], *,
                      schema: type[BaseModel], style: str, extra: str = "", collapse: bool = False,
                      unfinished: str = "") -> list[dict[str, str]]:
        node = tree.node(node_id)
        path = [a.text for a in tree.ancestors(node_id)] + [node.text]
        parent = node.text
        if node.conditions:
            parent += "\nAchieved when:\n" + self.conditions_text(node, beliefs, unfinished)
        if self.history == "whole_task":
            parent += "\n" + self._whole_task_history(tree)
        return self._messages(
            "decompose", schema, beliefs.world.locations, style,
            instruction=tree.instruction,
            clarifications=self.clarifications_text(tree),
            parent=parent,
            subgoal=node.text,
            ancestors="\n".join(f"{'  ' * i}- {t}" for i, t in enumerate(path)),
            siblings=self.siblings_text(tree, node_id, collapse=collapse, feedback_has_current=bool(feedback)),
            feedback="\n".join(f"- {f}" for f in feedback) if feedback else "(none)",
            observation=self.observation(beliefs),
            extra=extra,
        )

    def termination(self, tree: SubgoalTree, node_id: int, beliefs: Beliefs) -> list[dict[str, str]]:
        node = tree.node(node_id)
        assert node.parent is not None, "the root is never judged as a leaf"
        parent = tree.node(node.parent).text
        if self.history == "whole_task":
            parent += "\n" + self._whole_task_history(tree)
        return self._messages(
            "terminate", TerminationAnswer, beliefs.world.locations,
            subgoal=node.text,
            parent=parent,
            siblings=self.siblings_text(tree, node.parent, before=node.id),
            observation=self.observation(beliefs),
            instruction=tree.instruction,
        )

    def verification(self, tree: SubgoalTree, node_id: int, beliefs: Beliefs) -> list[dict[str, str]]:
        return self._messages(
            "verify", CompletionAnswer, beliefs.world.locations,
            instruction=tree.instruction,
            clarifications=self.clarifications_text(tree),
            subgoal=tree.node(node_id).text,
            siblings=self.siblings_text(tree, node_id, collapse=True),
            observation=self.observation(beliefs),
        )
