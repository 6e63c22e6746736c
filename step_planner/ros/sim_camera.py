"""``~/sim/camera/image/compressed`` (sensor_msgs/CompressedImage, JPEG, latched): MuJoCo's rendered view of the
simulated scene, for ``step-planner hmi``'s camera panel (backend sim only).

WHY a thread of its own: an offscreen render with software OpenGL takes tens to hundreds of milliseconds on a
busy machine, and the physics must not wait for a picture (it runs at real-time pace, as the robot would). The
executor's step hook only copies the physics state (``mj_copyData``) when the camera thread is idle and a frame is
due (at most ``rate_hz`` a second of wall time, and only while someone subscribes); the thread renders the copy
(the overview camera of :class:`~step_planner.execution.sim.render.SceneRenderer`, 480x360; its OpenGL context is
made and used in that thread), encodes a JPEG and publishes it. One frame at the start and one at the end of each
goal are always published, the last latched: a page opened between goals sees the table as the last goal left it.
Where rendering is unavailable (no EGL/OSMesa) the camera says so once and stays off; a goal never fails for it.
"""

from __future__ import annotations

import io
import threading
import time
from collections.abc import Callable
from typing import Any

from sensor_msgs.msg import CompressedImage
from std_msgs.msg import Header

from step_planner.ros.qos import latched

TOPIC = "~/sim/camera/image/compressed"
WIDTH, HEIGHT = 480, 360
JPEG_QUALITY = 80
END_WAIT_S = 10.0  # a goal's end waits at most this long for its last frame


def jpeg(pixels: Any, quality: int = JPEG_QUALITY) -> bytes:
    """An RGB frame (height x width x 3, uint8) as JPEG bytes."""
    from PIL import Image

    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format="JPEG", quality=quality)
    return out.getvalue()


class _Shooter:
    """One goal's camera: the step hook hands over copies of the physics state, a thread renders them."""

    def __init__(self, camera: SimCamera, executor: Any) -> None:
        import mujoco

        self.camera, self.executor = camera, executor
        self.model = executor.model
        self.copy = mujoco.MjData(self.model)
        self._copy_data = mujoco.mj_copyData
        self._due = threading.Event()  # a copy waits to be rendered
        self._idle = threading.Event()
        self._idle.set()
        self._stop = False
        self._last = float("-inf")
        self.thread = threading.Thread(target=self._run, daemon=True, name="sim_camera")

    def start(self) -> None:
        self.thread.start()
        self.hand_over(self.executor.data, force=True)

    def hook(self, data: Any) -> None:
        """The executor's step hook (the physics thread): cheap unless a frame is due and the thread is idle."""
        self.hand_over(data, force=False)

    def hand_over(self, data: Any, force: bool) -> None:
        now = time.monotonic()
        if self.camera.unavailable or not self._idle.is_set():
            return
        if not force and (now - self._last < self.camera.period or self.camera.watchers() == 0):
            return
        self._last = now
        self._copy_data(self.copy, self.model, data)
        self._idle.clear()
        self._due.set()

    def finish(self) -> None:
        """The goal ends: its last frame (waiting for the one being rendered), then the thread stops."""
        self._idle.wait(END_WAIT_S)
        self.hand_over(self.executor.data, force=True)
        self._idle.wait(END_WAIT_S)
        self._stop = True
        self._due.set()
        self.thread.join(END_WAIT_S)

    def _run(self) -> None:
        try:
            from step_planner.execution.sim.render import SceneRenderer

            renderer = SceneRenderer(self.model, width=WIDTH, height=HEIGHT)
        except Exception as exc:  # RenderingUnavailable, or no OpenGL at all: the goal runs without pictures
            self.camera.off(f"no camera frames: {exc}")
            self._idle.set()
            return
        try:
            while True:
                self._due.wait()
                self._due.clear()
                if self._stop:
                    return
                try:
                    self.camera.publish(jpeg(renderer.frame(self.copy)))
                except Exception as exc:  # a viewer's picture: never an error of the goal
                    self.camera.off(f"no more camera frames: {exc}")
                    return
                finally:
                    self._idle.set()
        finally:
            renderer.close()


class SimCamera:
    """Publishes the simulator's rendered view; ``attach`` it to each goal's SimExecutor (a GoalSession
    attachment). ``rate_hz`` 0 turns it off."""

    def __init__(self, node: Any, rate_hz: float, frame_id: str = "sim_camera") -> None:
        self.node, self.period, self.frame_id = node, (1.0 / rate_hz if rate_hz > 0 else 0.0), frame_id
        self._pub = node.create_publisher(CompressedImage, TOPIC, latched())
        self.frames = 0
        self.unavailable = ""  # why rendering is off here (said once)

    def watchers(self) -> int:
        return self._pub.get_subscription_count()

    def off(self, why: str) -> None:
        if not self.unavailable:
            self.unavailable = why
            self.node.get_logger().warning(f"{TOPIC}: {why}")

    def publish(self, frame: bytes) -> None:
        header = Header(stamp=self.node.get_clock().now().to_msg(), frame_id=self.frame_id)
        self._pub.publish(CompressedImage(header=header, format="jpeg", data=frame))
        self.frames += 1

    def attach(self, executor: Any) -> Callable[[], None] | None:
        if not self.period or self.unavailable or not hasattr(executor, "step_hooks"):
            return None
        shooter = _Shooter(self, executor)
        executor.step_hooks.append(shooter.hook)
        shooter.start()

        def detach() -> None:
            if shooter.hook in executor.step_hooks:
                executor.step_hooks.remove(shooter.hook)
            shooter.finish()

        return detach
