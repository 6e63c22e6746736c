"""Headless pictures: keyframe PNGs and an MP4 of an episode (MUJOCO_GL=egl or osmesa)."""

from pathlib import Path

import numpy as np
import pytest

from step_planner.domain.primitives import PrimitiveLibrary
from step_planner.domain.scene import load_scene

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.sim
@pytest.mark.slow
def test_episode_video_and_keyframes(tmp_path):
    import imageio.v2 as imageio
    import imageio_ffmpeg

    from step_planner.execution.sim.executor import SimExecutor

    library = PrimitiveLibrary.load(ROOT / "config" / "primitives.yaml")
    video = tmp_path / "episode.mp4"
    ex = SimExecutor(
        library,
        load_scene(ROOT / "config" / "scenes" / "drawer_desk.yaml"),
        seed=1,
        video_path=video,
        render=True,
        keyframe_dir=tmp_path / "keys",
    )
    for text in ("move_to(tray)", "home()"):
        assert ex.execute(library.parse_call_text(text)).success
    sim_seconds = ex.data.time
    ex.close()
    frames, seconds = imageio_ffmpeg.count_frames_and_secs(str(video))
    assert frames >= int(sim_seconds * 25) - 2  # one frame per 40 ms of simulated time
    assert [p.name for p in ex.keyframes] == ["01_move_to.png", "02_home.png"]
    image = imageio.imread(ex.keyframes[-1])
    assert image.shape == (480, 640, 3) and np.std(image) > 10  # a scene, not a blank frame


def test_keyframe_strip_puts_captioned_frames_in_a_grid(tmp_path):
    import imageio.v2 as imageio

    from step_planner.execution.sim.render import keyframe_strip

    frames = []
    for k in range(5):
        path = tmp_path / f"{k:02d}.png"
        imageio.imwrite(path, np.full((480, 640, 3), 40 * k, dtype=np.uint8))
        frames.append(path)
    out = keyframe_strip(frames, [f"{k + 1}/5 pick(x)" for k in range(5)], tmp_path / "strip.png", columns=3)
    strip = imageio.imread(out)
    assert strip.shape == (2 * 240, 3 * 320, 3)  # two rows of three 320x240 tiles
    assert strip[100, 320 + 100, 0] == 40 and strip[240 + 100, 100, 0] == 120  # frames 2 and 4 in place
    assert strip[2:16, 2:120].max() > 200 and strip[240 + 2 : 240 + 16, 2:120].max() > 200  # white captions


@pytest.mark.sim
@pytest.mark.slow
def test_recording_a_suite_task_runs_the_planner_and_writes_the_video_and_strip(tmp_path, capsys):
    """`record --task`: the default profile, the scripted expert answering, MuJoCo executing."""
    from step_planner.bench.record_video import main

    video, strip = tmp_path / "task.mp4", tmp_path / "strip.png"
    code = main(["--task", "table3:ss02_open_drawer", "--planner-config", str(ROOT / "config" / "bench.yaml"),
                 "--out", str(video), "--strip", str(strip), "--strip-frames", "2"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "planner grounded" in out and "success=True" in out and "not an LLM" in out
    assert video.stat().st_size > 10_000 and strip.stat().st_size > 10_000
