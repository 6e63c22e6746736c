"""One goal's progress: turns tree events and executed primitives into tree snapshots and feedback.

It is the TreeListener the node hands to ``run_goal``. It runs on the planning thread and only calls
the publish functions it was given, so it is tested with plain lists in place of publishers.

Every tree change is published on ``~/tree``; feedback is sent only when what it shows changes (the
active node or its status, the primitives done, the last outcome, the goal, its facts met, what the goal
waits for from a person):
a burst of verdict events would otherwise overrun a client's keep-last feedback queue and push out the
messages that matter.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from step_planner.domain.primitives import PrimitiveCall
from step_planner.execution.base import Outcome
from step_planner.planner.tree import SubgoalTree, TreeEvent
from step_planner.ros.conversions import feedback_msg


class GoalProgress:
    def __init__(self, publish_tree: Callable[[dict[str, Any]], None], publish_feedback: Callable[[Any], None],
                 llm_calls: Callable[[], int] = lambda: 0) -> None:
        self._publish_tree = publish_tree
        self._publish_feedback = publish_feedback
        self._llm_calls = llm_calls
        self._started = time.monotonic()
        self._lock = threading.Lock()
        self.last_primitive = ""
        self.last_outcome = ""
        self.leaves_done = 0
        self.feedback_sent = 0
        self._last_shown: tuple = ()

    def on_tree_event(self, event: TreeEvent, tree: SubgoalTree) -> None:
        snapshot = tree.snapshot()
        self._publish_tree(snapshot)
        with self._lock:
            fb = feedback_msg(snapshot, last_primitive=self.last_primitive, last_outcome=self.last_outcome,
                              leaves_done=self.leaves_done, elapsed_s=time.monotonic() - self._started,
                              llm_calls=self._llm_calls())
            shown = (fb.active_node_id, fb.active_node_status, fb.leaves_done, fb.last_outcome, fb.conditions_met,
                     tuple(fb.goal), fb.goal_from, tuple(fb.readings), fb.waiting_for, fb.question)
            if shown == self._last_shown:
                return
            self._last_shown = shown
            self.feedback_sent += 1
        self._publish_feedback(fb)

    def on_step(self, call: PrimitiveCall, outcome: Outcome, world: object = None) -> None:
        with self._lock:
            self.last_primitive = str(call)
            self.last_outcome = outcome.code.value
            self.leaves_done += int(outcome.success)
