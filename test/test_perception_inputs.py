"""Perception a robot team already has, folded into the world between primitives (ros/perception.py, no ROS graph):
reports placed from their poses by the fact deriver, TF frames of tracked objects and drawers, stale frames."""

from __future__ import annotations

import time

import pytest

from step_planner.domain.pose_tree import ModelPose
from step_planner.domain.primitives import PrimitiveLibrary
from step_planner.domain.scene import load_scene
from step_planner.domain.scene_geometry import scene_geometry
from step_planner.execution.symbolic import SymbolicExecutor
from step_planner.resources import config_path
from step_planner.ros.perception import ObjectReport, PerceivedExecutor, PerceptionBuffer, TrackedFrames


@pytest.fixture
def world():
    return load_scene(config_path("scenes", "drawer_desk.yaml"))


def executor(world, frames=None):
    library = PrimitiveLibrary.load(config_path("primitives.yaml"))
    notes: list[str] = []
    return PerceivedExecutor(SymbolicExecutor(library, world), PerceptionBuffer(), on_refused=notes.append,
                             frames=frames), notes


def tray_top(world) -> tuple[float, float, float]:
    tray = scene_geometry(world).containers["tray"]
    return float(tray.position[0]), float(tray.position[1]), float(tray.position[2] + 0.02)


def test_a_report_without_a_container_is_placed_by_its_pose_and_one_in_no_place_is_refused(world):
    ex, notes = executor(world)
    ex.buffer.put([ObjectReport("cup", position=tray_top(world)), ObjectReport("red_block", position=(3.0, 0, 0))])
    seen = ex.observe()
    assert seen.objects["cup"].location == "tray"
    assert seen.objects["red_block"].location == "table"  # refused: left where it was
    assert notes == ["red_block: at [3.0, 0, 0], in no place of the scene"]


def test_tracked_frames_move_objects_open_drawers_and_say_nothing_once_stale(world):
    frames = TrackedFrames(max_age_s=0.5, prefix="obj_")
    ex, _ = executor(world, frames)
    drawer = scene_geometry(world).drawers["drawer"]
    opened = drawer.closed_position + drawer.axis * drawer.slide
    frames.put([ModelPose("base", "obj_cup", tray_top(world), (0.0, 0.0, 0.0, 1.0)),
                ModelPose("base", "cabinet/drawer", tuple(map(float, opened)), (0.0, 0.0, 0.0, 1.0))])
    seen = ex.observe()
    assert seen.objects["cup"].location == "tray" and seen.places["drawer"].is_open
    assert "screwdriver" in seen.observed().objects  # the drawer is open: what is in it is seen
    frames.put([ModelPose("base", "obj_cup", tray_top(world), (0.0, 0.0, 0.0, 1.0))],
               received=time.monotonic() - 5.0)  # the cup's last frame is now 5 s old
    later = ex.observe()
    assert "cup" not in later.objects  # unknown now, not "still on the tray"


def test_pose_tree_filter_averages_recent_reports_and_composes_links_in_their_model():
    from step_planner.domain.pose_tree import PoseTree

    tree = PoseTree()
    for t, x in enumerate((0.40, 0.42, 0.41, 0.43)):
        tree.update([ModelPose("world", "cabinet", (1.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0)),
                     ModelPose("cabinet", "cabinet/drawer", (-0.1, 0.0, 0.02), (0.0, 0.0, 0.0, 1.0)),
                     ModelPose("world", "tape", (x, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0))], received=t * 0.1)
    assert tree.world_poses()["tape"].position[0] == pytest.approx(0.43)  # the newest
    assert tree.world_poses(window_s=0.25)["tape"].position[0] == pytest.approx((0.42 + 0.41 + 0.43) / 3)
    assert tree.world_poses()["drawer"].position.tolist() == pytest.approx([0.9, 0.0, 0.02])



def test_a_report_stamped_earlier_than_the_newest_starts_the_frames_history_again():
    """A simulator reset (a scene loaded, its time starting again) moves the tape 30 cm at once: the filter does not
    average the old world's reports into the new one's, as tf2's buffer is cleared when time jumps back. Stamps
    going forward, or all 0 (a source that does not stamp), keep the history."""
    from step_planner.domain.pose_tree import PoseTree

    def tape(x: float, stamp: float) -> ModelPose:
        return ModelPose("world", "tape", (x, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0), stamp)

    tree = PoseTree()
    for k, x in enumerate((0.70, 0.70, 0.70)):
        tree.update([tape(x, 100.0 + 0.02 * k)], received=k * 0.02)
    tree.update([tape(0.40, 0.5)], received=0.06)  # the scene reloaded: its time starts again
    assert tree.world_poses(window_s=0.25)["tape"].position[0] == pytest.approx(0.40)
    tree.update([tape(0.42, 0.52)], received=0.08)
    assert tree.world_poses(window_s=0.25)["tape"].position[0] == pytest.approx(0.41)

    for stamps in ((1.0, 1.02, 1.04, 1.06), (0.0, 0.0, 0.0, 0.0)):
        tree = PoseTree()
        for k, (x, stamp) in enumerate(zip((0.70, 0.70, 0.70, 0.40), stamps, strict=True)):
            tree.update([tape(x, stamp)], received=k * 0.02)
        assert tree.world_poses(window_s=0.25)["tape"].position[0] == pytest.approx(2.5 / 4)
