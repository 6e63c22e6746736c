"""The MuJoCo robot (``step-planner mujoco-robot``) as a child process: for benchmarks and tests that need a robot
across real DDS, in this process's ROS domain."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path


class RobotProcess:
    """The MuJoCo robot with ``params`` as its ROS parameters (``realtime_factor`` 1.0: real-time pace), in
    ``namespace`` when given.

    Its output goes to a log file (:meth:`output`). ``stop`` sends SIGINT, as ``ros2 launch`` does; ``kill``
    ends it at once, without a goodbye on DDS (a robot that died)."""

    def __init__(self, realtime_factor: float = 1.0, namespace: str = "", **params) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="mujoco_robot_")
        self.params = {"realtime_factor": realtime_factor, **params}
        self.namespace = namespace  # the robot's (-r __ns:=...): its actions and topics under it
        self.log = Path(self._tmp.name) / "robot.log"
        self.proc: subprocess.Popen | None = None

    def start(self) -> RobotProcess:
        args = [sys.executable, "-m", "step_planner.ros.mujoco_robot", "--ros-args"]
        for name, value in self.params.items():
            args += ["-p", f"{name}:={value}"]
        if self.namespace.strip("/"):
            args += ["-r", f"__ns:=/{self.namespace.strip('/')}"]
        with self.log.open("w") as log:
            self.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=os.environ.copy(),
                                         stdin=subprocess.DEVNULL)
        return self

    def kill(self) -> None:
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

    def close(self) -> None:
        self.stop()
        self._tmp.cleanup()

    def __enter__(self) -> RobotProcess:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()
