"""The control_msgs this repository builds for the PyPI venv (interfaces/control_msgs) is wire
compatible with the released package: equal type hashes (REP 2011), equal constants.

The expected hashes were computed by rosidl (Kilted) from the released definitions of
ros-controls/control_msgs 6.8.0 (FollowJointTrajectory.action, JointTolerance.msg,
JointComponentTolerance.msg; unchanged since 6.3.0), built on 2026-11-26 outside this
repository. A field renamed, retyped, reordered, added or dropped changes the hash."""

import json
import os
import sys

import pytest
from ament_index_python.packages import get_package_share_directory

RELEASED = {
    "action/FollowJointTrajectory": {
        "control_msgs/action/FollowJointTrajectory":
            "RIHS01_ff29901b2693f5deb847e96084a1c2cdb26e70b7c847be21859b70a55fb29cf0",
        "control_msgs/action/FollowJointTrajectory_Goal":
            "RIHS01_8a9060704b269608f5a340934cc26e66869dd14bdac29e2e7fd9ec8b9882d205",
        "control_msgs/action/FollowJointTrajectory_Result":
            "RIHS01_8002e99ed2c14c6faa522f2a93c26d744c5982f254f9e98ff9c6f19789bdb220",
        "control_msgs/action/FollowJointTrajectory_Feedback":
            "RIHS01_0bb018d181bdc6384dd75365480967bd1d6eaee4ef3dd597c64cd0b8bdc10867",
        "control_msgs/action/FollowJointTrajectory_SendGoal":
            "RIHS01_b13789dddc325a7a962825c45e28c77d37237ec129dd0c34dc5994562938c57f",
        "control_msgs/action/FollowJointTrajectory_GetResult":
            "RIHS01_e3ceb38e3e1867c8dc0f46014df26e90eb93422f27e9e97f936e07f94be4bc8b",
        "control_msgs/action/FollowJointTrajectory_FeedbackMessage":
            "RIHS01_95618cc73912d99b9acaa17d2da5e832cb0bfdeede7534fa8ec600feca2a6c4b",
    },
    "msg/JointTolerance": {
        "control_msgs/msg/JointTolerance":
            "RIHS01_c254f9cece0f3b733017b6990fd46d1326e25242d6b8844398c97d9a88e7d648"},
    "msg/JointComponentTolerance": {
        "control_msgs/msg/JointComponentTolerance":
            "RIHS01_739ea7566931944d33830fa10f1bf5e7a7fbdc3172bce7a7eaac642bd6e3ffa4"},
}


@pytest.mark.parametrize("interface", sorted(RELEASED))
def test_type_hashes_equal_the_released_package(interface):
    share = (get_package_share_directory("control_msgs") if os.environ.get("AMENT_PREFIX_PATH")
             else os.path.join(sys.prefix, "share", "control_msgs"))    # the PyPI venv
    path = os.path.join(share, interface + ".json")
    with open(path) as f:
        installed = {h["type_name"]: h["hash_string"] for h in json.load(f)["type_hashes"]}
    for name, expected in RELEASED[interface].items():
        assert installed[name] == expected, name


def test_result_codes_and_component_constants_are_the_released_values():
    from control_msgs.action import FollowJointTrajectory
    from control_msgs.msg import JointComponentTolerance
    r = FollowJointTrajectory.Result
    assert (r.SUCCESSFUL, r.INVALID_GOAL, r.INVALID_JOINTS, r.OLD_HEADER_TIMESTAMP,
            r.PATH_TOLERANCE_VIOLATED, r.GOAL_TOLERANCE_VIOLATED) == (0, -1, -2, -3, -4, -5)
    c = JointComponentTolerance
    assert (c.X_AXIS, c.Y_AXIS, c.Z_AXIS, c.TRANSLATION, c.ROTATION) == (1, 2, 3, 4, 5)
