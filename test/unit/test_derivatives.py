"""Analytical derivatives of inverse and forward dynamics against Pinocchio's
computeRNEADerivatives / computeABADerivatives and against central finite differences of
the vectorised algorithms (rnea.py, crba.py)."""

import numpy as np
import pytest

import robo_dynamics as rd
from robo_dynamics.algorithms import crba, rnea
from conftest import rel, load_arm, random_states

H = 1e-6



def central_difference(f, x):
    columns = []
    for e in np.eye(len(x)):
        columns.append((f(x + H * e) - f(x - H * e)) / (2 * H))
    return np.column_stack(columns)


def test_rnea_derivatives_match_pinocchio(solvers):
    ours, ref = solvers
    for q, qd, qdd in zip(*random_states(ours.model, 25, seed=51)):
        for a, b in zip(ours.inverse_dynamics_derivatives(q, qd, qdd), ref.inverse_dynamics_derivatives(q, qd, qdd)):
            assert rel(a, b) <= 1e-9


def test_forward_dynamics_derivatives_match_pinocchio(solvers):
    ours, ref = solvers
    for q, qd, tau in zip(*random_states(ours.model, 25, seed=52)):
        tau = 5.0 * tau
        for a, b in zip(ours.forward_dynamics_derivatives(q, qd, tau),
                        ref.forward_dynamics_derivatives(q, qd, tau)):
            assert rel(a, b) <= 1e-8


def test_rnea_derivatives_match_finite_differences(solvers):
    ours, _ = solvers
    model = ours.model
    for q, qd, qdd in zip(*random_states(model, 5, seed=53)):
        dq, dqd, dqdd = ours.inverse_dynamics_derivatives(q, qd, qdd)
        fd_q = central_difference(lambda x: rnea.rnea(model, x, qd, qdd), q)
        fd_qd = central_difference(lambda x: rnea.rnea(model, q, x, qdd), qd)
        fd_qdd = central_difference(lambda x: rnea.rnea(model, q, qd, x), qdd)
        for analytic, numeric in ((dq, fd_q), (dqd, fd_qd), (dqdd, fd_qdd)):
            np.testing.assert_allclose(analytic, numeric, rtol=0,
                                       atol=1e-6 * (np.abs(numeric).max() + 1.0))


def test_forward_dynamics_derivatives_match_finite_differences(solvers):
    ours, _ = solvers
    model = ours.model
    for q, qd, tau in zip(*random_states(model, 5, seed=54)):
        da_dq, da_dqd, da_dtau = ours.forward_dynamics_derivatives(q, qd, tau)
        # forward dynamics of the vectorised algorithms: M q̈ = τ − b by a linear solve
        def qdd(q, qd, tau):
            return np.linalg.solve(crba.mass_matrix(model, q),
                                   tau - rnea.rnea(model, q, qd, np.zeros_like(q)))
        fd = [central_difference(lambda x: qdd(x, qd, tau), q),
              central_difference(lambda x: qdd(q, x, tau), qd),
              central_difference(lambda x: qdd(q, qd, x), tau)]
        for analytic, numeric in zip((da_dq, da_dqd, da_dtau), fd):
            np.testing.assert_allclose(analytic, numeric, rtol=0,
                                       atol=1e-5 * (np.abs(numeric).max() + 1.0))


def test_batched_mass_matrix_equals_single_calls():
    robot = load_arm("mixed_chain")
    q, _, _ = random_states(robot, 7, seed=55)
    M = crba.mass_matrix_batch(robot, q)
    for i in range(7):
        np.testing.assert_allclose(M[i], crba.mass_matrix(robot, q[i]), rtol=0, atol=1e-14)


def test_the_earlier_name_of_the_derivatives_warns_and_gives_the_same():
    """rnea_derivatives (and _batch) of earlier releases: a DeprecationWarning, same numbers."""
    solver = rd.make_solver(load_arm("rd_ur5e"), "rnea")
    q, qd, qdd = (x[0] for x in random_states(solver.model, 1, seed=5))
    with pytest.warns(DeprecationWarning, match="inverse_dynamics_derivatives"):
        old = solver.rnea_derivatives(q, qd, qdd)
    for a, b in zip(old, solver.inverse_dynamics_derivatives(q, qd, qdd)):
        np.testing.assert_array_equal(a, b)
    with pytest.warns(DeprecationWarning, match="inverse_dynamics_derivatives_batch"):
        old = solver.rnea_derivatives_batch(q[None], qd[None], qdd[None])
    for a, b in zip(old, solver.inverse_dynamics_derivatives_batch(q[None], qd[None], qdd[None])):
        np.testing.assert_array_equal(a, b)
