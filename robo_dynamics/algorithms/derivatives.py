"""Analytical derivatives of inverse dynamics, ∂τ/∂q and ∂τ/∂q̇ (the system Jacobian of the
equations of motion of Lee, Sohn, Kim & Yoo, KSME 2001), and of forward dynamics.

Derived here by differentiating the base-frame Newton–Euler recursion of rnea.py. Turning
joint j by dq moves every body k ≥ j rigidly with the twist S_j dq. A quantity carried by
those bodies changes by S_j × X (motion), S_j ×* F (force), S_j ×* G − G S_j × (inertia), and
the pairing S_iᵀ W_i of two carried quantities does not change. So ∂τ/∂q_j comes only from
what is *not* carried: the velocity V_{j−1} and acceleration V̇_{j−1} of the body before j
(gravity included). With Ṡ_j = V_{j−1} × S_j, the corrections to V_k and V̇_k (k ≥ j) are

    ε_V = −S_j × V_{j−1},    ε_A,k = a_j + Ṡ_j × V_k,   a_j = −S_j × V̇_{j−1} − Ṡ_j × V_{j−1},

and, summed over the bodies outboard of m = max(i, j) with composite G^c = Σ G_k,
H^c = Σ G_k [ad_{V_k}], K^c = Σ −[ad_{V_k}]ᵀ G_k, h^c = Σ G_k V_k:

    ∂τ_i/∂q_j = S_iᵀ (G^c_m a_j − H^c_m Ṡ_j + ([h^c_m ×̄] + K^c_m) ε_V,j)
                + [j > i] S_iᵀ (S_j ×* W_j)          (W_j: the wrench across joint j)
    ∂τ_i/∂q̇_j = S_iᵀ (2 G^c_m Ṡ_j + ([h^c_m ×̄] + K^c_m − H^c_m) S_j)
    ∂τ/∂q̈ = M.

Forward dynamics q̈ = M⁻¹(τ − b): ∂q̈/∂q = −M⁻¹ ∂τ/∂q, ∂q̈/∂q̇ = −M⁻¹ ∂τ/∂q̇ (both at that q̈),
∂q̈/∂τ = M⁻¹. The tests compare with Pinocchio's computeRNEADerivatives and
computeABADerivatives and with central finite differences.
"""

import numpy as np

from ..spatial.motion import ad, ad_star, bar, cross_force, cross_motion
from .crba import mass_matrix_batch, screw_axes, spatial_inertias
from .forward_dynamics import forward_dynamics
from .kinematics import forward_kinematics
from .rnea import body_wrenches, outward_pass


def _composite(X):
    """Σ_{k ≥ i} X_k over the bodies: X is (N, n, …), the sum runs along axis 1."""
    return np.flip(np.cumsum(np.flip(X, axis=1), axis=1), axis=1)


def rnea_derivatives_batch(model, q, qd, qdd, kin=None):
    """(∂τ/∂q, ∂τ/∂q̇) for N states, each (N, n, n) indexed [i, j] = ∂τ_i/∂(·)_j."""
    kin = forward_kinematics(model, q) if kin is None else kin
    w, v, wd, vd = outward_pass(kin, qd, qdd, model.gravity)
    f_ang, f_lin = body_wrenches(model, kin, w, v, wd, vd)
    V = np.concatenate((w, v), axis=-1)                      # (N, n, 6)
    A = np.concatenate((wd, vd), axis=-1)
    F = np.concatenate((f_ang, f_lin), axis=-1)
    S = screw_axes(kin)
    G = spatial_inertias(model, kin)                         # (N, n, 6, 6)
    N, n = q.shape

    V_prev = np.concatenate((np.zeros((N, 1, 6)), V[:, :-1]), axis=1)
    A_base = np.concatenate((np.zeros(3), -model.gravity))
    A_prev = np.concatenate((np.broadcast_to(A_base, (N, 1, 6)), A[:, :-1]), axis=1)
    S_dot = cross_motion(V_prev, S)
    a = -cross_motion(S, A_prev) - cross_motion(S_dot, V_prev)
    eps_V = -cross_motion(S, V_prev)

    G_c = _composite(G)
    H_c = _composite(G @ ad(V))
    K_c = _composite(ad_star(V) @ G)
    h_bar_c = bar(_composite(np.einsum("...ab,...b->...a", G, V)))
    W = _composite(F)

    # X[m, j]: the bracket of the formulas for outboard index m and joint j
    X_q = (np.einsum("...mab,...jb->...mja", G_c, a)
           - np.einsum("...mab,...jb->...mja", H_c, S_dot)
           + np.einsum("...mab,...jb->...mja", h_bar_c + K_c, eps_V))
    X_qd = (2.0 * np.einsum("...mab,...jb->...mja", G_c, S_dot)
            + np.einsum("...mab,...jb->...mja", h_bar_c + K_c - H_c, S))
    m = np.maximum.outer(np.arange(n), np.arange(n))         # max(i, j)
    j = np.broadcast_to(np.arange(n), (n, n))
    dtau_dq = np.einsum("...ia,...ija->...ij", S, X_q[:, m, j])
    dtau_dqd = np.einsum("...ia,...ija->...ij", S, X_qd[:, m, j])
    outboard = np.triu(np.ones((n, n)), 1)                   # j > i
    transport = np.einsum("...ia,...ja->...ij", S, cross_force(S, W))
    return dtau_dq + outboard * transport, dtau_dqd


def rnea_derivatives(model, q, qd, qdd):
    """(∂τ/∂q, ∂τ/∂q̇, ∂τ/∂q̈ = M) for one state, each (n, n)."""
    kin = forward_kinematics(model, q[None])
    dq, dqd = rnea_derivatives_batch(model, q[None], qd[None], qdd[None], kin=kin)
    return dq[0], dqd[0], mass_matrix_batch(model, q[None], kin=kin)[0]


def forward_dynamics_derivatives(model, q, qd, tau):
    """(∂q̈/∂q, ∂q̈/∂q̇, ∂q̈/∂τ) for one state, each (n, n); see the module docstring."""
    qdd = forward_dynamics(model, q, qd, tau)
    dtau_dq, dtau_dqd, M = rnea_derivatives(model, q, qd, qdd)
    M_inv = np.linalg.solve(M, np.eye(len(q)))
    return -M_inv @ dtau_dq, -M_inv @ dtau_dqd, M_inv
