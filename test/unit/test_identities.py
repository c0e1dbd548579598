"""Identities the equations of motion must satisfy, on the in-house backend alone.

M symmetric positive definite; Ṁ − 2C skew-symmetric (Lynch & Park, Modern Robotics,
Proposition 8.1); C from the Christoffel symbols of M (ibid. §8.1.2); forward dynamics
inverts inverse dynamics; columns of M from RNEA equal CRBA; τ·q̇ = dE/dt without gravity
(ibid. §8.1); Cartesian quantities equal their n = 6 closed forms (ibid. §8.6).
"""

import numpy as np
import pytest

import robo_dynamics as rd
from robo_dynamics.algorithms import crba, rnea
from conftest import ARMS, load_arm, random_states

H = 1e-6  # central finite-difference step (rad or m)


@pytest.fixture(scope="module", params=sorted(ARMS))
def solver(request):
    return rd.make_solver(load_arm(request.param), "rnea")


def dM_dq(solver, q):
    """∂M/∂q_k by central differences, shape (n, n, n) indexed [k, i, j]."""
    n = len(q)
    out = np.empty((n, n, n))
    for k in range(n):
        e = np.zeros(n)
        e[k] = H
        out[k] = (solver.mass_matrix(q + e) - solver.mass_matrix(q - e)) / (2 * H)
    return out


def test_mass_matrix_is_symmetric_positive_definite(solver):
    for q, _, _ in zip(*random_states(solver.model, 30, seed=21)):
        M = solver.mass_matrix(q)
        np.testing.assert_array_equal(M, M.T)
        assert np.linalg.eigvalsh(M).min() > 0.0


def test_mdot_minus_2c_is_skew_symmetric(solver):
    for q, qd, _ in zip(*random_states(solver.model, 10, seed=22)):
        Mdot = np.einsum("kij,k->ij", dM_dq(solver, q), qd)
        N = Mdot - 2.0 * solver.coriolis_matrix(q, qd)
        scale = np.abs(Mdot).max() + 1e-12
        assert np.abs(N + N.T).max() <= 1e-7 * scale


def test_coriolis_matrix_equals_christoffel_symbols(solver):
    """C_ij = Σ_k ½ (∂M_ij/∂q_k + ∂M_ik/∂q_j − ∂M_jk/∂q_i) q̇_k."""
    for q, qd, _ in zip(*random_states(solver.model, 5, seed=23)):
        D = dM_dq(solver, q)                     # D[k, i, j] = ∂M_ij/∂q_k
        christoffel = 0.5 * (np.einsum("kij->ijk", D) + np.einsum("jik->ijk", D)
                             - np.einsum("ijk->ijk", D))
        C = np.einsum("ijk,k->ij", christoffel, qd)
        np.testing.assert_allclose(solver.coriolis_matrix(q, qd), C, rtol=0,
                                   atol=1e-7 * (np.abs(C).max() + 1e-12))


def test_coriolis_matrix_times_qd_is_the_velocity_bias(solver):
    for q, qd, _ in zip(*random_states(solver.model, 30, seed=24)):
        Cqd = solver.bias(q, qd) - solver.gravity(q)
        np.testing.assert_allclose(solver.coriolis_matrix(q, qd) @ qd, Cqd, rtol=0,
                                   atol=1e-12 * (np.abs(Cqd).max() + 1.0))


def test_forward_dynamics_inverts_inverse_dynamics(solver):
    for q, qd, qdd in zip(*random_states(solver.model, 30, seed=25)):
        tau = solver.inverse_dynamics(q, qd, qdd)
        np.testing.assert_allclose(solver.forward_dynamics(q, qd, tau), qdd, rtol=0, atol=1e-8)


def test_columns_of_mass_matrix_from_rnea_equal_crba(solver):
    model = solver.model
    n = model.dof
    zero_g = np.zeros(3)
    for q, _, _ in zip(*random_states(model, 10, seed=26)):
        columns = np.column_stack([
            rnea.rnea(model, q, np.zeros(n), np.eye(n)[j], gravity=zero_g) for j in range(n)])
        M = crba.mass_matrix(model, q)
        np.testing.assert_allclose(columns, M, rtol=0, atol=1e-13 * np.abs(M).max())


def test_power_balance_without_gravity(solver):
    """τ·q̇ = dE/dt with E = ½ q̇ᵀ M q̇ and τ = M q̈ + C q̇ (no gravity, no friction)."""
    model = solver.model
    for q, qd, qdd in zip(*random_states(model, 20, seed=27)):
        tau = rnea.rnea(model, q, qd, qdd, gravity=np.zeros(3))

        def energy(t):
            qt, qdt = q + qd * t + 0.5 * qdd * t * t, qd + qdd * t
            return 0.5 * qdt @ crba.mass_matrix(model, qt) @ qdt

        dE_dt = (energy(H) - energy(-H)) / (2 * H)
        assert abs(tau @ qd - dE_dt) <= 1e-6 * (abs(dE_dt) + 1.0)


def test_gravity_is_the_gradient_of_potential_energy(solver):
    """g(q) = ∂V/∂q with V = −Σ m_i gᵀ c_i (Lagrangian form, G = −Σ J_viᵀ m_i g)."""
    from robo_dynamics.algorithms.kinematics import forward_kinematics
    model = solver.model
    n = model.dof

    def potential(q):
        com = forward_kinematics(model, q[None]).com[0]
        return -np.sum(model.mass * (com @ model.gravity))

    for q, _, _ in zip(*random_states(model, 10, seed=28)):
        grad = np.array([(potential(q + H * e) - potential(q - H * e)) / (2 * H)
                         for e in np.eye(n)])
        np.testing.assert_allclose(solver.gravity(q), grad, rtol=0,
                                   atol=1e-6 * (np.abs(grad).max() + 1.0))


def test_tip_wrench_adds_jacobian_transpose(solver):
    rng = np.random.default_rng(29)
    for q, qd, qdd in zip(*random_states(solver.model, 10, seed=29)):
        f_tip = rng.uniform(-10, 10, 6)
        for frame in ("local_world_aligned", "local"):
            expected = solver.inverse_dynamics(q, qd, qdd) + solver.jacobian(q, frame).T @ f_tip
            np.testing.assert_allclose(solver.inverse_dynamics(q, qd, qdd, f_tip, frame),
                                       expected, rtol=0, atol=1e-10 * np.abs(expected).max())


def test_jacobian_dot_qd_by_differentiating_tip_velocity(solver):
    """J̇ q̇ = d/dt (J(q) q̇) along q(t) = q + q̇ t at constant q̇."""
    for q, qd, _ in zip(*random_states(solver.model, 10, seed=30)):
        numeric = (solver.jacobian(q + H * qd) @ qd - solver.jacobian(q - H * qd) @ qd) / (2 * H)
        np.testing.assert_allclose(solver.jacobian_dot_qd(q, qd), numeric, rtol=0,
                                   atol=1e-6 * (np.abs(numeric).max() + 1.0))


@pytest.mark.parametrize("name", ["rd_ur5e", "ur5", "kinova"])
def test_cartesian_terms_equal_the_n6_closed_forms(name):
    """For n = 6: Λ = J⁻ᵀ M J⁻¹, η = J⁻ᵀ b − Λ J̇ q̇, p = J⁻ᵀ g (Lynch & Park §8.6; Craig
    §6.10, G_x)."""
    solver = rd.make_solver(load_arm(name))
    for q, qd, _ in zip(*random_states(solver.model, 20, seed=31)):
        result = solver.operational_space(q, qd)
        if result.condition_number > 1e6:
            continue
        J_inv = np.linalg.inv(solver.jacobian(q))
        Lambda = J_inv.T @ solver.mass_matrix(q) @ J_inv
        eta = J_inv.T @ solver.bias(q, qd) - Lambda @ solver.jacobian_dot_qd(q, qd)
        p = J_inv.T @ solver.gravity(q)
        scale = result.condition_number * 1e-14
        np.testing.assert_allclose(result.Lambda, Lambda, rtol=0, atol=scale * np.abs(Lambda).max())
        np.testing.assert_allclose(result.eta, eta, rtol=0, atol=scale * (np.abs(eta).max() + 1))
        np.testing.assert_allclose(result.gravity_wrench, p, rtol=0,
                                   atol=scale * (np.abs(p).max() + 1))


def test_lambda_stays_bounded_at_a_singularity():
    """rd_ur5e at q = 0 has its wrist axes aligned: J loses rank. Λ stays finite, its
    eigenvalues stay under κ_max / σ_1, and the result says it is near-singular."""
    from robo_dynamics.algorithms.operational_space import KAPPA_MAX
    solver = rd.make_solver(load_arm("rd_ur5e"))
    q = np.zeros(6)
    assert np.linalg.matrix_rank(solver.jacobian(q), tol=1e-9) == 5
    J, M = solver.jacobian(q), solver.mass_matrix(q)
    sigma_1 = np.linalg.eigvalsh(J @ np.linalg.solve(M, J.T)).max()
    for eps in (0.0, 1e-9, 1e-6, 1e-3):
        result = solver.operational_space(q + eps)
        assert np.all(np.isfinite(result.Lambda))
        assert np.linalg.eigvalsh(result.Lambda).max() <= 1.0001 * KAPPA_MAX / sigma_1
        if eps <= 1e-6:
            assert result.near_singular and result.condition_number > KAPPA_MAX


def test_rounding_in_a_singular_direction_gives_no_inertia():
    """J M⁻¹ Jᵀ with one eigenvalue zero up to rounding: ±ε σ_1 there (what two CPUs or two
    backends may compute for the same pose) gives the same Λ, with nothing along that
    direction; a small but real eigenvalue gets the ramp's σ / σ_thr²."""
    from robo_dynamics.algorithms.operational_space import KAPPA_MAX, operational_space
    U = np.linalg.qr(np.random.default_rng(3).normal(size=(6, 6)))[0]
    sigma = np.array([0.0, 0.17, 0.23, 0.49, 213.7, 3424.7])
    results = []
    for tiny in (-1e-17, 0.0, 1e-17, 1e-15):
        inverse = (U * np.r_[tiny * sigma[-1], sigma[1:]]) @ U.T
        results.append(operational_space(np.eye(6), M_inv=inverse).Lambda)
    scale = 1e-10 * np.abs(results[0]).max()          # rounding of entries ≈ 1 / 0.17
    for Lambda in results[1:]:
        np.testing.assert_allclose(Lambda, results[0], rtol=0, atol=scale)
        assert abs(U[:, 0] @ Lambda @ U[:, 0]) < scale
    real = 1e-10 * sigma[-1]                       # below σ_thr = σ_1 / κ_max, above rounding
    inverse = (U * np.r_[real, sigma[1:]]) @ U.T
    Lambda = operational_space(np.eye(6), M_inv=inverse).Lambda
    assert U[:, 0] @ Lambda @ U[:, 0] == pytest.approx(real / (sigma[-1] / KAPPA_MAX) ** 2,
                                                       rel=1e-4)   # ε σ_1 / real ≈ 1e-6
