"""The 2-link planar arm of the reference texts, in closed form (Craig, Introduction to
Robotics, §6.7: M, V, G; Lynch & Park, Modern Robotics, §8.1.1), against both backends —
to rounding error."""

import numpy as np
import pytest

import robo_dynamics as rd
from conftest import SHIPPED
from planar_2link import L1, L2, M2, closed_form, planar_jacobian

@pytest.fixture(scope="module", params=["rnea", "pinocchio"])
def solver(request):
    return rd.make_solver(rd.load_robot(SHIPPED / "planar_2link.urdf"), request.param)


def states(count=50):
    rng = np.random.default_rng(11)
    return zip(rng.uniform(-np.pi, np.pi, (count, 2)), rng.uniform(-3, 3, (count, 2)),
               rng.uniform(-10, 10, (count, 2)))


def test_inverse_dynamics_mass_matrix_and_gravity(solver):
    for q, qd, qdd in states():
        M, V, Gv, tau = closed_form(q, qd, qdd)
        np.testing.assert_allclose(solver.mass_matrix(q), M, rtol=0, atol=1e-13)
        np.testing.assert_allclose(solver.gravity(q), Gv, rtol=0, atol=1e-12)
        np.testing.assert_allclose(solver.bias(q, qd) - solver.gravity(q), V, rtol=0, atol=1e-12)
        np.testing.assert_allclose(solver.inverse_dynamics(q, qd, qdd), tau, rtol=0, atol=1e-12)


def test_coriolis_matrix_is_the_christoffel_one(solver):
    """For the 2R arm, with h = −m2 l1 l2 s2: C = [[h q̇2, h (q̇1 + q̇2)], [−h q̇1, 0]]."""
    for q, qd, _ in states():
        h = -M2 * L1 * L2 * np.sin(q[1])
        C = np.array([[h * qd[1], h * (qd[0] + qd[1])], [-h * qd[0], 0.0]])
        np.testing.assert_allclose(solver.coriolis_matrix(q, qd), C, rtol=0, atol=1e-12)


def test_jacobian_and_tip_position(solver):
    for q, _, _ in states():
        J = solver.jacobian(q)
        np.testing.assert_allclose(J[[0, 2]], planar_jacobian(q), rtol=0, atol=1e-13)
        np.testing.assert_allclose(J[1], 0.0, atol=1e-13)            # no motion along y
        np.testing.assert_allclose(J[4], [-1.0, -1.0], atol=1e-13)   # ω about −y
        _, p = solver.tip_pose(q)
        expected = [L1 * np.cos(q[0]) + L2 * np.cos(q[0] + q[1]), 0.0,
                    L1 * np.sin(q[0]) + L2 * np.sin(q[0] + q[1])]
        np.testing.assert_allclose(p, expected, atol=1e-13)


def test_cartesian_inertia_from_closed_form(solver):
    """Λ = (J M⁻¹ Jᵀ)⁺ (Lynch & Park §8.6) with the closed-form M and the planar Jacobian
    written into 6-D rows [x y z rx ry rz]: a 2-DoF arm's Λ lives on its 2-D motion subspace."""
    for q, _, _ in states():
        if abs(np.sin(q[1])) < 0.2:
            continue
        M = closed_form(q, np.zeros(2), np.zeros(2))[0]
        J6 = np.zeros((6, 2))
        J6[[0, 2]] = planar_jacobian(q)
        J6[4] = -1.0
        expected = np.linalg.pinv(J6 @ np.linalg.solve(M, J6.T), rcond=1e-12)
        Lambda = solver.operational_space_inertia(q)
        np.testing.assert_allclose(Lambda, expected, rtol=0, atol=1e-9 * np.abs(expected).max())


def test_gravity_wrench_is_the_static_tip_force(solver):
    """p = J⁻ᵀ g in the plane: the tip force that balances gravity on the 2R arm."""
    for q, qd, _ in states(20):
        if abs(np.sin(q[1])) < 0.2:
            continue
        os_ = solver.operational_space(q, qd)
        Gv = closed_form(q, qd, np.zeros(2))[2]
        # J6ᵀ p = g must hold (p is a wrench that the joint torques g balance exactly)
        np.testing.assert_allclose(solver.jacobian(q).T @ os_.gravity_wrench, Gv, atol=1e-9)
