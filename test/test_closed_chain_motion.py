"""A closed mechanism's motion (closed_chain/integrators.py): the spatial four-bar of Lee,
Sohn, Kim and Yoo (§5.2) falling under gravity, integrated on its independent coordinate,
against MuJoCo's simulation of the same tree with the loop as an equality constraint."""

import numpy as np
import pytest

from closed_chain_models import SPATIAL_FOUR_BAR_PARAMETERS, spatial_four_bar_urdf
from robo_dynamics.closed_chain import load_closed_chain
from robo_dynamics.closed_chain.dae import BDF
from robo_dynamics.closed_chain.integrators import (energy, runge_kutta_step,
                                                    trapezoidal_step)
from robo_dynamics.simulation.mujoco_closed_chain import MujocoClosedChain

DURATION = 0.25        # s: the crank falls through 1.6 rad
STEP = 1e-3            # s


@pytest.fixture(scope="module")
def fall():
    """The four-bar released at rest with the crank 0.3 rad from where it is drawn: its
    reduced equations integrated by Runge–Kutta; (chain, start, states)."""
    chain = load_closed_chain(spatial_four_bar_urdf(), SPATIAL_FOUR_BAR_PARAMETERS,
                              actuated_joints=["crank_joint"])
    q = chain.close(np.array([0.3, 0.0, 0.0, 0.0]), chain.reference)
    states = [(q, np.zeros(4))]
    for _ in range(int(round(DURATION / STEP))):
        states.append(runge_kutta_step(chain, *states[-1], STEP))
    return chain, states


def test_the_spatial_four_bar_has_one_degree_of_freedom_and_its_loop_stays_closed(fall):
    chain, states = fall
    assert chain.dof == 1 and len(chain.partition.rows) == 3
    assert max(np.abs(chain.constraint(q)).max() for q, _ in states) < 1e-10
    assert max(np.abs(chain.constraint_jacobian(q) @ qd).max() for q, qd in states) < 1e-10
    assert abs(states[-1][0][0] - states[0][0][0]) > 1.0          # it did fall


def test_the_fall_equals_mujocos_with_the_loop_as_an_equality_constraint(fall):
    chain, states = fall
    plant = MujocoClosedChain(chain, time_step=2e-5)
    plant.set_state(*states[0])
    for k in (50, 250):                                  # at 0.05 s and at the end
        q, qd = plant.run(50 * STEP if k == 50 else 200 * STEP)
        np.testing.assert_allclose(q, states[k][0], atol=1e-6)
        np.testing.assert_allclose(qd, states[k][1], atol=1e-5)


def test_without_damping_the_energy_is_kept_to_1e_8_of_the_swing(fall):
    chain, states = fall
    energies = np.array([energy(chain, q, qd) for q, qd in states])
    kinetic = energies[-1] - energy(chain, states[-1][0], np.zeros(4))
    assert kinetic > 0.5                                  # J: what the fall turned into motion
    assert np.abs(energies - energies[0]).max() < 1e-8 * kinetic


def test_the_implicit_trapezoidal_rule_follows_the_explicit_integrator(fall):
    """Second order: at the same step, within 1e-5 rad of Runge–Kutta after 0.05 s."""
    chain, states = fall
    q, qd = states[0]
    for _ in range(50):
        q, qd = trapezoidal_step(chain, q, qd, STEP)
    assert np.abs(chain.constraint(q)).max() < 1e-10
    np.testing.assert_allclose(q, states[50][0], atol=1e-5)


def test_the_bdf_integrator_on_the_dae_converges_at_second_order(fall):
    """Eq. 27 with its system Jacobian, BDF2 at 1 ms and 0.5 ms for 0.02 s: its error
    against Runge–Kutta falls four-fold when the step halves, the loop stays closed."""
    chain, states = fall
    errors = []
    for h in (1e-3, 5e-4):
        integrator = BDF(chain, *states[0], h)
        for _ in range(int(round(0.02 / h))):
            q, qd = integrator.step()
        assert np.abs(chain.constraint(q)).max() < 1e-10
        errors.append(np.abs(q - states[20][0]).max())
    assert 3.0 < errors[0] / errors[1] < 5.5 and errors[1] < 1e-5, errors
