"""Composite rigid-body algorithm: the joint-space mass matrix M(q).

The Lagrangian form writes M = Σ_i (m_i J_viᵀ J_vi + J_ωiᵀ I_i J_ωi) (Lynch & Park,
Modern Robotics, §8.1.3); §8.4 the same with spatial Jacobians, M = Σ_i J_iᵀ G_i J_i.
Grouping the bodies that each joint pair moves gives the composite form: with G_i the
spatial inertia of body i about the base origin and G^c_j = Σ_{k≥j} G_k the inertia of
everything outboard of joint j,

    M_ij = S_iᵀ G^c_j S_j   for i ≤ j,   M_ji = M_ij.
"""

import numpy as np

from ..spatial.inertia import spatial_inertia_about_origin
from .kinematics import forward_kinematics


def spatial_inertias(model, kin):
    """G_i (N, n, 6, 6): spatial inertia of each body about the base origin, [angular; linear]."""
    return spatial_inertia_about_origin(model.mass, kin.com, kin.inertia)


def screw_axes(kin):
    """S (N, n, 6): the screw axes stacked [angular; linear]."""
    return np.concatenate((kin.S_ang, kin.S_lin), axis=-1)


def mass_matrix_batch(model, q, kin=None):
    """M(q) for N states: q (N, n) → (N, n, n) [kg·m², kg·m, kg]. Symmetric positive definite."""
    kin = forward_kinematics(model, q) if kin is None else kin
    G = spatial_inertias(model, kin)
    G_composite = np.cumsum(G[..., ::-1, :, :], axis=-3)[..., ::-1, :, :]
    S = screw_axes(kin)
    GS = np.einsum("...jab,...jb->...ja", G_composite, S)     # G^c_j S_j
    P = np.einsum("...ia,...ja->...ij", S, GS)                 # S_iᵀ G^c_j S_j
    upper = np.triu(P)
    return upper + np.swapaxes(np.triu(P, 1), -1, -2)


def mass_matrix(model, q):
    """M(q) (n, n) for one state."""
    return mass_matrix_batch(model, q[None])[0]
