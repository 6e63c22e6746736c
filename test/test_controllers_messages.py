"""The robot boundary's message builders: the writers that fill one message in place give, call after call,
exactly the message built from its constructors (the MuJoCo robot publishes with them on its physics thread)."""

from __future__ import annotations

import pytest

pytest.importorskip("rclpy")

from builtin_interfaces.msg import Time  # noqa: E402
from geometry_msgs.msg import Quaternion, Transform, TransformStamped, Vector3  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Header  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from step_planner.domain.pose_tree import ModelPose  # noqa: E402
from step_planner.execution.controllers import messages as m  # noqa: E402
from step_planner.execution.sim.robot import JointReading  # noqa: E402

STAMPS = [0.0, 0.002, 1.5, 12.345678901, 2.9999999999, 7.0000000001, 1e6 + 0.25]


def built(poses: list[ModelPose], at: float) -> TFMessage:
    """Field by field from the constructors (ros_gz_bridge's mapping, see messages.transforms_msg)."""
    sec = int(at // 1)
    when = Time(sec=sec, nanosec=min(999_999_999, int(round((at - sec) * 1e9))))
    return TFMessage(transforms=[TransformStamped(
        header=Header(stamp=when, frame_id=p.frame_id), child_frame_id=p.child_frame_id,
        transform=Transform(translation=Vector3(x=p.position[0], y=p.position[1], z=p.position[2]),
                            rotation=Quaternion(x=p.orientation[0], y=p.orientation[1], z=p.orientation[2],
                                                w=p.orientation[3]))) for p in poses])


def poses(n: int, shift: float) -> list[ModelPose]:
    return [ModelPose(f"world{i % 2}", f"cabinet/drawer{i}", (0.1 * i + shift, -0.2 - shift, 0.3 * i),
                      (0.01 * i, -0.02, 0.1 + shift, 0.99)) for i in range(n)]


@pytest.mark.parametrize("at", STAMPS)
def test_set_stamp_writes_what_stamp_builds(at):
    time = Time(sec=99, nanosec=99)
    m.set_stamp(time, at)
    assert time == m.stamp(at)
    assert (time.sec, time.nanosec) == (m.stamp(at).sec, m.stamp(at).nanosec)


def test_a_transforms_writer_gives_the_constructed_message_at_every_call_whatever_the_count():
    writer = m.TransformsWriter()
    for k, (n, at) in enumerate(zip([13, 3, 0, 13, 20, 1], STAMPS, strict=False)):
        expected = built(poses(n, 0.01 * k), at)
        got = writer(poses(n, 0.01 * k), at)
        assert got == expected and len(got.transforms) == n
        assert got == m.transforms_msg(poses(n, 0.01 * k), at)
        assert repr(got) == repr(expected)
    assert writer(poses(2, 0.0), 1.0) is got  # one message, filled in place


def test_a_joint_state_writer_gives_the_constructed_message_at_every_call():
    writer = m.JointStateWriter()
    names = ("fr3_joint1", "fr3_joint2", "fr3_finger_joint1")
    for k, at in enumerate(STAMPS):
        reading = JointReading(at, names, (0.1 * k, -0.2, 0.03), (0.0, 1e-9 * k, -0.5), (k * 2.5, 0.0, -20.0))
        expected = JointState(header=Header(stamp=m.stamp(at)), name=list(names), position=list(reading.position),
                              velocity=list(reading.velocity), effort=list(reading.effort))
        got = writer(reading)
        assert got == expected == m.joint_state_msg(reading)
        assert repr(got) == repr(expected)
