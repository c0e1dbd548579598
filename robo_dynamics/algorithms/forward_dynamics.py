"""Forward dynamics q̈ = M(q)⁻¹ (τ − b(q, q̇)) (Lynch & Park, Modern Robotics, §8.5), by a
linear solve.

M is never inverted explicitly: the system M q̈ = τ − b is solved by LU factorisation.
"""

import numpy as np

from .crba import mass_matrix_batch
from .kinematics import forward_kinematics
from .rnea import rnea_batch


def forward_dynamics_batch(model, q, qd, tau):
    """Joint accelerations (N, n) [rad/s² or m/s²] for q, qd, tau of shape (N, n)."""
    kin = forward_kinematics(model, q)
    M = mass_matrix_batch(model, q, kin=kin)
    b = rnea_batch(model, q, qd, np.zeros_like(q), kin=kin)
    return np.linalg.solve(M, (tau - b)[..., None])[..., 0]


def forward_dynamics(model, q, qd, tau):
    """Joint accelerations (n,) for one state."""
    return forward_dynamics_batch(model, q[None], qd[None], tau[None])[0]
