"""The shipped closed linkage, urdf/rd_palletizer.urdf with config/rd_palletizer.yaml (its
motors and the parallelogram's cut): it loads from the shipped files as they are, its
holding torques are the virtual-work closed form written here from its drawing (nothing of
robo_dynamics) and Pinocchio's, its motion and constraint forces Pinocchio's, and its
effort limits hold it with a margin over its joint ranges."""

import itertools

import numpy as np
import pytest

from robo_dynamics.backends.pinocchio_closed_chain import PinocchioClosedChain
from robo_dynamics.closed_chain import load_closed_chain
from robo_dynamics.backends.cross_check import cross_check_closed_chain
from palletizer import MOTORS, PARAMETERS, URDF, closed, holding_torque

@pytest.fixture(scope="module")
def chain():
    return load_closed_chain(URDF, parameters=PARAMETERS)


POSES = [(0.0, 0.0, 0.0, 0.0), (0.7, -0.5, 0.3, 1.0), (-1.5, 0.4, -0.6, -2.0),
         (2.5, -0.8, 0.5, 0.3)]


def test_it_loads_from_the_shipped_files_with_four_motors_and_one_loop(chain):
    assert chain.dof == 4 and chain.fully_actuated
    assert tuple(chain.actuated_joints) == MOTORS
    assert [c.name for c in chain.closures] == ["rod_end"]
    assert np.max(np.abs(chain.constraint(np.zeros(chain.tree.dof)))) <= 1e-12   # as drawn
    # the parallelogram on its branch: the forearm parallel to the rear link (elbow =
    # rear − shoulder) and the rod to the upper arm (rod = shoulder − rear)
    names = chain.tree.joint_names
    for motors in POSES:
        q = closed(chain, motors)
        s, r = motors[1], motors[2]
        assert abs(q[names.index("elbow_joint")] - (r - s)) <= 1e-9
        assert abs(q[names.index("rod_joint")] - (s - r)) <= 1e-9


def test_the_holding_torques_are_the_virtual_work_closed_form_and_pinocchios(chain):
    reference = PinocchioClosedChain(chain)
    zero = np.zeros(chain.tree.dof)
    for motors in POSES:
        q = closed(chain, motors)
        tau, _ = chain.inverse_dynamics(q, zero, zero)
        np.testing.assert_allclose(tau, holding_torque(motors[1], motors[2]), rtol=1e-7,
                                   atol=1e-6)
        np.testing.assert_allclose(tau, reference.inverse_dynamics(q, zero, zero)[0],
                                   rtol=1e-9, atol=1e-9)


def test_moving_its_motion_and_constraint_forces_are_pinocchios(chain):
    """Forward dynamics under motor torques, Φ_qᵀλ and the inverse dynamics that gives the
    motion back, at moving states (every motor turning, up to 1.5 rad/s)."""
    reference = PinocchioClosedChain(chain)
    rng = np.random.default_rng(4)
    for motors in POSES:
        q = closed(chain, motors)
        qd = chain.velocities(q, rng.uniform(-1.5, 1.5, 4))
        tau = rng.uniform(-200.0, 200.0, 4)
        found = cross_check_closed_chain(chain, reference, q, qd, tau)
        assert max(d.max_rel for d in found.values()) <= 1e-8, found


def test_its_effort_limits_hold_it_with_a_margin_over_its_joint_ranges(chain):
    """The largest holding torque over a grid of the shoulder's and the rear link's ranges
    is at most 0.6 of each motor's effort limit (the file says: about twice)."""
    limits = {joint.get("name"): (float(joint.find("limit").get("lower")),
                                  float(joint.find("limit").get("upper")),
                                  float(joint.find("limit").get("effort")))
              for joint in __import__("xml.etree.ElementTree", fromlist=["parse"]).parse(
                  URDF).getroot().iter("joint") if joint.find("limit") is not None}
    grid = {name: np.linspace(limits[name][0], limits[name][1], 9)
            for name in ("shoulder_joint", "rear_joint")}
    largest = np.zeros(4)
    for s, r in itertools.product(grid["shoulder_joint"], grid["rear_joint"]):
        largest = np.maximum(largest, np.abs(holding_torque(s, r)))
    effort = np.array([limits[name][2] for name in MOTORS])
    assert np.all(largest <= 0.6 * effort), (largest, effort)
    assert largest[1] >= 0.4 * effort[1] and largest[2] >= 0.4 * effort[2]  # not oversized
