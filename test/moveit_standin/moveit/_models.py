"""The two robot models the stand-in knows, from their upstream SRDF/URDF (not part of the real moveit package).

MoveIt builds its model from the ``robot_description`` and ``robot_description_semantic`` parameters; the stand-in
picks one of these by the URDF's robot name, so which robot MoveIt has is decided by the parameters that reached
the node, as in MoveIt. The model frame is the SRDF virtual joint's parent frame, ``world`` for both.

- ``panda``: moveit/moveit_resources@ef5836d panda_moveit_config: groups config/panda_arm.xacro:9-11 (chain
  panda_link0 -> panda_link8), config/hand.xacro:9-15 (hand: panda_hand, fingers, panda_finger_joint1, passive
  panda_finger_joint2), config/panda_arm_hand.srdf.xacro:16-19 (panda_arm_hand); named states
  config/panda_arm.xacro:13-39 and panda_arm_hand.srdf.xacro:20-27; virtual joint world -> panda_link0
  (panda_arm.xacro:42).
- ``fr3``: frankarobotics/franka_description@566ba44 (1.0.1): robots/common/franka_arm.srdf.xacro:7 (fr3_arm, chain
  fr3_link0 -> fr3_link8), :9 (virtual joint world -> base), robots/common/group_definition.xacro:9-26 (ready,
  extended), end_effectors/franka_hand/franka_hand.srdf.xacro:5-20 (fr3_hand: fr3_hand, fingers; open 0.035, close
  0); links from robots/common/franka_arm.xacro:22-29 (base -> fr3_link0) and franka_hand.xacro:22-41 (fr3_hand,
  fr3_hand_tcp).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass
class RobotModelData:
    name: str
    groups: dict[str, list[str]]  # group -> its active joints
    states: dict[str, dict[str, list[float]]]  # group -> named state -> joint values
    links: set[str]
    model_frame: str = "world"
    controllers: dict[str, list[str]] = field(default_factory=dict)  # filled from the parameters


def _arm(prefix: str) -> list[str]:
    return [f"{prefix}_joint{i}" for i in range(1, 8)]


PANDA = RobotModelData(
    name="panda",
    groups={"panda_arm": _arm("panda"), "hand": ["panda_finger_joint1"],
            "panda_arm_hand": [*_arm("panda"), "panda_finger_joint1"]},
    states={"panda_arm": {"ready": [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785],
                          "extended": [0.0, 0.0, 0.0, 0.0, 0.0, 1.571, 0.785],
                          "transport": [0.0, -0.5599, 0.0, -2.97, 0.0, 0.0, 0.785]},
            "hand": {"open": [0.035], "close": [0.0]}},
    links={*(f"panda_link{i}" for i in range(9)), "panda_hand", "panda_leftfinger", "panda_rightfinger"},
)

FR3 = RobotModelData(
    name="fr3",
    groups={"fr3_arm": _arm("fr3"), "fr3_hand": ["fr3_finger_joint1"]},
    states={"fr3_arm": {"ready": [0.0, -math.pi / 4, 0.0, -3 * math.pi / 4, 0.0, math.pi / 2, math.pi / 4],
                        "extended": [0.0, 0.0, 0.0, -0.1, 0.0, math.pi / 2, math.pi / 4]},
            "fr3_hand": {"open": [0.035], "close": [0.0]}},
    links={"base", *(f"fr3_link{i}" for i in range(9)), "fr3_hand", "fr3_hand_tcp", "fr3_leftfinger",
           "fr3_rightfinger"},
)

MODELS = {"panda": PANDA, "fr3": FR3}
