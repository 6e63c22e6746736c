"""The structured answers the planner asks the LLM for (validated with pydantic).

The JSON schema sent to the endpoint is generated from the same model that validates the
answer, so the prompt, the schema and the validation cannot drift apart; the one schema text
(:func:`answer_schema`) is the one printed in the prompt and the one sent as ``response_format``. A decomposition answer
carries only the fields the planner profile and its features use (:func:`decomposition_schema`):
a field the planner would ignore is a field a model can get wrong.

Calls are strings in the exact syntax the parser accepts (``place(object=tape, target=drawer)``)
and conditions are strings of the domain's condition grammar (``in(tape, drawer)``): both are
shown that way in the prompts, and plain strings keep the schema valid for strict structured
outputs.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

MAX_TEXT = 400
MAX_REASONING = 2000
MAX_PLAN = 48  # a 40-step task's remaining children fit in one plan
MAX_FACTS = 24

# Unknown keys are ignored, not refused: a model that adds a field ("confidence") loses nothing, and
# the schema sent for strict structured outputs still forbids them (strict_json_schema).
_STRICT = ConfigDict(extra="ignore")


class _Answer(BaseModel):
    model_config = _STRICT


class TextChild(_Answer):
    """A proposed child subgoal as STEP writes it: natural language or a call."""

    subgoal: str = Field(min_length=1, max_length=MAX_TEXT,
                         description="a short instruction, or a primitive call such as pick(object=tape)")


class GroundedChild(_Answer):
    """A proposed child with the primitive call it is (if one action) and how to tell it is achieved."""

    subgoal: str = Field(min_length=1, max_length=MAX_TEXT, description="a short instruction")
    call: str | None = Field(
        default=None, description="when the child is ONE action: the primitive call, e.g. "
        "place(object=tape, target=drawer); null when it needs several actions")
    success_when: list[str] = Field(
        default_factory=list, max_length=MAX_FACTS,
        description="facts that hold once the child is achieved, e.g. [\"in(tape, drawer)\"]; may be empty "
        "for a call (its effects are checked)")


@lru_cache(maxsize=64)
def decomposition_schema(*, grounded: bool, goal: bool, plan_ahead: bool, control: bool,
                         question: bool = False) -> type[BaseModel]:
    """The decomposition answer model for one kind of prompt.

    ``goal``: the root's first question also asks for the instruction's goal conditions.
    ``plan_ahead``: the remaining children after ``next`` (ReCAP). ``control``: how the
    children combine (ReAcTree). ``grounded``: children carry ``call`` and ``success_when``.
    ``question``: the answer may be a question for the person instead (an ambiguous instruction).
    """
    child: type[BaseModel] = GroundedChild if grounded else TextChild
    fields: dict[str, Any] = {
        "reasoning": (str, Field(default="", max_length=MAX_REASONING, description="brief thinking")),
    }
    if question:
        fields["question"] = (str | None, Field(default=None, max_length=MAX_TEXT, description=(
            "only when the words, answers and observation leave open which thing is meant: one short question "
            "for the person naming the candidates (then next is null, done false, goal []); null otherwise")))
    if goal:
        fields["goal"] = (list[str], Field(default_factory=list, max_length=MAX_FACTS, description=(
            "the facts that hold once the whole instruction is carried out, e.g. "
            "[\"in(tape, drawer)\", \"closed(drawer)\"]")))
    fields["done"] = (bool, Field(default=False, description=(
        "true only if the subgoal is already achieved (then next is null)")))
    fields["next"] = (child | None, Field(default=None, description="the next child subgoal, null when done"))
    if plan_ahead:
        fields["then"] = (list[child], Field(default_factory=list, max_length=MAX_PLAN, description=(  # type: ignore[valid-type]
            "the children planned after `next`, in order; they run one after another without asking you "
            "again while each succeeds, and you are asked to refine them after a failure")))
    if control:
        fields["control"] = (Literal["sequence", "fallback", "parallel"], Field(default="sequence", description=(
            "how this subgoal's children combine: sequence (all, in order), fallback (stop at the first "
            "success) or parallel (all, even if one fails)")))
    name = "Decomposition" + ("Grounded" if grounded else "") + ("Goal" if goal else "") + \
        ("Plan" if plan_ahead else "") + ("Control" if control else "") + ("Question" if question else "")
    return create_model(name, __config__=_STRICT, __doc__="The next child of the subgoal being decomposed.",
                        **fields)


class TerminationAnswer(_Answer):
    """The leaf-termination verdict for one new subgoal (STEP Sec. III-B)."""

    reasoning: str = Field(default="", max_length=MAX_REASONING,
                           description="brief thinking, and the reason for the verdict")
    verdict: Literal["execute", "decompose", "replan"] = Field(
        description="execute: maps to exactly one primitive and is consistent; decompose: consistent "
        "but needs more steps; replan: inconsistent with the robot, the parent or the world")
    call: str | None = Field(default=None, max_length=MAX_TEXT, description=(
        "when execute: the primitive call, e.g. pick(object=tape); otherwise null"))


class CompletionAnswer(_Answer):
    """Whether a subgoal the decomposer called done is achieved (the model's word: ``verify_done``)."""

    reasoning: str = Field(default="", max_length=MAX_REASONING,
                           description="brief thinking; what is missing, if anything")
    achieved: bool = Field(description="true when the observation and outcomes show the subgoal is achieved")


@lru_cache(maxsize=64)
def json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``model.model_json_schema()``, computed once per model (every prompt and request shows it).
    Treat the result as read-only."""
    return model.model_json_schema()


@lru_cache(maxsize=64)
def strict_json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema in the subset OpenAI's strict structured outputs accept.

    Every property is required (optional ones are nullable already), objects forbid extra keys,
    and keywords strict mode rejects (lengths, defaults, titles) are dropped — the answer is
    still validated against the full model here.
    """
    schema = json_schema(model)
    dropped = {"maxLength", "minLength", "maxItems", "minItems", "default", "title"}

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            out = {k: walk(v) for k, v in node.items() if k not in dropped}
            if out.get("type") == "object" and "properties" in out:
                out["required"] = list(out["properties"])
                out["additionalProperties"] = False
            return out
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return walk(schema)


def answer_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The one schema of an answer everywhere it is shown: printed in the system prompt, sent as
    ``response_format`` (with strict on or off) and in JSON mode. It is the strict form (every field
    required, optional ones nullable), so a model sees the same required fields wherever it looks;
    validation still uses the full model (lengths, defaults for a field an endpoint leaves out)."""
    return strict_json_schema(model)
