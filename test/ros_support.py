"""Helpers for the ROS tests: a scripted OpenAI-compatible handler and a node + client on loopback DDS.

The node under test is the real StepPlannerNode in a real rclpy context (Fast DDS, discovery limited to
localhost); its LLM is the real ``openai`` client talking HTTP to ``LoopbackServer``. Only the answers
are scripted: each subgoal decomposes into a fixed list of children.
"""

from __future__ import annotations

import json
import re
import tempfile
import threading
import time
import uuid
from collections.abc import Callable

import rclpy
from conftest import DRAWER_GOAL, DRAWER_PLANS, DRAWER_TASK
from rclpy.action import ActionClient
from rclpy.executors import MultiThreadedExecutor
from rclpy.parameter import Parameter
from unique_identifier_msgs.msg import UUID

from step_planner.llm.loopback import Fault, LoopbackServer
from step_planner.ros.node import StepPlannerNode
from step_planner.ros.qos import feedback_stream
from step_planner_interfaces.action import ExecuteTask

TASK = DRAWER_TASK
PLANS = {**DRAWER_PLANS, "put the cup on the tray": ["pick(cup)", "place(cup, tray)"]}
GOALS = {TASK: DRAWER_GOAL, "put the cup on the tray": ["at(cup, tray)"],
         "put the stapler on the tray": ["at(stapler, tray)"], "put the red block on the tray": ["at(red_block, tray)"]}
FACTS = {"put the tape in the drawer": ["in(tape, drawer)"],
         "put the screwdriver in the drawer": ["in(screwdriver, drawer)"]}
_CALL = re.compile(r"^[a-z_]+\(.*\)$")
DRAWER_PRIMITIVES = [
    "open_drawer(drawer=drawer)", "pick(object=tape)", "place(object=tape, target=drawer)",
    "pick(object=screwdriver)", "place(object=screwdriver, target=drawer)", "close_drawer(drawer=drawer)",
]
WAIT_S = 15.0  # discovery across threads is quick, but the machine is shared


def section(text: str, title: str) -> str:
    m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    return m.group(1).strip() if m else ""


class ScriptedPlans:
    """A loopback handler in the grounded answer shape: decompose each subgoal into ``plans[subgoal]``
    (calls carry their call, natural-language children their facts), the goal from ``GOALS``.
    ``hold()`` makes the next requests wait until ``release()`` (to keep a goal busy). Instructions
    listed in ``unavailable`` get HTTP 503 (the endpoint is down)."""

    def __init__(self, plans: dict[str, list[str]], unavailable: tuple[str, ...] = ()) -> None:
        self.plans = plans
        self.unavailable = unavailable
        self.prompts: list[str] = []
        self._open = threading.Event()
        self._open.set()
        self.waiting = threading.Event()

    def hold(self) -> None:
        self._open.clear()

    def release(self) -> None:
        self._open.set()

    def __call__(self, request: dict):
        user = request["messages"][-1]["content"]
        self.prompts.append(user)
        if not self._open.is_set():
            self.waiting.set()
            self._open.wait(WAIT_S)
        if section(user, "Task") in self.unavailable:
            return Fault("http_503")
        if "## Subgoal to judge" in user:
            return json.dumps({"verdict": "decompose", "reason": "needs several actions"})
        parent = section(user, "Subgoal to decompose").splitlines()[0]
        siblings = section(user, "Children of this subgoal so far (in order, with outcomes)")
        lines = [] if siblings == "(none yet)" else [re.sub(r"^\d+\. ", "", s) for s in siblings.splitlines()]
        done = [s.rsplit(" -> ", 1)[0] for s in lines if s.endswith("-> succeeded")]
        remaining = [s for s in self.plans.get(parent, []) if s not in done]
        goal = GOALS.get(section(user, "Task"), [])
        if not remaining:
            return json.dumps({"goal": goal, "done": True, "next": None})

        def child(text: str) -> dict:
            return {"subgoal": text, "call": text if _CALL.match(text) else None, "success_when": FACTS.get(text, [])}

        return json.dumps({"goal": goal, "done": False, "next": child(remaining[0]),
                           "then": [child(t) for t in remaining[1:]]})


class RosHarness:
    """The node (with ``overrides``) and a client node, spun by one MultiThreadedExecutor thread."""

    def __init__(self, handler: Callable, **overrides) -> None:
        self.server = LoopbackServer(handler).start()
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self._episodes = tempfile.TemporaryDirectory(prefix="step_planner_episodes_")  # never ~/.step_planner
        self.episodes_dir = self._episodes.name
        values = {"llm.base_url": self.server.base_url, "llm.model": "loopback", "llm.max_retries": 0,
                  "llm.timeout_s": 10.0, "heartbeat_period_s": 0.2, "episodes.folder": self.episodes_dir,
                  **overrides}
        # A unique node name per harness: no cross-talk with earlier tests' nodes or other runs on the host.
        self.name = f"/step_planner_{uuid.uuid4().hex[:8]}"
        self.node = StepPlannerNode(self.name[1:], context=self.context,
                                    parameter_overrides=[Parameter(k, value=v) for k, v in values.items()])
        self.client_node = rclpy.create_node("step_planner_test_client", context=self.context)
        self.client = ActionClient(self.client_node, ExecuteTask, f"{self.name}/execute_task",
                                   feedback_sub_qos_profile=feedback_stream())
        # rclpy's ActionClient forgets a goal's feedback callback when its result arrives, and feedback and
        # result travel on different DDS entities: the last feedback can arrive second and be dropped. The
        # tests read the action's feedback topic itself (as `ros2 topic echo` would), so nothing is lost.
        self._feedback_lists: dict[bytes, list] = {}
        self._feedback_sub = self.client_node.create_subscription(
            ExecuteTask.Impl.FeedbackMessage, f"{self.name}/execute_task/_action/feedback",
            self._on_feedback, feedback_stream())
        self.executor = MultiThreadedExecutor(num_threads=4, context=self.context)
        self.executor.add_node(self.node)
        self.executor.add_node(self.client_node)
        self._spin = threading.Thread(target=self.executor.spin, daemon=True)
        self._spin.start()
        if not self.client.wait_for_server(timeout_sec=WAIT_S):
            self.close()
            raise RuntimeError("the action server did not appear")
        try:
            wait_until(lambda: self._feedback_sub.get_publisher_count() > 0)
        except TimeoutError:
            self.close()
            raise RuntimeError("the feedback topic did not appear") from None

    def _on_feedback(self, msg) -> None:
        received = self._feedback_lists.get(bytes(msg.goal_id.uuid))
        if received is not None:
            received.append(msg.feedback)

    def send(self, instruction: str, scene: str = "", dry_run: bool = False, feedback: list | None = None):
        """Send a goal; ``feedback`` (if given) receives every feedback message the node publishes for it,
        in arrival order, including any that arrive after the result (wait_quiet before the last checks)."""
        goal = ExecuteTask.Goal(instruction=instruction, scene=scene, dry_run=dry_run)
        goal_uuid = UUID(uuid=list(uuid.uuid4().bytes))
        if feedback is not None:
            self._feedback_lists[bytes(goal_uuid.uuid)] = feedback
        future = self.client.send_goal_async(goal, goal_uuid=goal_uuid)
        handle = wait_for(future)
        assert handle.accepted
        return handle

    def close(self) -> None:
        self.executor.shutdown()
        self._spin.join(WAIT_S)
        self.client.destroy()
        self.client_node.destroy_node()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)
        self.server.close()
        self._episodes.cleanup()


def wait_for(future, timeout: float = WAIT_S):
    deadline = time.monotonic() + timeout
    while not future.done():
        if time.monotonic() > deadline:
            raise TimeoutError("the future did not complete")
        time.sleep(0.01)
    return future.result()


def wait_until(predicate: Callable[[], bool], timeout: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError("condition not reached")
        time.sleep(0.01)


def wait_quiet(items: list, quiet_s: float = 0.3, timeout: float = WAIT_S) -> None:
    """Wait until ``items`` (filled by a subscription) has not grown for ``quiet_s``: what was sent arrived."""
    deadline = time.monotonic() + timeout
    size, since = len(items), time.monotonic()
    while time.monotonic() - since < quiet_s:
        if time.monotonic() > deadline:
            raise TimeoutError("still receiving")
        time.sleep(0.01)
        if len(items) != size:
            size, since = len(items), time.monotonic()
