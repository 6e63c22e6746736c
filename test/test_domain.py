"""Primitive specs, validation against the world, effects, visibility and scene loading."""

from __future__ import annotations

import pytest

from step_planner.domain.primitives import DomainError, PrimitiveCall, PrimitiveLibrary, call_shape
from step_planner.domain.scene import SceneError, scene_from_dict
from step_planner.domain.transitions import (
    AFFORDANCE,
    BAD_ARGUMENTS,
    PRECONDITION,
    UNKNOWN_ENTITY,
    UNKNOWN_PRIMITIVE,
    WRONG_TYPE,
    apply_call,
    check_call,
)

REQUIRED = {"move_to", "pick", "place", "open_drawer", "close_drawer", "push", "home"}


def categories(problems):
    return {p.category for p in problems}


def test_shipped_primitives_cover_the_franka_set(library):
    assert set(library.primitives) >= REQUIRED
    assert library.embodiment_summary()
    assert "pick(object=<object>)" in library.describe()
    assert "place(object=<object>, target=<place>)" in library.describe()


@pytest.mark.parametrize(
    "text, expected",
    [
        ("pick(tape)", "pick(object=tape)"),
        ("place(object=tape, target=drawer)", "place(object=tape, target=drawer)"),
        ("place('tape', \"drawer\")", "place(object=tape, target=drawer)"),
        ("home()", "home()"),
        ("put the tape away", None),
        ("teleport(tape)", None),
    ],
)
def test_parse_call_text(library, text, expected):
    call = library.parse_call_text(text)
    assert (str(call) if call else None) == expected


@pytest.mark.parametrize("text, shape", [
    ("pick(tape)", ("pick", "tape")),
    ("  Open_Drawer ( drawer=top ) . ", ("Open_Drawer", " drawer=top ")),
    ("teleport()", ("teleport", "")),
    ("pick up the tape", None),
    ("1pick(tape)", None),
    ("pick(tape) and place it", None),
    ("the tape (the yellow one)", None),
])
def test_call_shape_is_the_one_reading_of_a_call(library, text, shape):
    assert call_shape(text) == shape
    if shape is None:  # what is not shaped as a call is never parsed as one
        assert library.parse_call_text(text) is None


def test_parse_call_text_rejects_extra_positional_args(library):
    with pytest.raises(DomainError, match="takes 1 arguments"):
        library.parse_call_text("pick(tape, drawer)")


def test_check_call_categories(library, drawer_world):
    view = drawer_world.observed()
    assert categories(check_call(PrimitiveCall.make("fly", {}), library, view)) == {UNKNOWN_PRIMITIVE}
    assert categories(check_call(PrimitiveCall.make("pick", {}), library, view)) == {BAD_ARGUMENTS}
    assert categories(check_call(PrimitiveCall.make("pick", {"object": "hammer"}), library, view)) == {
        UNKNOWN_ENTITY
    }
    assert categories(check_call(PrimitiveCall.make("pick", {"object": "drawer"}), library, view)) == {WRONG_TYPE}
    assert categories(check_call(PrimitiveCall.make("push", {"object": "cup", "direction": "up"}), library, view)) == {
        WRONG_TYPE
    }
    closed = check_call(PrimitiveCall.make("place", {"object": "tape", "target": "drawer"}), library, view)
    assert AFFORDANCE in categories(closed)  # not holding the tape
    assert any("closed" in p.message for p in closed)
    assert check_call(PrimitiveCall.make("pick", {"object": "tape"}), library, view) == []


def test_pick_while_holding_is_an_affordance_violation(library, drawer_world):
    apply_call(PrimitiveCall.make("pick", {"object": "tape"}), library, drawer_world)
    problems = check_call(PrimitiveCall.make("pick", {"object": "cup"}), library, drawer_world.observed())
    assert categories(problems) == {AFFORDANCE}
    assert "holding tape" in problems[0].message


def test_effects_and_hidden_objects(library, drawer_world):
    world = drawer_world
    world.objects["cup"].location = "drawer"  # hide the cup in the closed drawer
    assert "cup" not in world.observed().objects
    assert "cup" not in world.observed().describe()
    assert "closed, contents not visible" in world.observed().describe()
    assert categories(check_call(PrimitiveCall.make("pick", {"object": "cup"}), library, world.observed())) == {
        UNKNOWN_ENTITY
    }
    apply_call(PrimitiveCall.make("open_drawer", {"drawer": "drawer"}), library, world)
    assert "cup" in world.observed().objects
    assert "drawer [drawer] (open): contains cup" in world.observed().describe()
    apply_call(PrimitiveCall.make("pick", {"object": "tape"}), library, world)
    assert world.held == "tape" and "gripper: holding tape" in world.describe()
    apply_call(PrimitiveCall.make("place", {"object": "tape", "target": "drawer"}), library, world)
    assert world.held is None and world.objects["tape"].location == "drawer"


def test_full_drawer_has_no_room(library, drawer_world):
    drawer_world.places["drawer"].is_open = True
    drawer_world.places["drawer"].capacity = 0
    apply_call(PrimitiveCall.make("pick", {"object": "tape"}), library, drawer_world)
    problems = check_call(PrimitiveCall.make("place", {"object": "tape", "target": "drawer"}), library, drawer_world)
    assert categories(problems) == {PRECONDITION} and "no room" in problems[0].message


@pytest.mark.parametrize(
    "scene, message",
    [
        ([], "a scene is a mapping"),
        ({"places": [{"name": "Table"}]}, "lowercase identifier"),
        ({"places": [{"name": "t", "kind": "shelf"}]}, "kind must be one of"),
        ({"places": [{"name": "t"}], "objects": [{"name": "a", "at": "nowhere"}]}, "unknown place"),
        ({"places": [{"name": "t"}], "objects": [{"name": "a", True: "t"}]}, "use 'at: <place>'"),
        ({"places": [{"name": "t"}, {"name": "t"}]}, "duplicate"),
        ({"places": [{"name": "d", "kind": "drawer", "capacity": 0}], "objects": [{"name": "a", "at": "d"}]},
         "capacity"),
        ({"places": [{"name": "t", "colour": "red"}]}, "unknown keys"),
    ],
)
def test_bad_scenes_get_clear_errors(scene, message):
    with pytest.raises(SceneError, match=message):
        scene_from_dict(scene)


@pytest.mark.parametrize(
    "data, message",
    [
        ({}, "'primitives' list"),
        ({"primitives": [{"name": "a"}, {"name": "a"}]}, "duplicate"),
        ({"primitives": [{"name": "a", "args": [{"name": "x", "type": "thing"}]}]}, "bad argument"),
        ({"primitives": [{"name": "a", "preconditions": ["levitating(x)"]}]}, "unknown predicate"),
        ({"primitives": [{"name": "a", "preconditions": ["holding(x)"]}]}, "unknown arguments"),
        ({"primitives": [{"name": "a"}], "required_words": {"shut": ["close"]}}, "required_words maps fact"),
        ({"primitives": [{"name": "a"}], "goal_words": {"holding": "hold"}}, "goal_words maps fact"),
    ],
)
def test_bad_primitive_files_get_clear_errors(data, message):
    with pytest.raises(DomainError, match=message):
        PrimitiveLibrary.from_dict(data)
