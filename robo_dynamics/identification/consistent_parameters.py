"""Physically consistent standard parameters from an arm's identified base parameters: a
semidefinite program. No ROS here.

The base parameters β (arm_identification.py) fix only some combinations of the standard
parameters π. Of all π, this finds the one that fits the recorded torques as well as the
data allow while every body can exist: its pseudo-inertia

    J_i = [[Σ_i, h_i], [h_iᵀ, m_i]],  Σ_i = ½ tr(I_i) E − I_i,  h_i = m_i c_i

(I_i the inertia about the body frame's origin) is positive semidefinite, which holds
exactly when the body is a physical mass distribution (Wensing, Kim & Slotine, "Linear
matrix inequalities for physically consistent inertial parameter identification: a
statistical perspective on the mass distribution", IEEE Robotics and Automation Letters
3(1), 2018). Friction stays physical: f_v ≥ 0, f_c ≥ 0.

Where the data say little, π stays at the URDF's: the URDF is taken as a prior, each of its
parameters trusted within a standard deviation s_k of PRIOR_SHARE of its body's scale (mass
m; first moments m r, r the larger of |c| and the radius of gyration; inertias about the
body frame's origin the mean of their principal moments), and the program finds the most
probable π given that prior and the data (the weighted rows are the data's information,
their residual variance ≈ 1):

    minimise   ½ ‖A_w T x − b_w‖² + ½ Σ_k (π_k − π_URDF,k)² / s_k²
    subject to J_i(π) − δ E₄ ⪰ 0 for every body, f_v ≥ 0, f_c ≥ 0

x = [π; friction], T x = [β(π); friction]; A_w, b_w the weighted rows of the fit. A base
parameter known to σ_β ≪ s moves to the data; one the noise hides (a light wrist's centre of
mass under sensors as noisy as a shoulder's) keeps the URDF's value instead of the noise's.
Beyond the prior, a base parameter whose estimate is within SIGNIFICANT σ_β of the URDF's
(the data do not show the URDF wrong there) is held at the URDF's, as firmly as if its σ_β
were KEEP_WEIGHT times smaller, and so is each joint's viscous and Coulomb friction within
SIGNIFICANT σ of the URDF's <dynamics damping friction> (friction_shown): the corrected
URDF changes only what the data show, friction included.
Solved by Clarabel (an interior-point solver for conic programs), on one thread with its QDLDL
factorisation, so that the result is the same on every machine.
"""

import numpy as np

from ..algorithms.regressor import body_from_parameters, model_parameters

PRIOR_SHARE = 0.3      # of each body's scale: how far the URDF's inertials are trusted
MARGIN = 1e-6          # δ: each pseudo-inertia at least this far inside the cone
MIN_SIZE = 0.01        # m: the smallest body size r the prior assumes
SIGNIFICANT = 2.0      # a base parameter within this many σ of the URDF's keeps the URDF's
KEEP_WEIGHT = 100.0    # how firmly: as if its σ were this many times smaller


def pseudo_inertia(pi):
    """J (4, 4) of one body's ten parameters π (regressor.PARAMETERS order)."""
    m, h, I = pi[0], pi[1:4], _inertia(pi)
    J = np.empty((4, 4))
    J[:3, :3] = 0.5 * np.trace(I) * np.eye(3) - I
    J[:3, 3] = J[3, :3] = h
    J[3, 3] = m
    return J


def _inertia(pi):
    return np.array([[pi[4], pi[5], pi[7]], [pi[5], pi[6], pi[8]], [pi[7], pi[8], pi[9]]])


def prior_std(model):
    """s (10 n,): the standard deviation the prior gives each parameter of model's bodies
    (module docstring); a massless body is given the chain's mean mass."""
    masses = np.asarray(model.mass, dtype=float)
    mean_mass = max(float(np.mean(masses)), 1e-3)
    s = []
    for m, c, I in zip(masses, model.com, model.inertia):
        m = m if m > 0.0 else mean_mass
        r = np.sqrt(np.trace(I) / (3.0 * m))          # the rms radius about one axis
        size = max(float(np.linalg.norm(c)), r, MIN_SIZE)
        moment = max(np.trace(I) / 3.0 + m * (c @ c) * 2.0 / 3.0, m * MIN_SIZE ** 2)
        s.append(PRIOR_SHARE * np.array([m] + [m * size] * 3 + [moment] * 6))
    return np.concatenate(s)


def _pseudo_inertia_map():
    """M (10, 10): svec(J(π)) = M π, svec Clarabel's: the upper triangle column by column,
    off-diagonal entries × √2."""
    M = np.empty((10, 10))
    for k in range(10):
        J = pseudo_inertia(np.eye(10)[k])
        M[:, k] = [J[i, j] * (1.0 if i == j else np.sqrt(2.0))
                   for j in range(4) for i in range(j + 1)]
    return M


def require_solver():
    """The Clarabel module; ValueError saying how to install it when it is absent (no rosdep
    key names it: docs/install.md)."""
    try:
        import clarabel
    except ImportError:
        raise ValueError("the physically consistent parameters need the Clarabel solver, "
                         "which is not installed: pip install clarabel (rosdep's "
                         "python3-cvxpy-pip brings it; docs/install.md)") from None
    return clarabel


def consistent_parameters(model, estimate):
    """(π (10 n,), friction (n, 3)) physically consistent (module docstring) for an
    ArmEstimate of `model`'s chain. ValueError if the solver fails or is absent."""
    clarabel = require_solver()
    from scipy import sparse
    n = model.dof
    P, q = _objective(model, estimate)
    A, b, cones = _constraints(n, clarabel)
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    # one thread, one factorisation: by default Clarabel picks its linear solver and uses
    # every core, and threads that share a sum change its last bits with the machine's load
    settings.direct_solve_method, settings.max_threads = "qdldl", 1
    solver = clarabel.DefaultSolver(sparse.csc_matrix(np.triu(P)), q, sparse.csc_matrix(A),
                                    b, cones, settings)
    solution = solver.solve()
    if str(solution.status) not in ("Solved", "AlmostSolved"):
        raise ValueError(f"the semidefinite program was not solved: {solution.status}")
    x = np.asarray(solution.x)
    return x[:10 * n], x[10 * n:].reshape(n, 3)


def _objective(model, estimate):
    """(P, q) of ½ xᵀP x + qᵀx, x = [π (10 n); friction (3 n)]: the fit's normal equations
    in x, the URDF's parameters as a prior, and the base parameters and friction the data
    do not show to differ from the URDF's held at the URDF's."""
    base, n = estimate.base, model.dof
    G, g = estimate.normal
    p_inertial, p = 10 * n, 10 * n + 3 * n
    T = np.zeros((base.count + 3 * n, p))                   # x → [β; friction]
    T[np.arange(base.count), base.independent] = 1.0
    T[:base.count, base.dependent] = base.K
    T[base.count:, p_inertial:] = np.eye(3 * n)
    P = T.T @ G @ T
    q = -T.T @ g
    prior, weight = model_parameters(model), prior_std(model) ** -2.0
    P[np.arange(p_inertial), np.arange(p_inertial)] += weight
    q[:p_inertial] -= weight * prior
    # a base parameter the data do not show to differ from the URDF's keeps the URDF's
    urdf_beta = base.of(prior)
    kept = np.abs(estimate.beta - urdf_beta) < SIGNIFICANT * estimate.beta_std
    rows = T[:base.count][kept] * (KEEP_WEIGHT / estimate.beta_std[kept])[:, None]
    P += rows.T @ rows
    q -= rows.T @ (urdf_beta[kept] * KEEP_WEIGHT / estimate.beta_std[kept])
    # so does a joint's friction the data do not show to differ from the URDF's
    urdf_friction = np.column_stack((model.damping, model.friction))
    for j, k in zip(*np.nonzero(~friction_shown(model, estimate))):
        column = p_inertial + 3 * j + k
        w = (KEEP_WEIGHT / estimate.friction_std[j, k]) ** 2
        P[column, column] += w
        q[column] -= w * urdf_friction[j, k]
    return P, q


def _constraints(n, clarabel):
    """(A, b, cones): s = b − A x in the cones: each body's pseudo-inertia J_i − δE ⪰ 0, and
    f_v, f_c ≥ 0 for each joint."""
    p_inertial, p = 10 * n, 10 * n + 3 * n
    M = _pseudo_inertia_map()
    rows_c, rhs, cones = [], [], []
    margin = MARGIN * np.array([1.0 if i == j else 0.0 for j in range(4) for i in range(j + 1)])
    for i in range(n):                                      # J_i − δE ⪰ 0
        block = np.zeros((10, p))
        block[:, 10 * i:10 * i + 10] = -M
        rows_c.append(block)
        rhs.append(-margin)
        cones.append(clarabel.PSDTriangleConeT(4))
    friction = np.zeros((2 * n, p))                         # f_v, f_c ≥ 0
    for j in range(n):
        friction[2 * j, p_inertial + 3 * j] = -1.0
        friction[2 * j + 1, p_inertial + 3 * j + 1] = -1.0
    rows_c.append(friction)
    rhs.append(np.zeros(2 * n))
    cones.append(clarabel.NonnegativeConeT(2 * n))
    return np.vstack(rows_c), np.concatenate(rhs), cones


def friction_shown(model, estimate):
    """(n, 2) bool: whether the data show each joint's viscous and Coulomb friction to
    differ from the URDF's <dynamics damping friction> (by more than SIGNIFICANT σ)."""
    urdf = np.column_stack((model.damping, model.friction))
    return np.abs(estimate.friction[:, :2] - urdf) >= SIGNIFICANT * estimate.friction_std[:, :2]


def bodies(pi):
    """[(mass [kg], com (3,) [m], inertia (3, 3) [kg·m²] about the centre of mass)] per
    body of π (10 n,), each in its body frame."""
    return [body_from_parameters(pi[10 * i:10 * i + 10]) for i in range(len(pi) // 10)]
