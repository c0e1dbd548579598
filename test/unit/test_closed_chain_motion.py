"""A closed mechanism's motion: the spatial four-bar of Lee, Sohn, Kim and Yoo (§5.2) falling
freely under gravity, integrated three ways — the reduced equations on
its independent coordinate by an explicit Runge–Kutta pair and by BDF (integrators.py), and
eq. 27 as a DAE by BDF with its system Jacobian (dae.py) — against each other and against
MuJoCo's simulation of the same tree with the loop as an equality constraint, over its first
second: one swing through and back, the crank passing at 23 and 26 rad/s (the motion repeats
with a period of about 1.3 s; benchmarks/closed_chain_fall.py prints the paper's whole 2 s)."""

import numpy as np
import pytest

from closed_chain_models import SPATIAL_FOUR_BAR_PARAMETERS, spatial_four_bar_urdf
from robo_dynamics.closed_chain import load_closed_chain
from robo_dynamics.simulation.constrained.dae import BDF
from robo_dynamics.simulation.constrained.integrators import ReducedBDF, dormand_prince, energy
from robo_dynamics.simulation.mujoco_closed_chain import MujocoClosedChain

TIMES = (0.02, 0.25, 0.5, 0.75, 1.0)   # s: where the integrators are compared
TOLERANCE = 1e-10         # Dormand–Prince's local error (weighted RMS): 2e-9 rad over 2 s
BDF_TOLERANCE = 5e-11     # BDF's: within 1e-6 rad where the crank passes at 26 rad/s
AGREEMENT = 1e-6          # rad: the paper's figures agree to this


@pytest.fixture(scope="module")
def fall():
    """The four-bar released at rest with the crank 0.3 rad from where it is drawn; the
    Dormand–Prince states at TIMES: (chain, {t: (q, q̇)})."""
    chain = load_closed_chain(spatial_four_bar_urdf(), SPATIAL_FOUR_BAR_PARAMETERS,
                              actuated_joints=["crank_joint"])
    q, qd = chain.close(np.array([0.3, 0.0, 0.0, 0.0]), chain.reference), np.zeros(4)
    states, t = {0.0: (q, qd)}, 0.0
    for t_next in TIMES:
        q, qd, _ = dormand_prince(chain, q, qd, t_next - t, TOLERANCE)
        states[t_next], t = (q, qd), t_next
    return chain, states


def test_the_spatial_four_bar_has_one_degree_of_freedom_and_its_loop_stays_closed(fall):
    chain, states = fall
    assert chain.dof == 1 and len(chain.partition.rows) == 3
    assert max(np.abs(chain.constraint(q)).max() for q, _ in states.values()) < 1e-10
    assert max(np.abs(chain.constraint_jacobian(q) @ qd).max()
               for q, qd in states.values()) < 1e-10
    crank = [q[0] for q, _ in states.values()]
    assert max(crank) - min(crank) > 5.0          # rad: it swings through and back


def test_the_fall_equals_mujocos_with_the_loop_as_an_equality_constraint(fall):
    chain, states = fall
    plant = MujocoClosedChain(chain, time_step=2e-5)
    plant.set_state(*states[0.0])
    t = 0.0
    for t_next in TIMES:
        q, qd = plant.run(t_next - t)
        t = t_next
        np.testing.assert_allclose(q, states[t][0], atol=AGREEMENT, err_msg=f"t = {t} s")
        np.testing.assert_allclose(qd, states[t][1], atol=10 * AGREEMENT)


def test_without_damping_the_energy_is_kept_to_1e_8_of_the_swing(fall):
    chain, states = fall
    energies = np.array([energy(chain, q, qd) for q, qd in states.values()])
    kinetic = max(energy(chain, q, qd) - energy(chain, q, np.zeros(4))
                  for q, qd in states.values())
    assert kinetic > 0.5                                  # J: what the fall turned into motion
    assert np.abs(energies - energies[0]).max() < 1e-8 * kinetic


@pytest.mark.parametrize("integrator", ["dae", "reduced"])
def test_bdf_on_the_dae_and_on_the_reduced_equations_agree_with_runge_kutta(fall, integrator):
    """Variable step and order: eq. 27 with its system Jacobian, and the independent
    coordinate's ODE (coordinate partitioning); within AGREEMENT of Dormand–Prince at every
    time of TIMES, the loop closed."""
    chain, states = fall
    q0, qd0 = states[0.0]
    run = (BDF(chain, q0, qd0, tolerance=BDF_TOLERANCE) if integrator == "dae"
           else ReducedBDF(chain, q0, qd0, tolerance=BDF_TOLERANCE))
    for t in TIMES:
        q, qd = run.advance(t)
        assert np.abs(chain.constraint(q)).max() < 1e-10
        np.testing.assert_allclose(q, states[t][0], atol=AGREEMENT, err_msg=f"t = {t} s")


def test_bdf_at_a_fixed_step_converges_at_second_order(fall):
    """Eq. 27, BDF of order 1 then 2 at 1 ms and at 0.5 ms for 0.02 s: the error against
    Dormand–Prince falls four-fold when the step halves."""
    chain, states = fall
    errors = []
    for h in (1e-3, 5e-4):
        run = BDF(chain, *states[0.0], fixed_step=h, max_order=2)
        for _ in range(int(round(0.02 / h))):
            q, qd = run.step()
        assert np.abs(chain.constraint(q)).max() < 1e-10
        errors.append(np.abs(q - states[0.02][0]).max())
    assert 3.0 < errors[0] / errors[1] < 5.5 and errors[1] < 1e-5, errors
