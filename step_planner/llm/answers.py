"""Turning an answer text into a validated pydantic object, with errors an LLM can act on.

WHY lenient extraction, strict validation: models wrap JSON in ```json fences or a sentence of prose;
that is harmless and is stripped. What the object says is then validated strictly by the schema, and
the error text is phrased so it can be fed back to the model in the one corrective retry.
"""

from __future__ import annotations

import json
import re

from pydantic import BaseModel, ValidationError

FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


class AnswerError(ValueError):
    """The answer text is not a valid instance of the schema; the message says why."""


def extract_json_object(text: str) -> dict:
    """The JSON object in `text`: the whole text, a fenced block, or the first object embedded in prose."""
    stripped = text.strip()
    if not stripped:
        raise AnswerError("the answer is empty; expected one JSON object")
    candidates = [stripped] + [m.group(1).strip() for m in FENCE.finditer(stripped)]
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
        raise AnswerError(f"the answer is a JSON {type(value).__name__}, expected a JSON object")
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", stripped):
        try:
            value, _ = decoder.raw_decode(stripped, match.start())
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    try:
        json.loads(stripped)
    except ValueError as exc:
        raise AnswerError(f"the answer contains no JSON object ({exc})") from None
    raise AnswerError("the answer contains no JSON object")


def describe_validation_error(error: ValidationError) -> str:
    """One line per problem, `field.path: message`, without pydantic's URLs."""
    lines = []
    for item in error.errors():
        where = ".".join(str(p) for p in item.get("loc", ())) or "(root)"
        lines.append(f"{where}: {item.get('msg', 'invalid')}")
    return "; ".join(lines)


def parse_answer(text: str, schema: type[BaseModel], max_chars: int) -> BaseModel:
    """Validate `text` against `schema`; an answer longer than `max_chars` is rejected unparsed."""
    if len(text) > max_chars:
        raise AnswerError(f"the answer is {len(text)} characters long, over the limit of {max_chars}; "
                          "answer with one short JSON object")
    data = extract_json_object(text)
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        raise AnswerError(f"the JSON does not match the {schema.__name__} schema: "
                          f"{describe_validation_error(exc)}") from None
