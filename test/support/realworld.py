"""Robot descriptions as their users have them, beside this repository in
../shared/realworld (each with its licence and source; never copied into the package): the
MG400's driver URDF and the Robotiq 2F-85's ROS 2 description. Where that folder is absent
(a machine without the developers' shared files) the tests that read it skip, saying so."""

import pytest

from conftest import REPO

REALWORLD = REPO.parent / "shared" / "realworld"
MG400_URDF = REALWORLD / "mg400" / "mg400.urdf"        # HarvestX/MG400_ROS2, Apache-2.0
ROBOTIQ_2F85_URDF = (REALWORLD / "robotiq_2f85_ros2" /   # PickNikRobotics/ros2_robotiq_gripper,
                     "robotiq_2f85_mimic.urdf")           # BSD-3-Clause


def require(path):
    """`path`, or skip the calling test naming the missing file."""
    if not path.is_file():
        pytest.skip(f"{path} is absent: the robot descriptions of ../shared/realworld are "
                    "not on this machine")
    return path
