"""Taking the instruction's goal: the facts that decide success, from the client, the model or the person.

A goal stated by the client (the action goal, ``--goal``) is checked for grammar and names only. A goal the
model states is checked against the instruction's words (``planner/grounding.py``); a refusal goes back to
the model as feedback, and every refusal rule has a bound (:class:`RefusalLoop`). A refusal only the person
can settle (which of several things is meant) is not sent back to the model: the person is asked, naming
the candidates. With ``confirm_goal`` the goal is shown to the person before anything moves: accepted,
corrected (checked like a client's goal) or refused.

Names for things not seen yet: a goal may name a hidden object provisionally (``old_sponge``); once looking
inside has shown what is there, the model restates the goal with the names it sees, checked against the
words of the provisional name or settled by the person, before anything is judged. An instruction about
"the thing in the drawer" may leave its goal for later, as long as nothing but opening is done until then.

A goal stated through a closed container (``empty(drawer)`` for "whatever the drawer holds goes in the bin")
is restated the same way once the drawer shows what it held: the model states a fact for each of those
things, and those facts are checked against the words like any goal (a place the words name decides where
they go). Until then the goal is not judged met; afterwards the restated facts are what is verified.

Each model answer that carries a goal ends as an :class:`Intake`: the goal is set and planning goes on with
the same answer, the goal changed and must be judged before anything is proposed, the goal was refused
(with the feedback for the model), or the goal waits for a look inside.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from step_planner.domain.conditions import Condition, describe_fact, parse_fact
from step_planner.domain.primitives import PrimitiveLibrary
from step_planner.planner.beliefs import Beliefs
from step_planner.planner.budget import Budget
from step_planner.planner.grounding import (
    RULE_CONTENTS,
    RULE_PROVISIONAL,
    CheckedConditions,
    Reference,
    check_goal,
)
from step_planner.planner.person import Ask, AskKind, PersonStop, Questions, ReplyKind
from step_planner.planner.resolution import DESTINATION
from step_planner.planner.result import GoalError
from step_planner.planner.tree import ConditionRecord, SubgoalTree, render_reading

GOAL_REFUSALS_PER_RULE = 3  # goals one rule may refuse in a goal (a repeated refusal text counts twice)


class IntakeKind(str, Enum):
    SET = "set"  # the goal is set: planning goes on with the same answer
    RECHECK = "recheck"  # the goal changed (stated, corrected, or the person answered): judge it, then propose
    REFUSED = "refused"  # ``feedback`` goes back to the model
    WAITING = "waiting"  # no goal yet: it is stated once a closed drawer has been looked into


@dataclass(frozen=True)
class Intake:
    """What became of the goal in one model answer."""

    kind: IntakeKind
    feedback: str = ""


RECHECK = Intake(IntakeKind.RECHECK)


class ClientGoalError(ValueError):
    """A goal stated by the client (the action goal, ``--goal``) names unknown things or does not parse."""


class RefusalLoop(Exception):
    """The model keeps stating goals one rule refuses: re-reading is not fixing it."""


class GoalIntake:
    """The root's facts: who stated them, how they were checked, and what held when they were stated.

    ``judge`` re-judges a node's conditions on the believed world (the planner's, so every judgement of a
    node goes through one place)."""

    def __init__(self, tree: SubgoalTree, beliefs: Beliefs, library: PrimitiveLibrary, budget: Budget,
                 questions: Questions, judge: Callable[[int], bool], *, client_goal: list[str] | None = None,
                 confirm_goal: bool = False) -> None:
        self.tree = tree
        self.beliefs = beliefs
        self.library = library
        self.budget = budget
        self.questions = questions
        self._judge = judge
        self.client_goal = list(client_goal or [])
        self.confirm_goal = confirm_goal
        self.goal_rejections: list[dict] = []  # goals the model stated that grounding refused, with why
        self.at_start: dict[str, bool] = {}  # the instruction's facts as first judged
        self.seen_at_start: set[str] = set()  # objects in view when the goal started
        self.looked_when_stated: set[str] = set()  # places seen inside when the goal was last stated
        self.waiting = False  # the goal waits for a look inside (nothing but opening until then)
        self._refusals: Counter[str] = Counter()  # goal refusals by rule (bounded: GOAL_REFUSALS_PER_RULE)
        self._refusal_texts: set[str] = set()

    @property
    def instruction_text(self) -> str:
        """The instruction with the person's answers to the model's questions: what the goal is about."""
        answers = [a for _, a in self.tree.clarifications]
        return " ".join([self.tree.instruction, *answers])

    def facts(self) -> list[Condition]:
        return [parse_fact(c.text) for c in self.tree.node(self.tree.root).conditions]

    def start(self) -> None:
        """The goal starts: remember what is in view, and set the client's goal if there is one."""
        self.seen_at_start = set(self.beliefs.world.objects)
        if self.client_goal:
            checked = check_goal(self.client_goal, self.instruction_text, self.beliefs, self.library,
                                 about_instruction=False)
            if not checked.ok:
                raise ClientGoalError("; ".join(checked.problems) or "the goal states no fact")
            self.set_goal(checked.facts, "client")

    def set_goal(self, facts: list[Condition], source: str) -> None:
        """Set the root's facts and what held of them at the start."""
        root = self.tree.root
        restated = bool(self.at_start)
        self.tree.set_conditions(root, [ConditionRecord(str(f)) for f in facts], source)
        self._judge(root)
        before = self.at_start
        self.at_start = {}
        for c, fact in zip(self.tree.node(root).conditions, facts, strict=True):
            if restated and (c.text in before or not set(fact.objects) <= self.seen_at_start):
                # a restated goal: a fact kept keeps its start; one about a thing hidden at the start did
                # not hold then (the robot may have made it hold before the name was known)
                self.at_start[c.text] = before.get(c.text, False)
            else:
                self.at_start[c.text] = c.holds
        self.looked_when_stated = set(self.beliefs.seen_inside)
        self.budget.scale(len(facts))

    # ---- the model's goal --------------------------------------------------------------------
    def take_answer(self, stated: list[str], restate: list[str], *, moved: bool,
                    emptied: dict[str, list[str]] | None = None) -> Intake:
        """The goal of a model answer that was asked for one (``restate``: the provisional names to replace;
        ``emptied``: containers of ``empty(...)`` facts to restate -> what they held). ``moved``: the robot has
        changed where something is (then the goal may no longer wait)."""
        if not stated and not self.tree.node(self.tree.root).conditions and self.may_wait(moved):
            self.waiting = True  # nothing but opening until the goal is stated
            return Intake(IntakeKind.WAITING)
        return self.take(stated, restate, emptied or {})

    def take(self, stated: list[str], restate: list[str], emptied: dict[str, list[str]] | None = None) -> Intake:
        """Check and set the goal the model stated (or restated)."""
        tree = self.tree
        emptied = emptied or {}
        revealed = self.beliefs.seen_inside - self.looked_when_stated if restate else set()
        renaming = {o for o, obj in self.beliefs.world.objects.items() if obj.location in revealed}
        checked = check_goal(stated, self.instruction_text, self.beliefs, self.library,
                             answered=bool(tree.clarifications), answers=[a for _, a in tree.clarifications],
                             renaming=renaming | {o for held in emptied.values() for o in held})
        renamed = self.renamed(checked, restate) if restate else {}
        contents = self.contents_stated(checked, emptied) if emptied else {}
        if checked.ends:  # nothing in view fits what the words describe: no goal can say what they mean
            raise PersonStop(GoalError.PLANNING_FAILED, f"{checked.ends}; nothing was executed")
        if not checked.ok:
            self.goal_rejections.append({"goal": [str(g) for g in stated], "problems": list(checked.problems),
                                         "rules": list(checked.rules)})
            guessed = [r for r in checked.references if r.guessed]
            if checked.person_only and guessed:
                repeated = self.questions.ask_which(guessed[0].said, guessed[0].candidates, self.beliefs.world)
                return RECHECK if repeated is None else Intake(IntakeKind.REFUSED, repeated)
            if checked.person_only and checked.questions:  # "bar the cup", the cup moved too: ask the person
                repeated = self.questions.ask_doubt(checked.questions[0])
                return RECHECK if repeated is None else Intake(IntakeKind.REFUSED, repeated)
            self.count_refusal(checked.rules, checked.problems)
            return Intake(IntakeKind.REFUSED, "the goal you stated was not accepted: "
                          + ("; ".join(checked.problems) or "it is empty"))
        self.set_goal(checked.facts, "model")
        looked = sorted(self.beliefs.seen_inside & {n for n, p in self.beliefs.world.places.items() if p.openable})
        readings = self._readings(checked.references) + [
            {"said": old, "resolved": new, "candidates": [], "from": "named provisionally, renamed once "
             f"{', '.join(looked) or 'the search'} showed what is there"} for old, new in renamed.items()] + [
            {"said": f"empty({box})", "resolved": facts, "candidates": emptied[box], "from": f"restated once {box} "
             f"showed what it held ({', '.join(emptied[box])}); checked against the words"}
            for box, facts in contents.items()]
        tree.set_readings(readings)
        unsure = [old for old, new in renamed.items() if not any(set(old.split("_")) & set(n.split("_")) for n in new)]
        if (self.confirm_goal or unsure) and self.confirm(checked.facts):
            return RECHECK
        if self._judge(tree.root):
            return RECHECK
        return Intake(IntakeKind.SET)

    def _readings(self, references: list[Reference]) -> list[dict]:
        answers = [a for _, a in self.tree.clarifications]
        source = f"from your answer '{answers[-1]}'" if answers else "the model's reading of the instruction's words"
        return [{"said": r.said, "resolved": list(r.picked), "candidates": list(r.candidates),
                 "from": r.source or source} for r in references]

    def count_refusal(self, rules: list[str], problems: list[str]) -> None:
        """Every refusal rule has a bound; the same refusal text again counts twice."""
        for rule, text in zip(rules, problems, strict=True):
            self._refusals[rule] += 2 if text in self._refusal_texts else 1
            self._refusal_texts.add(text)
            if self._refusals[rule] > GOAL_REFUSALS_PER_RULE:
                raise RefusalLoop(f"the goal the model stated was refused {self._refusals[rule]} times by one rule "
                                  f"({rule}) and re-reading did not fix it; last: {text}")

    # ---- names for things not seen yet -------------------------------------------------------
    def renamed(self, checked: CheckedConditions, provisional: list[str]) -> dict[str, list[str]]:
        """How a restated goal re-binds each provisional name (refusing one that keeps it): old -> new names."""
        facts = checked.facts
        names = {o for f in facts for o in f.objects}
        before = {o for f in self.facts() for o in f.objects}
        out = {}
        for old in provisional:
            if old in names:
                inside = ", ".join(sorted(o for o, obj in self.beliefs.world.objects.items()
                                          if obj.location in self.beliefs.seen_inside)) or "nothing new"
                checked.refuse(RULE_PROVISIONAL, f"{old} is still a name nothing seen carries, now that the "
                               f"search has shown what is there ({inside}): state the goal with a name you see")
                continue
            out[old] = sorted(names - before) or sorted(names)
        return out

    def contents_stated(self, checked: CheckedConditions, emptied: dict[str, list[str]]) -> dict[str, list[str]]:
        """How a restated goal says where each thing an emptied container held goes (refusing one that says
        nothing of one of them): container -> the facts about its things. Where the words name a place, each
        thing needs a fact that places it; otherwise ``not in(thing, drawer)`` says enough."""
        named_place = checked.resolution is not None and bool(checked.resolution.of_role(DESTINATION))
        out: dict[str, list[str]] = {}
        for box, held in emptied.items():
            about: list[str] = []
            for obj in held:
                facts = [f for f in checked.facts if f.args and f.args[0] == obj
                         and (not f.negated or (not named_place and f.predicate == "in" and f.args[1:] == (box,)))]
                if not facts:
                    checked.refuse(RULE_CONTENTS, f"empty({box}): {box} held {', '.join(held)}; the goal does not "
                                   f"say where the {obj.replace('_', ' ')} goes: state a fact for each")
                about += [str(f) for f in facts]
            out[box] = about
        return out

    def emptied_unstated(self) -> dict[str, list[str]]:
        """Containers the goal states ``empty(...)`` of that were not seen inside when it was stated and have
        been since: each with what it held. The goal must then be restated with a fact for each of those things
        (where it goes), before anything is judged."""
        out: dict[str, list[str]] = {}
        for fact in self.facts():
            box = fact.args[0] if fact.predicate == "empty" and not fact.negated and fact.args else ""
            if box and box not in self.looked_when_stated and box in self.beliefs.seen_inside \
                    and (held := self.beliefs.held_when_seen(box)):
                out[box] = held
        return out

    def provisional_names(self) -> list[str]:
        """Objects the goal names that nothing seen carries, once looking inside has shown what is there
        (a place looked into since the goal was stated holds something with a word of the name, or nowhere
        is left to look): then the goal must be restated with the names seen, before anything is judged."""
        unknown = sorted({o for f in self.facts() for o in f.objects if not self.beliefs.knows(o)})
        revealed = self.beliefs.seen_inside - self.looked_when_stated
        if not unknown or not revealed:
            return []
        world = self.beliefs.world
        hidden_left = any(p.openable and n not in self.beliefs.seen_inside for n, p in world.places.items())
        inside = {o for o, obj in world.objects.items() if obj.location in revealed}
        if hidden_left and not any(set(u.split("_")) & set(o.split("_")) for u in unknown for o in inside):
            return []  # it may still be in a drawer not looked into
        return unknown

    def may_wait(self, moved: bool) -> bool:
        """The goal may be stated after a look inside: a closed drawer is still unseen and nothing was moved."""
        world = self.beliefs.world
        return not moved and any(p.openable and not p.is_open and n not in self.beliefs.seen_inside
                                 for n, p in world.places.items())

    def revealed_since_stated(self) -> list[str]:
        """Objects in places looked into since the goal was last stated."""
        return sorted(o for o, obj in self.beliefs.world.objects.items()
                      if obj.location in self.beliefs.seen_inside - self.looked_when_stated)

    # ---- confirmation ------------------------------------------------------------------------
    def confirm(self, facts: list[Condition]) -> bool:
        """confirm_goal: the person accepts, corrects or refuses the goal. True when it was corrected."""
        shown = tuple(str(f) for f in facts)
        words = tuple(describe_fact(f, self.beliefs.world) for f in facts)
        readings = [f"reading: {render_reading(r)}" for r in self.tree.readings]
        request = Ask(AskKind.GOAL, "\n".join([*words, *readings]), self.tree.instruction, self.tree.goal_id,
                      shown, words, check=self.correction_problems)
        reply = self.questions.ask(request)
        if reply.kind is ReplyKind.ACCEPT:
            return False
        if reply.kind is ReplyKind.CORRECT:
            if problems := request.problems(list(reply.facts)):
                raise ClientGoalError("the corrected goal: " + "; ".join(problems))
            checked = check_goal(list(reply.facts), self.instruction_text, self.beliefs, self.library,
                                 about_instruction=False)
            self.set_goal(checked.facts, "person")
            return True
        if reply.kind is ReplyKind.REFUSE:
            raise PersonStop(GoalError.GOAL_NOT_CONFIRMED, f"the person refused the interpreted goal "
                             f"({', '.join(shown)}): {reply.text or 'no reason given'}; nothing was executed")
        raise PersonStop(GoalError.GOAL_NOT_CONFIRMED, f"the interpreted goal ({', '.join(shown)}) was not "
                         f"confirmed: {reply.text or 'nobody answered'}; nothing was executed")

    def correction_problems(self, texts: list[str]) -> list[str]:
        checked = check_goal(list(texts), self.instruction_text, self.beliefs, self.library, about_instruction=False)
        return checked.problems or ([] if checked.facts else ["the goal states no fact"])
