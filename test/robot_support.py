"""The MuJoCo robot in a process of its own, for the tests of the controllers backend across real DDS."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from step_planner.domain.world import WorldState

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"
START_S = 30.0  # a cold start imports MuJoCo, builds the scene and waits for discovery


class RobotProcess:
    """``step-planner mujoco-robot`` with ``params`` (ROS parameters), in this test run's ROS domain. Another
    world is put in through its ~/load_scene service (:func:`load_world`)."""

    def __init__(self, realtime_factor: float = 3.0, **params) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="mujoco_robot_")
        self.params = {"realtime_factor": realtime_factor, **params}
        self.log = Path(self._tmp.name) / "robot.log"
        self.proc: subprocess.Popen | None = None

    def start(self) -> RobotProcess:
        args = [sys.executable, "-m", "step_planner.ros.mujoco_robot", "--ros-args"]
        for name, value in self.params.items():
            args += ["-p", f"{name}:={value}"]
        self.proc = subprocess.Popen(args, stdout=self.log.open("w"), stderr=subprocess.STDOUT, env=os.environ.copy(),
                                     cwd=ROOT)
        return self

    def kill(self) -> None:
        """The robot process dies at once (no goodbye on DDS)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()

    def output(self) -> str:
        return self.log.read_text() if self.log.exists() else ""

    def __enter__(self) -> RobotProcess:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
        self._tmp.cleanup()


def load_world(connection, world: WorldState, seed: int = 0) -> None:
    """Put the robot into ``world`` (its ~/load_scene service), the arm at home."""
    from step_planner_interfaces.srv import LoadScene

    response = connection.call_service(LoadScene, "/mujoco_robot/load_scene",
                                       LoadScene.Request(world_json=json.dumps(world.to_dict()), seed=seed))
    assert response.success, response.message


def wait_until(predicate, timeout: float = START_S, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} not reached within {timeout:.0f} s")
        time.sleep(0.02)
