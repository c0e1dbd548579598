"""The Robotiq 2F-85 from its ROS 2 description (PickNikRobotics/ros2_robotiq_gripper,
../shared/realworld): each finger a four-bar written as <mimic> joints (inner knuckle =
knuckle, fingertip = −knuckle), the pin between the inner knuckle and the fingertip left
out. Beside it, the pins a user adds in a params file where they make each finger a
parallelogram (the parallel-grip mode the mimic ratios describe), and the two knuckles as
motors. References: the parallelogram's closed form, Pinocchio's URDF parser (which takes
the mimic joints as plain ones) with the pins as CONTACT_3D constraints."""

import numpy as np
import pytest

import realworld
from robo_dynamics.closed_chain import load_closed_chain
from robo_dynamics.closed_chain.tree_dynamics import tree_rnea
from robo_dynamics.errors import URDFError

pin = pytest.importorskip("pinocchio")
from pinocchio_loops import PinocchioLoops  # noqa: E402  (after pinocchio's importorskip)

PREFIX = "robotiq_85_"
KNUCKLE = {"left": (0.03060114, 0.05490452), "right": (-0.03060114, 0.05490452)}   # x, z [m]
INNER = {"left": (0.0127, 0.06142), "right": (-0.0127, 0.06142)}
TIP = {"left": (0.06775864, 0.0983262), "right": (-0.06775864, 0.0983262)}  # the fingertip
#   joint's origin at q = 0: the knuckle's + the finger's + the tip joint's offsets


def pin_point(side):
    """The pin that makes `side`'s finger a parallelogram: on the inner knuckle at the
    knuckle-to-tip vector from its pivot; on the fingertip at the pivots' offset from its
    joint (the URDF's joint frames are all unrotated at q = 0)."""
    (ax, az), (bx, bz), (cx, cz) = KNUCKLE[side], INNER[side], TIP[side]
    return {"type": "point", "link_a": f"{PREFIX}{side}_inner_knuckle_link",
            "xyz_a": [cx - ax, 0.0, cz - az], "link_b": f"{PREFIX}{side}_finger_tip_link",
            "xyz_b": [bx - ax, 0.0, bz - az]}


PARAMETERS = {"actuated_joints": [f"{PREFIX}left_knuckle_joint", f"{PREFIX}right_knuckle_joint"],
              "loop_closures": {"names": ["left_pin", "right_pin"],
                                "left_pin": pin_point("left"), "right_pin": pin_point("right")}}


@pytest.fixture(scope="module")
def urdf():
    return realworld.require(realworld.ROBOTIQ_2F85_URDF).read_text()


@pytest.fixture(scope="module")
def gripper(urdf):
    return load_closed_chain(urdf, PARAMETERS)


def closed(chain, left, right):
    """The closed pose with the knuckles at `left`, `right` [rad]."""
    q = chain.reference.copy()
    q[list(chain.actuated)] = [left, right]
    return chain.close(q, start=chain.reference)


def test_its_mimic_joints_give_way_to_the_loops_which_move_them_as_the_mimics_say(gripper):
    """Every mimic joint the pins determine is taken from them (noted, its rate 0 rad/rad off
    the loop's along the mimics' motion: a parallelogram; the right knuckle's, a motor's,
    not applied), and over the knuckles' range the loops put the inner knuckles at the
    knuckles' angle and the fingertips at minus it (the parallelogram's closed form, which
    is what the mimic ratios say)."""
    names = gripper.tree.joint_names
    notes = [note for note in gripper.tree.warnings if "<mimic>" in note]
    passive = [note for note in notes if "gives way to the loops" in note]
    assert len(passive) == 4 and all("rate is 0 rad/rad off" in note for note in passive), notes
    assert len(notes) == 5 and any(f"'{PREFIX}right_knuckle_joint' is a motor" in note
                                   for note in notes), notes
    for left, right in [(0.0, 0.0), (0.3, 0.5), (0.8, 0.1), (0.45, 0.8)]:
        q = dict(zip(names, closed(gripper, left, right)))
        for side, angle in (("left", left), ("right", right)):
            assert abs(q[f"{PREFIX}{side}_inner_knuckle_joint"] - angle) < 1e-10
            assert abs(q[f"{PREFIX}{side}_finger_tip_joint"] + angle) < 1e-10


def test_its_holding_torques_are_pinocchios_with_the_same_pins(urdf, gripper):
    """At 8 closed poses across the knuckles' range: the motor torques that hold the fingers
    equal Pinocchio's statics to 1e-9 N·m (gravity along −z of the gripper's base)."""
    reference = PinocchioLoops(urdf, gripper.tree.joint_names, PARAMETERS["loop_closures"])
    zero = np.zeros(gripper.tree.dof)
    rng = np.random.default_rng(6)
    for left, right in rng.uniform(0.0, 0.8, (8, 2)):
        q = closed(gripper, left, right)
        tau, _ = gripper.inverse_dynamics(q, zero, zero)
        expected = reference.holding_torques(q, list(gripper.actuated))
        assert np.abs(expected).max() > 1e-4                # N·m: the fingers weigh
        np.testing.assert_allclose(tau, expected, atol=1e-9)


def test_with_one_motor_its_other_knuckles_mimic_is_kept_as_a_coupling(urdf):
    """One motor, the left knuckle, as the gripper has: the right knuckle's mimic (×−1), which
    no loop gives, is kept (noted); the motor's holding torque is Pinocchio's two-knuckle
    torques by virtual work through the coupling, τ_L − τ_R (1e-9 N·m at 6 poses); MuJoCo's
    gripper (the pins `connect`s, the coupling a joint equality) stays within 1e-6 rad of
    the pose for 0.2 s under it."""
    from robo_dynamics.closed_chain import MotorSpace
    from robo_dynamics.simulation.mujoco_closed_chain import MujocoClosedChain
    one_motor = {**PARAMETERS, "actuated_joints": [f"{PREFIX}left_knuckle_joint"]}
    gripper = load_closed_chain(urdf, one_motor)
    assert gripper.coupling.motors == (f"{PREFIX}left_knuckle_joint",)
    assert any(f"'{PREFIX}right_knuckle_joint' follows" in note and "kept" in note
               for note in gripper.tree.warnings), gripper.tree.warnings
    reference = PinocchioLoops(urdf, gripper.tree.joint_names, PARAMETERS["loop_closures"])
    motors = MotorSpace(gripper)
    names = gripper.tree.joint_names
    two = [names.index(f"{PREFIX}left_knuckle_joint"), names.index(f"{PREFIX}right_knuckle_joint")]
    for left in np.linspace(0.05, 0.75, 6):
        q = motors.pose([left])
        assert abs(q[two[1]] + left) < 1e-10                 # the coupling: right = −left
        tau_left, tau_right = reference.holding_torques(q, two)
        np.testing.assert_allclose(motors.gravity([left]), [tau_left - tau_right], atol=1e-9)
    plant = MujocoClosedChain(gripper, time_step=1e-4)
    q = motors.pose([0.4])
    plant.set_state(q, np.zeros(len(q)))
    moved, _ = plant.run(0.2, motors.gravity([0.4]))
    assert np.abs(moved - q).max() < 1e-6, np.abs(moved - q).max()


def test_a_free_mimic_whose_master_is_no_motor_is_refused_naming_it(urdf):
    """The right knuckle alone a motor: the left finger's mimics follow the left knuckle,
    which nothing drives: refused with the reason."""
    right_only = {**PARAMETERS, "actuated_joints": [f"{PREFIX}right_knuckle_joint"]}
    with pytest.raises(URDFError, match=f"mimics '{PREFIX}left_knuckle_joint', but the loops "
                                        "do not determine it"):
        load_closed_chain(urdf, right_only)


# The real finger (MuJoCo Menagerie's robotiq_2f85, 2f85.xml: its bodies' and joints'
# positions, published figures) in the finger's plane, (outward, up) [m] from the base:
# the knuckle's pivot A and the fingertip's pin C on it (the coupler rests at its stop in
# free motion: one rigid piece with the knuckle), the inner knuckle's pivot B and the
# fingertip's pivot D on it. Not a parallelogram: |AC| − |BD| = 0.3 mm, AB ∦ CD.
REAL = {"A": (0.0306011, 0.054904), "B": (0.0132, 0.0609), "C": (0.0682, 0.0984),
        "D": (0.0502, 0.1049)}
# kg and centres of mass [m, in the link's frame at its pivot], Menagerie's rounded: the
# knuckle with its coupler, the inner knuckle (its spring link), the fingertip with its pad
MASSES = {"knuckle": (0.023, 0.019, 0.021), "inner": (0.022, 0.018, 0.022),
          "tip": (0.016, -0.009, 0.025)}


def real_finger_urdf():
    """One finger of the real geometry as a URDF tree the way the ROS description draws it
    (knuckle at A, inner knuckle at B, fingertip pivoting at C on the knuckle; every joint
    about −y, closing for positive angles), the pin at D left to a loop closure."""
    (ax, az), (bx, bz), (cx, cz) = REAL["A"], REAL["B"], REAL["C"]

    def link(name, x, z, mass):
        return (f'<link name="{name}"><inertial><origin xyz="{x} 0 {z}"/><mass value="{mass}"/>'
                '<inertia ixx="1e-6" ixy="0" ixz="0" iyy="1e-6" iyz="0" izz="1e-6"/>'
                '</inertial></link>')

    def joint(name, parent, child, x, z):
        return (f'<joint name="{name}" type="revolute"><parent link="{parent}"/>'
                f'<child link="{child}"/><origin xyz="{x} 0 {z}"/><axis xyz="0 -1 0"/>'
                '<limit lower="-1" upper="1.2" effort="10" velocity="2"/></joint>')
    return "".join([
        '<robot name="real_finger"><link name="base"/>',
        *(link(name, x, z, mass) for name, (mass, x, z) in MASSES.items()),
        joint("knuckle_joint", "base", "knuckle", ax, az),
        joint("inner_joint", "base", "inner", bx, bz),
        joint("tip_joint", "knuckle", "tip", cx - ax, cz - az), '</robot>'])


REAL_PIN = {"actuated_joints": ["knuckle_joint"], "loop_closures": {
    "names": ["pin"], "pin": {"type": "point", "link_a": "inner",
                              "xyz_a": [REAL["D"][0] - REAL["B"][0], 0.0,
                                        REAL["D"][1] - REAL["B"][1]],
                              "link_b": "tip", "xyz_b": [REAL["D"][0] - REAL["C"][0], 0.0,
                                                         REAL["D"][1] - REAL["C"][1]]}}}


def turned(point, pivot, angle):
    """`point` turned by `angle` [rad] about −y through `pivot` (x out, z up: closing)."""
    x, z = point[0] - pivot[0], point[1] - pivot[1]
    c, s = np.cos(angle), np.sin(angle)
    return np.array([pivot[0] + c * x - s * z, pivot[1] + s * x + c * z])


def four_bar_tilt(theta):
    """The fingertip's tilt [rad] at knuckle angle θ, the four-bar's closed form: C turned
    about A; D where the circle about B of radius |BD| meets the one about C(θ) of radius
    |CD| (the intersection nearer the drawn D); the tilt, CD's turn."""
    A, B, C, D = (np.array(REAL[k]) for k in "ABCD")
    C_t = turned(C, A, theta)
    r0, r1 = np.linalg.norm(D - B), np.linalg.norm(D - C)
    d = np.linalg.norm(C_t - B)
    along = (r0 ** 2 - r1 ** 2 + d ** 2) / (2 * d)
    across = np.sqrt(r0 ** 2 - along ** 2)
    unit = (C_t - B) / d
    normal = np.array([-unit[1], unit[0]])
    D_t = min((B + along * unit + sign * across * normal for sign in (1.0, -1.0)),
              key=lambda p: np.linalg.norm(p - turned(D, A, theta)))
    before, after = D - C, D_t - C_t
    return np.arctan2(before[0] * after[1] - before[1] * after[0], before @ after)


def test_on_the_real_fingers_geometry_the_mimic_model_is_off_by_what_the_loop_shows():
    """Menagerie's finger with the pin where it is: the loop's closed poses tilt the
    fingertip as the four-bar's closed form does (1e-9 rad); the mimic model (inner knuckle
    = knuckle, fingertip = −knuckle) keeps it parallel, so at full close (0.8 rad) it is off
    by the tilt (more than 1°) and leaves the pin open (more than 0.5 mm); its holding torque
    (Gᵀ of the tree's gravity at its pose) differs from the loop's, which is Pinocchio's
    with the same pin (1e-9). The figures are printed for the docs."""
    urdf = real_finger_urdf()
    finger = load_closed_chain(urdf, REAL_PIN)
    names = finger.tree.joint_names
    k, i, t = (names.index(n) for n in ("knuckle_joint", "inner_joint", "tip_joint"))
    reference = PinocchioLoops(urdf, names, REAL_PIN["loop_closures"])
    zero = np.zeros(3)
    for theta in (0.2, 0.5, 0.8):
        q = finger.reference.copy()
        q[k] = theta
        q = finger.close(q, start=finger.reference)
        tilt = q[k] + q[t]                    # the fingertip's turn from where it was drawn
        assert abs(tilt - four_bar_tilt(theta)) < 1e-9, (theta, tilt, four_bar_tilt(theta))
        tau, _ = finger.inverse_dynamics(q, zero, zero)
        np.testing.assert_allclose(tau, reference.holding_torques(q, [k]), atol=1e-9)
        mimic = np.zeros(3)
        mimic[[k, i, t]] = [theta, theta, -theta]
        G = np.zeros(3)
        G[[k, i, t]] = [1.0, 1.0, -1.0]
        tau_mimic = G @ tree_rnea(finger.tree, mimic, zero, zero)
        gap = np.linalg.norm(turned(REAL["D"], REAL["B"], theta)
                             - (turned(REAL["C"], REAL["A"], theta)
                                + np.subtract(REAL["D"], REAL["C"])))
        print(f"\nθ {theta}: tilt {np.degrees(tilt):.2f}°, pin gap {1e3 * gap:.2f} mm, "
              f"torque loop {tau[0]:.5f} mimic {tau_mimic:.5f} N·m "
              f"({100 * (tau_mimic / tau[0] - 1):+.1f} %)")
        if theta == 0.8:
            assert abs(np.degrees(tilt)) > 1.0 and gap > 5e-4, (tilt, gap)
            assert abs(tau_mimic - tau[0]) > 0.01 * abs(tau[0])
