"""A palletizer's parallelogram arm (closed_chain_models.parallelogram_arm_urdf): its motor
torques against virtual work, Pinocchio and MuJoCo, and by how much a tree-only model (the
loop left open, the passive joints' torques dropped) gets them wrong."""

import numpy as np
import pytest

from closed_chain_models import (parallelogram_arm_urdf, parallelogram_holding_torque,
                                 parallelogram_parameters)
from robo_dynamics.backends.pinocchio_closed_chain import PinocchioClosedChain
from robo_dynamics.closed_chain import load_closed_chain
from robo_dynamics.closed_chain.tree_dynamics import tree_rnea
from robo_dynamics.simulation.mujoco_closed_chain import MujocoClosedChain

POSES = [(0.0, 0.0), (0.3, -0.2), (-0.3, 0.4), (0.5, 0.3), (-0.2, -0.35)]   # motor offsets


def arm(rear=0.25):
    urdf, rod = parallelogram_arm_urdf(rear)
    return load_closed_chain(urdf, parallelogram_parameters(rod))


def pose(chain, motors):
    goal = chain.reference.copy()
    goal[list(chain.actuated)] += motors
    return chain.close(goal, chain.reference)


def test_the_parallelogram_couples_its_passive_joints_linearly_and_a_four_bar_does_not():
    """elbow = rear − shoulder and rod = shoulder − rear exactly (what a mimic coupling
    can say) for the parallelogram; a 7 cm longer rear link makes it a four-bar whose
    elbow departs from that line by degrees."""
    chain = arm()
    for motors in POSES:
        q = pose(chain, motors)
        assert abs(q[1] - (motors[1] - motors[0])) < 1e-10
        assert abs(q[3] - (motors[0] - motors[1])) < 1e-10
    four_bar = arm(rear=0.32)
    q = pose(four_bar, (0.3, -0.2))
    assert abs(q[1] - (-0.5)) > np.radians(3.0)


def test_the_motor_torques_that_hold_it_are_the_virtual_work_closed_form_and_pinocchios():
    chain = arm()
    reference = PinocchioClosedChain(chain)
    zero = np.zeros(4)
    for motors in POSES:
        q = pose(chain, motors)
        tau, _ = chain.inverse_dynamics(q, zero, zero)
        np.testing.assert_allclose(tau, parallelogram_holding_torque(*motors), rtol=1e-10)
        np.testing.assert_allclose(tau, reference.inverse_dynamics(q, zero, zero)[0],
                                   rtol=1e-9)


@pytest.mark.parametrize("rear", [0.25, 0.32])
def test_in_mujoco_the_loops_torques_hold_the_arm_and_the_cut_trees_let_it_fall(rear):
    """MuJoCo's arm (the loop a stiff equality) held 0.2 s by the motor torques of each
    model: the closed chain's keep it within 1e-5 rad; the cut tree's (the loop left open,
    the passive joints' torques dropped) are off by tens of N·m and let it move more than
    0.05 rad. The figures say by how much."""
    chain = arm(rear)
    q = pose(chain, (0.3, -0.2))
    zero = np.zeros(4)
    tau, _ = chain.inverse_dynamics(q, zero, zero)
    cut = tree_rnea(chain.tree, q, zero, zero)[list(chain.actuated)]
    assert np.abs(cut - tau).max() > 20.0                                    # N·m
    drift = {}
    for name, torque in (("loop", tau), ("cut tree", cut)):
        plant = MujocoClosedChain(chain, time_step=1e-4)
        plant.set_state(q, zero)
        q_end, _ = plant.run(0.2, torque)
        drift[name] = np.abs(q_end - q)[list(chain.actuated)].max()
    assert drift["loop"] < 1e-5 and drift["cut tree"] > 0.05, drift
