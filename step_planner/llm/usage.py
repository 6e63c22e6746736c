"""Per-exchange accounting of LLM calls (tokens, latency, outcome) for budgets and reports."""

from __future__ import annotations

import threading
from dataclasses import dataclass


@dataclass(frozen=True)
class CallRecord:
    """One HTTP exchange with the endpoint; `attempt` counts from 1 within one `complete` call."""

    purpose: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    ok: bool
    error: str | None
    attempt: int
    tokens_counted_locally: bool = False  # True when the endpoint sent no `usage`


class UsageLedger:
    """Thread-safe list of CallRecords with totals; the planner reads it to enforce budgets."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: list[CallRecord] = []

    @property
    def records(self) -> list[CallRecord]:
        with self._lock:
            return list(self._records)

    def add(self, record: CallRecord) -> None:
        with self._lock:
            self._records.append(record)

    def reset(self) -> None:
        with self._lock:
            self._records.clear()

    def totals(self) -> dict:
        """Sums over all records: calls, ok_calls, prompt/completion tokens, latency_s, max_prompt_tokens."""
        records = self.records
        return {
            "calls": len(records),
            "ok_calls": sum(r.ok for r in records),
            "prompt_tokens": sum(r.prompt_tokens for r in records),
            "completion_tokens": sum(r.completion_tokens for r in records),
            "latency_s": round(sum(r.latency_s for r in records), 6),
            "max_prompt_tokens": max((r.prompt_tokens for r in records), default=0),
        }
