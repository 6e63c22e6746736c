"""What a recovery from the FR3's reflex reports when upstream's three steps all ran (reflex.recover), for the tests
of both backends that recover (controllers: test_fr3_reflex.py; moveit: test_moveit_backend.py)."""

from __future__ import annotations

THREE_STEPS = ("1. error recovery: /action_server/error_recovery succeeded; 2. FrankaHardwareInterface active; "
               "3. activated joint_state_broadcaster, franka_robot_state_broadcaster, fr3_arm_controller; "
               "4. controllers active and joint states moving again")


def assert_recovered_in_three_steps(report, reflex: str) -> None:
    """``report``: a reflex.RecoveryReport; ``reflex``: the error franka_robot_state_broadcaster names afterwards."""
    assert report.ok, report.message
    assert THREE_STEPS in report.message, report.message
    assert f"franka_robot_state_broadcaster: last_motion_errors {reflex}" in report.message, report.message
