"""A careless model: answers that are valid JSON of the requested schema with arbitrary content.

It is a handler for the loopback OpenAI-compatible server (or an in-process client). It reads the
JSON schema the request asks for (``response_format``, or the schema printed in the system
prompt in JSON mode) and fills every field: booleans at random, enums from their values, lists of
random length, nullable fields sometimes null, and strings from one of two vocabularies:

- ``random``: words and characters with no relation to the task;
- ``plausible`` (the default, and the harder adversary): tokens taken from the prompt itself —
  the scene's entity names, the primitive names with their argument names, fact predicates — put
  together at random into calls (``pick(object=cup)``), facts (``not in(tape, drawer)``) and short
  phrases, so answers often parse, name real things and pass validation while meaning nothing.

Draws are seeded by the seed and a hash of the request, so a run is reproducible. This is a test
instrument for the planner's trust boundary, not a model of any LLM.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from typing import Any

_ENTITY_RE = re.compile(r"^(?:object )?([a-z][a-z0-9_]*) \[", re.M)
_CALL_SIG_RE = re.compile(r"^- ([a-z_]+)\(([^)]*)\)", re.M)
_FACT_PREDICATES = ("in", "on", "at", "holding", "open", "closed", "gripper_empty")
_JUNK = ("lorem", "ipsum", "banana", "42", "???", "yes", "robot", "done", "the", "x", "{}", "null")
STYLES = ("random", "plausible")


class CarelessModel:
    def __init__(self, seed: int = 0, style: str = "plausible") -> None:
        if style not in STYLES:
            raise ValueError(f"style must be one of {STYLES}")
        self.seed = seed
        self.style = style
        self.requests = 0

    def __call__(self, request: dict[str, Any]) -> str:
        self.requests += 1
        messages = request.get("messages") or []
        blob = json.dumps(messages, sort_keys=True)
        rng = random.Random(f"{self.seed}:{hashlib.sha256(blob.encode()).hexdigest()}")
        schema = _schema_of(request)
        vocab = _Vocabulary(" ".join(str(m.get("content", "")) for m in messages), rng, self.style)
        return json.dumps(_instance(schema, schema.get("$defs", {}), rng, vocab, "root"))


def _schema_of(request: dict[str, Any]) -> dict[str, Any]:
    spec = ((request.get("response_format") or {}).get("json_schema") or {}).get("schema")
    if isinstance(spec, dict):
        return spec
    for message in request.get("messages") or []:  # JSON mode: the schema travels in the system prompt
        content = str(message.get("content", ""))
        for marker in ("matching this schema:\n", "JSON schema:\n"):
            if marker in content:
                try:
                    return json.loads(content.split(marker, 1)[1].strip().splitlines()[0])
                except (ValueError, IndexError):
                    continue
    return {"type": "object", "properties": {}}


class _Vocabulary:
    """Strings for the answer: junk, or pieces of the prompt put together at random."""

    def __init__(self, prompt: str, rng: random.Random, style: str) -> None:
        self.rng = rng
        self.style = style
        self.entities = sorted(set(_ENTITY_RE.findall(prompt)) | {"home"})  # the scene's names, as observed
        self.calls = [(name, [a.split("=")[0].strip() for a in args.split(",") if a.strip()])
                      for name, args in _CALL_SIG_RE.findall(prompt)] or [("pick", ["object"])]

    def _entity(self) -> str:
        return self.rng.choice(self.entities)

    def call(self) -> str:
        name, args = self.rng.choice(self.calls)
        return f"{name}({', '.join(f'{a}={self._entity()}' for a in args)})"

    def fact(self) -> str:
        pred = self.rng.choice(_FACT_PREDICATES)
        negated = "not " if self.rng.random() < 0.25 else ""
        if pred == "gripper_empty":
            return negated + pred
        arity = 2 if pred in ("in", "on", "at") else 1
        return f"{negated}{pred}({', '.join(self._entity() for _ in range(arity))})"

    def text(self, field: str) -> str:
        if self.style == "random" or self.rng.random() < 0.15:
            return " ".join(self.rng.choice(_JUNK) for _ in range(self.rng.randint(1, 4)))
        if field in ("call",):
            return self.call()
        if field in ("goal", "success_when"):
            return self.fact()
        kind = self.rng.random()
        if kind < 0.4:
            return self.call()
        if kind < 0.6:
            return self.fact()
        verb = self.rng.choice(("put", "move", "open", "close", "pick up", "take"))
        return f"{verb} the {self._entity().replace('_', ' ')}"


def _instance(schema: dict[str, Any], defs: dict[str, Any], rng: random.Random, vocab: _Vocabulary,
              field: str, depth: int = 0) -> Any:
    if "$ref" in schema:
        return _instance(defs.get(schema["$ref"].rsplit("/", 1)[-1], {}), defs, rng, vocab, field, depth)
    if "anyOf" in schema:
        options = schema["anyOf"]
        if any(o.get("type") == "null" for o in options) and rng.random() < 0.3:
            return None
        chosen = rng.choice([o for o in options if o.get("type") != "null"] or options)
        return _instance(chosen, defs, rng, vocab, field, depth)
    if "enum" in schema:
        return rng.choice(schema["enum"])
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        if depth > 4:
            return {}
        return {name: _instance(sub, defs, rng, vocab, name, depth + 1)
                for name, sub in (schema.get("properties") or {}).items()}
    if kind == "array":
        count = rng.randint(0, min(int(schema.get("maxItems", 4)), 4))
        return [_instance(schema.get("items", {}), defs, rng, vocab, field, depth + 1) for _ in range(count)]
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "integer":
        return rng.randint(0, 10)
    if kind == "number":
        return round(rng.random() * 10, 2)
    if kind == "null":
        return None
    return vocab.text(field)
