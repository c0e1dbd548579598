"""Rigid-body inertia: parallel-axis theorem, lumping bodies, physical consistency.

Notation of Craig, Introduction to Robotics, §6.3 (mass distribution): ^C I is the inertia
tensor about the centre of mass C, in the axes of the body frame; the parallel-axis theorem
moves it to another point.
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
    new centre of mass (parallel-axis theorem, Craig, Introduction to Robotics, §6.3).
    """
    m = m_a + m_b
    if m <= 0.0:
        return 0.0, np.zeros(3), I_a + I_b
    c = (m_a * c_a + m_b * c_b) / m
    da, db = skew(c_a - c), skew(c_b - c)
    I = I_a - m_a * (da @ da) + I_b - m_b * (db @ db)
    return m, c, I


# Principal moments within this fraction of the largest one count as zero. URDF inertias are
# printed from CAD with 4–7 significant digits: rounding each entry to 4 digits moves the
# eigenvalues by up to 3 × 5e-5 of the largest, far above the eigen-solver's own error
# (≈ 1e-16). A moment more negative than that is not rounding: the inertia is wrong.
MOMENT_TOLERANCE = 1.5e-4
# Below mass × (1 µm)², a radius of gyration under any CAD precision, a moment is zero too
# (files write the inertia of a point mass as 1e-20 noise).
GYRATION_FLOOR = 1e-6   # m


def rigid_body_problems(mass, I, tolerance=MOMENT_TOLERANCE):
    """(errors, doubts) about (mass [kg], inertia about the COM [kg·m²]) as a rigid body.

    errors: what makes the body unusable: mass < 0 or not finite, I not finite, not
    symmetric or not positive semi-definite (a principal moment below −max(tolerance × the
    largest, mass × GYRATION_FLOOR²)). Such a body can make M(q) indefinite.
    doubts: positive semi-definite but not the inertia of any mass distribution: the
    principal moments break the triangle inequality I1 + I2 ≥ I3 by more than that
    (typically CAD rounding of a thin part), or a massless body has inertia. M(q) stays
    positive semi-definite.
    """
    errors, doubts = [], []
    if not np.isfinite(mass) or mass < 0.0:
        errors.append(f"mass must be finite and >= 0, got {mass}")
    if not np.all(np.isfinite(I)):
        errors.append("inertia has non-finite entries")
        return errors, doubts
    if not np.allclose(I, I.T, rtol=0.0, atol=1e-9 * max(1.0, np.abs(I).max())):
        errors.append("inertia is not symmetric")
    moments = np.linalg.eigvalsh(0.5 * I + 0.5 * I.T)     # halves first: no overflow near 1e308
    if not np.all(np.isfinite(moments)):
        errors.append("inertia entries are too large: the principal moments overflow")
        return errors, doubts
    zero = max(tolerance * abs(moments).max(), mass * GYRATION_FLOOR ** 2, 1e-300)
    shown = [float(f"{m:.3g}") for m in moments]
    if moments[0] < -zero:
        errors.append(f"inertia is not positive semi-definite (principal moments {shown} "
                      "kg·m²)")
    elif moments[0] + moments[1] < moments[2] - zero:
        doubts.append("principal moments violate the triangle inequality I1 + I2 >= I3 "
                      f"({shown} kg·m²)")
    if mass == 0.0 and moments[2] > zero and moments[2] > 0.0:
        doubts.append(f"mass is 0 but the inertia is not (principal moments {shown} kg·m²)")
    return errors, doubts


def physical_problems(mass, I, tolerance=MOMENT_TOLERANCE):
    """Every reason (errors and doubts of rigid_body_problems) why (mass, I) cannot be a
    rigid body; empty if it can. For inertias a caller sends (payloads): nothing doubtful
    is accepted."""
    errors, doubts = rigid_body_problems(mass, I, tolerance)
    return errors + doubts


def spatial_inertia_about_origin(m, c, I_c):
    """6×6 spatial inertia of bodies about the origin of the frame c and I_c are given in.

    m: (...,) kg; c: (..., 3) m, centre of mass; I_c: (..., 3, 3) kg·m² about the centre of
    mass. Block order [angular; linear] (Lynch & Park, Modern Robotics, §8.2.2, the
    twist-wrench order):
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
