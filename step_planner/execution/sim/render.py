"""Headless pictures of the simulation: keyframe PNGs and an MP4 of an episode.

Uses MuJoCo's offscreen renderer with ``MUJOCO_GL=egl`` (Debian: ``libegl1 libegl-mesa0
libgl1-mesa-dri``) or ``MUJOCO_GL=osmesa`` (``libosmesa6``); the package ``__init__`` picks one
that is installed before mujoco is imported. Shadows are
off in the model: with software GL they cost ~8x per frame.
"""

from __future__ import annotations

import os
from pathlib import Path

import mujoco
import numpy as np


class RenderingUnavailable(RuntimeError):
    """No offscreen OpenGL here; the message names the Debian packages to install."""


def _offscreen(model: mujoco.MjModel, width: int, height: int) -> mujoco.Renderer:
    try:
        return mujoco.Renderer(model, height=height, width=width)
    except Exception as exc:
        backend = os.environ.get("MUJOCO_GL", "")
        raise RenderingUnavailable(
            f"offscreen rendering with MUJOCO_GL={backend!r} failed ({exc}). For MUJOCO_GL=egl install the "
            "Debian packages libegl1 libegl-mesa0 libgl1-mesa-dri; or install libosmesa6 and set "
            "MUJOCO_GL=osmesa before starting Python."
        ) from exc


class SceneRenderer:
    """Renders frames from a fixed overview camera; writes video frames at a fixed sim rate."""

    def __init__(
        self,
        model: mujoco.MjModel,
        width: int = 640,
        height: int = 480,
        video_path: str | Path | None = None,
        fps: int = 25,
    ) -> None:
        self.model = model
        self.renderer = _offscreen(model, width, height)
        self.camera = mujoco.MjvCamera()
        self.camera.lookat[:] = [0.45, -0.1, 0.12]
        self.camera.distance = 1.5
        self.camera.azimuth = 60.0
        self.camera.elevation = -30.0
        self.fps = fps
        self.video_path = Path(video_path) if video_path else None
        self._writer = None
        self._next_frame_time = 0.0
        self._time_offset = 0.0  # episodes after a reset continue the same video
        self._last_time = 0.0
        self.frames_written = 0

    def set_model(self, model: mujoco.MjModel) -> None:
        """Switch to a rebuilt scene (after a reset) and keep writing the same video."""
        width, height = self.renderer.width, self.renderer.height
        self.renderer.close()
        self.model = model
        self.renderer = _offscreen(model, width, height)
        self._time_offset = self._last_time

    def frame(self, data: mujoco.MjData) -> np.ndarray:
        self.renderer.update_scene(data, camera=self.camera)
        return self.renderer.render()

    def save_png(self, data: mujoco.MjData, path: str | Path) -> Path:
        import imageio.v2 as imageio

        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        imageio.imwrite(path, self.frame(data))
        return path

    def maybe_record(self, data: mujoco.MjData) -> None:
        """Called every control step; writes a video frame when one is due."""
        now = data.time + self._time_offset
        self._last_time = now
        if self.video_path is None or now + 1e-9 < self._next_frame_time:
            return
        if self._writer is None:
            import imageio_ffmpeg

            self.video_path.parent.mkdir(parents=True, exist_ok=True)
            self._writer = imageio_ffmpeg.write_frames(
                str(self.video_path),
                (self.renderer.width, self.renderer.height),
                fps=self.fps,
                codec="libx264",
                pix_fmt_out="yuv420p",
                quality=7,
                macro_block_size=16,
            )
            self._writer.send(None)
        self._writer.send(np.ascontiguousarray(self.frame(data)))
        self.frames_written += 1
        self._next_frame_time = now + 1.0 / self.fps

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        self.renderer.close()


def keyframe_strip(
    frames: list[Path], captions: list[str], out: str | Path, columns: int = 4, tile_width: int = 320
) -> Path:
    """One PNG of keyframes in a grid, each with its caption (the step and the call), for docs."""
    from PIL import Image, ImageDraw

    tiles = []
    for path, caption in zip(frames, captions, strict=True):
        image = Image.open(path).convert("RGB")
        image = image.resize((tile_width, round(image.height * tile_width / image.width)))
        draw = ImageDraw.Draw(image)
        draw.rectangle((0, 0, image.width, 18), fill=(0, 0, 0))
        draw.text((4, 3), caption, fill=(255, 255, 255))
        tiles.append(image)
    rows = -(-len(tiles) // columns)
    height = tiles[0].height
    sheet = Image.new("RGB", (columns * tile_width, rows * height), (255, 255, 255))
    for i, tile in enumerate(tiles):
        sheet.paste(tile, ((i % columns) * tile_width, (i // columns) * height))
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    sheet.save(out, optimize=True)
    return out
