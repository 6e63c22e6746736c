"""A parallel gripper without physics: two fingers that follow their setpoint and stop at an object's width.

WHY: the gripper emulations (franka_gripper's, GripperActionController's) decide when a goal ends from what the
fingers do. Where there is no physics engine (fake hardware, the stand-in servers of the tests) something must
still move the fingers, and a grasp on an object must stop them at its width. This is that something: the width
follows the setpoint at most at ``max_speed``, an object between the fingers stops them at its width, nothing
else happens (no force, no slip). With fake hardware the node puts the object where each grasp says it is, as
mock_components makes a joint's state follow its command (``ros/franka_gripper_node.py``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class MockHand:
    width: float = 0.08  # finger gap (m)
    max_width: float = 0.08
    max_speed: float = 0.2  # m/s, the gap's fastest change (the Franka Hand and the Panda fingers: 0.1 m/s per finger)
    object_width: float | None = None  # an object between the fingers, or None
    velocity: float = 0.0

    def step(self, setpoint: float, dt: float) -> None:
        """Move towards ``setpoint`` for ``dt`` seconds; an object stops closing fingers at its width."""
        target = min(max(setpoint, 0.0), self.max_width)
        if self.object_width is not None and self.width >= self.object_width - 1e-9:
            target = max(target, self.object_width)
        reach = self.max_speed * dt
        before = self.width
        self.width = target if abs(target - self.width) <= reach else \
            self.width + (reach if target > self.width else -reach)
        self.velocity = (self.width - before) / dt if dt > 0 else 0.0
