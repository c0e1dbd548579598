"""Cartesian (operational-space) dynamics at the tip: F = Λ(q) ẍ + η(q, q̇), Lynch & Park,
Modern Robotics, §8.6 (Λ = J⁻ᵀ M J⁻¹, η = J⁻ᵀ b − Λ J̇ q̇) and Craig, Introduction to
Robotics, §6.10 (M_x, V_x, G_x).

J⁻¹ exists only for n = 6 away from singularities, so this module uses the form that holds
for any n: Λ = (J M⁻¹ Jᵀ)⁻¹ and the dynamically consistent inverse J̄ᵀ = Λ J M⁻¹, giving
η = J̄ᵀ b − Λ J̇ q̇ and the Cartesian gravity wrench p = J̄ᵀ g. For n = 6 these equal the
reference formulas.

Inverting Λ⁻¹ = J M⁻¹ Jᵀ (6 × 6, symmetric positive semi-definite):
  eigen-decompose Λ⁻¹ = U diag(σ) Uᵀ, σ_1 ≥ … ≥ σ_6. The arm can move in r = min(n, 6)
  directions; the other 6 − r eigenvalues are structurally zero and get zero inertia
  (pseudo-inverse). Among the r others, σ ≥ σ_1/κ_max is inverted exactly (1/σ); a smaller
  σ, the sign of a nearby singularity, gets σ/σ_thr² with σ_thr = σ_1/κ_max, a ramp that
  meets 1/σ at σ_thr and goes to 0 at the singularity. So every eigenvalue of Λ is at most
  κ_max/σ_1: Λ stays finite and bounded. An eigenvalue below 6 ε σ_1 (ε the machine
  epsilon) is rounding, not a direction the arm can be pushed in: it is taken as 0 (as a
  rank decision is, Golub & Van Loan, Matrix Computations, §5.4.1), else the ramp would turn
  rounding that differs between CPUs into inertia of order ε κ_max²/σ_1.
  The condition number reported is σ_1/σ_r.
  In the usual case (r = 6, every σ exact) that Λ is the plain inverse of Λ⁻¹, so only the
  eigenvalues are computed, then the inverse (LU); the eigenvectors only when the ramp or
  the pseudo-inverse applies.

κ_max defaults to 1e8 because Λ⁻¹ mixes units (1/kg and 1/(kg·m²)): on a UR5e-sized arm
its condition number is already 1e4–1e5 at ordinary poses, so a tighter bound would
regularise poses that are not near a singularity.
"""

import collections
import math

import numpy as np

from . import small_linalg

OperationalSpace = collections.namedtuple("OperationalSpace", [
    "Lambda",            # (6, 6) Cartesian inertia, rows/cols [linear; angular]
    "condition_number",  # σ_1 / σ_r of J M⁻¹ Jᵀ (inf at an exact singularity)
    "near_singular",     # condition_number > kappa_max: Λ is regularised
    "eta",               # (6,) Cartesian bias wrench η = J̄ᵀ b − Λ J̇ q̇ (None if not asked)
    "gravity_wrench",    # (6,) Cartesian gravity wrench p = J̄ᵀ g (None if not asked)
])

KAPPA_MAX = 1e8
ROUNDING = 6.0 * np.finfo(float).eps    # eigenvalues below ROUNDING σ_1 are taken as 0


def operational_space(J, M=None, b=None, g=None, Jdot_qd=None, kappa_max=KAPPA_MAX,
                      M_inv=None):
    """Λ and, when b, g and J̇ q̇ are given, η and p, from quantities of one state.

    J: (6, n) tip Jacobian in any frame; M: (n, n) mass matrix, or instead M_inv = M⁻¹
    when the caller has it (Pinocchio's computeMinverse; saves a solve); b = C q̇ + g and
    g: (n,); Jdot_qd: (6,) in the frame of J. Wrench order [force; torque], in the frame
    of J.
    """
    n = J.shape[1]
    M_inv_Jt = M_inv @ J.T if M_inv is not None else np.linalg.solve(M, J.T)  # M⁻¹ Jᵀ (n, 6)
    Lambda_inv = J @ M_inv_Jt
    sigma = small_linalg.eigvalsh(Lambda_inv)               # ascending
    r = min(n, 6)
    sigma_1 = float(sigma[5])
    sigma_r = float(sigma[6 - r])
    threshold = sigma_1 / kappa_max
    if r == 6 and sigma_r > 0.0 and sigma_r >= threshold:   # the usual case: exact inverse
        Lambda = small_linalg.inv(Lambda_inv)
    else:
        sigma, U = np.linalg.eigh(Lambda_inv)
        inverse = np.zeros(6)
        active = sigma[6 - r:]
        inverse[6 - r:] = np.where(active >= threshold, 1.0 / np.maximum(active, threshold),
                                   np.where(active > ROUNDING * sigma_1, active, 0.0)
                                   / threshold ** 2)
        Lambda = (U * inverse) @ U.T
    condition = sigma_1 / sigma_r if sigma_r > 0.0 else math.inf
    eta = p = None
    if b is not None and g is not None and Jdot_qd is not None:
        J_bar_T = Lambda @ M_inv_Jt.T                       # Λ J M⁻¹, (6, n)
        eta = J_bar_T @ b - Lambda @ Jdot_qd
        p = J_bar_T @ g
    return OperationalSpace(Lambda, condition, not condition <= kappa_max, eta, p)


def operational_space_inertia_batch(J, M, kappa_max=KAPPA_MAX):
    """Λ (N, 6, 6) from J (N, 6, n) and M (N, n, n): the rule of `operational_space` for N
    states at once, always through the eigen-decomposition (equal to the exact inverse
    where no eigenvalue is bounded)."""
    n = J.shape[-1]
    Lambda_inv = J @ np.linalg.solve(M, np.swapaxes(J, -1, -2))
    Lambda_inv = 0.5 * (Lambda_inv + np.swapaxes(Lambda_inv, -1, -2))
    sigma, U = np.linalg.eigh(Lambda_inv)                   # ascending, per state
    r = min(n, 6)
    threshold = sigma[..., 5:] / kappa_max
    active = sigma[..., 6 - r:]
    inverse = np.zeros_like(sigma)
    with np.errstate(divide="ignore", invalid="ignore"):
        inverse[..., 6 - r:] = np.where(active >= threshold,
                                        1.0 / np.maximum(active, threshold),
                                        np.where(active > ROUNDING * sigma[..., 5:], active,
                                                 0.0) / threshold ** 2)
    return (U * inverse[..., None, :]) @ np.swapaxes(U, -1, -2)


def reflected_mass(J_v, M_inv, directions=None):
    """The mass [kg] a point carries into a push: m(u) = 1 / (uᵀ J_v M⁻¹ J_vᵀ u) along unit
    u (Khatib, "Inertial properties in robotic manipulation", 1995), J_v (3, n) the point's
    linear Jacobian [base axes], M_inv (n, n) = M(q)⁻¹. Not uᵀ Λ_vv u (the translational
    block of Λ holds the orientation still and overstates it).

    directions (k, 3): the masses along those (inf where the arm cannot move the point that
    way). None: (masses (3,), axes (3, 3)), the principal masses and their directions
    (columns), from the eigen-decomposition of J_v M⁻¹ J_vᵀ; inf where an eigenvalue is
    below 1e-12 of the largest (a singular direction)."""
    A = J_v @ M_inv @ J_v.T
    A = 0.5 * (A + A.T)
    if directions is not None:
        u = np.atleast_2d(np.asarray(directions, dtype=float))
        u = u / np.linalg.norm(u, axis=1, keepdims=True)
        mobility = np.einsum("ki,ij,kj->k", u, A, u)
        with np.errstate(divide="ignore"):
            return np.where(mobility > 1e-12 * np.trace(A), 1.0 / mobility, np.inf)
    sigma, axes = np.linalg.eigh(A)
    with np.errstate(divide="ignore"):
        masses = np.where(sigma > 1e-12 * sigma.max(), 1.0 / sigma, np.inf)
    return masses, axes
