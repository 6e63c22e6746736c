"""The structured answers the planner asks the LLM for (validated with pydantic).

The JSON schemas sent to the endpoint are generated from these models, so the prompt, the
schema and the validation can never drift apart.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

MAX_TEXT = 400


class ProposedCall(BaseModel):
    """A primitive call as the LLM proposes it; checked against the spec before anything runs."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(max_length=64, description="primitive name from the list")
    args: dict[str, str] = Field(default_factory=dict, description="argument name -> entity name")


class DecompositionAnswer(BaseModel):
    """The next child of the subgoal being decomposed (STEP Eq. 2-3)."""

    model_config = ConfigDict(extra="forbid")
    reasoning: str = Field(default="", max_length=2000, description="brief thinking")
    done: bool = Field(description="true when the finished children already achieve the subgoal")
    subgoal: str | None = Field(
        default=None,
        max_length=MAX_TEXT,
        description="the next child subgoal: a short instruction, or a primitive call like pick(tape)",
    )
    control: Literal["sequence", "fallback", "parallel"] = Field(
        default="sequence", description="how this subgoal's children combine (control-flow feature)"
    )
    plan: list[str] = Field(
        default_factory=list,
        max_length=16,
        description="optional: the remaining children in order, starting with `subgoal` (plan-ahead)",
    )


class TerminationAnswer(BaseModel):
    """The leaf-termination verdict for one new subgoal (STEP Sec. III-B)."""

    model_config = ConfigDict(extra="forbid")
    reasoning: str = Field(default="", max_length=2000)
    verdict: Literal["execute", "decompose", "replan"] = Field(
        description="execute: maps to exactly one primitive and is consistent; decompose: consistent "
        "but needs more steps; replan: inconsistent with the robot, the parent or the world"
    )
    call: ProposedCall | None = Field(default=None, description="the primitive call, when execute")
    reason: str = Field(default="", max_length=MAX_TEXT)


class CompletionAnswer(BaseModel):
    """Whether a subgoal the decomposer called done is achieved (the verify_done feature)."""

    model_config = ConfigDict(extra="forbid")
    reasoning: str = Field(default="", max_length=2000)
    achieved: bool = Field(description="true when the observation and outcomes show the subgoal is achieved")
    missing: str = Field(default="", max_length=MAX_TEXT, description="what is still missing, when not achieved")
