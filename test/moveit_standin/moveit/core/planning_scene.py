"""``moveit.core.planning_scene.PlanningScene`` stand-in with MoveIt's object semantics.

ADD replaces an object, REMOVE deletes it, MOVE needs an existing object and empty geometry.
Attaching (AttachedCollisionObject with ADD) takes an existing world object of that id when the
message carries no geometry; detaching (REMOVE) puts the object back into the world -- as MoveIt
does. Malformed messages (primitive/pose count mismatch, unknown link) are refused (return False).
"""

from __future__ import annotations

import copy
from typing import Any

from geometry_msgs.msg import Pose


class PlanningScene:
    def __init__(self, robot: Any, writable: bool) -> None:
        self._robot = robot
        self._writable = writable
        self._open = True

    # the context manager closes the scene on __exit__
    def _check(self, write: bool) -> None:
        if not self._open:
            raise RuntimeError("stand-in: planning scene used outside its read_only()/read_write() block")
        if write and not self._writable:
            raise RuntimeError("stand-in: write through a read_only() planning scene")

    @property
    def planning_frame(self) -> str:
        self._check(False)
        return self._robot.planning_frame

    @property
    def current_state(self) -> Any:
        self._check(False)
        return self._robot.state

    @current_state.setter
    def current_state(self, value: Any) -> None:
        self._check(True)
        self._robot.state = value

    def apply_collision_object(self, collision_object_msg: Any, color_msg: Any = None) -> bool:
        from moveit_msgs.msg import CollisionObject

        from moveit._standin import LOG

        self._check(True)
        if not isinstance(collision_object_msg, CollisionObject):
            raise TypeError("apply_collision_object(): collision_object_msg must be a moveit_msgs.msg.CollisionObject")
        msg = collision_object_msg
        op = msg.operation
        LOG.add("apply_collision_object", id=msg.id, operation=op, frame=msg.header.frame_id,
                primitives=[(p.type, list(p.dimensions)) for p in msg.primitives],
                poses=[_xyz(p) for p in msg.primitive_poses])
        world = self._robot.world
        if op == CollisionObject.REMOVE:
            return world.pop(msg.id, None) is not None or msg.id == ""
        if len(msg.primitives) != len(msg.primitive_poses):
            return False
        if op == CollisionObject.MOVE:
            if msg.id not in world or msg.primitives:
                return False
            world[msg.id] = copy.deepcopy(msg)
            return True
        if op == CollisionObject.ADD:
            if not msg.primitives or not msg.header.frame_id:
                return False
            world[msg.id] = copy.deepcopy(msg)
            return True
        return False

    def process_attached_collision_object(self, object: Any) -> bool:  # noqa: A002 - the binding's name
        from moveit_msgs.msg import AttachedCollisionObject, CollisionObject

        from moveit._standin import LOG

        self._check(True)
        if not isinstance(object, AttachedCollisionObject):
            raise TypeError("process_attached_collision_object(): object must be an AttachedCollisionObject")
        aco = object
        LOG.add("attach" if aco.object.operation == CollisionObject.ADD else "detach",
                id=aco.object.id, link=aco.link_name, touch_links=list(aco.touch_links))
        if aco.link_name not in self._robot.model.links:
            return False
        if aco.object.operation == CollisionObject.ADD:
            body = self._robot.world.pop(aco.object.id, None)
            if body is None and not aco.object.primitives:
                return False
            self._robot.attached[aco.object.id] = (aco.link_name, body or copy.deepcopy(aco.object))
            return True
        if aco.object.operation == CollisionObject.REMOVE:
            entry = self._robot.attached.pop(aco.object.id, None)
            if entry is None:
                return False
            self._robot.world[aco.object.id] = entry[1]  # detached objects go back into the world
            return True
        return False

    def remove_all_collision_objects(self) -> None:
        from moveit._standin import LOG

        self._check(True)
        LOG.add("remove_all_collision_objects")
        self._robot.world.clear()

    def is_state_colliding(self, robot_state: Any, joint_model_group_name: str, verbose: bool = False) -> bool:
        self._check(False)
        return False


def _xyz(pose: Pose) -> tuple[float, float, float]:
    return (pose.position.x, pose.position.y, pose.position.z)
