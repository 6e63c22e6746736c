"""``~/markers`` (visualization_msgs/MarkerArray, latched): the world model, the goal and the plan for RViz.

The content is :mod:`step_planner.viz.scene_markers` (pure, tested without ROS); this module only converts its
shapes and publishes them when the world or the tree changes. Every array starts with a DELETEALL marker, so
what left the picture (a fact met, a subgoal done) leaves RViz too; the QoS is transient local, as ``~/tree``,
so an RViz started late gets the last picture. Arrays are built and sent by a thread of their own, the latest picture
only: a burst of tree events costs the planning thread a snapshot each, never a message (a 32-marker array takes
~6 ms to build as rosidl messages). A scene's geometry is built once, off the caller's thread (it can
take seconds): until it is there, objects are drawn from the poses the world carries.

``~/scene_json`` (std_msgs/String, latched) carries the snapshot the markers of the same moment are drawn from
(:mod:`step_planner.viz.scene_snapshot`, JSON): what ``step-planner hmi`` draws its picture of the table from.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import Any

from geometry_msgs.msg import Point
from std_msgs.msg import ColorRGBA, Header, String
from visualization_msgs.msg import Marker, MarkerArray

from step_planner.domain.world import WorldState
from step_planner.planner.tree import SubgoalTree, TreeEvent
from step_planner.ros.qos import latched
from step_planner.viz.scene_markers import BASE_FRAME, GeometryCache, MarkerModel, Shape, markers_of

KINDS = {"cube": Marker.CUBE, "cylinder": Marker.CYLINDER, "text": Marker.TEXT_VIEW_FACING, "arrow": Marker.ARROW}


def marker_msg(shape: Shape, header: Header) -> Marker:
    m = Marker(header=header, ns=shape.ns, id=shape.id, type=KINDS[shape.kind], action=Marker.ADD,
               text=shape.text, frame_locked=False)
    m.pose.position.x, m.pose.position.y, m.pose.position.z = shape.position
    o = m.pose.orientation
    o.x, o.y, o.z, o.w = shape.orientation
    m.scale.x, m.scale.y, m.scale.z = shape.scale
    m.color = ColorRGBA(r=shape.rgba[0], g=shape.rgba[1], b=shape.rgba[2], a=shape.rgba[3])
    m.points = [Point(x=p[0], y=p[1], z=p[2]) for p in shape.points]
    return m


def marker_array(shapes: Sequence[Shape], stamp: Any, frame: str = BASE_FRAME) -> MarkerArray:
    """DELETEALL, then one marker per shape (RViz applies them in order)."""
    header = Header(stamp=stamp, frame_id=frame)
    return MarkerArray(markers=[Marker(header=header, action=Marker.DELETEALL),
                                *(marker_msg(s, header) for s in shapes)])


class MarkerPublisher:
    """Owns ``~/markers`` and ``~/scene_json`` on ``node``; a TreeListener of each goal, fed its observations by
    the node."""

    def __init__(self, node: Any, frame: str = BASE_FRAME) -> None:
        self.node, self.frame = node, frame
        self.model = MarkerModel()
        self.geometries = GeometryCache()
        self._lock = threading.Lock()
        self._world = 0  # which reset the model shows: a geometry built for an earlier one is not applied
        self._pub = node.create_publisher(MarkerArray, "~/markers", latched())
        self._scene_pub = node.create_publisher(String, "~/scene_json", latched())
        self._changed = threading.Condition(self._lock)
        self._dirty = False
        self._closed = False
        self._sender = threading.Thread(target=self._send_loop, daemon=True, name="markers_sender")
        self._sender.start()

    def close(self, timeout_s: float = 2.0) -> None:
        """Stop sending (before the node is destroyed)."""
        with self._lock:
            self._closed = True
            self._changed.notify_all()
        self._sender.join(timeout_s)

    def reset(self, world: WorldState) -> threading.Thread | None:
        """A new world: the scene at start-up, or the world a goal starts from. Returns the thread building its
        geometry (None: built before)."""
        key = self.geometries.key(world)
        known, geometry = self.geometries.get(world, key)
        with self._lock:
            self._world += 1
            generation = self._world
            self.model.reset(world, geometry, build=False)
            self._publish()
        if known:
            return None
        thread = threading.Thread(target=self._build, args=(world.copy(), key, generation), daemon=True,
                                  name="markers_geometry")
        thread.start()
        return thread

    def _build(self, world: WorldState, key: str, generation: int) -> None:
        geometry = self.geometries.build(world, key)
        try:
            with self._lock:
                if generation == self._world:
                    self.model.set_geometry(geometry)
                    self._publish()
        except Exception:  # a viewer's picture: never an error of the node
            pass

    def observe(self, world: WorldState) -> None:
        """The executor's world after a primitive."""
        with self._lock:
            self.model.observe(world)
            self._publish()

    def on_tree_event(self, event: TreeEvent, tree: SubgoalTree) -> None:
        with self._lock:
            self.model.set_tree(tree.snapshot())
            self._publish()

    def _publish(self) -> None:  # under the lock: the sender takes the latest picture
        self._dirty = True
        self._changed.notify_all()

    def _send_loop(self) -> None:
        while True:
            with self._lock:
                while not (self._dirty or self._closed):
                    self._changed.wait()
                if self._closed:
                    return
                self._dirty = False
                snapshot = self.model.snapshot()
            try:
                self._pub.publish(marker_array(markers_of(snapshot), self.node.get_clock().now().to_msg(), self.frame))
                self._scene_pub.publish(String(data=json.dumps({**snapshot, "frame": self.frame})))
            except Exception:  # the node is being destroyed: nothing more to show
                return
