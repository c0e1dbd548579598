"""Kinetic and potential energy of the chain (Lynch & Park, Modern Robotics, §8.1; Craig,
Introduction to Robotics, §6.9: the Lagrangian)."""

import numpy as np

from .crba import mass_matrix
from .kinematics import forward_kinematics


def kinetic_energy(model, q, qd):
    """K = ½ q̇ᵀ M(q) q̇ [J]."""
    return 0.5 * qd @ mass_matrix(model, q) @ qd


def potential_energy(model, q):
    """P = −Σ_i m_i gᵀ c_i(q) [J], zero with every centre of mass at the base origin."""
    com = forward_kinematics(model, q[None]).com[0]
    return -float(np.sum(model.mass * (com @ model.gravity)))
