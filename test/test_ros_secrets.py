"""The API key never leaves the process through the node: not in its logs (ROS log files, stdout/stderr),
action feedback or results, the ~/tree and ~/tree_json topics, or the recorded episodes.

The endpoint is hostile on purpose: it echoes the key back in a 401 error message (as real APIs echo
a wrong key) and inside the planner's answers (reasoning and verdict reasons), and it fails with 503 and
broken bodies. Each haystack is also searched for the instruction, to show the search would find text
that is there (a compressed or empty haystack would prove nothing).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

pytest.importorskip("step_planner_interfaces", reason="build the interfaces first: make interfaces")

import rclpy.logging  # noqa: E402
from ros_support import PLANS, TASK, RosHarness, ScriptedPlans, section, wait_for, wait_until  # noqa: E402
from std_msgs.msg import String  # noqa: E402

from step_planner.episodes.episode import load_episode  # noqa: E402
from step_planner.llm.loopback import Fault  # noqa: E402
from step_planner.ros.qos import latched  # noqa: E402
from step_planner_interfaces.msg import SubgoalTree  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.timeout(120)]
KEY = "sk-proj-FAKEKEY-7d1e5c0b9a2f4e6d8c3b"


class LeakyEndpoint(ScriptedPlans):
    """Plans like ScriptedPlans, but writes the key into every answer; "fault:<kind>" goals fail."""

    def __call__(self, request: dict):
        task = next((section(m["content"], "Task") for m in request["messages"]
                     if m["role"] == "user" and "## Task" in m["content"]), "")
        if task == "fault:401":
            return Fault("http_error", status=401, message=f"Incorrect API key provided: {KEY}.",
                         code="invalid_api_key")
        if task.startswith("fault:"):
            return Fault(task.split(":", 1)[1])
        answer = json.loads(super().__call__(request))
        answer["reasoning"] = f"the caller authenticated with {KEY}"
        if "verdict" in answer:
            answer["reasoning"] = f"{answer['reason']} (key {KEY})"
        return json.dumps(answer)


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    return KEY


def test_the_key_reaches_no_log_topic_feedback_result_or_episode(key, capfd):
    started = time.time()
    # profile step: the model's reasoning is kept in verdicts, so the key has a way into the tree
    ros = RosHarness(LeakyEndpoint(PLANS), **{"llm.max_retries": 1, "planner.profile": "step",
                                              "planner.features": ["-verify_done"],
                                              "planner.require_verified_success": False})
    topics: list[str] = []
    ros.client_node.create_subscription(SubgoalTree, f"{ros.name}/tree", lambda m: topics.append(str(m)),
                                        latched())
    ros.client_node.create_subscription(String, f"{ros.name}/tree_json", lambda m: topics.append(m.data),
                                        latched())
    outputs: list[str] = []
    try:
        for instruction in (TASK, "fault:401", "fault:http_503", "fault:truncated", TASK):
            feedback: list = []
            result = wait_for(ros.send(instruction, feedback=feedback).get_result_async()).result
            outputs += [str(f) for f in feedback] + [str(result)]
            if instruction == TASK:
                assert result.success, result.error_msg
                assert "[REDACTED]" in str(result.final_tree), "the key in the answers must show as redacted"
            else:
                assert result.error_code == result.LLM_UNAVAILABLE, result.error_msg
        wait_until(lambda: any("fault:truncated" in t for t in topics))
        episodes = sorted(Path(ros.episodes_dir).iterdir())
        assert len(episodes) == 5
        recorded = [path.read_bytes().decode("latin-1") for ep in episodes for path in ep.rglob("*")
                    if path.is_file()]
        parsed = [json.dumps([e.goal, e.steps, e.exchanges, e.trees, e.result], default=str)
                  for e in map(load_episode, episodes)]
    finally:
        ros.close()
    captured = capfd.readouterr()
    log_dir = Path(rclpy.logging.get_logging_directory())
    log_files = [p.read_text(errors="replace") for p in log_dir.glob("*") if p.is_file()
                 and p.stat().st_mtime >= started - 1]
    haystacks = {
        "feedback and results": "\n".join(outputs),
        "~/tree and ~/tree_json": "\n".join(topics),
        "episode files (raw bytes)": "\n".join(recorded),
        "episodes (parsed)": "\n".join(parsed),
        "stdout/stderr": captured.out + captured.err,
        "ROS log files": "\n".join(log_files),
    }
    for where, text in haystacks.items():
        assert TASK in text, f"the search of {where} would not find text that is there"
        assert key not in text, f"the API key leaked into {where}"
    assert "401" in haystacks["feedback and results"]  # the 401 goal ran and was reported, without the key
