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
