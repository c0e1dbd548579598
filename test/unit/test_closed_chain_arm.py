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
FOUR_BAR_POSES = [(0.3, -0.2), (0.5, 0.3), (-0.2, -0.35), (-0.3, -0.1)]  # where rear=0.32 closes


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


def mimic_coupling(chain):
    """G (n, k): what a mimic-joint model of the arm says, q = q_ref + G Δu for motor offsets
    Δu, each passive joint a fixed multiple of the motors (URDF <mimic>: multiplier, offset).
    Its multipliers are the loop's velocity ratios at the reference pose (B there, columns
    in actuated_joints order): the best a constant coupling can do."""
    B = chain.velocity_transformation(chain.reference)
    v = list(chain.partition.v)
    return B[:, [v.index(i) for i in chain.actuated]]


def mimic_holding_torque(chain, G, motors):
    """(q the mimic model places the joints at, τ = Gᵀ τ_tree there): what a tree with
    mimic joints computes to hold the arm at motor offsets `motors` (the coupled system's
    torques, as load_robot's mimic chains compute them)."""
    q = chain.reference + G @ np.asarray(motors, float)
    zero = np.zeros(chain.tree.dof)
    return q, G.T @ tree_rnea(chain.tree, q, zero, zero)


def test_a_mimic_model_holds_the_parallelogram_but_knows_no_constraint_force():
    """The parallelogram's coupling is exactly linear (multipliers ±1): the mimic model's
    motor torques equal the loop's (and so virtual work's) at every pose, but it has no
    constraint force: the rod's pull, which the loop's multipliers give and Pinocchio's
    constraint dynamics confirm, hundreds of newtons that a mimic model cannot report."""
    chain = arm()
    G = mimic_coupling(chain)
    np.testing.assert_allclose(G, [[1, 0], [-1, 1], [0, 1], [1, -1]], atol=1e-10)
    reference = PinocchioClosedChain(chain)
    zero = np.zeros(4)
    for motors in POSES:
        q = pose(chain, motors)
        tau, lam = chain.inverse_dynamics(q, zero, zero)
        q_mimic, tau_mimic = mimic_holding_torque(chain, G, motors)
        np.testing.assert_allclose(q_mimic, q, atol=1e-10)
        np.testing.assert_allclose(tau_mimic, tau, rtol=1e-10)
        generalized = chain.constraint_jacobian(q).T @ lam               # Φ_qᵀλ [N·m]
        np.testing.assert_allclose(generalized, reference.inverse_dynamics(q, zero, zero)[1],
                                   rtol=1e-8, atol=1e-8)
        assert np.linalg.norm(lam) > 100.0, lam                          # N, at the rod's end


PARALLELOGRAM_MULTIPLIERS = np.array([[1, 0], [-1, 1], [0, 1], [1, -1]], float)


def test_a_mimic_model_of_a_four_bar_is_exact_only_where_its_multipliers_were_taken():
    """A 7 cm longer rear link: a four-bar whose velocity ratios change with the pose. Two
    mimic models: the parallelogram's multipliers (±1, what one writes taking it for a
    parallelogram) and the ratios at the reference pose (the best a constant coupling can
    do; it equals the loop there). At motor offsets of 0.2–0.5 rad both place the passive
    joints away from where the loop closes and their holding torques are off (the loop's:
    virtual work, Pinocchio; tests above); on MuJoCo's arm they let it move while the
    loop's hold it. The figures (printed) are in docs/closed-chains.md."""
    chain = arm(rear=0.32)
    couplings = {"±1": PARALLELOGRAM_MULTIPLIERS, "tangent": mimic_coupling(chain)}
    zero = np.zeros(4)
    _, tau_mimic = mimic_holding_torque(chain, couplings["tangent"], (0.0, 0.0))
    np.testing.assert_allclose(tau_mimic, chain.inverse_dynamics(chain.reference, zero,
                                                                  zero)[0], rtol=1e-10)
    figures = {name: [] for name in couplings}
    for motors in FOUR_BAR_POSES:
        q = pose(chain, motors)
        tau, _ = chain.inverse_dynamics(q, zero, zero)
        for name, G in couplings.items():
            q_mimic, tau_mimic = mimic_holding_torque(chain, G, motors)
            figures[name].append((np.degrees(np.abs(q_mimic - q).max()),
                                  np.abs(tau_mimic - tau).max() / np.abs(tau).max()))
    for name, rows in figures.items():
        print(name, [f"{d:.2f}°, {100 * t:.1f} %" for d, t in rows])
    assert all(d > 2.0 and t > 0.1 for d, t in figures["±1"]), figures
    assert all(d > 0.05 and t > 0.005 for d, t in figures["tangent"]), figures
    motors = (0.3, -0.2)
    q = pose(chain, motors)
    drift = {"loop": chain.inverse_dynamics(q, zero, zero)[0]}
    drift.update({name: mimic_holding_torque(chain, G, motors)[1]
                  for name, G in couplings.items()})
    for name, torque in drift.items():
        plant = MujocoClosedChain(chain, time_step=1e-4)
        plant.set_state(q, zero)
        q_end, _ = plant.run(0.2, torque)
        drift[name] = np.abs(q_end - q)[list(chain.actuated)].max()
    print(drift)
    assert drift["loop"] < 1e-5, drift
    assert drift["tangent"] > 100 * drift["loop"] and drift["±1"] > 100 * drift["loop"], drift
