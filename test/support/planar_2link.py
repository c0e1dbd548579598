"""The 2-link planar arm of the reference texts (urdf/planar_2link.urdf: point masses at
the link ends) in closed form (Craig, Introduction to Robotics, §6.7: M, V, G): the
independent reference of test_closed_form and test_codegen."""

import numpy as np

L1, L2, M1, M2, G = 1.0, 0.5, 2.0, 1.0, 9.81


def closed_form(q, qd, qdd):
    """(M, V, G, τ = M q̈ + V + G) at one state."""
    c1, c2, s2 = np.cos(q[0]), np.cos(q[1]), np.sin(q[1])
    c12 = np.cos(q[0] + q[1])
    M = np.array([
        [L2**2 * M2 + 2 * L1 * L2 * M2 * c2 + L1**2 * (M1 + M2), L2**2 * M2 + L1 * L2 * M2 * c2],
        [L2**2 * M2 + L1 * L2 * M2 * c2, L2**2 * M2]])
    V = np.array([-M2 * L1 * L2 * s2 * qd[1]**2 - 2 * M2 * L1 * L2 * s2 * qd[0] * qd[1],
                  M2 * L1 * L2 * s2 * qd[0]**2])
    Gv = np.array([M2 * L2 * G * c12 + (M1 + M2) * L1 * G * c1, M2 * L2 * G * c12])
    return M, V, Gv, M @ qdd + V + Gv


def planar_jacobian(q):
    """Linear velocity of the tip in the plane, as (x, z) of the base frame."""
    s1, c1 = np.sin(q[0]), np.cos(q[0])
    s12, c12 = np.sin(q[0] + q[1]), np.cos(q[0] + q[1])
    return np.array([[-L1 * s1 - L2 * s12, -L2 * s12], [L1 * c1 + L2 * c12, L2 * c12]])


def closed_form_derivatives(q, qd, qdd):
    """(∂τ/∂q, ∂τ/∂q̇) of τ = M q̈ + V + G above, differentiated by hand ([i, j] =
    ∂τ_i/∂x_j)."""
    s1, c2, s2 = np.sin(q[0]), np.cos(q[1]), np.sin(q[1])
    s12 = np.sin(q[0] + q[1])
    a = M2 * L1 * L2
    dq = np.array([
        [-M2 * L2 * G * s12 - (M1 + M2) * L1 * G * s1,
         -2 * a * s2 * qdd[0] - a * s2 * qdd[1] - a * c2 * (qd[1]**2 + 2 * qd[0] * qd[1])
         - M2 * L2 * G * s12],
        [-M2 * L2 * G * s12, -a * s2 * qdd[0] + a * c2 * qd[0]**2 - M2 * L2 * G * s12]])
    dqd = np.array([[-2 * a * s2 * qd[1], -2 * a * s2 * (qd[0] + qd[1])],
                    [2 * a * s2 * qd[0], 0.0]])
    return dq, dqd
