"""A payload's inertial parameters from measured joint torques, by least squares on the
joint-torque regressor (algorithms/regressor.py).

A rigid payload at link L adds Y_L(q, q̇, q̈) π_p to the torques, Y_L the regressor's column
block of L and π_p its ten parameters in L's frame. With y = τ_measured − τ_model the
torques the model (without that payload) leaves unexplained, stacked over the recorded
states,

    y = Y_L π_p + e,    π̂ = argmin ‖y − Y_L π‖²

(Atkeson, An & Hollerbach, "Estimation of inertial parameters of manipulator loads and
links", IJRR 5(3), 1986). At rest (q̇ = q̈ = 0) only gravity acts: the columns of the inertia
are zero and four parameters (m, m c) are all that poses can show; the inertia needs motion.
A parameter set is fitted only when its columns, each scaled to unit norm, have a condition
number below MAX_CONDITION; otherwise the inertia is left out (or nothing is fitted) and
the reason says so, instead of returning noise. Standard deviations come from the residuals:
cov(π̂) = σ̂² (YᵀWY)⁻¹, σ̂² = ‖W^½ (y − Y π̂)‖² / (rows − parameters), W the joints' weights
(below). A tare (the same states recorded without the payload) is subtracted from y: it
cancels the arm's own model error and torque offsets, which a fit would otherwise blame on
the payload.

The joints do not measure equally well: a shoulder's torque also carries its static friction
(anything within its Coulomb band once the arm stands still) and larger model errors; a wrist
joint's does not. Each joint's equations are therefore weighted by 1/s_j, s_j² the variance
of that joint's leave-one-out residuals (a few passes of iteratively reweighted least
squares). Samples recorded at rest in one pose share that pose's friction and offsets, so
they are not independent measurements: given the pose of each sample, the fit runs on the
pose means, each joint's variance not below its within-pose noise variance over the samples
averaged. The standard deviations then include what the poses disagree by, not only the
sensor noise.
"""

import collections
import math

import numpy as np

from ..algorithms.regressor import body_from_parameters, inertial_parameters
from ..spatial.inertia import physical_problems

MAX_CONDITION = 1e3
"""Largest condition number of the (column-scaled) regressor for which a parameter set is
fitted: beyond it the data do not tell the parameters apart."""

STATIC = 4          # m, m c: what poses at rest can identify
POINT_MASS_PASSES = 4   # refits of m, m c with a point mass's inertia (moving states)
SIGNIFICANT = 4.0
"""Standard deviations that set a fitted value apart from 0 (what is applied). Not 3: the
deviations are themselves estimated from a few poses, and on a light last joint a centre of
mass wrongly applied a few millimetres off its axis is a torque that spins it."""
PROVISIONAL_SIGNIFICANT = 6.0
PROVISIONAL_POSES = 3
"""SIGNIFICANT for a working guess between poses (provisional_payload), which takes the centre
of mass only from PROVISIONAL_POSES poses on: from fewer, each joint's scatter rests on about
one residual and comes out small by chance, the deviations have Student's t tails, and a
guess must not make the arm carry worse than no guess."""
FULL = 10           # and the inertia
INERTIA_RELATIVE_STD = 0.1
"""The inertia is reported identified only when each of its principal moments has a standard
deviation of at most this fraction of itself (and it is physical): a claim the data's own
uncertainty supports (benchmarks/identification_claims.py measures how often it is wrong)."""
REWEIGHTING_PASSES = 3   # fits that re-estimate each joint's error variance from its residuals

PayloadEstimate = collections.namedtuple("PayloadEstimate", [
    "mass", "com", "inertia", "mass_std", "com_std", "inertia_std", "inertia_identified",
    "condition_number", "rms_before", "rms_after", "samples", "reason"])
PayloadEstimate.__doc__ = """mass [kg], com (3,) [m] in the link's frame, inertia (3, 3)
[kg·m²] about the centre of mass, link axes (zero unless inertia_identified), their standard
deviations (com_std (3,), inertia_std (6,) [xx, xy, yy, xz, yz, zz] or NaN), the condition
number of the fitted (column-scaled) regressor, the torque RMS per joint [N·m or N] the
model leaves unexplained before and after the payload is added, the states used, and a
sentence on what was identified and why."""


def identify_payload(solver, link, q, qd, qdd, tau_measured, tare=None,
                     estimate_inertia=True, pose=None):
    """PayloadEstimate of the payload at `link` (a moving link of solver.model's chain, or its
    tip link; results in that link's frame) from N recorded states q, q̇, q̈ (N, n) [model
    order] and the measured joint torques (N, n) [N·m or N]. solver's model is the arm
    without this payload. tare: (N, n) the torques measured in the
    same states without the payload (None: the model is trusted). pose: (N,) for states
    recorded at rest, the index of the pose each was held in (the fit then runs on the pose
    means; see the module docstring). ValueError when nothing can be identified, with the
    reason."""
    body, R, offset = solver.model.payload_frame(link)
    q, qd, qdd, tau_measured = (np.asarray(x, dtype=float) for x in (q, qd, qdd, tau_measured))
    y = _payload_torques(solver, q, qd, qdd, tau_measured, tare)
    Y = solver.joint_torque_regressor_batch(q, qd, qdd)[:, :, 10 * body:10 * body + 10]
    rows = Y.reshape(-1, 10)
    groups = _Groups(Y, y, pose)
    reasons = []
    count, condition = _identifiable(rows, estimate_inertia, reasons)
    pi, std = groups.fit(count)
    _check_mass(pi[0])
    fitted = np.zeros(10)
    if count == FULL:
        mass, com, inertia, claimed = _full_body(pi, groups, reasons)
    else:
        pi, std = _point_mass_fit(pi, std, groups, rows, fitted)
        mass, com, inertia, claimed = float(pi[0]), pi[1:4] / pi[0], np.zeros((3, 3)), False
    fitted[:count] = pi
    com_std = np.sqrt(std[1:4] ** 2 / mass ** 2 + (com * std[0] / mass) ** 2)  # first order
    inertia_std = std[4:] if claimed else np.full(6, math.nan)
    what = "mass, centre of mass and inertia" if claimed else "mass and centre of mass"
    reasons.insert(0, f"identified {what} from {len(q)} states")
    # from the body's frame to the link's: c = Rᵀ (c_body − offset), I = Rᵀ I_body R; the
    # standard deviations through the same linear maps (first order, as independent)
    com, com_std = R.T @ (com - offset), np.sqrt((R.T ** 2) @ com_std ** 2)
    inertia_std = np.sqrt(_rotation_of_six(R) ** 2 @ inertia_std ** 2)
    return PayloadEstimate(float(mass), com, R.T @ inertia @ R, float(std[0]), com_std,
                           inertia_std, claimed, float(condition),
                           np.sqrt(np.mean(y ** 2, axis=0)),
                           np.sqrt(np.mean((y - Y @ fitted) ** 2, axis=0)), len(q),
                           "; ".join(reasons))


def _payload_torques(solver, q, qd, qdd, tau_measured, tare):
    """(N, n) the torques the payload accounts for: measured minus the model's (or minus
    the tare's, measured in the same states without it). ValueError if not finite."""
    if not all(np.isfinite(x).all() for x in (q, qd, qdd, tau_measured)):
        raise ValueError("the recorded states and torques must be finite")
    if tare is None:
        return tau_measured - solver.inverse_dynamics_batch(q, qd, qdd)
    tare = np.asarray(tare, dtype=float)
    if tare.shape != tau_measured.shape or not np.isfinite(tare).all():
        raise ValueError("the tare must be finite torques of the same states")
    return tau_measured - tare


def _identifiable(rows, estimate_inertia, reasons):
    """(how many of the 10 parameters these regressor rows identify, FULL or STATIC, and
    the condition number of that fit); why not the inertia appended to `reasons`.
    ValueError when not even the mass and centre of mass are."""
    count = FULL if estimate_inertia else STATIC
    if count == FULL:
        condition = _condition(rows[:, :FULL])
        if condition > MAX_CONDITION:
            reasons.append(f"inertia not identifiable from these states (condition number "
                           f"{condition:.3g} > {MAX_CONDITION:g}: it needs motion that "
                           "accelerates the payload's rotation)")
            count = STATIC
    condition = _condition(rows[:, :count])
    if count == STATIC and condition > MAX_CONDITION:
        raise ValueError(f"mass and centre of mass not identifiable from these states "
                         f"(condition number {condition:.3g} > {MAX_CONDITION:g}): use "
                         "poses that turn the link in several directions against gravity")
    return count, condition


def _full_body(pi, groups, reasons):
    """(mass, com, inertia, claimed) from the full fit π, body frame: the inertia claimed
    only where it is physical and its moments resolved (else why, in `reasons`)."""
    mass, com, inertia = body_from_parameters(pi)
    problems = physical_problems(mass, inertia)
    doubt = None if problems else _doubtful_moments(pi, groups.covariance)
    if not (problems or doubt):
        return mass, com, inertia, True
    reasons.append(f"the fitted inertia is not physical ({'; '.join(problems)}): "
                   "mass and centre of mass only" if problems else
                   f"inertia not identified: {doubt}; mass and centre of mass only")
    # m and m c from the full fit: the inertia's torques, fitted there, do not bias them; a
    # point mass in its place would, by several of their standard deviations where the
    # payload's inertia is not small (benchmarks/identification_claims.py), and no test on
    # these data tells a point mass apart
    return float(pi[0]), pi[1:4] / pi[0], np.zeros((3, 3)), False


def _point_mass_fit(pi, std, groups, rows, fitted):
    """(π, σ) of m and m c with the inertia about the origin not fitted: the payload's own
    inertia taken as zero (a point mass at c), I_o = m (cᵀc E − c cᵀ), its torques removed
    and m, m c refitted (at rest they are zero; in motion they would bias m c), a few
    passes; `fitted` keeps I_o's six."""
    for _ in range(POINT_MASS_PASSES if rows[:, STATIC:].any() else 0):
        _check_mass(pi[0])
        fitted[STATIC:] = inertial_parameters(pi[0], pi[1:4] / pi[0], np.zeros((3, 3)))[4:]
        pi, std = groups.fit(STATIC, fitted)
    _check_mass(pi[0])
    return pi, std


def provisional_payload(solver, link, q, qd, qdd, tau_measured, com_guess=(0.0, 0.0, 0.0),
                        pose=None):
    """(mass [kg], com (3,) [m]) that the states recorded so far suggest for the payload at
    `link`, or None (no positive mass yet): the mass, and each component of m c that the
    fit sets apart from zero by more than PROVISIONAL_SIGNIFICANT standard deviations once
    PROVISIONAL_POSES poses are recorded. The other components (all of them before, or
    while the states do not tell m and m c apart) stay at com_guess: a centre of mass
    guessed from too few poses is wrong across gravity, and on a light last joint a few
    millimetres of it are a torque the arm does not need. A working guess to carry the
    payload better while recording, never a result: identify_payload decides what is
    identifiable. pose: as for identify_payload."""
    body, R, offset = solver.model.payload_frame(link)
    y = tau_measured - solver.inverse_dynamics_batch(q, qd, qdd)
    regressor = solver.joint_torque_regressor_batch(q, qd, qdd)[:, :, 10 * body:10 * body + 10]
    Y = regressor[:, :, :STATIC].reshape(-1, STATIC)
    guess = R @ np.asarray(com_guess, dtype=float) + offset      # in the body's frame
    enough = pose is None or len(np.unique(pose)) >= PROVISIONAL_POSES
    if enough and _condition(Y) <= MAX_CONDITION:
        pi, std = _Groups(regressor, y, pose).fit(STATIC)
        if not pi[0] > 0.0:
            return None
        found = np.abs(pi[1:]) > PROVISIONAL_SIGNIFICANT * std[1:]
        com = np.where(found, pi[1:] / pi[0], guess)
        return float(pi[0]), R.T @ (com - offset)
    column = regressor[:, :, :1] + regressor[:, :, 1:STATIC] @ guess[:, None]   # m at guess
    if not np.any(column):
        return None
    mass = _Groups(column, y, pose).fit(1)[0][0]
    return (float(mass), np.asarray(com_guess, dtype=float)) if mass > 0.0 else None


def principal_moments(pi):
    """The principal moments (3,) [kg·m²], ascending, of the inertia about the centre of mass
    of the body with parameters π (10,)."""
    return np.linalg.eigvalsh(body_from_parameters(pi)[2])


def _doubtful_moments(pi, covariance):
    """Why the inertia of π (10,) is not identified by data with parameter covariance
    (10, 10): a principal moment whose standard deviation (first order, through the
    eigenvalues) exceeds INERTIA_RELATIVE_STD of it; None when each is within."""
    moments = principal_moments(pi)
    step = 1e-6 * np.maximum(np.abs(pi), 1e-9)
    jacobian = np.empty((3, 10))
    for k in range(10):
        up, down = pi.copy(), pi.copy()
        up[k] += step[k]
        down[k] -= step[k]
        jacobian[:, k] = (principal_moments(up) - principal_moments(down)) / (2 * step[k])
    sigma = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", jacobian, covariance, jacobian), 0.0))
    if np.all(sigma <= INERTIA_RELATIVE_STD * moments):
        return None
    return (f"principal moments {np.array2string(moments, precision=3)} ± "
            f"{np.array2string(sigma, precision=2)} kg·m², beyond "
            f"{100 * INERTIA_RELATIVE_STD:g} % uncertain")


def _check_mass(mass):
    """ValueError unless the fitted mass is positive."""
    if not mass > 0.0:
        raise ValueError(f"the fit gives a mass of {mass:.4g} kg: no payload is seen (or the "
                         "tare is wrong)")


def _rotation_of_six(R):
    """The 6×6 map of [xx, xy, yy, xz, yz, zz] (PARAMETERS' inertia order) under
    I ↦ Rᵀ I R."""
    index = [(0, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 2)]
    T = np.empty((6, 6))
    for j, (a, b) in enumerate(index):
        E = np.zeros((3, 3))
        E[a, b] = E[b, a] = 1.0
        rotated = R.T @ E @ R
        T[:, j] = [rotated[i] for i in index]
    return T


def _condition(A):
    """Condition number of A with its columns scaled to unit norm (inf for a zero column)."""
    norms = np.linalg.norm(A, axis=0)
    if not np.all(norms > 0.0):
        return math.inf
    s = np.linalg.svd(A / norms, compute_uv=False)
    return float(s[0] / s[-1]) if s[-1] > 0.0 else math.inf


class _Groups:
    """The fit's equations y ≈ Y π per joint, Y (G, n, 10) and y (G, n): one group per
    state, or per pose (the means of the states held in it, with the variance of those
    means from the scatter within each pose)."""

    def __init__(self, Y, y, pose):
        n = y.shape[1]
        self.in_time = pose is None        # one group per state, in time order
        self.covariance = None             # of the last fit's parameters
        if pose is None:
            self.Y, self.y, self.floor = Y, y, np.zeros(n)
            return
        pose = np.asarray(pose)
        if pose.shape != (len(y),):
            raise ValueError("pose must give one pose index per recorded state")
        held = [pose == k for k in np.unique(pose)]       # the states of each pose
        self.Y = np.array([Y[states].mean(axis=0) for states in held])
        self.y = np.array([y[states].mean(axis=0) for states in held])
        spread = [y[states].var(axis=0, ddof=1) / np.count_nonzero(states) for states in held
                  if np.count_nonzero(states) > 1]
        self.floor = np.mean(spread, axis=0) if spread else np.zeros(n)

    def fit(self, count, fitted=None):
        """(π, standard deviations) of the first `count` parameters, each joint weighted by
        1/s_j (iteratively reweighted); fitted: (10,) parameters whose last six (the
        inertia's) are taken as known and their torques removed."""
        Y, y = self.Y[:, :, :count], self.y
        if fitted is not None:
            y = y - self.Y[:, :, STATIC:] @ fitted[STATIC:]
        rows = Y.shape[0] * Y.shape[1]
        # a floor for the variances: exact torques (a noise-free simulation) leave none
        tiny = max((1e-12 * float(np.abs(y).max())) ** 2, np.finfo(float).tiny)
        weight = np.ones(Y.shape[1])
        for _ in range(REWEIGHTING_PASSES):
            A = (Y * weight[:, None]).reshape(rows, count)
            pi, _ = _least_squares(A, (y * weight).reshape(-1))
            # each residual as the error of predicting its row from the others (leave one
            # out: r / (1 − h), h the row's leverage, the share of it the fit absorbed): a
            # joint whose few rows pin the fit down has small residuals but not small
            # errors, and weighted up on its residuals it would be weighted up further
            leverage = np.einsum("ij,ij->i", A, np.linalg.pinv(A).T).reshape(y.shape)
            left_out = (y - Y @ pi) / np.maximum(1.0 - leverage, 1e-3)
            variance = np.mean(left_out ** 2, axis=0)
            weight = 1.0 / np.sqrt(np.maximum(np.maximum(variance, self.floor), tiny))
            weight /= weight.max()           # only their ratios matter (no overflow)
        A = (Y * weight[:, None]).reshape(rows, count)
        pi, covariance = _least_squares(A, (y * weight).reshape(-1))
        if self.in_time:       # consecutive states' errors are not independent
            covariance = covariance * _correlation_factor((y - Y @ pi) * weight)
        self.covariance = covariance
        return pi, np.sqrt(np.diag(covariance))


def _correlation_factor(residuals):
    """(1 + ρ) / (1 − ρ), ρ the lag-one autocorrelation of the residuals (N, n) of states in
    time order, averaged over the joints (0 ≤ ρ ≤ 0.99): how many times the variance of a
    mean of N AR(1) errors exceeds that of N independent ones (the effective number of
    samples N (1 − ρ) / (1 + ρ))."""
    r = residuals - residuals.mean(axis=0)
    power = np.sum(r * r, axis=0)
    lagged = np.sum(r[1:] * r[:-1], axis=0)
    rho = float(np.mean(np.where(power > 0.0, lagged / np.where(power > 0.0, power, 1.0),
                                 0.0))) if len(r) > 1 else 0.0
    rho = min(max(rho, 0.0), 0.99)
    return (1.0 + rho) / (1.0 - rho)


def _least_squares(A, b):
    """(x, covariance) of min ‖A x − b‖ (column-scaled for accuracy; the covariance from the
    residuals, σ̂² (AᵀA)⁻¹)."""
    norms = np.linalg.norm(A, axis=0)
    x_scaled, *_ = np.linalg.lstsq(A / norms, b, rcond=None)
    x = x_scaled / norms
    dof = max(1, A.shape[0] - A.shape[1])
    sigma2 = float(np.sum((b - A @ x) ** 2)) / dof
    covariance = sigma2 * np.linalg.inv((A / norms).T @ (A / norms)) / np.outer(norms, norms)
    return x, covariance


def static_poses(solver, link, center, spread, count, candidates=400, seed=0):
    """`count` poses (count, n) around `center` (n,) [rad or m], each joint within ±spread
    (n,) of it and within its limits, chosen greedily from random candidates to make the
    static regressor of `link` well conditioned (each added pose maximises the smallest
    singular value of the stacked, column-scaled m, m c columns): poses that turn the link
    against gravity in several directions."""
    model = solver.model
    body, _, _ = model.payload_frame(link)
    rng = np.random.default_rng(seed)
    low = np.maximum(center - spread, np.where(model.upper > model.lower, model.lower, -np.inf))
    high = np.minimum(center + spread, np.where(model.upper > model.lower, model.upper, np.inf))
    pool = np.vstack([center, rng.uniform(low, high, (candidates, model.dof))])
    zero = np.zeros_like(pool)
    blocks = solver.joint_torque_regressor_batch(pool, zero, zero)[
        :, :, 10 * body:10 * body + STATIC]
    chosen = [0]
    while len(chosen) < count:
        best, best_value = None, -1.0
        for k in range(len(pool)):
            if k in chosen:
                continue
            A = blocks[chosen + [k]].reshape(-1, STATIC)
            norms = np.linalg.norm(A, axis=0)
            if not np.all(norms > 0.0):
                continue
            value = np.linalg.svd(A / norms, compute_uv=False)[-1]
            if value > best_value:
                best, best_value = k, value
        if best is None:
            break
        chosen.append(best)
    return pool[chosen]
