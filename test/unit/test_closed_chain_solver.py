"""ClosedChainSolver, the shipped palletizer's motors behind the solver interface the
controller core takes: the identities of its Coriolis matrix and momentum terms (Ĉθ̇ the
bias without gravity, Ṁ̂ − 2Ĉ skew-symmetric, Ṁ̂ from M̂ along the motion), J̇θ̇ and the tool
frame against differences along the motion, a tool wrench as Jᵀf, and what it cannot do
refused with the reason."""

import numpy as np
import pytest

from closed_chain_models import shipped_linkage
from robo_dynamics.algorithms.jacobian import LOCAL
from robo_dynamics.backends.closed_chain_backend import ClosedChainSolver
from robo_dynamics.closed_chain.tree_dynamics import frame_jacobian, frame_pose, tree_rnea
from robo_dynamics.errors import ArgumentError

STATES = [(np.array([0.5, 0.3, -0.3, 0.4]), np.array([0.8, -0.6, 0.9, 1.5])),
          (np.array([-1.0, -0.4, 0.5, 2.0]), np.array([-0.3, 1.2, -0.7, 0.2]))]
STEP = 1e-5       # rad: the differences along the motion


@pytest.fixture(scope="module")
def solver():
    return ClosedChainSolver(shipped_linkage("rd_palletizer"), "tool0")


def along(f, theta, theta_dot):
    """d/dt f(θ) along θ̇, by central difference."""
    return (f(theta + STEP * theta_dot) - f(theta - STEP * theta_dot)) / (2 * STEP)


def test_the_motors_are_the_model_with_their_urdf_limits(solver):
    model = solver.model
    assert model.joint_names == ("base_joint", "shoulder_joint", "rear_joint", "wrist_joint")
    np.testing.assert_array_equal(model.effort_limit, [400.0, 600.0, 320.0, 50.0])
    assert model.dof == 4 and np.all(model.limited) and len(model.passive_joints) == 2


def test_the_coriolis_matrix_and_momentum_terms_keep_the_lagrangian_identities(solver):
    """Ĉθ̇ = b̂ − ĝ; Ṁ̂ − 2Ĉ skew-symmetric with Ṁ̂ = Σ ∂M̂/∂θ_k θ̇_k from M̂ along θ̇; the
    momentum terms p = M̂θ̇ and Ĉᵀθ̇."""
    for theta, theta_dot in STATES:
        C = solver.coriolis_matrix(theta, theta_dot)
        C_qd = solver.bias(theta, theta_dot) - solver.gravity(theta)
        np.testing.assert_allclose(C @ theta_dot, C_qd, atol=1e-6 * np.abs(C_qd).max())
        M_dot = along(solver.mass_matrix, theta, theta_dot)
        N = M_dot - 2.0 * C
        assert np.abs(N + N.T).max() <= 1e-6 * np.abs(M_dot).max(), N + N.T
        p, CT_qd = solver.momentum_terms(theta, theta_dot)
        expected = solver.mass_matrix(theta) @ theta_dot       # rounding: of its largest entry
        np.testing.assert_allclose(p, expected, rtol=0, atol=1e-12 * np.abs(expected).max())
        np.testing.assert_allclose(CT_qd, C.T @ theta_dot, atol=1e-6 * np.abs(CT_qd).max())


def test_the_tool_frame_and_its_acceleration_follow_the_motion(solver):
    """J θ̇ and J̇ θ̇ (θ̈ = 0) against the tool origin's position differenced once and its
    velocity J θ̇ differenced along the motion; LOCAL is the same in the tool's axes."""
    for theta, theta_dot in STATES:
        velocity = along(lambda th: solver.tip_pose(th)[1], theta, theta_dot)
        J = solver.jacobian(theta)
        np.testing.assert_allclose(J[:3] @ theta_dot, velocity, rtol=1e-6, atol=1e-6)
        acceleration = along(lambda th: solver.jacobian(th) @ theta_dot, theta, theta_dot)
        np.testing.assert_allclose(solver.jacobian_dot_qd(theta, theta_dot), acceleration,
                                   rtol=1e-5, atol=1e-5 * np.abs(acceleration).max())
        R = solver.tip_pose(theta)[0]
        local = solver.jacobian(theta, LOCAL)
        np.testing.assert_allclose(local[:3], R.T @ J[:3], atol=1e-12)


def test_a_tool_wrench_adds_its_virtual_work(solver):
    """τ(f) − τ(0) = Jᵀ f: the work a tool wrench does along any motor motion."""
    theta, theta_dot = STATES[0]
    f = np.array([30.0, -20.0, 50.0, 2.0, -1.0, 3.0])
    zero = np.zeros(4)
    added = (solver.inverse_dynamics(theta, theta_dot, zero, f_tip=f)
             - solver.inverse_dynamics(theta, theta_dot, zero))
    displacement = solver.jacobian(theta) @ theta_dot
    assert abs(added @ theta_dot - f @ displacement) <= 1e-9 * np.abs(f @ displacement)


def test_the_loops_wrench_balances_each_passive_joint_with_a_tool_wrench_too(solver):
    """With the tool exerting f (base axes, or the tool's for LOCAL), the closure's wrench w
    (on the rod from the forearm) completes the tree's equations of motion: every joint's
    M q̈ + h + J_toolᵀ f − (J_a − J_b)ᵀ w is the motor torque on a motor and zero on a
    passive joint."""
    chain, tree = solver.chain, solver.chain.tree
    theta, theta_dot = STATES[1]
    theta_ddot = np.array([0.7, -1.1, 0.4, 2.0])
    f = np.array([30.0, -20.0, 50.0, 2.0, -1.0, 3.0])
    q, qd, B, c = solver.motors.state(theta, theta_dot)
    kin = chain.kinematics(q)
    R = solver.tip_pose(theta)[0]
    for frame, f_base in (("local_world_aligned", f),
                          (LOCAL, np.concatenate((R @ f[:3], R @ f[3:])))):
        tau = solver.inverse_dynamics(theta, theta_dot, theta_ddot, f_tip=f, frame=frame)
        (w,) = solver.closure_wrenches(theta, theta_dot, theta_ddot, f, frame)
        body_tip, _, p_tip = frame_pose(tree, kin, "tool0")
        body_a, _, p_a = frame_pose(tree, kin, "rod", np.eye(3), np.array([0.8, 0, 0]))
        body_b, _, p_b = frame_pose(tree, kin, "forearm", np.eye(3), np.array([-0.25, 0, 0]))
        np.testing.assert_allclose(p_a, w.point, atol=1e-12)
        balance = (tree_rnea(tree, q, qd, B @ theta_ddot + c)
                   + frame_jacobian(tree, kin, body_tip, p_tip).T @ f_base
                   - (frame_jacobian(tree, kin, body_a, p_a)
                      - frame_jacobian(tree, kin, body_b, p_b)).T @ np.concatenate(
                          (w.force, w.moment)))
        expected = np.zeros(tree.dof)
        expected[list(chain.actuated)] = tau
        np.testing.assert_allclose(balance, expected, atol=1e-9 * np.abs(tau).max())


def test_what_a_closed_chain_cannot_do_yet_is_refused_with_the_reason(solver):
    theta, theta_dot = STATES[0]
    with pytest.raises(ArgumentError, match="regressor is not written yet"):
        solver.joint_torque_regressor(theta, theta_dot, theta_dot)
    with pytest.raises(ArgumentError, match="expected 4, got 3"):
        solver.gravity(np.zeros(3))
