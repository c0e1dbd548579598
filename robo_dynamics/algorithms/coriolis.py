"""The Coriolis/centrifugal matrix C(q, q̇) whose Ṁ − 2C is skew-symmetric.

Lynch & Park, Modern Robotics, §8.1.2 define it by the Christoffel symbols of M,
    C_ij = Σ_k c_ijk q̇_k,   c_ijk = ½ (∂M_ij/∂q_k + ∂M_ik/∂q_j − ∂M_jk/∂q_i),
which makes Ṁ − 2C skew-symmetric (passivity). The same matrix is computed here without
differentiating M: with M = Σ_k J_kᵀ G_k J_k (ibid. §8.4; J_k the space Jacobian
of body k, columns S_j for j ≤ k),

    C = Σ_k J_kᵀ (G_k J̇_k + B_k J_k),
    B_k = ½ ( −[ad_{V_k}]ᵀ G_k − G_k [ad_{V_k}] + [G_k V_k ×̄] ),

where [h ×̄] V = −[ad_V]ᵀ h. Then B_k V_k = −[ad_{V_k}]ᵀ G_k V_k so C q̇ is the velocity
part of the Newton–Euler bias, and B_k + B_kᵀ = Ġ_k gives Ṁ − 2C = Σ_k (J̇_kᵀ G_k J_k −
J_kᵀ G_k J̇_k) − J_kᵀ (B_k − B_kᵀ) J_k, skew-symmetric. The test suite checks it against the
Christoffel symbols of a finite-difference ∂M/∂q.
"""

import numpy as np

from ..spatial.motion import ad, bar
from .crba import screw_axes, spatial_inertias
from .kinematics import body_twists, forward_kinematics, screw_axis_rates


def coriolis_matrix_batch(model, q, qd, kin=None):
    """C(q, q̇) for N states: q, qd (N, n) → (N, n, n); C q̇ = b − g."""
    kin = forward_kinematics(model, q) if kin is None else kin
    n = q.shape[-1]
    w, v = body_twists(kin, qd)
    dS_ang, dS_lin = screw_axis_rates(kin, w, v)
    S = screw_axes(kin)
    dS = np.concatenate((dS_ang, dS_lin), axis=-1)
    G = spatial_inertias(model, kin)
    V = np.concatenate((w, v), axis=-1)
    ad_V = ad(V)
    B = 0.5 * (-np.swapaxes(ad_V, -1, -2) @ G - G @ ad_V
               + bar(np.einsum("...ab,...b->...a", G, V)))
    outboard = np.tril(np.ones((n, n)))[..., None]            # [k, j] = 1 if j ≤ k
    J = S[..., None, :, :] * outboard                          # (N, k, j, 6)
    dJ = dS[..., None, :, :] * outboard
    X = np.einsum("...kab,...kjb->...kja", G, dJ) + np.einsum("...kab,...kjb->...kja", B, J)
    return np.einsum("...kia,...kja->...ij", J, X)


def coriolis_matrix(model, q, qd):
    """C(q, q̇) (n, n) for one state."""
    return coriolis_matrix_batch(model, q[None], qd[None])[0]
