"""Rigid-body inertia: parallel-axis theorem, lumping bodies, physical consistency.

Notation of reference 000 (§ 질량 분포): ^C I is the inertia tensor about the centre of mass
C, in the axes of the body frame; the parallel-axis theorem moves it to another point.
"""

import numpy as np

from .rotations import skew


def inertia_tensor(ixx, ixy, ixz, iyy, iyz, izz):
    """The symmetric 3×3 inertia tensor from the six URDF entries (kg·m²)."""
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]], dtype=float)


def combine(m_a, c_a, I_a, m_b, c_b, I_b):
    """Lump two rigid bodies expressed in the same frame into one.

    m: mass (kg); c: centre of mass (m, 3-vector); I: inertia about that body's own centre
    of mass (kg·m², 3×3), all in the same axes. Returns (m, c, I) of the union, I about the
    new centre of mass (parallel-axis theorem, reference 000 § 질량 분포).
    """
    m = m_a + m_b
    if m <= 0.0:
        return 0.0, np.zeros(3), I_a + I_b
    c = (m_a * c_a + m_b * c_b) / m
    da, db = skew(c_a - c), skew(c_b - c)
    I = I_a - m_a * (da @ da) + I_b - m_b * (db @ db)
    return m, c, I


def physical_problems(mass, I, tolerance=1e-9):
    """Reasons why (mass, inertia about the COM) cannot be a rigid body; empty if it can.

    Checks: mass ≥ 0, I symmetric, I positive semi-definite, and the triangle inequality on
    the principal moments (I1 + I2 ≥ I3 for every ordering). `tolerance` is relative to
    the largest principal moment.
    """
    problems = []
    if not np.isfinite(mass) or mass < 0.0:
        problems.append(f"mass must be finite and >= 0, got {mass}")
    if not np.all(np.isfinite(I)):
        problems.append("inertia has non-finite entries")
        return problems
    if not np.allclose(I, I.T, rtol=0.0, atol=tolerance * max(1.0, np.abs(I).max())):
        problems.append("inertia is not symmetric")
    moments = np.linalg.eigvalsh(0.5 * I + 0.5 * I.T)     # halves first: no overflow near 1e308
    if not np.all(np.isfinite(moments)):
        problems.append("inertia entries are too large: the principal moments overflow")
        return problems
    scale = tolerance * max(abs(moments).max(), 1e-300)
    if moments[0] < -scale:
        problems.append(
            f"inertia is not positive semi-definite (principal moments {moments.tolist()})")
    elif moments[0] + moments[1] < moments[2] - scale:
        problems.append(
            "principal moments violate the triangle inequality I1 + I2 >= I3 "
            f"({moments.tolist()})")
    if mass == 0.0 and moments[2] > scale and moments[2] > 0.0:
        problems.append("mass is 0 but the inertia is not")
    return problems


def spatial_inertia_about_origin(m, c, I_c):
    """6×6 spatial inertia of bodies about the origin of the frame c and I_c are given in.

    m: (...,) kg; c: (..., 3) m, centre of mass; I_c: (..., 3, 3) kg·m² about the centre of
    mass. Block order [angular; linear] (reference 004, §9.2.2, the wrench/twist order):
        [[I_c − m [c]×², m [c]×], [−m [c]×, m 1]]
    so that [n_O; f] = I [ω; v_O] is the momentum about the origin.
    """
    c = np.asarray(c, dtype=float)
    m = np.broadcast_to(np.asarray(m, dtype=float), c.shape[:-1])
    C = skew(c)
    mC = m[..., None, None] * C
    out = np.zeros(m.shape + (6, 6))
    out[..., :3, :3] = I_c - mC @ C
    out[..., :3, 3:] = mC
    out[..., 3:, :3] = -mC
    out[..., 3:, 3:] = m[..., None, None] * np.eye(3)
    return out
