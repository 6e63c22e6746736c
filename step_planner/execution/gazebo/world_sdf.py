"""The scene as a Gazebo world: an SDF translation of the scene's geometry description, and the bridge of its poses.

WHY: the MuJoCo model (``execution/sim/scene_builder.py``) and this world translate the same description
(:func:`step_planner.domain.scene_geometry.scene_geometry`), so what the arm meets in Gazebo is what it met in
MuJoCo. Written as SDF 1.9, the newest version both Gazebo Harmonic (sdformat14, spec 1.11, which up-converts it)
and Debian bookworm's checker (libsdformat 12, spec 1.9: sdformat@sdformat12_12.3.0 CMakeLists.txt:12) accept:
every plugin has a ``name`` (required in 1.9: sdf/1.9/plugin.sdf:4), prismatic joints live inside models with
explicit limits (sdf/1.9/joint.sdf:75-80 ``limit`` required), no mimic, no automatic inertia.

What the world holds:

- the table tops and the trays, bins and boxes as static models;
- each cabinet as a model: its carcass a link named like the model, fixed to the world, and each drawer a link on
  a prismatic joint (axis -x, travel, damping, friction; armature has no SDF 1.9 element), the handle's grasp
  point a ``<frame>``. SDF 1.9 has no initial joint position, so a drawer the scene opens starts as a link at its
  open pose with the joint's limits shifted to [-travel, 0]: the same physical travel;
- each object as a model with one link: mass, inertia, friction (``mu``, torsional coefficient);
- a ``PosePublisher`` in every cabinet and object model (gz-sim@b81e26d src/systems/pose_publisher/PosePublisher.cc):
  objects publish their model pose only (frame_id: the world's name, child_frame_id: the model,
  .cc:207-213, 436-447), cabinets their model and link poses (a drawer: frame_id the cabinet, child
  ``cabinet::drawer``), as ``gz.msgs.Pose_V`` (``use_pose_vector_msg``, .cc:256-257, 284-306) on the default topic
  ``/model/<model>/pose`` (.cc:259-275). ros_gz_bridge turns each Pose_V into a tf2_msgs/TFMessage with ``::``
  replaced by ``/`` (ros_gz@739cb42 ros_gz_bridge/src/convert/tf2_msgs.cpp:40-52, geometry_msgs.cpp:243-258,
  utils.cpp:47-50): the frames the MuJoCo robot publishes (``execution/sim/robot.py`` ``model_poses``).

One shared gz topic would need PosePublisher's ``<topic>``, which exists from gz-sim 8.12.0 on (commit 2b94d72,
"Support for user-defined topic in PosePublisher"); Jazzy's gz_sim_vendor has shipped older 8.x (0.0.6: gz-sim
8.7.0). So the poses are bridged per model: :func:`bridge_config` lists one ros_gz_bridge entry per publishing
model, all onto the one ROS topic ``/model_poses`` (ros_gz_bridge keeps one handle per entry, several may share a
ROS topic: ros_gz@739cb42 ros_gz_bridge/src/ros_gz_bridge.cpp:83-117), plus ``/clock``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable

import numpy as np

from step_planner.domain.bodies import Body, Box, mass_properties
from step_planner.domain.scene_geometry import ObjectGeometry, SceneGeometry

SDF_VERSION = "1.9"
POSE_RATE_HZ = 50.0  # as the MuJoCo robot's pose_rate_hz
STEP_S = 0.001  # gz-sim's default physics step
GZ_SYSTEMS = (  # the defaults a world loses once it lists a system (gz-sim@b81e26d include/gz/sim/server.config:3-16)
    ("gz-sim-physics-system", "gz::sim::systems::Physics"),
    ("gz-sim-user-commands-system", "gz::sim::systems::UserCommands"),  # /world/<w>/create: ros_gz_sim create
    ("gz-sim-scene-broadcaster-system", "gz::sim::systems::SceneBroadcaster"),
)
POSE_PUBLISHER = ("gz-sim-pose-publisher-system", "gz::sim::systems::PosePublisher")


def _num(v: float) -> str:
    return f"{float(v):.9g}" if abs(float(v)) >= 1e-12 else "0"


def _vec(values: Iterable[float]) -> str:
    return " ".join(_num(v) for v in values)


def _sub(parent: ET.Element, tag: str, text: str | None = None, **attrib: str) -> ET.Element:
    el = ET.SubElement(parent, tag, attrib)
    if text is not None:
        el.text = text
    return el


def _pose(parent: ET.Element, xyz, yaw: float = 0.0, relative_to: str | None = None) -> None:
    attrib = {"relative_to": relative_to} if relative_to else {}
    _sub(parent, "pose", f"{_vec(xyz)} 0 0 {_num(yaw)}", **attrib)


def _material(parent: ET.Element, rgba) -> None:
    mat = _sub(parent, "material")
    _sub(mat, "ambient", _vec(rgba))
    _sub(mat, "diffuse", _vec(rgba))


def _box_shapes(link: ET.Element, box: Box) -> None:
    for kind in ("collision", "visual"):  # names unique in a link: the visual's gets a suffix
        el = _sub(link, kind, name=box.name if kind == "collision" else f"{box.name}_visual")
        _pose(el, box.pos)
        _sub(_sub(_sub(el, "geometry"), "box"), "size", _vec(2 * np.asarray(box.half)))
        if kind == "visual":
            _material(el, box.rgba)


def _inertial(link: ET.Element, mass: float, com, inertia: np.ndarray) -> None:
    el = _sub(link, "inertial")
    _pose(el, com)
    _sub(el, "mass", _num(mass))
    i = _sub(el, "inertia")
    for tag, (r, c) in (("ixx", (0, 0)), ("ixy", (0, 1)), ("ixz", (0, 2)), ("iyy", (1, 1)), ("iyz", (1, 2)),
                        ("izz", (2, 2))):
        _sub(i, tag, _num(inertia[r, c]))


def _plugin(model: ET.Element, filename: str, name: str, **params: str) -> None:
    el = _sub(model, "plugin", filename=filename, name=name)
    for key, value in params.items():
        _sub(el, key, value)


def _pose_publisher(model: ET.Element, links: bool) -> None:
    _plugin(model, *POSE_PUBLISHER, publish_link_pose=str(links).lower(), publish_model_pose="true",
            publish_nested_model_pose="false", use_pose_vector_msg="true", update_frequency=_num(POSE_RATE_HZ))


def _static_model(world: ET.Element, name: str, pos, boxes: Iterable[Box]) -> None:
    model = _sub(world, "model", name=name)
    _sub(model, "static", "true")
    _pose(model, pos)
    link = _sub(model, "link", name=name)
    for box in boxes:
        _box_shapes(link, box)


def _cabinet(world: ET.Element, cab: Body, openings: dict[str, float]) -> None:
    model = _sub(world, "model", name=cab.name)
    _pose(model, cab.pos)
    carcass = _sub(model, "link", name=cab.name)
    props = mass_properties(cab.boxes)
    _inertial(carcass, props.mass, props.com, props.inertia)
    for box in cab.boxes:
        _box_shapes(carcass, box)
    fixed = _sub(model, "joint", name=f"{cab.name}_fixed", type="fixed")
    _sub(fixed, "parent", "world")
    _sub(fixed, "child", cab.name)
    for drawer in cab.children:
        slide = drawer.slide
        assert slide is not None, "a cabinet's children are drawers on slides"
        opening = openings.get(drawer.name, 0.0)
        link = _sub(model, "link", name=drawer.name)
        _pose(link, np.asarray(drawer.pos) + np.asarray(slide.axis) * opening)
        props = mass_properties(drawer.boxes)
        _inertial(link, props.mass, props.com, props.inertia)
        for box in drawer.boxes:
            _box_shapes(link, box)
        joint = _sub(model, "joint", name=slide.name, type="prismatic")
        _sub(joint, "parent", cab.name)
        _sub(joint, "child", drawer.name)
        axis = _sub(joint, "axis")
        _sub(axis, "xyz", _vec(slide.axis))
        limit = _sub(axis, "limit")
        _sub(limit, "lower", _num(-opening))
        _sub(limit, "upper", _num(slide.travel - opening))
        dynamics = _sub(axis, "dynamics")
        _sub(dynamics, "damping", _num(slide.damping))
        _sub(dynamics, "friction", _num(slide.friction))
        for site in drawer.sites:
            frame = _sub(model, "frame", name=site.name, attached_to=drawer.name)
            _pose(frame, site.pos, relative_to=drawer.name)
    _pose_publisher(model, links=True)


def _object(world: ET.Element, obj: ObjectGeometry) -> None:
    model = _sub(world, "model", name=obj.name)
    _pose(model, obj.spawn_position, np.radians(obj.yaw))
    link = _sub(model, "link", name=obj.name)
    _inertial(link, obj.mass, (0.0, 0.0, 0.0), obj.inertia)
    for kind in ("collision", "visual"):
        el = _sub(link, kind, name=f"{obj.name}_geom" if kind == "collision" else f"{obj.name}_visual")
        geometry = _sub(el, "geometry")
        if obj.shape == "box":
            _sub(_sub(geometry, "box"), "size", _vec(2 * obj.half))
        else:
            cyl = _sub(geometry, "cylinder")
            _sub(cyl, "radius", _num(obj.half[0]))
            _sub(cyl, "length", _num(2 * obj.half[2]))
        if kind == "visual":
            _material(el, obj.rgba)
        else:
            friction = _sub(_sub(el, "surface"), "friction")
            _sub(_sub(friction, "torsional"), "coefficient", _num(obj.friction[1]))
            ode = _sub(friction, "ode")
            _sub(ode, "mu", _num(obj.friction[0]))
            _sub(ode, "mu2", _num(obj.friction[0]))
    _pose_publisher(model, links=False)


def world_sdf(geometry: SceneGeometry, world_name: str) -> str:
    """The SDF 1.9 world of ``geometry``, named ``world_name`` (the poses' root frame, as the MuJoCo robot's
    ``world_name``)."""
    root = ET.Element("sdf", version=SDF_VERSION)
    world = _sub(root, "world", name=world_name)
    physics = _sub(world, "physics", name="default_physics", type="ignored")
    _sub(physics, "max_step_size", _num(STEP_S))
    _sub(physics, "real_time_factor", "1")
    for filename, name in GZ_SYSTEMS:
        _plugin(world, filename, name)
    _sub(world, "gravity", "0 0 -9.81")
    sun = _sub(world, "light", type="directional", name="sun")
    _sub(sun, "cast_shadows", "false")
    _pose(sun, (0.5, 0.0, 2.0))
    _sub(sun, "diffuse", "0.8 0.8 0.8 1")
    _sub(sun, "specular", "0.2 0.2 0.2 1")
    _sub(sun, "direction", "0 0 -1")
    for box in geometry.world_boxes:
        name = box.name.removesuffix("_top")
        _static_model(world, name, (0.0, 0.0, 0.0), [box])
    for body in geometry.fixtures:
        if body.children:
            _cabinet(world, body, geometry.initial_openings)
        else:
            _static_model(world, body.name, body.pos, body.boxes)
    for obj in geometry.objects.values():
        _object(world, obj)
    ET.indent(root, space="  ")
    return '<?xml version="1.0"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def pose_models(geometry: SceneGeometry) -> list[str]:
    """The models whose PosePublisher reports poses: the cabinets and the objects."""
    return [b.name for b in geometry.fixtures if b.children] + list(geometry.objects)


def bridge_config(geometry: SceneGeometry, pose_topic: str = "/model_poses") -> list[dict[str, str]]:
    """ros_gz_bridge YAML entries (ros_gz@739cb42 ros_gz_bridge/src/bridge_config.cpp:30-37, README.md:248-295):
    /clock, and every model's Pose_V onto ``pose_topic`` as tf2_msgs/TFMessage."""
    entries = [{"ros_topic_name": "/clock", "gz_topic_name": "/clock", "ros_type_name": "rosgraph_msgs/msg/Clock",
                "gz_type_name": "gz.msgs.Clock", "direction": "GZ_TO_ROS"}]
    entries += [{"ros_topic_name": pose_topic, "gz_topic_name": f"/model/{name}/pose",
                 "ros_type_name": "tf2_msgs/msg/TFMessage", "gz_type_name": "gz.msgs.Pose_V",
                 "direction": "GZ_TO_ROS"} for name in pose_models(geometry)]
    return entries
