"""The terminal for the CLI: the tree as it grows, primitives as they run, the final result, and the
person at the terminal (the goal to confirm, the model's questions)."""

from __future__ import annotations

import re
import select
import sys
import threading
import time
from typing import TextIO

from step_planner.domain.primitives import PrimitiveCall
from step_planner.execution.base import Outcome
from step_planner.planner.person import Ask, AskKind, Reply, ReplyKind, answer_problem
from step_planner.planner.result import GoalResult
from step_planner.planner.tree import SubgoalTree, TreeEvent

_STATUS_MARK = {"succeeded": "+", "failed": "x", "abandoned": "-", "expanding": "~", "executing": ">"}


class TreePrinter:
    """A TreeListener that prints one line per meaningful change (new node, verdict, end state)."""

    def __init__(self, out: TextIO = sys.stdout, color: bool | None = None) -> None:
        self.out = out
        self.color = out.isatty() if color is None else color
        self._met: dict[int, set[str]] = {}  # node -> conditions already reported as met

    def _c(self, text: str, code: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.color else text

    def on_tree_event(self, event: TreeEvent, tree: SubgoalTree) -> None:
        if not getattr(self, "_header", False):  # the root exists before any listener is attached
            self._header = True
            self.out.write(self._c(f"task: {tree.instruction}\n", "1"))
        if event.node_id < 0:
            return
        node = tree.node(event.node_id)
        pad = "  " * node.depth
        if event.kind == "added" and node.parent is not None:
            self.out.write(f"{pad}• {node.text}\n")
        elif event.kind == "verdict":
            v = node.verdicts[-1]
            colour = {"execute": "32", "decompose": "36", "done": "32"}.get(v.verdict.value, "33")
            self.out.write(self._c(f"{pad}  ↳ {v.verdict.value} ({v.source.value}): {v.reason}\n", colour))
        elif event.kind == "conditions" and node.conditions_from != "effects":
            self._conditions(node, pad)
        elif event.kind == "prepared":
            self.out.write(self._c(f"{pad}  (proposed by an answer prepared while the arm was moving)\n", "2"))
        elif event.kind == "status" and node.status.finished and node.children:
            mark = _STATUS_MARK.get(node.status.value, "?")
            self.out.write(f"{pad}[{mark}] {node.text}: {node.status.value}\n")
        self.out.flush()

    def _conditions(self, node, pad: str) -> None:
        """The subgoal's facts when first stated, then each one at the moment it is met."""
        seen = self._met.get(node.id)
        if seen is None:
            self._met[node.id] = seen = set()
            label = "goal" if node.parent is None else "when"
            facts = ", ".join(c.text for c in node.conditions)
            self.out.write(self._c(f"{pad}  {label}: {facts} ({node.conditions_from})\n", "36"))
        for cond in node.conditions:
            if cond.holds and cond.text not in seen:
                seen.add(cond.text)
                step = "before any step" if not cond.met_after_step else f"after step {cond.met_after_step}"
                whose = "goal " if node.parent is None else ""
                self.out.write(self._c(f"{pad}  ✓ {whose}{cond.text} met {step} ({cond.judged_from.value})\n",
                                       "32"))
            elif not cond.holds:
                seen.discard(cond.text)

    def on_step(self, call: PrimitiveCall, outcome: Outcome, world: object = None) -> None:
        ok = outcome.success
        text = f"      ⚙ {call}: {outcome.code.value}" + ("" if ok else f" — {outcome.message}")
        self.out.write(self._c(text + "\n", "32" if ok else "31"))
        self.out.flush()

    def result(self, result: GoalResult) -> None:
        status = "SUCCESS" if result.success else f"FAILED ({result.error.value})"
        self.out.write("\n" + self._c(f"outcome: {status}: {result.message}", "1;32" if result.success else "1;31"))
        self.out.write("\n")
        if result.conditions:
            checked = "checked in the world" if result.verified else "not checked"
            self.out.write(f"goal conditions ({checked}):\n")
            for cond in result.conditions:
                mark = "✓" if cond["holds"] else "✗"
                self.out.write(f"  {mark} {cond['text']}  ({cond['judged_from']})\n")
        elif not result.verified:
            self.out.write("goal conditions: none stated (not verified against the world)\n")
        u = result.usage
        self.out.write(
            f"primitives executed: {len(result.executed)}   LLM calls: {u.get('llm_calls', 0)}   "
            f"prompt tokens: {u.get('prompt_tokens', 0)}   completion tokens: {u.get('completion_tokens', 0)}   "
            f"largest prompt: {u.get('max_prompt_tokens', 0)}   elapsed: {result.elapsed_s:.2f} s\n"
        )
        if "speculative_made" in u:
            self.out.write(f"answers prepared during motion: {u['speculative_used']} used, "
                           f"{u['speculative_wasted']} discarded; waited for the LLM {u.get('llm_wait_s', 0):.2f} s\n")
        self.out.flush()


_FACT_SPLIT = re.compile(r"(?<=\))\s*[,;]\s*|\s*;\s*")
GOAL_PROMPT = ("accept [Enter / yes], refuse [no, and why], or type the right facts "
               "(e.g. in(tape, drawer); closed(drawer))")


def parse_goal_reply(line: str) -> Reply | None:
    """A typed reply to a goal confirmation: empty or yes accepts, ``no [why]`` refuses, facts correct it
    (``in(tape, drawer); closed(drawer)``); None when it is none of these."""
    text = line.strip()
    word = text.split(" ", 1)[0].lower().rstrip(",.:!")
    if word in ("", "y", "yes", "ok", "accept"):
        return Reply(ReplyKind.ACCEPT)
    if word in ("n", "no", "refuse"):
        reason = text.split(" ", 1)[1].strip(" ,.:") if " " in text else ""
        return Reply(ReplyKind.REFUSE, reason or "refused at the terminal")
    if "(" in text or text.replace("_", "").isalpha():
        return Reply(ReplyKind.CORRECT, facts=tuple(f.strip() for f in _FACT_SPLIT.split(text) if f.strip()))
    return None


class TerminalPerson:
    """The person at the terminal (``step-planner plan``): the goal to confirm and the model's questions are
    printed, replies are read from ``inp`` (a terminal) within ``timeout_s``. A corrected goal that does not
    check out, or an empty answer, is asked for again."""

    def __init__(self, inp: TextIO = sys.stdin, out: TextIO = sys.stdout, timeout_s: float = 300.0) -> None:
        self.inp, self.out, self.timeout_s = inp, out, timeout_s

    def ask(self, request: Ask, cancel: threading.Event) -> Reply:
        deadline = time.monotonic() + self.timeout_s
        if request.kind is AskKind.GOAL:
            self.out.write("\n== the goal as the planner reads it (nothing moves until you confirm it) ==\n")
            for fact, words in zip(request.facts, request.words, strict=True):
                self.out.write(f"   {fact}: {words}\n")
            prompt = f"   {GOAL_PROMPT}: "
        else:
            self.out.write(f"\n== the planner asks: {request.text}\n")
            prompt = "   your answer: "
        while True:
            self.out.write(prompt)
            self.out.flush()
            line = self._readline(deadline, cancel)
            if isinstance(line, Reply):
                self.out.write(f"\n   ({line.text})\n")
                return line
            if request.kind is AskKind.QUESTION:
                if problem := answer_problem(line.strip()):
                    self.out.write(f"   {problem}\n")
                    continue
                return Reply(ReplyKind.ANSWER, line.strip())
            reply = parse_goal_reply(line)
            if reply is None:
                self.out.write("   not understood\n")
            elif reply.kind is ReplyKind.CORRECT and (problems := request.problems(list(reply.facts))):
                self.out.write("   that goal is not usable: " + "; ".join(problems) + "\n")
            else:
                return reply

    def _readline(self, deadline: float, cancel: threading.Event) -> str | Reply:
        while True:
            if cancel.is_set():
                return Reply(ReplyKind.CANCELED, "canceled")
            left = deadline - time.monotonic()
            if left <= 0:
                return Reply(ReplyKind.NO_ANSWER, f"no answer within {self.timeout_s:g} s")
            if select.select([self.inp], [], [], min(left, 0.2))[0]:
                line = self.inp.readline()
                return line if line else Reply(ReplyKind.NO_ANSWER, "the terminal closed")
