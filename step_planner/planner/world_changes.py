"""What a finished subtree changed in the world: facts for summaries and self-revision.

HiAgent collapses a finished subgoal into a one-line summary with a met / not-met flag; TDP
writes what a finished sub-task learned into the pending siblings. Both need the same thing:
the difference between the observed world before and after the subtree, in words.
"""

from __future__ import annotations

from step_planner.domain.world import GRIPPER, WorldState


def world_facts(before: WorldState, after: WorldState) -> list[str]:
    """Sentences for what changed between two observed views (newly seen objects first)."""
    facts: list[str] = []
    for name, obj in after.objects.items():
        if name not in before.objects:
            facts.append(f"{name} was found at {obj.location}")
    for name, obj in after.objects.items():
        old = before.objects.get(name)
        if old is not None and old.location != obj.location:
            where = "in the gripper" if obj.location == GRIPPER else f"at {obj.location}"
            facts.append(f"{name} is now {where}")
    for name, place in after.places.items():
        old_place = before.places.get(name)
        if old_place is not None and place.openable and old_place.is_open != place.is_open:
            facts.append(f"{name} is now {'open' if place.is_open else 'closed'}")
    return facts


def summarize(met: bool, facts: list[str], actions: int, failure: str = "") -> str:
    """``met: tape is now at drawer (2 actions)`` / ``not met: GRASP_FAILED ...``."""
    head = "met" if met else "not met"
    body = "; ".join(facts) if facts else "no visible change"
    text = f"{head}: {body} ({actions} action{'s' if actions != 1 else ''})"
    if failure and not met:
        text += f"; {failure}"
    return text[:300]


def revise_pending(pending: list[str], facts: list[str]) -> list[str]:
    """Annotate planned-but-not-started children with facts about the objects they name."""
    revised = []
    for item in pending:
        base = item.split(" [learned:", 1)[0]
        words = set(base.lower().replace("(", " ").replace(")", " ").replace(",", " ").replace("=", " ").split())
        notes = [f for f in facts if f.split(" ", 1)[0] in words]
        revised.append(f"{base} [learned: {'; '.join(notes)}]" if notes else item)
    return revised
