"""What the page shows and what a person may send through it. Plain Python: no rclpy, no web framework.

WHY a module of its own: the ROS client (``ros_link``) and the web server (``server``) only translate; the
rules live here and are tested without either. One goal at a time is sent from the pages (several pages may
watch it); every input is checked as the node checks a goal sent over the action (the instruction by
``validate_instruction``, an answer by ``answer_problem``, a corrected goal fact by fact by the condition
grammar), and refused with a reason before anything reaches the node.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from step_planner.domain.conditions import ConditionError, parse_fact
from step_planner.hmi import words
from step_planner.planner.person import MAX_ANSWER_CHARS, answer_problem
from step_planner.planner.runner import validate_instruction
from step_planner.viz.table_svg import table_svg

MAX_SCENE_CHARS = 2_000_000  # a ~/scene_json snapshot (a few kB for the shipped scenes)
MAX_MESSAGE_CHARS = 16_000  # one WebSocket message from a page (an instruction is at most 2000 characters)
MAX_FACTS = 20  # a corrected goal
MAX_FACT_CHARS = 200
MAX_REASON_CHARS = MAX_ANSWER_CHARS
DECISIONS = ("accept", "correct", "refuse")
LOG_LINES = 200  # what the page keeps of the goal's events


class Refused(ValueError):
    """An input the page does not pass on; the message tells the person why."""


@dataclass(frozen=True)
class Command:
    """One thing a person asks for: send | confirm | answer | cancel."""

    kind: str
    instruction: str = ""
    decision: str = ""
    facts: tuple[str, ...] = ()
    text: str = ""  # the answer, or the reason of a refusal


def _text(value: Any, what: str, limit: int) -> str:
    if not isinstance(value, str):
        raise Refused(f"{what} must be text")
    if len(value) > limit:
        raise Refused(f"{what} is longer than {limit} characters")
    if any(ord(ch) < 32 and ch != "\t" for ch in value):
        raise Refused(f"{what} contains control characters (one line, please)")
    return value.strip()


def check_facts(facts: Any) -> tuple[str, ...]:
    """A corrected goal: one to MAX_FACTS facts in the condition grammar (the node then checks them against
    the world, as it checks a client's success_when)."""
    if isinstance(facts, str):
        facts = [f for f in facts.replace(";", "\n").splitlines()]
    if not isinstance(facts, list):
        raise Refused("the corrected goal must be a list of facts")
    facts = [_text(f, "a fact", MAX_FACT_CHARS) for f in facts]
    facts = [f for f in facts if f]
    if not facts:
        raise Refused("a corrected goal needs at least one fact, e.g. in(tape, drawer)")
    if len(facts) > MAX_FACTS:
        raise Refused(f"a corrected goal has at most {MAX_FACTS} facts")
    for fact in facts:
        try:
            parse_fact(fact)
        except ConditionError as exc:
            raise Refused(str(exc)) from None
    return tuple(facts)


def parse_command(raw: str | bytes) -> Command:
    """A page's message (JSON text) as a Command, or Refused saying what is wrong with it."""
    if isinstance(raw, bytes):
        raise Refused("messages are JSON text")
    if len(raw) > MAX_MESSAGE_CHARS:
        raise Refused(f"a message is at most {MAX_MESSAGE_CHARS} characters")
    try:
        data = json.loads(raw)
    except ValueError:
        raise Refused("a message is a JSON object") from None
    if not isinstance(data, dict):
        raise Refused("a message is a JSON object")
    kind = data.get("type")
    if kind == "send":
        instruction = data.get("instruction")
        if problem := validate_instruction(instruction):
            raise Refused(problem)
        return Command("send", instruction=instruction.strip())
    if kind == "answer":
        answer = data.get("answer")
        if problem := answer_problem(answer):
            raise Refused(problem)
        return Command("answer", text=answer.strip())
    if kind == "confirm":
        decision = data.get("decision")
        if decision not in DECISIONS:
            raise Refused(f"decision must be one of {', '.join(DECISIONS)}")
        facts = check_facts(data.get("facts")) if decision == "correct" else ()
        reason = _text(data.get("reason", ""), "the reason", MAX_REASON_CHARS)
        if decision == "refuse" and not reason:
            reason = "refused on the page"
        return Command("confirm", decision=decision, facts=facts, text=reason)
    if kind == "cancel":
        return Command("cancel")
    raise Refused("unknown message type (send, confirm, answer or cancel)")


@dataclass
class SentGoal:
    """The goal the pages sent (one at a time)."""

    instruction: str
    status: str = "sending"  # sending | running | ended
    goal_id: str = ""  # hex of the action's goal UUID, once accepted
    sent_at: float = field(default_factory=time.time)


class HmiState:
    """Everything the pages show, fed by the ROS client's callbacks (any thread); ``on_change`` is called
    after each change (without the lock held) so the server can push the new state to every page."""

    def __init__(self, node: str = "/step_planner") -> None:
        self.node = node
        self._lock = threading.Lock()
        self.version = 0
        self.on_change: Callable[[], None] = lambda: None
        self.goal: SentGoal | None = None
        self.feedback: dict[str, Any] = {}
        self.feedback_goal = ""  # which goal the feedback is of
        self.tree: dict[str, Any] | None = None
        self.waiting: dict[str, str] = {}  # kind -> text: goal_confirmation | question (the pending topics)
        self.result: dict[str, Any] | None = None
        self.dialogue: list[dict[str, Any]] = []  # the goal's exchanges with the person (~/tree_json "dialogue")
        self.server_ready = False
        self.scene: dict[str, Any] | None = None  # the node's ~/scene_json snapshot (what is where)
        self.picture = ""  # the table from above (SVG text), drawn from ``scene``
        self.camera: dict[str, Any] | None = None  # the camera's topic and format, once a frame came
        self.camera_frame = b""  # its latest frame (served at /camera.jpg, fetched by the page a few times a second)
        self.log: deque[str] = deque(maxlen=LOG_LINES)
        self._last_step = ""

    def _changed(self) -> None:
        self.version += 1

    def _notify(self) -> None:
        self.on_change()

    # ---- the page's goal ------------------------------------------------------------------------------
    def begin(self, instruction: str) -> None:
        """Claim the one goal the pages may send, or Refused while one is being sent or runs."""
        with self._lock:
            if self.goal is not None and self.goal.status != "ended":
                raise Refused(f"a goal is already running ({self.goal.instruction!r}): cancel it or wait")
            self.goal = SentGoal(instruction)
            self.result, self.feedback, self.feedback_goal, self._last_step = None, {}, "", ""
            self.log.clear()
            self.log.append(f"sent: {instruction}")
            self._changed()
        self._notify()

    def accepted(self, goal_id: str) -> None:
        with self._lock:
            if self.goal is not None:
                self.goal.status, self.goal.goal_id = "running", goal_id
                self.log.append(f"the node accepted goal {goal_id[:8]}")
            self._changed()
        self._notify()

    def failed(self, message: str, status: str = "NOT SENT") -> None:
        """The goal never ran (no server, rejected), or its node went away (LOST): the page may send another."""
        with self._lock:
            if self.goal is not None:
                self.goal.status = "ended"
            self.result = {"status": status, "success": False, "error": status.replace(" ", "_"),
                           "error_msg": message, "verified": False, "conditions": [], "executed_primitives": []}
            self.log.append(f"{status.lower()}: {message}")
            self._changed()
        self._notify()

    def on_result(self, goal_id: str, result: dict[str, Any]) -> None:
        with self._lock:
            if self.goal is None or self.goal.goal_id != goal_id:
                return  # another goal's (the pages did not send it)
            self.goal.status = "ended"
            self.result = result
            self.log.append(f"outcome: {result.get('status')} {result.get('error_msg', '')}".rstrip())
            self._changed()
        self._notify()

    # ---- what the node publishes (any goal, sent from here or not) --------------------------------------
    def on_feedback(self, goal_id: str, feedback: dict[str, Any]) -> None:
        with self._lock:
            self.feedback, self.feedback_goal = feedback, goal_id
            step = feedback.get("last_primitive", "")
            key = f"{step}#{feedback.get('leaves_done')}#{feedback.get('last_outcome')}"
            if step and key != self._last_step:
                self._last_step = key
                self.log.append(f"ran {step} -> {feedback.get('last_outcome', '')}")
            self._changed()
        self._notify()

    def on_tree(self, tree: dict[str, Any]) -> None:
        with self._lock:
            old = self.tree
            if old is not None and (old.get("goal_id"), old.get("revision")) == (tree.get("goal_id"),
                                                                                  tree.get("revision")):
                return  # a heartbeat of a tree already shown
            self.tree = tree
            self._changed()
        self._notify()

    def on_tree_json(self, text: str) -> None:
        """The JSON snapshot's ``dialogue``: every question and goal confirmation so far with its reply, as the
        planner records it (shown field by field, so what it adds later shows too)."""
        try:
            dialogue = json.loads(text).get("dialogue") or []
        except (ValueError, AttributeError):
            return
        if not isinstance(dialogue, list):
            return
        with self._lock:
            if dialogue == self.dialogue:
                return
            self.dialogue = dialogue
            self._changed()
        self._notify()

    def on_scene(self, text: str) -> None:
        """The node's scene snapshot (``~/scene_json``): kept, and the table drawn from it once here (every page
        gets the same SVG text). A snapshot that cannot be read or drawn leaves the last picture."""
        if len(text) > MAX_SCENE_CHARS:
            return
        try:
            scene = json.loads(text)
            picture = table_svg(scene)
        except (ValueError, KeyError, TypeError, IndexError, AttributeError):
            return
        with self._lock:
            if picture == self.picture:
                return
            self.scene, self.picture = scene, picture
            self._changed()
        self._notify()

    def on_camera(self, frame: bytes, source: str, fmt: str = "jpeg") -> None:
        """A camera frame (sensor_msgs/CompressedImage). The pages learn of the camera once (its panel appears);
        each new frame is only kept, not pushed: the page fetches the latest itself while its panel is shown."""
        fmt = "png" if "png" in fmt.lower() else "jpeg"
        with self._lock:
            self.camera_frame = bytes(frame)
            if self.camera == {"source": source, "format": fmt}:
                return
            self.camera = {"source": source, "format": fmt}
            self._changed()
        self._notify()

    def on_pending(self, kind: str, text: str) -> None:
        with self._lock:
            if text:
                self.waiting[kind] = text
                label = "the goal waits for confirmation" if kind == "goal_confirmation" else f"question: {text}"
                self.log.append(label)
            elif self.waiting.pop(kind, None) is not None:
                self.log.append("answered" if kind == "question" else "goal confirmation answered")
            self._changed()
        self._notify()

    def on_server(self, ready: bool) -> None:
        with self._lock:
            if ready == self.server_ready:
                return
            self.server_ready = ready
            self._changed()
        self._notify()

    def note(self, line: str) -> None:
        with self._lock:
            self.log.append(line)
            self._changed()
        self._notify()

    # ---- what the pages get -----------------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        with self._lock:
            return self.goal is not None and self.goal.status != "ended"

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            goal = None if self.goal is None else {"instruction": self.goal.instruction, "status": self.goal.status,
                                                   "goal_id": self.goal.goal_id}
            running = (self.goal is not None and self.goal.status != "ended") or (
                self.goal is None and bool(self.feedback) and self.result is None)
            said = {"progress": words.progress(self.feedback, self.tree, self.waiting, self.scene, running),
                    "outcome": words.outcome(self.result, self.scene)}
            return {"type": "state", "version": self.version, "node": self.node, "server_ready": self.server_ready,
                    "goal": goal, "feedback": dict(self.feedback), "feedback_goal": self.feedback_goal,
                    "tree": self.tree, "dialogue": list(self.dialogue),
                    "waiting": dict(self.waiting), "result": self.result, "log": list(self.log),
                    "picture": self.picture, "words": said, "camera": self.camera}
