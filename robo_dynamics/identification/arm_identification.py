"""Identification of the whole arm: an exciting trajectory, the chain's base parameters and
joint friction from recorded joint states, with the uncertainty the data leave. No ROS here.

The model is linear in what is identified (regressor.py):

    τ = Y(q, q̇, q̈) π + Σ_j e_j (f_v,j q̇_j + f_c,j sgn(q̇_j) + f_o,j)

π the 10 inertial parameters of each body, f_v, f_c, f_o each joint's viscous and Coulomb
friction and torque offset (Craig, Introduction to Robotics, §6.11; the offset absorbs a
torque sensor's bias).

- Base parameters (Gautier, "Numerical calculation of the base inertial parameters of
  robots", J. Robotic Systems 8(4), 1991): many combinations of π never change τ. The
  regressor W stacked over random states is factored W = Q R; a column whose |R_ii| is
  negligible is a combination of the columns before it. With W₁ the independent columns and
  W₂ = W₁ K the others, W π = W₁ β, β = π₁ + K π₂: β are the base parameters, the only
  ones data can determine.
- Excitation (Swevers, Ganseman, Tükel, De Schutter & Van Brussel, "Optimal robot
  excitation and identification", IEEE Trans. Robotics and Automation 13(5), 1997): each
  joint follows a finite Fourier series of fundamental ω_f, periodic, starting and ending
  each period at rest at q₀. The coefficients are drawn at random and the candidate whose
  stacked base regressor has the smallest condition number is kept, among those that stay
  within the position margin, the velocity, acceleration and effort bounds.
- Estimate: least squares per joint's noise. An ordinary fit's residuals give each joint's
  σ_j; the rows are weighted by 1/σ_j and fitted again (weighted least squares). The
  covariance of the estimate is (Wᵀ Σ⁻¹ W)⁻¹ σ² scaled by the weighted residual variance.
  A base parameter counts as identified when its standard deviation is at most
  IDENTIFIED_SHARE of its value (and it is not close to zero): claims follow the data's
  own uncertainty.
"""

import numpy as np

from ..algorithms.regressor import model_parameters, regressor_batch
from ..control.trajectory import Motion
from ..control.contact_safety import HEADROOM
from ..control.speed_scaling import path_jacobians, path_speed_ratios

FRICTION_TERMS = ("viscous", "coulomb", "offset")
RANK_TOLERANCE = 1e-8        # |R_ii| below this × the largest: a dependent column
IDENTIFIED_SHARE = 0.1       # a base parameter with σ ≤ 10 % of its value is identified
MIN_SPEED = 0.02             # rad/s: a joint slower than this gives no row (Rows)
MARGIN = 0.1                 # rad from each joint limit an excitation keeps, twice over
EFFORT_SHARE = 0.8           # of the effort bounds an excitation may ask, by the URDF
CANDIDATES = 40              # random excitations tried


# -- base parameters ---------------------------------------------------------------------------
class BaseParameters:
    """The chain's base parameters (module docstring): `independent` indices into π (10 n),
    `dependent` the others, K (len(independent), len(dependent)) with β = π₁ + K π₂."""

    def __init__(self, model, states=400, seed=0):
        rng = np.random.default_rng(seed)
        n = model.dof
        limited = model.limited                      # the others: one turn
        lower = np.where(limited, model.lower, -np.pi)
        upper = np.where(limited, model.upper, np.pi)
        q = rng.uniform(lower, upper, (states, n))
        qd, qdd = rng.uniform(-2.0, 2.0, (2, states, n))
        W = regressor_batch(model, q, qd, qdd).reshape(states * n, 10 * n)
        scale = np.linalg.norm(W, axis=0)
        scale[scale == 0.0] = 1.0                # a column that never acts: dependent (of none)
        R = np.linalg.qr(W / scale, mode="r")
        keep = np.abs(np.diag(R)) > RANK_TOLERANCE * np.abs(np.diag(R)).max()
        self.independent, self.dependent = np.flatnonzero(keep), np.flatnonzero(~keep)
        W1, W2 = W[:, self.independent], W[:, self.dependent]
        self.K = np.linalg.lstsq(W1, W2, rcond=None)[0] if W2.size else np.zeros(
            (keep.sum(), 0))

    @property
    def count(self):
        return len(self.independent)

    def of(self, pi):
        """β of the standard parameters π (10 n,)."""
        return pi[self.independent] + self.K @ pi[self.dependent]

    def regressor(self, model, q, qd, qdd):
        """W₁ (N, n, count): τ = W₁ β for the inertial part."""
        return regressor_batch(model, q, qd, qdd)[..., self.independent]


def friction_regressor(qd):
    """(N, n, 3 n): the friction columns of each joint [f_v, f_c, f_o] (FRICTION_TERMS) on
    its own row, from joint velocities qd (N, n)."""
    N, n = qd.shape
    F = np.zeros((N, n, 3 * n))
    rows = np.arange(n)
    F[:, rows, 3 * rows] = qd
    F[:, rows, 3 * rows + 1] = np.sign(qd)
    F[:, rows, 3 * rows + 2] = 1.0
    return F


# -- excitation -------------------------------------------------------------------------------------
class Excitation(Motion):
    """q_j(t) = q₀_j + Σ_l [a_jl sin(l ω_f t) − b_jl (cos(l ω_f t) − 1)] / (l ω_f), t from
    `start` [s], periodic with period 2π/ω_f; Σ_l a_jl = 0 and Σ_l l b_jl = 0, so each
    period starts and ends at rest (q̇ = q̈ = 0) at q₀. a, b: (n, L) [rad/s]."""

    def __init__(self, q0, a, b, omega, start=0.0, periods=np.inf):
        self.q0, self.a, self.b = (np.asarray(x, dtype=float) for x in (q0, a, b))
        self.omega, self.start = float(omega), float(start)
        self.periods = periods              # tracked this many periods, then at rest at q₀
        self.l = np.arange(1, self.a.shape[1] + 1)

    @property
    def period(self):
        return 2.0 * np.pi / self.omega

    def at(self, t):
        """(q, q̇, q̈) at times t (m,) [s] from the start: each (m, n)."""
        phase = np.outer(np.asarray(t, dtype=float), self.l * self.omega)     # (m, L)
        s, c = np.sin(phase), np.cos(phase)
        lw = self.l * self.omega
        q = self.q0 + (s / lw) @ self.a.T - ((c - 1.0) / lw) @ self.b.T
        qd = c @ self.a.T + s @ self.b.T
        qdd = (-s * lw) @ self.a.T + (c * lw) @ self.b.T
        return q, qd, qdd

    # the controller's Motion interface (trajectory.py): tracked from `start`
    def sample(self, now):
        q, qd, qdd = self.at([min(max(now - self.start, 0.0), self.periods * self.period)])
        return q[0], qd[0], qdd[0]

    @property
    def positions(self):
        """Positions over one period (every 10 ms), for the controller's limit check."""
        return self.at(np.arange(0.0, self.period, 0.01))[0]


def excitation_fault(excitation, model, solver, margin, velocity_bound, acceleration_bound,
                     effort_bound, samples=400, contact=None):
    """None, or why `excitation` leaves the bounds over a period: positions within `margin`
    [rad] of the URDF limits, |q̇| ≤ velocity_bound (n,), |q̈| ≤ acceleration_bound (n,),
    |τ| ≤ effort_bound (n,) by `solver`'s model (friction aside), the tool and the
    monitored points within HEADROOM of the speed `contact` allows (None: no limit)."""
    t = np.linspace(0.0, excitation.period, samples, endpoint=False)
    q, qd, qdd = excitation.at(t)
    limited = model.limited
    if np.any(limited & ((q < model.lower + margin) | (q > model.upper - margin))):
        return "positions beyond the limits' margin"
    for what, x, bound in (("velocity", qd, velocity_bound),
                           ("acceleration", qdd, acceleration_bound)):
        if np.any(np.abs(x) > bound):
            return f"{what} beyond its bound"
    if np.any(np.abs(solver.inverse_dynamics_batch(q, qd, qdd)) > effort_bound):
        return "torque beyond the effort bound"
    if contact is not None and np.any(path_speed_ratios(
            solver, q, qd, contact, path_jacobians(solver, q, contact)) > HEADROOM):
        return "faster than a contact with a person allows (power_force_limiting)"
    return None


def design_excitation(model, solver, base, q0, period, harmonics, margin, velocity_bound,
                      acceleration_bound, effort_bound, candidates=60, seed=0, contact=None):
    """(Excitation, condition number of its base regressor with friction): the best of
    `candidates` random Fourier series around q0 (module docstring) that stay in bounds,
    each joint's series scaled to 80 % of its velocity bound (then shrunk as a whole until
    in bounds, `contact`'s speed limit among them). ValueError when none does, or when a
    joint starts within the margin."""
    rng = np.random.default_rng(seed)
    n, omega = model.dof, 2.0 * np.pi / period
    l = np.arange(1, harmonics + 1)
    t = np.linspace(0.0, period, 200, endpoint=False)
    best, best_condition = None, np.inf
    limited = model.limited
    room_above = np.where(limited, model.upper - margin - q0, np.inf)     # [rad or m]
    room_below = np.where(limited, q0 - model.lower - margin, np.inf)
    inside = np.minimum(room_above, room_below) > 0.0
    if not inside.all():
        names = [model.joint_names[j] for j in np.flatnonzero(~inside)]
        raise ValueError(f"{names} start within {margin:g} of a limit: move the arm further "
                         "in first")
    for k in range(candidates):
        a, b = rng.normal(size=(2, n, harmonics)) / l
        a -= a.mean(axis=1, keepdims=True)                    # Σ a_l = 0: q̇(0) = 0
        b -= np.outer(b @ l, l) / (l @ l)                     # Σ l b_l = 0: q̈(0) = 0
        peak = np.abs(Excitation(q0, a, b, omega).at(t)[1]).max(axis=0)
        a, b = (x * (0.8 * velocity_bound / peak)[:, None] for x in (a, b))
        for shrink in (1.0, 0.7, 0.5, 0.35, 0.25):
            candidate = Excitation(q0, shrink * a, shrink * b, omega)
            if excitation_fault(candidate, model, solver, margin, velocity_bound,
                                acceleration_bound, effort_bound, contact=contact) is None:
                break
        else:
            continue
        q, qd, qdd = candidate.at(t)
        W = np.concatenate((base.regressor(model, q, qd, qdd), friction_regressor(qd)), axis=2)
        W = W.reshape(-1, W.shape[2])
        condition = np.linalg.cond(W / np.linalg.norm(W, axis=0))
        if condition < best_condition:
            best, best_condition = candidate, condition
    if best is None:
        raise ValueError("no excitation within the bounds: widen the margin or the bounds, "
                         "or start further from the joint limits")
    return best, best_condition


def excitation_for(model, solver, base, q0, settings, period=10.0, harmonics=5,
                   velocity_share=0.5, max_acceleration=10.0):
    """design_excitation as ~/identify_arm plans it from rest at q0 under the controller's
    `settings` (ControllerSettings): 2 MARGIN from the limits, velocity_share of the
    velocity bound, |q̈| ≤ max_acceleration [rad/s²], EFFORT_SHARE of the effort bound,
    the tool within the speed a contact allows (settings.contact)."""
    return design_excitation(
        model, solver, base, q0, period, harmonics, 2.0 * MARGIN,
        velocity_share * settings.velocity_bound, np.full(model.dof, max_acceleration),
        EFFORT_SHARE * settings.effort_bound, candidates=CANDIDATES, contact=settings.contact)


# -- estimate -------------------------------------------------------------------------------------
class ArmEstimate:
    """beta (count,) the base parameters, friction (n, 3) [f_v N·m·s/rad, f_c N·m, f_o N·m],
    covariance of [β; friction] ((count + 3n)²), sigma (n,) [N·m] each joint's residual
    standard deviation, identified (count,) bool (σ_β ≤ IDENTIFIED_SHARE |β|), samples:
    the joint torques fitted (one per joint and state, less those of slow joints: Rows);
    normal: (AᵀA, Aᵀb) of the weighted rows, so that ½‖A x − b‖² = ½ xᵀAᵀA x − (Aᵀb)ᵀx
    + const for x = [β; friction] (consistent_parameters.py)."""

    def __init__(self, base, beta, friction, covariance, sigma, samples):
        self.base, self.beta, self.friction = base, beta, friction
        self.covariance, self.sigma, self.samples = covariance, sigma, samples
        self.beta_std = np.sqrt(np.diag(covariance)[:base.count])
        self.friction_std = np.sqrt(np.diag(covariance)[base.count:]).reshape(-1, 3)
        self.identified = self.beta_std <= IDENTIFIED_SHARE * np.abs(beta)

    def predict(self, model, q, qd, qdd):
        """τ (N, n) [N·m or N] the identified model gives for the states (with the model's
        declared rotor armature)."""
        W = np.concatenate((self.base.regressor(model, q, qd, qdd), friction_regressor(qd)),
                           axis=2)
        return W @ np.concatenate((self.beta, self.friction.ravel())) + model.armature * qdd


def identify_arm(model, base, q, qd, qdd, tau, min_speed=MIN_SPEED):
    """ArmEstimate from N recorded states (q, qd, qdd, (N, n) each, model order) and the
    torques τ (N, n) [N·m or N] that the drives applied (see Rows for min_speed)."""
    rows = Rows(model, base, q, qd, qdd, min_speed)
    return rows.fit(tau)


class Rows:
    """The regression rows of N recorded states (q, qd, qdd (N, n) each): the base regressor
    and the friction columns. A joint's row is left out while that joint is slower than
    `min_speed` [rad/s] (its dry friction is then anything up to f_c, not f_c sgn(q̇)).
    The model's rotor armature is declared, not identified: its torque armature·q̈ is taken
    off the measured torques before the fit."""

    def __init__(self, model, base, q, qd, qdd, min_speed=MIN_SPEED):
        N, n = q.shape
        W = np.concatenate((base.regressor(model, q, qd, qdd), friction_regressor(qd)),
                           axis=2)
        self.base, self.n = base, n
        self.keep = np.abs(qd) >= min_speed                           # (N, n)
        self.known = (model.armature * qdd)[self.keep]
        self.W = W[self.keep]
        self.joint = np.broadcast_to(np.arange(n), (N, n))[self.keep]
        self.scale = np.linalg.norm(self.W, axis=0)
        self.scale[self.scale == 0.0] = 1.0

    def fit(self, tau):
        """ArmEstimate from the torques τ (N, n) of the states (module docstring)."""
        rows, joint, scale, n = self.W, self.joint, self.scale, self.n
        y = tau[self.keep] - self.known
        scaled = rows / scale                   # the ordinary fit, for each joint's σ
        x = np.linalg.solve(scaled.T @ scaled, scaled.T @ y) / scale
        residual = y - rows @ x
        sigma = np.array([np.sqrt(np.mean(residual[joint == j] ** 2)) for j in range(n)])
        weight = 1.0 / np.maximum(sigma, 1e-9)[joint]
        A, b = rows * weight[:, None], y * weight                   # weighted least squares
        _, s, Vt = np.linalg.svd(A / scale, full_matrices=False)
        x = (Vt.T @ ((Vt @ ((A / scale).T @ b)) / s ** 2)) / scale
        dof = max(len(b) - len(x), 1)
        variance = np.sum((b - A @ x) ** 2) / dof                   # ≈ 1 when σ_j are right
        covariance = variance * ((Vt.T / s ** 2) @ Vt) / np.outer(scale, scale)   # (AᵀA)⁻¹
        count = self.base.count
        estimate = ArmEstimate(self.base, x[:count], x[count:].reshape(n, 3), covariance,
                               sigma, len(y))
        estimate.normal = (A.T @ A, A.T @ b)      # the weighted fit, for what builds on it
        return estimate


def nrms(tau, predicted):
    """(n,): each joint's RMS prediction error over the RMS of its torque."""
    return np.sqrt(np.mean((tau - predicted) ** 2, axis=0) / np.mean(tau ** 2, axis=0))


def pooled_nrms(tau, predicted):
    """The same, all joints together."""
    return float(np.sqrt(np.sum((tau - predicted) ** 2) / np.sum(tau ** 2)))


def urdf_torques(model, q, qd, qdd):
    """τ (N, n) a URDF model gives: rigid body (Pinocchio) plus its <dynamics> friction
    (viscous, Coulomb)."""
    from ..backends import make_solver
    rigid = make_solver(model, "pinocchio").inverse_dynamics_batch(q, qd, qdd)
    return rigid + model.damping * qd + model.friction * np.sign(qd)


def urdf_base(model, base):
    """β of the model's own (URDF) inertial parameters."""
    return base.of(model_parameters(model))
