"""What the URDF loader keeps, merges and maps (the numbers themselves are checked against
Pinocchio in test_against_pinocchio.py)."""

import math
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import robo_dynamics as rd
from conftest import ARMS, SHIPPED, load_arm


def total_link_mass(path, exclude=()):
    root = ET.parse(path).getroot()
    return sum(float(link.find("inertial/mass").get("value")) for link in root.iter("link")
               if link.find("inertial") is not None and link.get("name") not in exclude)


def test_lumping_conserves_mass_below_the_first_joint():
    robot = load_arm("panda")           # fingers locked, hand lumped onto link 7
    path, _ = ARMS["panda"]
    assert robot.locked_joints == ("panda_finger_joint1", "panda_finger_joint2")
    assert math.isclose(robot.mass.sum(), total_link_mass(path, exclude=("panda_link0",)),
                        rel_tol=1e-12)
    mixed = load_arm("mixed_chain")     # 'world' and 'base' do not move
    assert math.isclose(mixed.mass.sum(), total_link_mass(ARMS["mixed_chain"][0],
                                                          exclude=("world", "base")),
                        rel_tol=1e-12)


def test_limits_dynamics_and_axes_are_kept():
    robot = load_arm("mixed_chain")
    assert robot.joint_names == ("j1", "j2", "j3", "j4", "j5")
    assert robot.joint_types == ("revolute", "prismatic", "continuous", "revolute", "prismatic")
    assert robot.locked_joints == ("side_joint",)
    np.testing.assert_array_equal(robot.effort_limit, [80, 200, 40, 20, 100])
    np.testing.assert_array_equal(robot.velocity_limit, [2, 0.5, 3, 3, 0.2])
    np.testing.assert_array_equal(robot.lower, [-2.5, -0.3, -np.inf, -2, 0])
    np.testing.assert_array_equal(robot.upper, [2.5, 0.3, np.inf, 2, 0.1])
    np.testing.assert_array_equal(robot.damping, [0.5, 0, 0, 0, 0])
    np.testing.assert_array_equal(robot.friction, [1.5, 0, 0, 0, 0])
    np.testing.assert_allclose(robot.axis[1], np.array([1, 2, 2]) / 3.0, rtol=1e-15)
    np.testing.assert_allclose(np.linalg.norm(robot.axis, axis=1), 1.0, rtol=1e-15)


def test_link_without_inertial_is_massless():
    source = ('<robot name="r"><link name="a"/><link name="b"/>'
              '<joint name="j" type="continuous"><parent link="a"/><child link="b"/></joint>'
              '<link name="c"><inertial><mass value="2"/><origin xyz="0.5 0 0"/>'
              '<inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial></link>'
              '<joint name="k" type="continuous"><parent link="b"/><child link="c"/></joint>'
              '</robot>')
    robot = rd.load_robot(source)
    np.testing.assert_array_equal(robot.mass, [0.0, 2.0])
    assert np.all(np.isinf(robot.effort_limit))     # continuous without <limit>


def test_continuous_joints_are_periodic():
    solver = rd.make_solver(load_arm("kinova"), "pinocchio")
    q = np.array([0.3, 2.0, 1.0, -0.5, 1.2, 2.9])
    shifted = q + 2 * np.pi * np.array([1, 0, 0, -1, 0, 2])
    np.testing.assert_allclose(solver.gravity(shifted), solver.gravity(q), atol=1e-12)
    np.testing.assert_allclose(solver.mass_matrix(shifted), solver.mass_matrix(q), atol=1e-12)


def test_xacro_string_and_file_sources_agree():
    path = SHIPPED / "planar_2link.urdf"
    from_file = rd.load_robot(path)
    from_text = rd.load_robot(path.read_text())
    from_xacro = rd.load_robot(SHIPPED / "planar_2link.urdf.xacro")
    for other in (from_text, from_xacro):
        assert other.joint_names == from_file.joint_names
        assert other.tip_link == from_file.tip_link == "tip"
        for field in ("origin_translation", "origin_rotation", "axis", "mass", "com", "inertia",
                      "tip_translation", "effort_limit", "lower", "upper"):
            np.testing.assert_array_equal(getattr(other, field), getattr(from_file, field))


def test_model_is_immutable():
    robot = load_arm("planar_2link")
    with pytest.raises(ValueError):
        robot.mass[0] = 5.0
    with pytest.raises(AttributeError):
        robot.tip_link = "link1"
    with pytest.raises(ValueError):
        robot.gravity[2] = -20.0


def test_gravity_scales_the_gravity_torques():
    """g(q) is linear in the gravity vector: twice the gravity, twice the torques."""
    robot = load_arm("rd_ur5e")
    heavier = load_arm("rd_ur5e", gravity=(0.0, 0.0, -19.62))
    q = np.array([0.3, -1.0, 1.2, -0.4, 0.8, 0.1])
    np.testing.assert_allclose(rd.make_solver(heavier).gravity(q),
                               2.0 * rd.make_solver(robot).gravity(q), rtol=1e-12)


def test_joint_index_by_name():
    robot = load_arm("rd_ur5e")
    assert robot.joint_index("elbow_joint") == 2
    with pytest.raises(KeyError, match="joint 'gripper' is not in the chain"):
        robot.joint_index("gripper")


def test_default_arm_matches_the_published_ur5e_kinematics():
    """UR5e zero pose: flange at (a2 + a3, −(d4 + d6), d1 − d5) from the DH table."""
    solver = rd.make_solver(load_arm("rd_ur5e"))
    R, p = solver.tip_pose(np.zeros(6))
    np.testing.assert_allclose(p, [-0.425 - 0.3922, -(0.1333 + 0.0996), 0.1625 - 0.0997],
                               atol=1e-12)
    np.testing.assert_allclose(solver.model.mass, [3.761, 8.058, 2.846, 1.37, 1.3, 0.365])
    np.testing.assert_array_equal(solver.model.effort_limit, [150, 150, 150, 28, 28, 28])


def test_every_link_below_the_last_chain_joint_is_in_the_model_whatever_the_tip():
    """The Panda's hand and fingers hang below panda_joint7: with tip_link panda_link8,
    panda_hand or panda_hand_tcp the last body weighs what Pinocchio's subtree of
    panda_joint7 weighs in the whole URDF (fingers included)."""
    import pinocchio as pin
    load_arm("panda")                            # skips, saying why, without the data
    path = ARMS["panda"][0]
    full = pin.buildModelFromUrdf(str(path))
    data = full.createData()
    pin.computeSubtreeMasses(full, data)
    subtree = data.mass[full.getJointId("panda_joint7")]
    assert subtree > 1.0                                   # link 7, hand, two fingers
    for tip in ("panda_link8", "panda_hand", "panda_hand_tcp"):
        robot = rd.load_robot(path, tip_link=tip)
        assert robot.mass[-1] == pytest.approx(subtree, rel=1e-12), tip
