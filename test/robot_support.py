"""The MuJoCo robot in a process of its own, for the tests of the controllers backend across real DDS."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

from step_planner.domain.world import WorldState
from step_planner.ros.robot_process import RobotProcess as ProductRobotProcess

DATA = Path(__file__).resolve().parent / "data"
START_S = 30.0  # a cold start imports MuJoCo, builds the scene and waits for discovery


class RobotProcess(ProductRobotProcess):
    """The MuJoCo robot for tests: three times real time unless asked otherwise (tests wait less)."""

    def __init__(self, realtime_factor: float = 3.0, **params) -> None:
        super().__init__(realtime_factor, **params)


def load_world(connection, world: WorldState, seed: int = 0) -> None:
    """Put the robot into ``world`` (its ~/load_scene service), the arm at home."""
    from step_planner.execution.controllers.connection import SERVICE_RESEND_S
    from step_planner_interfaces.srv import LoadScene

    request = LoadScene.Request(world_json=json.dumps(world.to_dict()), seed=seed, request_id=uuid.uuid4().hex)
    response = connection.call_service(LoadScene, "/mujoco_robot/load_scene", request, resend_s=SERVICE_RESEND_S)
    assert response.success, response.message


def wait_until(predicate, timeout: float = START_S, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} not reached within {timeout:.0f} s")
        time.sleep(0.02)


def inject_fault(connection, kind: str, target: str) -> None:
    """Arm a physical fault in the MuJoCo robot (its ~/inject_fault service)."""
    from step_planner.execution.controllers.connection import SERVICE_RESEND_S
    from step_planner_interfaces.srv import InjectFault

    response = connection.call_service(InjectFault, "/mujoco_robot/inject_fault",
                                       InjectFault.Request(kind=kind, target=target), resend_s=SERVICE_RESEND_S)
    assert response.success, response.message
