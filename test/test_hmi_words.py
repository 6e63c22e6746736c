"""The page's progress and outcome in sentences (step_planner/hmi/words.py), and the state carrying them and the
table's picture to the page, without ROS or a browser."""

from __future__ import annotations

import json

import pytest
from conftest import CONFIG

from step_planner.domain.scene import load_scene
from step_planner.hmi import words
from step_planner.hmi.session import HmiState
from step_planner.viz.scene_markers import MarkerModel

DRAWER_FACTS = [{"text": "in(tape, drawer)", "holds": True, "words": "the tape is in the drawer"},
                {"text": "in(screwdriver, drawer)", "holds": True, "words": "the screwdriver is in the drawer"},
                {"text": "closed(drawer)", "holds": True, "words": "the drawer is closed"}]


def tree(*prims: tuple[str, str], active: int | None = None) -> dict:
    nodes = [{"id": 0, "text": "put them away", "status": "executing", "primitive": "", "is_active": False}]
    for k, (call, status) in enumerate(prims, start=1):
        nodes.append({"id": k, "text": call, "status": status, "primitive": call, "is_active": k == active})
    return {"nodes": nodes, "root_id": 0}


@pytest.mark.parametrize(("call", "said"), [
    ("pick(object=tape)", "picking up the tape"),
    ("pick(tape)", "picking up the tape"),
    ("place(object=red_block, target=tray)", "putting the red block on the tray"),
    ("place(object=tape, target=drawer)", "putting the tape in the drawer"),
    ("place(object=tape, target=blue_bin)", "putting the tape in the blue bin"),
    ("open_drawer(drawer=top_drawer)", "opening the top drawer"),
    ("close_drawer(drawer=drawer)", "closing the drawer"),
    ("push(object=cup, direction=left)", "pushing the cup left"),
    ("move_to(target=home)", "moving to the home"),
    ("home()", "going back to the ready pose"),
    ("wave(hand=left)", "running wave"),
])
def test_each_primitive_in_words(call, said):
    assert words.doing(call) == said


def test_progress_says_the_step_of_about_how_many_and_what_it_waits_for():
    fb = {"leaves_done": 2, "conditions_met": 1, "conditions_total": 3, "waiting_for": "", "readings": [],
          "active_node_id": 4, "active_node_depth": 2}
    t = tree(("open_drawer(drawer=drawer)", "succeeded"), ("pick(object=screwdriver)", "succeeded"),
             ("pick(object=tape)", "executing"), ("place(object=tape, target=drawer)", "pending"),
             ("close_drawer(drawer=drawer)", "pending"), ("home()", "pending"), active=3)
    lines = words.progress(fb, t)
    assert lines[0] == "Picking up the tape, step 3 of about 6."
    assert "1 of 3 goal facts hold now." in lines
    assert not any(key in " ".join(lines) for key in ("active_node", "leaves_done", "readings", "[]", "-1"))
    asking = words.progress({**fb, "waiting_for": "question", "question": "Which tape?"}, t,
                            {"question": "Which tape?"})
    assert asking[0] == "Waiting for your answer: Which tape?"
    confirming = words.progress({**fb, "waiting_for": "goal_confirmation"}, None, {"goal_confirmation": "x"})
    assert confirming[0].startswith("Waiting for you to confirm the goal")
    assert words.progress({}, None) == []  # before any goal: nothing said


def test_readings_in_words():
    fb = {"readings": ["'the tools' -> screwdriver, chisel", "'the blue block' -> blue_block_4, from your answer "
                       "'the one on the red tray'"]}
    lines = words.progress(fb, None, running=False)
    assert "Read as: 'the tools' → screwdriver, chisel" in lines
    assert "Read as: 'the blue block' → blue block 4 (from your answer 'the one on the red tray')" in lines


def test_outcomes_first_line_for_a_person_with_the_detail_below():
    done = words.outcome({"status": "SUCCEEDED", "success": True, "error": "NONE", "error_msg": "", "verified": True,
                          "conditions": DRAWER_FACTS, "executed_primitives": []})
    assert done["headline"] == "Done: the tape and the screwdriver are in the drawer, which is closed"
    assert done["tone"] == "done" and done["detail"] == ["status SUCCEEDED, error NONE"]
    miss = ("no recording 3fa9c0d1e2b4.json in /home/x/config/replay/offline for the request whose last user message "
            "starts 'Instruction' (offline answers cover only the instructions in /home/x/config/demo_tasks.yaml; "
            "for others, use a real LLM endpoint)")
    offline = words.outcome({"status": "ABORTED", "success": False, "error": "LLM_UNAVAILABLE", "error_msg": miss,
                             "verified": False, "conditions": [], "executed_primitives": []})
    assert offline["headline"].startswith("Stopped: I have no offline answer for this instruction")
    assert "3fa9c0d1e2b4" not in offline["headline"] and "/home/x" not in offline["headline"]
    assert miss in offline["detail"]  # the engineer's detail, kept whole below
    down = words.outcome({"status": "ABORTED", "success": False, "error": "LLM_UNAVAILABLE",
                          "error_msg": "Connection refused (http://127.0.0.1:9/v1)", "verified": False})
    assert down["headline"] == "Stopped: I could not reach the endpoint" and down["tone"] == "stopped"
    canceled = words.outcome({"status": "CANCELED", "error": "CANCELED", "error_msg": "canceled by the client",
                              "success": False, "conditions": [DRAWER_FACTS[0], {**DRAWER_FACTS[2], "holds": False}]})
    assert canceled["headline"] == "Stopped: you cancelled the goal. Still true: the tape is in the drawer"
    failed = words.outcome({"status": "ABORTED", "error": "EXECUTION_FAILED", "error_msg": "grasp slipped",
                            "success": False, "executed_primitives": ["pick(object=tape) -> SUCCESS",
                                                                      "place(object=tape, target=drawer) -> FAILED"]})
    assert failed["headline"] == "Stopped: the arm could not finish putting the tape in the drawer"
    lost = words.outcome({"status": "LOST", "error": "LOST", "error_msg": "went away", "success": False})
    assert lost["headline"] == "Lost: the planner node went away"
    assert words.outcome(None) is None


def test_the_state_carries_the_picture_and_the_words():
    state = HmiState()
    changes = []
    state.on_change = lambda: changes.append(state.version)
    model = MarkerModel()
    model.reset(load_scene(CONFIG / "scenes" / "drawer_desk.yaml"))
    state.on_scene(json.dumps(model.snapshot()))
    snap = state.snapshot()
    assert 'data-object="tape"' in snap["picture"] and snap["picture"].startswith("<svg")
    assert changes == [1]
    state.on_scene(json.dumps(model.snapshot()))  # the same picture again: no push
    state.on_scene("{not json")  # unreadable: the last picture stays
    state.on_scene(json.dumps({"places": "nonsense"}))
    assert state.snapshot()["picture"] == snap["picture"] and changes == [1]
    state.begin("put the tape in the drawer")
    state.on_feedback("g", {"leaves_done": 0, "waiting_for": "question", "question": "Which one?"})
    assert state.snapshot()["words"]["progress"][0] == "Waiting for your answer: Which one?"
    state.accepted("g")
    state.on_result("g", {"status": "SUCCEEDED", "success": True, "error": "NONE", "verified": True,
                          "conditions": DRAWER_FACTS[:1]})
    assert state.snapshot()["words"]["outcome"]["headline"] == "Done: the tape is in the drawer"
