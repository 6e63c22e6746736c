"""Semantics of the switchable features: control flow, working memory, plan-ahead, self-revision,
summaries (episodic memory, which loads the real MiniLM model, is in test_episodic_memory.py)."""

from __future__ import annotations

from conftest import FEEDBACK, ScriptedLLM, children_so_far, section, shipped_config

from step_planner.execution.base import ExecCode
from step_planner.execution.symbolic import SymbolicExecutor
from step_planner.planner.config import PlannerConfig
from step_planner.planner.result import GoalError
from step_planner.planner.runner import run_goal
from step_planner.planner.world_changes import revise_pending, world_facts


def run(library, world, answer, features, failures=None, **budget):
    """STEP's text style (profile step without verify_done) with ``features`` switched on."""
    executor = SymbolicExecutor(library, world, failures=failures)
    llm = ScriptedLLM(answer)
    profile = "step-verify_done" + "".join(f"+{f}" for f in features)
    result = run_goal("get something in hand", library=library, executor=executor, llm=llm,
                      config=shipped_config(profile=profile, require_verified_success=False, **budget))
    return result, llm, executor


def scripted_children(children, control):
    """Propose ``children`` in order under ``control``, then say done."""

    def answer(purpose, user):
        if purpose == "termination":
            return {"verdict": "decompose"}
        n = len(children_so_far(user))
        if n < len(children):
            return {"done": False, "subgoal": children[n], "control": control}
        return {"done": True}

    return answer


def test_fallback_stops_at_the_first_success(library, drawer_world):
    answer = scripted_children(["pick(tape)", "pick(cup)", "pick(red_block)"], "fallback")
    result, _, ex = run(library, drawer_world, answer, ["control_flow"],
                        failures={"pick(object=tape)": ExecCode.GRASP_FAILED})
    assert result.success, result.message
    assert [str(c) for c, _ in result.executed] == ["pick(object=tape)", "pick(object=cup)"]
    assert result.tree["nodes"][0]["control"] == "fallback"


def test_fallback_fails_when_no_alternative_succeeds(library, drawer_world):
    answer = scripted_children(["pick(tape)"], "fallback")
    result, _, _ = run(library, drawer_world, answer, ["control_flow"],
                       failures={"pick(object=tape)": ExecCode.GRASP_FAILED})
    assert not result.success and "no alternative succeeded" in result.message


def test_parallel_runs_all_and_aggregates(library, drawer_world):
    answer = scripted_children(["home()", "pick(tape)", "move_to(home)"], "parallel")
    result, _, _ = run(library, drawer_world, answer, ["control_flow"],
                       failures={"pick(object=tape)": ExecCode.GRASP_FAILED})
    assert [str(c) for c, _ in result.executed] == ["home()", "pick(object=tape)", "move_to(target=home)"]
    assert not result.success and "1 parallel children failed" in result.message


def test_sequence_replans_after_a_failure(library, drawer_world):
    answer = scripted_children(["pick(tape)", "pick(cup)"], "sequence")
    result, llm, _ = run(library, drawer_world, answer, ["control_flow"],
                         failures={"pick(object=tape)": ExecCode.GRASP_FAILED})
    # after the failure the next proposal carries the failure as re-plan feedback
    feedback = [section(u, FEEDBACK) for p, u in llm.prompts if p == "decomposition"]
    assert any("'pick(tape)' was executed and failed: GRASP_FAILED" in f for f in feedback)


def test_control_flow_off_ignores_the_field(library, drawer_world):
    answer = scripted_children(["pick(tape)", "pick(cup)"], "fallback")
    result, _, _ = run(library, drawer_world, answer, [], failures={"pick(object=tape)": ExecCode.GRASP_FAILED})
    assert result.tree["nodes"][0]["control"] == "sequence"


def test_working_memory_remembers_hidden_objects(library, drawer_world):
    steps = ["open_drawer(drawer)", "pick(tape)", "place(tape, drawer)", "close_drawer(drawer)", "home()"]
    answer = scripted_children(steps, "sequence")
    result, llm, _ = run(library, drawer_world, answer, ["working_memory"])
    assert result.success
    last = llm.prompts[-1][1]
    memory = section(last, "Working memory (where objects were last seen)")
    assert "tape: last seen at drawer (not visible now)" in memory
    # the observation itself lists the tape only among what is not visible now (the planner's belief)
    observation = section(last, "Current observation")
    assert "object tape" not in observation.split("Not visible now")[0]
    # off: no such section
    _, llm_off, _ = run(library, drawer_world, scripted_children(steps, "sequence"), [])
    assert "Working memory" not in llm_off.prompts[-1][1]


def test_plan_ahead_executes_valid_planned_calls_without_llm_calls(library, drawer_world):
    plan = ["open_drawer(drawer)", "pick(tape)", "place(tape, drawer)", "close_drawer(drawer)"]

    def answer(purpose, user):
        n = len(children_so_far(user))
        return {"done": True} if n >= len(plan) else {"done": False, "subgoal": plan[n], "plan": plan[n:]}

    on, llm_on, _ = run(library, drawer_world, answer, ["plan_ahead"])
    off, llm_off, _ = run(library, drawer_world, answer, [])
    assert on.success and off.success
    assert len(on.executed) == len(off.executed) == 4
    assert on.usage["llm_calls"] == 2 and off.usage["llm_calls"] == 5  # first plan + final done vs one per child
    assert "Remaining plan" in llm_on.prompts[-1][1] or "Plan ahead" in llm_on.prompts[-1][1]


def test_plan_ahead_refines_after_a_failure(library, drawer_world):
    plan = ["pick(tape)", "place(tape, tray)"]
    seen = []

    def answer(purpose, user):
        seen.append(user)
        n = len([c for c in children_so_far(user) if c.endswith("succeeded")])
        return {"done": True} if n >= 2 else {"done": False, "subgoal": plan[n], "plan": plan[n:]}

    result, _, _ = run(library, drawer_world, answer, ["plan_ahead"],
                       failures={"pick(object=tape)": ExecCode.GRASP_FAILED})
    assert result.success
    # the failed head stays in the remaining plan and the LLM is asked again with the failure
    refine = [u for u in seen if "GRASP_FAILED" in u]
    assert refine and "1. pick(tape)" in section(refine[0], "Remaining plan (from your previous answer)")


def test_self_revision_writes_discoveries_into_pending_siblings():
    assert revise_pending(["pick(screwdriver)", "place(cup, tray)"], ["screwdriver was found at drawer"]) == [
        "pick(screwdriver) [learned: screwdriver was found at drawer]", "place(cup, tray)"]


def test_world_facts(library, drawer_world):
    before = drawer_world.observed()
    drawer_world.objects["cup"].location = "drawer"
    hidden = drawer_world.observed()
    drawer_world.places["drawer"].is_open = True
    facts = world_facts(hidden, drawer_world.observed())
    assert facts == ["cup was found at drawer", "drawer is now open"]
    assert world_facts(before, before) == []


def test_self_revision_prompt_section(library, drawer_world):
    drawer_world.objects["screwdriver"].location = "drawer"
    answer = scripted_children(["open_drawer(drawer)", "pick(screwdriver)"], "sequence")
    result, llm, _ = run(library, drawer_world, answer, ["self_revision"])
    assert result.success
    learned = section(llm.prompts[1][1], "Learned from finished children")
    assert "screwdriver was found at drawer" in learned and "drawer is now open" in learned


def test_summaries_collapse_resolved_rejections_and_summarize_subtrees(library, drawer_world):
    def answer(purpose, user):
        if purpose == "termination":
            return {"verdict": "decompose"}
        parent = section(user, "Subgoal to decompose")
        kids = children_so_far(user)
        if parent == "put the tape in the tray":
            done = [k for k in kids if k.startswith(("pick(tape)", "place(tape, tray)")) and "succeeded" in k]
            return {"done": True} if len(done) == 2 else {"done": False, "subgoal": ["pick(tape)",
                                                                                      "place(tape, tray)"][len(done)]}
        succeeded = [k for k in kids if "succeeded" in k]
        if not succeeded and len(kids) < 2:
            return {"done": False, "subgoal": "pick(hammer)"}  # rejected twice: hallucinated object
        if not succeeded:
            return {"done": False, "subgoal": "put the tape in the tray"}
        return {"done": True}

    result, llm, _ = run(library, drawer_world, answer, ["summaries"])
    assert result.success, result.message
    child = next(n for n in result.tree["nodes"] if n["text"] == "put the tape in the tray")
    assert child["summary"] == "met: tape is now at tray (2 actions)"
    final = section(llm.prompts[-1][1], "Children of this subgoal so far (in order, with outcomes)")
    assert "pick(hammer)" not in final and "(after 2 rejected proposals)" in final
    assert "met: " in final
    _, llm_off, _ = run(library, drawer_world, answer, [])
    final_off = section(llm_off.prompts[-1][1], "Children of this subgoal so far (in order, with outcomes)")
    assert final_off.count("pick(hammer)") == 2


def test_unknown_feature_is_a_config_error():
    import pytest

    from step_planner.planner.config import ConfigError

    with pytest.raises(ConfigError, match="unknown feature 'telepathy'"):
        PlannerConfig.from_dict({"features": ["telepathy"]})
    assert GoalError.NONE.value == "NONE"


def test_verify_done_catches_a_done_one_step_early(library, drawer_world):
    steps = ["pick(tape)", "place(tape, tray)"]

    def answer(purpose, user):
        succeeded = [c for c in children_so_far(user) if c.endswith("succeeded")]
        if purpose == "verification":  # the second opinion looks at what actually happened
            done = section(user, "Children carried out for it (in order, with outcomes)").count("-> succeeded")
            ok = done >= len(steps)
            return {"achieved": ok, "missing": "" if ok else "the tape is not on the tray"}
        if len(succeeded) == 1 and not section(user, FEEDBACK).startswith("- "):
            return {"done": True}  # the missing-step mistake: done after the pick
        if len(succeeded) >= len(steps):
            return {"done": True}
        return {"done": False, "subgoal": steps[len(succeeded)]}

    on, llm_on, ex_on = run(library, drawer_world, answer, ["verify_done"])
    assert on.success and ex_on.observe().objects["tape"].location == "tray"
    feedback = [section(u, FEEDBACK) for p, u in llm_on.prompts if p == "decomposition"]
    assert any("not achieved yet: the tape is not on the tray" in f for f in feedback)
    off, _, ex_off = run(library, drawer_world, answer, [])
    assert off.success and ex_off.observe().objects["tape"].location == "gripper"  # trusted the early done
