"""A repeated request id is carried out once (the MuJoCo robot's ~/load_scene, asked again after a lost answer)."""

from __future__ import annotations

import threading
import time

from step_planner.ros.request_once import RequestOnce


def test_a_repeated_id_gets_the_first_answer_without_running_again():
    once, runs = RequestOnce(), []
    assert once.run("a", lambda: runs.append(1) or "first") == "first"
    assert once.run("a", lambda: runs.append(2) or "second") == "first"
    assert once.run("b", lambda: runs.append(3) or "third") == "third"
    assert runs == [1, 3]


def test_a_repeat_arriving_while_the_first_still_runs_waits_for_its_answer():
    once, runs, started = RequestOnce(), [], threading.Event()

    def slow() -> str:
        started.set()
        time.sleep(0.3)
        runs.append("slow")
        return "loaded"

    first = threading.Thread(target=lambda: once.run("x", slow))
    first.start()
    assert started.wait(5)
    assert once.run("x", lambda: runs.append("again") or "again") == "loaded"
    first.join()
    assert runs == ["slow"]
    assert once.run("y", slow, wait_s=0.0) == "loaded"  # a new id runs


def test_a_repeat_whose_first_is_not_done_in_time_gets_none_and_runs_nothing():
    once, release = RequestOnce(), threading.Event()
    first = threading.Thread(target=lambda: once.run("x", lambda: release.wait(5) and "late"))
    first.start()
    time.sleep(0.05)
    assert once.run("x", lambda: "again", wait_s=0.05) is None
    release.set()
    first.join()


def test_an_empty_id_always_runs_and_old_ids_are_forgotten():
    once, runs = RequestOnce(keep=2), []
    for _ in range(2):
        once.run("", lambda: runs.append("anon"))
    for key in ("a", "b", "c", "a"):
        once.run(key, lambda key=key: runs.append(key))
    assert runs == ["anon", "anon", "a", "b", "c", "a"]  # "a" fell out when "c" came
