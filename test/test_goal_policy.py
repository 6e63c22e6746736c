"""The goal arbiter's three policies, with plain threads (no ROS)."""

from __future__ import annotations

import threading

import pytest

from step_planner.ros.goal_policy import GoalArbiter, GoalPolicy, Ticket


def test_first_goal_runs_at_once_and_the_arm_is_free_after_finish():
    arbiter = GoalArbiter("reject")
    a = Ticket("a")
    assert arbiter.admit(a).admitted and arbiter.wait_turn(a)
    arbiter.finish(a)
    assert arbiter.running is None and arbiter.admit(Ticket("b")).admitted


def test_reject_says_which_goal_is_running():
    arbiter = GoalArbiter(GoalPolicy.REJECT)
    arbiter.admit(Ticket("a"))
    admission = arbiter.admit(Ticket("b"))
    assert not admission.admitted and "busy with goal a" in admission.reason


def test_queue_runs_in_arrival_order_and_bounds_the_line():
    arbiter = GoalArbiter("queue", max_queue=2)
    a, b, c, d = (Ticket(x) for x in "abcd")
    assert all(arbiter.admit(t).admitted for t in (a, b, c))
    assert not arbiter.admit(d).admitted
    order: list[str] = []

    def run(t: Ticket) -> None:
        if arbiter.wait_turn(t):
            order.append(t.goal_id)
            arbiter.finish(t)

    threads = [threading.Thread(target=run, args=(t,)) for t in (c, b)]
    for th in threads:
        th.start()
    order.append("a")
    arbiter.finish(a)
    for th in threads:
        th.join(5)
    assert order == ["a", "b", "c"]


def test_a_queued_goal_canceled_while_waiting_gives_up_its_place():
    arbiter = GoalArbiter("queue")
    a, b = Ticket("a"), Ticket("b")
    arbiter.admit(a)
    arbiter.admit(b)
    b.cancel.set()
    assert arbiter.wait_turn(b) is False and arbiter.waiting == []
    assert b.cancel_reason == "canceled by the client"


def test_preempt_cancels_the_running_and_waiting_goals_and_runs_the_newest():
    arbiter = GoalArbiter("preempt")
    a, b, c = Ticket("a"), Ticket("b"), Ticket("c")
    arbiter.admit(a)
    arbiter.admit(b)
    arbiter.admit(c)
    assert a.cancel.is_set() and b.cancel.is_set() and not c.cancel.is_set()
    assert a.cancel_reason == "preempted by goal c" and b.cancel_reason == "preempted by goal c"
    assert arbiter.wait_turn(b) is False
    arbiter.finish(a)
    assert arbiter.running is c


def test_unknown_policy_is_named():
    with pytest.raises(ValueError, match="reject, preempt, queue"):
        GoalArbiter("lifo")
