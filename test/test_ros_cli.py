"""``step-planner send`` and ``step-planner watch`` as separate processes against a running node."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("step_planner_interfaces", reason="build the interfaces first: make interfaces")

from ros_support import PLANS, TASK, RosHarness, ScriptedPlans  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.timeout(120)]


def _cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [os.getcwd(), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-m", "step_planner.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env=env, stdin=subprocess.DEVNULL)


def test_send_shows_the_tree_and_the_result_then_watch_sees_the_final_tree():
    ros = RosHarness(ScriptedPlans(PLANS))
    try:
        sent = _cli("send", TASK, "--node", ros.name, "--wait", "20")
        assert sent.returncode == 0, sent.stderr
        assert "outcome: SUCCESS" in sent.stdout
        assert "-- tree rev" in sent.stdout and "[+] put the tape in the drawer" in sent.stdout
        assert "close_drawer(drawer=drawer) -> SUCCESS" in sent.stdout
        watched = _cli("watch", "--node", ros.name, "--once", "--timeout", "20")
        assert watched.returncode == 0, watched.stderr
        assert f"[+] {TASK}" in watched.stdout and "pick(tape)" in watched.stdout
    finally:
        ros.close()


def test_send_reports_a_missing_server_quickly():
    sent = _cli("send", TASK, "--node", "/nobody_here", "--wait", "1")
    assert sent.returncode == 2 and "no action server /nobody_here/execute_task" in sent.stderr


def test_send_follows_a_goal_whose_accepted_answer_was_lost():
    """The node runs the goal but its answer never arrives (rmw_fastrtps dropped it): send finds the goal on the
    action's status topic and reports its result instead of 'did not answer the goal'."""
    import uuid

    from losing_action import AnswerLosingServer

    from step_planner_interfaces.action import ExecuteTask

    node = f"/losing_{uuid.uuid4().hex[:6]}"
    server = AnswerLosingServer(ExecuteTask, f"{node}/execute_task", run_s=0.5)
    try:
        sent = _cli("send", TASK, "--node", node, "--wait", "15", "--quiet")
        assert "did not answer the goal" not in sent.stderr, sent.stderr
        assert len(server.goals) == 1 and "outcome: FAILED" in sent.stdout, (sent.stdout, sent.stderr)
    finally:
        server.close()


def test_ctrl_c_before_the_node_answered_the_goal_still_cancels_it_without_a_traceback():
    """The goal is sent, the node has it but its answer has not come (here: never does): a Ctrl-C then used to end
    send with a KeyboardInterrupt traceback and leave the goal running. Now send waits for the goal to be known
    (its answer, or the action's status listing it) and cancels it."""
    import signal
    import time
    import uuid

    from losing_action import AnswerLosingServer

    from step_planner_interfaces.action import ExecuteTask

    node = f"/losing_{uuid.uuid4().hex[:6]}"
    server = AnswerLosingServer(ExecuteTask, f"{node}/execute_task", run_s=3.0)
    try:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [os.getcwd(), os.environ.get("PYTHONPATH")]))}
        send = subprocess.Popen([sys.executable, "-m", "step_planner.cli", "send", TASK, "--node", node, "--wait",
                                 "20", "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while not server.goals and time.monotonic() < deadline:
            time.sleep(0.005)
        assert server.goals, "the goal did not reach the server"
        send.send_signal(signal.SIGINT)  # within ACCEPT_PROBE_S: send still waits for the goal's answer
        out, err = send.communicate(timeout=60)
    finally:
        server.close()
    assert "Traceback" not in err, err
    assert "canceling the goal once the node answers it" in out, (out, err)
    assert list(server.cancels) == list(server.goals), "the goal the node had was not canceled"


def test_ctrl_c_on_send_cancels_the_goal_and_prints_its_result_without_a_traceback():
    import signal
    import time

    plans = ScriptedPlans(PLANS)
    plans.hold()  # the goal waits for its first answer until the client cancels it
    ros = RosHarness(plans)
    try:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [os.getcwd(), os.environ.get("PYTHONPATH")]))}
        send = subprocess.Popen([sys.executable, "-m", "step_planner.cli", "send", TASK, "--node", ros.name, "--wait",
                                 "20"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                stdin=subprocess.DEVNULL)
        assert plans.waiting.wait(30), "the goal did not start"
        time.sleep(0.3)
        send.send_signal(signal.SIGINT)
        out, err = send.communicate(timeout=60)
    finally:
        plans.release()
        ros.close()
    assert "Traceback" not in err, err
    assert send.returncode == 1, (out, err)
    assert "canceling the goal" in out and "outcome: FAILED (CANCELED): canceled by the client" in out, out


class _Future:
    def __init__(self):
        self.value = None

    def done(self):
        return self.value is not None

    def result(self):
        return self.value


class _Handle:
    """A goal handle whose status ends at ``end_at`` (fake seconds) and whose result requests are answered
    from ``answers`` (None: that request's response is lost)."""

    def __init__(self, end_at: float, answers: list):
        self.now, self.end_at, self.answers, self.requests = 0.0, end_at, answers, []

    @property
    def status(self):
        from action_msgs.msg import GoalStatus

        return GoalStatus.STATUS_ABORTED if self.now >= self.end_at else GoalStatus.STATUS_EXECUTING

    def get_result_async(self):
        self.requests.append(_Future())
        return self.requests[-1]

    def spin(self, node, future, timeout):
        self.now += timeout
        if self.now >= self.end_at:
            for request, answer in zip(self.requests, self.answers, strict=False):
                request.value = request.value or answer


def test_a_lost_result_is_asked_for_again_then_reported_not_waited_for_forever():
    from step_planner.ros.send import RESULT_AFTER_END_S, wait_result

    answered = _Handle(end_at=2.0, answers=["result"])
    assert wait_result(None, answered, spin=answered.spin, clock=lambda: answered.now) == "result"
    assert len(answered.requests) == 1 and answered.now < 2.5

    second = _Handle(end_at=2.0, answers=[None, "result"])  # the first response is lost
    assert wait_result(None, second, spin=second.spin, clock=lambda: second.now) == "result"
    assert len(second.requests) == 2

    lost = _Handle(end_at=2.0, answers=[None, None])
    assert wait_result(None, lost, spin=lost.spin, clock=lambda: lost.now) is None
    assert len(lost.requests) == 2 and lost.now <= 2.0 + 2 * RESULT_AFTER_END_S + 0.5


@pytest.mark.parametrize("while_in", ["the spin", "a callback"])
def test_a_ctrl_c_is_raised_between_spins_whether_it_came_during_a_wait_or_a_callback(while_in, monkeypatch):
    """send's SIGINT handler only notes the Ctrl-C and the spin loop raises it (a KeyboardInterrupt raised by
    Python's handler inside a callback rclpy runs, or a finalizer, can be lost: a CI run's Ctrl-C did not cancel its
    goal). Real SIGINTs to this process, one while spin_once waits and one while a subscription callback runs."""
    import signal
    import threading
    import time

    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.signals import SignalHandlerOptions
    from std_msgs.msg import String

    from step_planner.ros import send

    context = rclpy.Context()
    rclpy.init(context=context, signal_handler_options=SignalHandlerOptions.NO)
    previous = signal.signal(signal.SIGINT, send._on_sigint)
    node = rclpy.create_node("ctrl_c_probe", context=context)
    seen = []

    def callback(msg: String) -> None:  # the signal arrives here, mid-callback, and the callback goes on
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)
        seen.append(msg.data)

    node.create_subscription(String, "ctrl_c_probe", callback if while_in == "a callback" else lambda _m: None, 10)
    publisher = node.create_publisher(String, "ctrl_c_probe", 10)

    class Never:
        def done(self) -> bool:
            return False

    if while_in == "the spin":
        threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    else:
        threading.Timer(0.3, lambda: publisher.publish(String(data="x"))).start()
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    monkeypatch.setattr(rclpy, "spin_once", lambda _node, timeout_sec=None: executor.spin_once(timeout_sec))
    started = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            send._spin_until(node, Never(), timeout=10.0)
        assert time.monotonic() - started < 5.0
        assert seen == (["x"] if while_in == "a callback" else []), "the callback was cut short"
    finally:
        signal.signal(signal.SIGINT, previous)
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown(context=context)
