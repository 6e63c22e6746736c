"""``moveit.core.planning_scene.PlanningScene`` stand-in with MoveIt's object semantics.

From moveit2@4d84106 moveit_core/planning_scene/src/planning_scene.cpp (``PS``) and its binding
moveit_py/src/moveit/moveit_core/planning_scene/planning_scene.cpp (``PYPS``):

- ``apply_collision_object`` returns nothing (PYPS:72-85); ``process_attached_collision_object`` returns a bool.
- ADD/APPEND: the header frame must be known (PS:1889-1893), some shape is needed (:1895-1899), more poses than
  primitives is refused (:1805-1809; fewer poses mean identity poses), ADD replaces an object of that id
  (:1901-1903). REMOVE: an empty id removes every object (:1933-1936), an unknown id is refused (:1939-1944).
  MOVE: needs an existing object (:1953-1960).
- Attach (ADD): the link must be a robot link (:1538-1543); without geometry in the message the world object of
  that id is taken, else refused (:1579-1600); with geometry a world object of that id is removed (:1631-1645).
  Detach (REMOVE): an empty id detaches everything (on the link if given) (:1698-1710); an id attached to another
  link than the message's is refused (:1713-1723); a detached body goes back into the world unless the world
  already has an object of that name (:1729-1758); detaching nothing is refused (:1759-1760).
- Known frames (``knows_frame_transform``): robot links, the model frame, world objects and attached bodies
  (PYPS:156-182).
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
        return self._robot.model.model_frame  # the SRDF virtual joint's parent frame: world

    @property
    def current_state(self) -> Any:
        self._check(False)
        return self._robot.state

    @current_state.setter
    def current_state(self, value: Any) -> None:
        self._check(True)
        self._robot.state = value

    def knows_frame_transform(self, frame_id: str) -> bool:
        self._check(False)
        robot = self._robot
        return (frame_id in robot.model.data.links or frame_id == robot.model.model_frame
                or frame_id in robot.world or frame_id in robot.attached)

    def apply_collision_object(self, collision_object_msg: Any, color_msg: Any = None) -> None:
        self._check(True)
        self._process_collision_object(collision_object_msg)  # PYPS:72-85 drops the bool

    def _process_collision_object(self, msg: Any) -> bool:
        from moveit_msgs.msg import CollisionObject

        from moveit._standin import LOG

        if not isinstance(msg, CollisionObject):
            raise TypeError("collision_object_msg must be a moveit_msgs.msg.CollisionObject")
        op = msg.operation
        LOG.add("apply_collision_object", id=msg.id, operation=op, frame=msg.header.frame_id,
                primitives=[(p.type, list(p.dimensions)) for p in msg.primitives],
                poses=[_xyz(p) for p in msg.primitive_poses])
        world = self._robot.world
        if op == CollisionObject.REMOVE:
            if msg.id == "":
                world.clear()
                return True
            return world.pop(msg.id, None) is not None
        if op == CollisionObject.MOVE:
            if msg.id not in world:
                return False
            world[msg.id] = copy.deepcopy(msg)
            return True
        if op in (CollisionObject.ADD, CollisionObject.APPEND):
            if not self.knows_frame_transform(msg.header.frame_id) or not msg.primitives \
                    or len(msg.primitives) < len(msg.primitive_poses):
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
        robot = self._robot
        LOG.add("attach" if aco.object.operation == CollisionObject.ADD else "detach",
                id=aco.object.id, link=aco.link_name, touch_links=list(aco.touch_links))
        if aco.object.operation == CollisionObject.ADD:
            if aco.link_name not in robot.model.data.links:
                return False
            in_world = robot.world.get(aco.object.id)
            if not aco.object.primitives:
                if in_world is None:
                    return False
                body = in_world
            else:
                body = copy.deepcopy(aco.object)
            robot.world.pop(aco.object.id, None)
            robot.attached[aco.object.id] = (aco.link_name, body)
            return True
        if aco.object.operation == CollisionObject.REMOVE:
            if aco.object.id == "":
                names = [n for n, (link, _) in robot.attached.items() if not aco.link_name or link == aco.link_name]
            else:
                entry = robot.attached.get(aco.object.id)
                if entry is not None and aco.link_name and entry[0] != aco.link_name:
                    return False
                names = [aco.object.id] if entry is not None else []
            for name in names:
                _, body = robot.attached.pop(name)
                if name not in robot.world:
                    robot.world[name] = body
            return bool(names) or aco.object.id == ""
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
