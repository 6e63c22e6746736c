"""Grounded conditions: beliefs vs observation, every rejection reason, done checked not asked,
`verified` on every exit path, and the congruence challenge."""

from __future__ import annotations

import threading

import pytest
from conftest import (
    DRAWER_GOAL,
    DRAWER_TASK,
    FEEDBACK,
    GROUNDED_PLANS,
    ScriptedLLM,
    grounded_plan,
    parent_of,
    section,
    shipped_config,
)

from step_planner.domain.conditions import parse_fact
from step_planner.domain.primitives import PrimitiveCall
from step_planner.domain.transitions import apply_call
from step_planner.execution.base import Outcome
from step_planner.execution.symbolic import SymbolicExecutor
from step_planner.llm.errors import LLMUnavailable
from step_planner.planner.beliefs import Beliefs
from step_planner.planner.grounding import check_goal, check_subgoal_conditions
from step_planner.planner.kinds import JudgedFrom
from step_planner.planner.result import GoalError
from step_planner.planner.runner import run_goal


def do(library, world, *calls):
    for text in calls:
        apply_call(library.parse_call_text(text), library, world)


# ---- beliefs ---------------------------------------------------------------------------------
def test_an_object_put_into_a_drawer_that_closes_is_believed_there(library, drawer_world):
    beliefs = Beliefs(drawer_world.observed())
    do(library, drawer_world, "open_drawer(drawer)", "pick(tape)", "place(tape, drawer)")
    beliefs.update(drawer_world.observed())
    assert beliefs.judge(parse_fact("in(tape, drawer)")) == (True, JudgedFrom.OBSERVATION)
    do(library, drawer_world, "close_drawer(drawer)")
    beliefs.update(drawer_world.observed())
    assert "tape" not in beliefs.observed.objects
    assert beliefs.judge(parse_fact("in(tape, drawer)")) == (True, JudgedFrom.BELIEF)
    assert "tape [tape roll]: in drawer (not visible now" in beliefs.describe_believed()


def test_a_belief_ends_when_the_drawer_opens_and_the_object_is_gone(library, drawer_world):
    beliefs = Beliefs(drawer_world.observed())
    do(library, drawer_world, "open_drawer(drawer)", "pick(tape)", "place(tape, drawer)", "close_drawer(drawer)")
    beliefs.update(drawer_world.observed())
    drawer_world.objects["tape"].location = "tray"  # someone took it out while the drawer was closed
    drawer_world.places["drawer"].is_open = True
    beliefs.update(drawer_world.observed())
    assert beliefs.judge(parse_fact("in(tape, drawer)")) == (False, JudgedFrom.OBSERVATION)
    assert beliefs.believed == set()


def test_an_object_never_seen_is_unknown(drawer_world):
    drawer_world.objects["cup"].location = "drawer"  # hidden from the start
    beliefs = Beliefs(drawer_world.observed())
    assert beliefs.judge(parse_fact("in(cup, drawer)")) == (False, JudgedFrom.UNKNOWN)
    assert beliefs.judge(parse_fact("not in(cup, drawer)")) == (False, JudgedFrom.UNKNOWN)


# ---- the instruction's goal ------------------------------------------------------------------
@pytest.mark.parametrize("instruction, goal, problem", [
    (DRAWER_TASK, DRAWER_GOAL, ""),
    ("Put the red block on the tray.", ["at(red_block, tray)"], ""),
    ("Pick up the cup and hold it for me.", ["holding(cup)"], ""),
    ("Open the drawer, please.", ["open(drawer)"], ""),
    ("Put the red and the blue block in the tray.", ["in(red_block, tray)"], ""),  # no blue block here
    ("Put the red block on the tray.", [], "state the instruction's goal"),
    ("Put the red block on the tray.", ["at(hammer, tray)"], "there is no 'hammer'"),
    ("Put the red block on the tray.", ["in(red_block, table)"], "table is a surface"),
    ("Put the red block on the tray.", ["on red_block tray"], "cannot read"),
    ("Put the red block on the tray.", ["at(red_block, tray)", "closed(drawer)"],
     "which the instruction does not mention"),
    ("Put the red block on the tray.", ["at(red_block, drawer)"],
     "the words name 'the tray' as the place for 'the red block', not drawer"),
    ("Put the tape in the drawer.", ["holding(tape)", "closed(drawer)"], "does not ask to end with it"),
    ("Put the tape in the drawer.", ["in(tape, drawer)", "open(drawer)"], "does not ask to end with it"),
    (DRAWER_TASK, ["in(tape, drawer)", "closed(drawer)"], "names screwdriver but no condition"),
    (DRAWER_TASK, ["in(tape, drawer)", "not on(screwdriver, table)"], "say where screwdriver must end up"),
    ("Put the tape in the drawer and close it.", ["in(tape, drawer)"],
     "the instruction says 'close' but no goal fact is closed(...)"),
    ("Put the tape in the drawer and shut the drawer.", ["in(tape, drawer)", "closed(drawer)"], ""),
    ("Take the tape out of the closed drawer onto the table.", ["on(tape, table)"], ""),  # 'closed' asks nothing
])
def test_goal_conditions_must_be_about_the_instruction(library, drawer_world, instruction, goal, problem):
    checked = check_goal(goal, instruction, Beliefs(drawer_world.observed()), library)
    if problem:
        assert any(problem in p for p in checked.problems), checked.problems
        assert not checked.ok
    else:
        assert checked.ok, checked.problems


def test_a_hidden_object_the_instruction_names_may_be_in_the_goal(library, drawer_world):
    drawer_world.objects["screwdriver"].location = "drawer"
    drawer_world.objects["screwdriver"].name = "screwdriver"
    checked = check_goal(["on(screwdriver, table)"], "Find the screwdriver and lay it on the table.",
                         Beliefs(drawer_world.observed()), library)
    assert checked.ok, checked.problems
    invented = check_goal(["on(stapler, table)"], "Find the screwdriver and lay it on the table.",
                          Beliefs(drawer_world.observed()), library)
    assert any("no 'stapler'" in p for p in invented.problems)


def test_subgoal_conditions_are_required_valid_and_not_already_true(drawer_world):
    beliefs = Beliefs(drawer_world.observed())
    assert "needs success_when" in check_subgoal_conditions([], "put the tape away", set(), beliefs).problems[0]
    assert "no 'hammer'" in check_subgoal_conditions(["in(hammer, drawer)"], "x", set(), beliefs).problems[0]
    already = check_subgoal_conditions(["on(tape, table)"], "leave the tape", set(), beliefs)
    assert "already achieved" in already.problems[0]
    assert check_subgoal_conditions(["in(tape, drawer)"], "put the tape away", set(), beliefs).ok


# ---- the loop: done is checked, not asked --------------------------------------------------------
def run(library, world, answer, executor=None, **changes):
    llm = ScriptedLLM(answer)
    executor = executor or SymbolicExecutor(library, world)
    config = shipped_config(**changes)
    return run_goal(DRAWER_TASK, library=library, executor=executor, llm=llm, config=config), llm


def test_a_done_claim_whose_facts_do_not_hold_is_feedback_naming_them(library, drawer_world):
    base = grounded_plan(GROUNDED_PLANS, DRAWER_GOAL)
    claimed = {"n": 0}

    def answer(purpose, user):
        if parent_of(user) == DRAWER_TASK and "succeeded" in section(user, "Children of this subgoal so far "
                                                                           "(in order, with outcomes)") \
                and not claimed["n"]:
            claimed["n"] += 1
            return {"goal": DRAWER_GOAL, "done": True, "next": None}  # 'done' after opening the drawer
        return base(purpose, user)

    result, llm = run(library, drawer_world, answer, profile="grounded-plan_ahead")
    feedback = [section(u, FEEDBACK) for _, u in llm.prompts]
    assert any("you said 'put the tape and the screwdriver in the drawer' is done, but these facts do not hold"
               in f and "in(tape, drawer) (tape is on table, not in drawer)" in f for f in feedback)
    assert result.success and result.verified


def test_a_careless_model_that_always_says_done_never_succeeds(library, drawer_world):
    result, llm = run(library, drawer_world, lambda p, u: {"goal": DRAWER_GOAL, "done": True, "next": None})
    assert not result.success and result.error is GoalError.PLANNING_FAILED
    assert result.executed == [] and result.verified
    assert [c["holds"] for c in result.conditions] == [False, False, True]
    assert len(llm.prompts) == 4  # the first answer and three re-plans, then the root gives up


def test_an_invalid_goal_is_asked_again_with_the_reason(library, drawer_world):
    base = grounded_plan(GROUNDED_PLANS, DRAWER_GOAL)
    answers = iter([{"goal": ["in(tape, drawer)", "holding(screwdriver)"], "next": None}])

    def answer(purpose, user):
        return next(answers, None) or base(purpose, user)

    result, llm = run(library, drawer_world, answer)
    assert "the goal you stated was not accepted" in section(llm.prompts[1][1], FEEDBACK)
    assert "holding(screwdriver)" in section(llm.prompts[1][1], FEEDBACK)
    assert result.success


def test_nothing_to_do_when_the_goal_already_holds(library, drawer_world):
    result, _ = run(library, drawer_world, lambda p, u: {"goal": ["closed(drawer)"], "next": None}, )
    # "put ... in the drawer" names tape and screwdriver: a goal without them is refused, not accepted
    assert result.error is GoalError.PLANNING_FAILED
    closed = run_goal("Close the drawer.", library=library, executor=SymbolicExecutor(library, drawer_world),
                      llm=ScriptedLLM(lambda p, u: {"goal": ["closed(drawer)"], "next": None}),
                      config=shipped_config())
    assert not closed.success and closed.error is GoalError.NOTHING_TO_DO
    assert closed.executed == [] and closed.verified and closed.conditions[0]["holds"]
    assert "already hold" in closed.message


def test_facts_that_held_all_along_are_not_a_success(library, drawer_world):
    """The tape was in the drawer from the start: opening the drawer shows it, nothing was done."""
    drawer_world.objects["tape"].location = "drawer"
    task = "Put the tape in the drawer."
    answers = {"n": 0}

    def answer(purpose, user):
        answers["n"] += 1
        return {"goal": ["in(tape, drawer)"],
                "next": {"subgoal": "open the drawer", "call": "open_drawer(drawer=drawer)", "success_when": []}}

    result = run_goal(task, library=library, executor=SymbolicExecutor(library, drawer_world),
                      llm=ScriptedLLM(answer), config=shipped_config())
    assert [str(c) for c, _ in result.executed] == ["open_drawer(drawer=drawer)"]
    assert not result.success and result.error is GoalError.NOTHING_TO_DO
    assert "held all along" in result.message


def test_a_client_stated_goal_is_used_and_the_model_is_not_asked_for_one(library, drawer_world):
    llm = ScriptedLLM(grounded_plan(GROUNDED_PLANS, []))
    result = run_goal(DRAWER_TASK, library=library, executor=SymbolicExecutor(library, drawer_world), llm=llm,
                      config=shipped_config(), goal=DRAWER_GOAL)
    assert result.success and result.verified
    assert result.tree["nodes"][0]["conditions_from"] == "client"
    assert all("goal" not in schema.model_fields for schema in llm.schemas)
    bad = run_goal(DRAWER_TASK, library=library, executor=SymbolicExecutor(library, drawer_world), llm=llm,
                   config=shipped_config(), goal=["in(hammer, drawer)"])
    assert bad.error is GoalError.INVALID_GOAL and "no 'hammer'" in bad.message and bad.executed == []


# ---- children ----------------------------------------------------------------------------------
def test_a_child_without_a_call_is_mapped_from_its_conditions(library, drawer_world):
    plans = dict(GROUNDED_PLANS)
    plans[DRAWER_TASK] = [("make the drawer open", None, ["open(drawer)"]), *GROUNDED_PLANS[DRAWER_TASK][1:]]
    result, llm = run(library, drawer_world, grounded_plan(plans, DRAWER_GOAL))
    node = next(n for n in result.tree["nodes"] if n["text"] == "make the drawer open")
    assert node["call"] == {"name": "open_drawer", "args": {"drawer": "drawer"}} and not node["children"]
    assert result.success


def test_a_child_whose_facts_already_hold_is_refused(library, drawer_world):
    plans = dict(GROUNDED_PLANS)
    plans[DRAWER_TASK] = [("keep the cup on the table", None, ["on(cup, table)"]), *GROUNDED_PLANS[DRAWER_TASK]]
    base = grounded_plan(plans, DRAWER_GOAL)

    def answer(purpose, user):
        if "already achieved" in section(user, FEEDBACK):
            plans[DRAWER_TASK] = GROUNDED_PLANS[DRAWER_TASK]
        return base(purpose, user)

    result, llm = run(library, drawer_world, answer, profile="grounded-plan_ahead")
    node = next(n for n in result.tree["nodes"] if n["text"] == "keep the cup on the table")
    assert node["status"] == "abandoned" and "already achieved" in node["verdicts"][-1]["reason"]
    assert result.success


def test_a_call_that_reports_success_but_leaves_its_effect_unobserved_fails(library, drawer_world):
    executor = SymbolicExecutor(library, drawer_world)
    inner = executor.execute

    def lying(call, cancel=None):
        if str(call) == "pick(object=tape)" and not getattr(lying, "done", False):
            lying.done = True
            return Outcome.ok("picked (it slipped away unnoticed)")  # the world is unchanged
        return inner(call, cancel)

    executor.execute = lying
    result, llm = run(library, drawer_world, grounded_plan(GROUNDED_PLANS, DRAWER_GOAL), executor=executor)
    first = next(n for n in result.tree["nodes"] if n["call"] == {"name": "pick", "args": {"object": "tape"}})
    assert first["status"] == "failed" and "reported success, but holding(tape)" in first["verdicts"][-1]["reason"]
    assert result.success  # re-planned: the second pick works


# ---- congruence --------------------------------------------------------------------------------
def test_an_irrelevant_feasible_call_is_challenged_and_runs_only_when_proposed_again(library, drawer_world):
    plans = dict(GROUNDED_PLANS)
    plans["put the tape in the drawer"] = [("move the cup", "pick(object=cup)", []),
                                           *GROUNDED_PLANS["put the tape in the drawer"]]
    result, llm = run(library, drawer_world, grounded_plan(plans, DRAWER_GOAL), profile="grounded-plan_ahead")
    cup = [n for n in result.tree["nodes"] if n["text"] == "move the cup"]
    assert cup[0]["status"] == "abandoned" and cup[0]["verdicts"][-1]["source"] == "congruence"
    assert "acts on nothing 'put the tape in the drawer' needs" in cup[0]["verdicts"][-1]["reason"]
    assert any("propose it again unchanged" in section(u, FEEDBACK) for _, u in llm.prompts)
    # the scripted model insists: proposed again, it runs (and the plan then fails on a full gripper)
    assert len(cup) >= 2 and cup[1]["status"] == "succeeded"
    assert "congruence challenge" in cup[1]["verdicts"][-1]["reason"]


def test_an_irrelevant_call_dropped_after_the_challenge_never_runs(library, drawer_world):
    plans = dict(GROUNDED_PLANS)
    plans["put the tape in the drawer"] = [("move the cup", "pick(object=cup)", []),
                                           *GROUNDED_PLANS["put the tape in the drawer"]]
    base = grounded_plan(plans, DRAWER_GOAL)

    def answer(purpose, user):
        if "propose it again unchanged" in section(user, FEEDBACK):
            plans["put the tape in the drawer"] = GROUNDED_PLANS["put the tape in the drawer"]
        return base(purpose, user)

    result, _ = run(library, drawer_world, answer, profile="grounded-plan_ahead")
    assert "pick(object=cup)" not in [str(c) for c, _ in result.executed]
    assert result.success


# ---- verified on every exit path -------------------------------------------------------------
class _Unavailable:
    def complete(self, messages, schema, purpose):
        raise LLMUnavailable("no route to host")


def _after_first_answer(error):
    """The first answer states the goal; the next call fails with ``error``."""
    base = grounded_plan(GROUNDED_PLANS, DRAWER_GOAL)
    calls = {"n": 0}

    def answer(purpose, user):
        calls["n"] += 1
        if calls["n"] > 1:
            raise error
        return base(purpose, user)

    return answer


@pytest.mark.parametrize("case", ["success", "planning_failed", "budget", "canceled", "llm_unavailable",
                                  "execution_failed", "nothing_to_do", "no_goal"])
def test_verified_is_set_on_every_exit_path(library, drawer_world, case):
    cancel = threading.Event()
    executor = SymbolicExecutor(library, drawer_world)
    answer = grounded_plan(GROUNDED_PLANS, DRAWER_GOAL)
    changes: dict = {"profile": "grounded-plan_ahead"}
    task = DRAWER_TASK
    on_step = None
    if case == "planning_failed":
        answer = lambda p, u: {"goal": DRAWER_GOAL, "done": True}  # noqa: E731
    elif case == "budget":
        changes.update(max_primitives=2, primitives_per_condition=0)
    elif case == "canceled":
        on_step = lambda c, o, w: cancel.set()  # noqa: E731
    elif case == "llm_unavailable":
        answer = _after_first_answer(LLMUnavailable("the endpoint went away"))
    elif case == "execution_failed":
        executor.execute = lambda call, cancel=None: (_ for _ in ()).throw(RuntimeError("driver crashed"))
        changes.update(max_replans_per_node=1)
    elif case == "nothing_to_do":
        task, answer = "Close the drawer.", lambda p, u: {"goal": ["closed(drawer)"]}
    elif case == "no_goal":
        answer = lambda p, u: {"goal": [], "next": None}  # noqa: E731
    result = run_goal(task, library=library, executor=executor, llm=ScriptedLLM(answer),
                      config=shipped_config(**changes), cancel=cancel, on_step=on_step)
    expected = {"success": GoalError.NONE, "planning_failed": GoalError.PLANNING_FAILED,
                "budget": GoalError.BUDGET_EXCEEDED, "canceled": GoalError.CANCELED,
                "llm_unavailable": GoalError.LLM_UNAVAILABLE, "execution_failed": GoalError.EXECUTION_FAILED,
                "nothing_to_do": GoalError.NOTHING_TO_DO, "no_goal": GoalError.PLANNING_FAILED}[case]
    assert result.error is expected, result.message
    assert result.success == (case == "success")
    if case == "no_goal":  # the goal was never stated: nothing to check
        assert not result.verified and result.conditions == []
    else:
        assert result.verified and result.conditions
        truth = [c["holds"] for c in result.conditions]
        assert truth == ([True] * 3 if case == "success" else truth)
    if case == "execution_failed":
        assert any("BACKEND_ERROR" in v["reason"] for n in result.tree["nodes"] for v in n["verdicts"]) or \
            "BACKEND_ERROR" in result.message


def test_an_endpoint_that_is_down_ends_unverified(library, drawer_world):
    result = run_goal(DRAWER_TASK, library=library, executor=SymbolicExecutor(library, drawer_world),
                      llm=_Unavailable(), config=shipped_config())
    assert result.error is GoalError.LLM_UNAVAILABLE and not result.verified and not result.success


def test_effects_of_a_call_become_its_conditions(library, drawer_world):
    result, _ = run(library, drawer_world, grounded_plan(GROUNDED_PLANS, DRAWER_GOAL))
    place = next(n for n in result.tree["nodes"] if n["call"] and n["call"]["name"] == "place")
    assert place["conditions_from"] == "effects"
    assert [c["text"] for c in place["conditions"]] == ["not holding(tape)", "at(tape, drawer)"]
    assert PrimitiveCall.make("pick", {"object": "tape"})  # the call type is unchanged


def test_whether_a_drawer_is_empty_is_unknown_until_its_inside_is_seen(library, drawer_world):
    beliefs = Beliefs(drawer_world.observed())
    empty = parse_fact("empty(drawer)")
    assert beliefs.judge(empty) == (False, JudgedFrom.UNKNOWN)  # closed, never opened
    do(library, drawer_world, "open_drawer(drawer)")
    beliefs.update(drawer_world.observed())
    assert beliefs.judge(empty) == (True, JudgedFrom.OBSERVATION)
    do(library, drawer_world, "close_drawer(drawer)")
    beliefs.update(drawer_world.observed())
    assert beliefs.judge(empty) == (True, JudgedFrom.BELIEF)  # seen empty, closed since: remembered, not seen
    do(library, drawer_world, "open_drawer(drawer)")
    for call in ("pick(tape)", "place(tape, drawer)", "close_drawer(drawer)"):  # an observation after each
        do(library, drawer_world, call)
        beliefs.update(drawer_world.observed())
    assert beliefs.judge(empty) == (False, JudgedFrom.BELIEF)  # the tape went in before it closed


def test_a_goal_may_keep_named_objects_where_they_are_when_the_instruction_says_so(library, drawer_world):
    beliefs = Beliefs(drawer_world.observed())
    leave = "Put the tape on the tray and leave the cup where it is."
    assert check_goal(["at(tape, tray)", "on(cup, table)"], leave, beliefs, library).ok
    moved = check_goal(["at(tape, tray)", "on(cup, table)"], "Put the tape and the cup on the tray.", beliefs,
                       library)
    assert any("the words name 'the tray' as the place for 'the cup', not table" in p for p in moved.problems)
    elsewhere = check_goal(["at(tape, tray)", "in(cup, drawer)"], leave, beliefs, library)  # not where it is
    assert any("the words name 'the tray' as the place, not drawer" in p for p in elsewhere.problems)


def test_profiles_without_conditions_size_their_budgets_by_what_the_instruction_mentions(library):
    from step_planner.domain.scene import scene_from_dict

    blocks = [{"name": f"block_{i}", "category": "block", "at": "table"} for i in range(10)]
    world = scene_from_dict({"places": [{"name": "table"}, {"name": "bin", "kind": "bin"}], "objects": blocks})
    plan = [f"{verb}(block_{i}{', bin' if verb == 'place' else ''})" for i in range(10) for verb in ("pick", "place")]

    def answer(purpose, user):
        done = sum(1 for line in section(user, "Children of this subgoal so far (in order, with outcomes)")
                   .splitlines() if line.endswith("succeeded"))
        return {"done": done == len(plan), "subgoal": plan[done] if done < len(plan) else None}

    result = run_goal("Put every block in the bin.", library=library, executor=SymbolicExecutor(library, world),
                      llm=ScriptedLLM(answer), config=shipped_config(profile="react", require_verified_success=False))
    assert result.success and len(result.executed) == 20  # 20 children, past the base of 8: 10 blocks mentioned
