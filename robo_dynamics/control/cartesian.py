"""Control of the tip's pose: Cartesian impedance and operational-space control. No ROS here.

A CartesianTarget is a desired motion of the controller (controller.py) whose law acts on
the tip (tip_link's origin, base axes: the Jacobian J (6, n) of frame LOCAL_WORLD_ALIGNED,
rows [linear; angular]). With the pose error e = [p_d − p; φ] (φ the rotation vector of
R_d Rᵀ, so e = 0 at the target and ė = −J q̇ for a target at rest) and h = C q̇ + g:

    cartesian_impedance   τ = Jᵀ (K e − D J q̇ + F_ff) + N τ_0 + h
                          K [N/m, N·m/rad] (6, 6) the stiffness; D from Λ and K so that
                          every mode of Λ ë + D ė + K e = 0 has the damping ratio ζ
                          (double diagonalisation: Albu-Schäffer, Ott, Frese & Hirzinger,
                          "Cartesian impedance control of redundant robots", ICRA 2003).
    operational_space     τ = Jᵀ (Λ (K e − D J q̇ − J̇ q̇) + F_ff) + N τ_0 + h
                          K [1/s²] and D = 2ζ K^½ act per unit inertia: the tip
                          obeys ë + D ė + K e = Λ⁻¹ F_ext, one decoupled mass-spring-damper
                          per axis (Khatib 1987; Lynch & Park, Modern Robotics, §11.5.1,
                          with the Cartesian dynamics of §8.6). Jᵀ Λ J̇ q̇ and h together
                          are Jᵀ(μ + p) plus the nullspace part of h.

Λ is the node's regularised operational-space inertia (algorithms/operational_space.py),
bounded near singularities. N = I − Jᵀ J̄ᵀ, J̄ = M⁻¹ Jᵀ Λ, is the dynamically consistent
nullspace projector (Khatib 1987): N τ_0 gives the tip no acceleration. τ_0 = K_n (q_n − q)
− D_n q̇ pulls the joints toward a posture q_n, D_n = 2ζ √(K_n diag(M)); N τ_0 is scaled
down so that no joint's part exceeds its cap. A 6-joint arm has no nullspace away from singularities.

Safety: each part of e is clipped (position ≤ max_position_error [m], rotation ≤
max_orientation_error [rad]), so a far target is approached at a bounded force, not as a
step; and the target itself is approached along a way (Approach) timed so that no joint
moves faster than APPROACH_SPEED × its velocity bound, nor the tip faster than a contact
with a person allows (contact_safety.py): the law acts about the way's pose
and velocity, e = [p_v − p; φ(R_v Rᵀ)] and D (ẋ_v − ẋ), until the way ends at the target
(a moving equilibrium, as a trajectory sent in steps; at rest the law is the plain one, so
a steady push gives the compliance K⁻¹F); a stiffness the loop cannot hold at the control period is refused (`stability_fault`);
the controller's clamp, rate limit and watchdogs apply as in every mode.
"""

import math

import numpy as np

from ..algorithms import small_linalg
from ..algorithms.jacobian import LOCAL_WORLD_ALIGNED
from ..algorithms.operational_space import KAPPA_MAX, operational_space, reflected_mass
from ..spatial.rotations import axis_angle_matrix, rotation_vector
from .momentum_observer import COLLISION, UNKNOWN, as_contact
from .contact_safety import HEADROOM
from .speed_scaling import contact_speed_ratio
from .trajectory import Motion

CARTESIAN_IMPEDANCE, OPERATIONAL_SPACE = "cartesian_impedance", "operational_space"
LAWS = (CARTESIAN_IMPEDANCE, OPERATIONAL_SPACE)
STIFFNESS_MARGIN = 4.0   # a stiffness is refused unless 4 × it keeps the sampled loop stable
APPROACH_SPEED = 0.4     # a target is approached at joint speeds up to this × the bound
QUINTIC_PEAK = 1.875     # the quintic's fastest ṡ, × 1/T


def pose_error(R, p, R_d, p_d, max_position_error, max_orientation_error):
    """e (6,) = [p_d − p; φ(R_d Rᵀ)] in base axes, each part clipped to its norm bound."""
    e = np.empty(6)
    e[:3] = p_d - p
    e[3:] = rotation_vector(R_d @ R.T)
    for part, bound in ((e[:3], max_position_error), (e[3:], max_orientation_error)):
        size = math.sqrt(part @ part)
        if size > bound:
            part *= bound / size
    return e


def modal_damping(Lambda, K, zeta):
    """(D (6, 6), ω (6,)): D = Qᵀ diag(2ζω) Q for any Q with Λ = QᵀQ and K = Qᵀ diag(ω²) Q,
    so each mode of Λ ë + D ė + K e = 0 has damping ratio ζ and natural frequency ω [rad/s]
    (Albu-Schäffer et al., ICRA 2003, §III). Q from the Cholesky factor Λ = C Cᵀ and the
    eigenvectors W of C⁻¹ K C⁻ᵀ: Q = Wᵀ Cᵀ (the same D as 2ζ Λ^½ (Λ^-½ K Λ^-½)^½ Λ^½).

    A tip that moves in fewer than 6 directions (an arm of fewer joints, a linkage) has a Λ
    with zero inertia in the others (operational_space's pseudo-inverse): the modes are
    those of the directions it moves in, from the factor C = V_r diag(λ_r)^½ of Λ's nonzero
    eigenvalues λ_r, and D is zero outside them (ω 0 there: no mode). operational_space
    keeps every nonzero eigenvalue of Λ above λ_max/κ_max; a zero one comes out of rounding
    at about ε λ_max."""
    smallest = np.diag(Lambda).max() / (10.0 * KAPPA_MAX)   # below: rounding, not inertia
    with np.errstate(invalid="ignore"):         # NaN where Λ is singular: tested below
        C = small_linalg.cholesky(Lambda)
    pivots = np.diag(C) ** 2                    # each at least Λ's smallest eigenvalue
    if np.isfinite(C).all() and pivots.min() > smallest:
        C_inv = small_linalg.inv(C)
    else:                                       # singular: the directions the tip moves in
        lam, V = small_linalg.eigh(Lambda)
        moves = lam > smallest
        C = V[:, moves] * np.sqrt(lam[moves])
        C_inv = (V[:, moves] / np.sqrt(lam[moves])).T            # C⁺
    k0, W = small_linalg.eigh(C_inv @ K @ C_inv.T)
    omega = np.zeros(6)
    omega[:len(k0)] = np.sqrt(np.maximum(k0, 0.0))
    B = C @ W                                           # Qᵀ
    D = (B * (2.0 * zeta * omega[:len(k0)])) @ B.T
    return 0.5 * (D + D.T), omega


def sampled_loop_radius(omega, zeta, period):
    """Spectral radius of one mode's loop ẍ = u, u = −ω² x − 2ζω ẋ sampled every `period`
    [s], held until the next sample and applied one period late (the command answers a
    measured state): < 1 is stable."""
    T, w = period, omega
    A = np.array([[1.0, T, 0.5 * T * T], [0.0, 1.0, T], [-w * w, -2.0 * zeta * w, 0.0]])
    return float(np.max(np.abs(np.linalg.eigvals(A))))


def stability_fault(omega, zeta, period):
    """None, or why the modes' frequencies ω [rad/s] cannot be held at the control `period`
    [s]: each mode's sampled loop must stay stable at STIFFNESS_MARGIN × its stiffness."""
    worst = float(np.max(omega))
    margin = np.sqrt(STIFFNESS_MARGIN)
    if sampled_loop_radius(margin * worst, zeta, period) < 1.0:
        return None
    top = worst
    while sampled_loop_radius(margin * top, zeta, period) >= 1.0:
        top *= 0.95
    return (f"a mode's natural frequency {worst:.1f} rad/s is too high for the control "
            f"period {1e3 * period:.3g} ms (at most {top:.1f} rad/s, a stiffness "
            f"{(top / worst) ** 2:.2g} × the one asked, keeps a stiffness margin of "
            f"{STIFFNESS_MARGIN:g})")


class Approach:
    """The way from the tip's pose where a target was admitted (R_0, p_0) to the target
    (R_d, p_d): a straight line and a turn about one fixed axis, dx = [p_d − p_0; φ(R_d
    R_0ᵀ)], along the quintic s(τ) = 10τ³ − 15τ⁴ + 6τ⁵ (at rest at both ends: no step in
    the commanded force). τ runs at 1/T, slowed wherever the joint speeds it asks, J̄ dx ṡ
    with J̄ = M⁻¹ Jᵀ Λ (the dynamically consistent inverse) where the arm is, would pass
    APPROACH_SPEED × their bound; T makes that so at the start at the quintic's fastest
    (and slower_for, for a contact's limit)."""

    def __init__(self, R_0, p_0, R_d, p_d, J_bar, velocity_bound, start):
        self.R_0, self.p_0, self.bound = R_0, p_0, np.asarray(velocity_bound, dtype=float)
        self.dx = np.concatenate((p_d - p_0, rotation_vector(R_d @ R_0.T)))
        self.T = QUINTIC_PEAK * self._speed(J_bar @ self.dx)   # the speeds at ṡ = 1
        self.tau, self.time = (0.0, float(start)) if self.T > 0.0 else (1.0, float(start))
        self.rate = 1.0 / self.T if self.T > 0.0 else 0.0

    def slower_for(self, contact_ratio):
        """Timed, too, so that the points a contact limit watches stay within HEADROOM of it
        at the quintic's fastest (contact_ratio: their largest speed / v_max at ṡ = 1, from
        where the way starts; speed_scaling.contact_speed_ratio)."""
        T = QUINTIC_PEAK * contact_ratio / HEADROOM
        if T > self.T:
            self.T, self.rate = T, 1.0 / T

    @property
    def ended(self):
        return self.tau >= 1.0

    def _speed(self, qd):
        """max_i |q̇_i| / (APPROACH_SPEED v_bound,i) (joints without a bound: 0)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            speeds = np.where(np.isfinite(self.bound),
                              np.abs(qd) / (APPROACH_SPEED * self.bound), 0.0)
        return float(speeds.max(initial=0.0))

    @staticmethod
    def _quintic(tau):
        """(s, ds/dτ) of s = 10τ³ − 15τ⁴ + 6τ⁵."""
        return tau ** 3 * (10.0 - 15.0 * tau + 6.0 * tau * tau), 30.0 * (tau * (1.0 - tau)) ** 2

    def at(self, now, J_bar=None, qd=None, limit=None):
        """(R (3, 3), p (3,) [m], ẋ (6,) [m/s; rad/s]) of the way at `now` [s], τ moved on
        from the last call: slowed where J̄ (6 → n) at the arm's pose now asks for more, or
        where a joint already moves faster (q̇ (n,): a light wrist that the tip's force
        spins about the point the way moves, which J̄ dx does not see), by that ratio
        squared; and where the tip would move, or moves, faster than HEADROOM of what a
        contact allows (limit: (v_max [m/s] along the way, the tip's speed / HEADROOM
        v_max along its own motion), contact_safety.py; None: none), likewise."""
        tau = self.tau
        if now > self.time and tau < 1.0:
            rate = 1.0 / self.T
            if J_bar is not None:
                asked = self._quintic(tau)[1] * rate * self._speed(J_bar @ self.dx)
                if qd is not None:
                    asked = max(asked, self._speed(qd) ** 2)
                if limit is not None:
                    tip = self._quintic(tau)[1] * rate * math.sqrt(self.dx[:3] @ self.dx[:3])
                    asked = max(asked, tip / (HEADROOM * limit[0]), limit[1] ** 2)
                if asked > 1.0:
                    rate /= asked
            tau = self.tau = min(1.0, tau + (now - self.time) * rate)
            self.time, self.rate = now, rate
        s, ds = self._quintic(tau)
        ds = ds * self.rate if 0.0 < tau < 1.0 else 0.0
        angle = math.sqrt(self.dx[3:] @ self.dx[3:])
        R = (axis_angle_matrix(self.dx[3:] / angle, s * angle) @ self.R_0 if angle > 0.0
             else self.R_0)
        return R, self.p_0 + s * self.dx[:3], ds * self.dx


class CartesianTarget(Motion):
    """The tip held at pose (R_d (3, 3), p_d (3,) [m]) in the base frame by `law` (LAWS).

    stiffness (6, 6) K [N/m, N·m/rad] (operational_space: [1/s²]); zeta: damping ratio;
    wrench (6,) F_ff [N, N·m] added (a contact force to apply; zeros: none); posture (n,)
    q_n [rad] (None: no nullspace pull), nullspace_stiffness (n,) K_n [N·m/rad],
    nullspace_torque_max (n,) [N·m]; max_position_error [m], max_orientation_error [rad]."""

    def __init__(self, law, R_d, p_d, stiffness, zeta, wrench, posture, nullspace_stiffness,
                 nullspace_torque_max, max_position_error, max_orientation_error):
        if law not in LAWS:
            raise ValueError(f"unknown law {law!r}; expected one of {LAWS}")
        self.mode = law
        self.R_d, self.p_d = np.array(R_d, dtype=float), np.array(p_d, dtype=float)
        self.K = np.array(stiffness, dtype=float)
        self.zeta, self.wrench = float(zeta), np.array(wrench, dtype=float)
        self.posture = None if posture is None else np.array(posture, dtype=float)
        self.k_null = np.array(nullspace_stiffness, dtype=float)
        self.null_max = np.array(nullspace_torque_max, dtype=float)
        self.max_position_error = float(max_position_error)
        self.max_orientation_error = float(max_orientation_error)
        self.approach = None       # set when admitted (begin)
        self.contact = None        # the contact limit the way keeps to (begin)
        k, V = np.linalg.eigh(self.K)
        if not (self.K.shape == (6, 6) and np.allclose(self.K, self.K.T, atol=1e-9)
                and k[0] >= -1e-9 * max(k[-1], 1.0)):
            raise ValueError("the stiffness must be a symmetric positive semi-definite 6 × 6 "
                             "matrix")
        self.unit_modes = (V * (2.0 * self.zeta * np.sqrt(np.maximum(k, 0.0)))) @ V.T, \
            np.sqrt(np.maximum(k, 0.0))            # D = 2ζ K^½, ω: per unit inertia

    def modes(self, Lambda):
        """(D (6, 6), ω (6,)) of this target's closed loop at Λ (see the module docstring)."""
        if self.mode == OPERATIONAL_SPACE:
            return self.unit_modes
        return modal_damping(Lambda, self.K, self.zeta)

    def admission_fault(self, solver, q, period):
        """None, or why this target cannot be held from `q` at the control `period` [s]
        (also when the solver cannot compute the tip's dynamics there: a reason, no
        exception for the caller, e.g. a node's topic callback)."""
        try:
            Lambda = solver.unchecked.operational_space_inertia(q)
            return stability_fault(self.modes(Lambda)[1], self.zeta, period)
        except (np.linalg.LinAlgError, ArithmeticError) as exc:
            return f"the tip's dynamics at this pose cannot be computed ({exc})"

    def begin(self, solver, q, now, settings):
        """The target admitted at `now` [s] with the arm at q: its Approach from the tip's
        pose there, timed for the joints' velocity_bound (n,) [rad/s or m/s] and the
        contact limit (settings.Settings)."""
        u = solver.unchecked
        J = u.jacobian(q, LOCAL_WORLD_ALIGNED)
        M_inv = u.mass_matrix_inverse(q)
        Lambda = operational_space(J, M_inv=M_inv).Lambda
        R, p = u.tip_pose(q)
        J_bar = M_inv @ J.T @ Lambda
        self.approach = Approach(R, p, self.R_d, self.p_d, J_bar, settings.velocity_bound, now)
        self.contact = settings.contact
        if self.contact is not None:             # timed for the contact's limit too
            self.approach.slower_for(contact_speed_ratio(
                solver, q, J_bar @ self.approach.dx, M_inv, self.contact))

    def commanded_wrench(self, solver, q, qd, now=None):
        """F (6,) [N, N·m]: the wrench the law commands at the tip at (q, q̇) (base axes,
        [force; moment]) at `now` [s] (None: the target itself, the way ended), F_ff
        included: τ = Jᵀ F + N τ_0 + h."""
        return self._law(solver.unchecked, q, qd, now)[3]

    def torque(self, solver, q, qd, now=None):
        """τ (n,) [N·m or N] of the law at (q, q̇) and `now` as commanded_wrench, before the
        controller's clamp."""
        u = solver.unchecked
        J, M_inv, Lambda, F = self._law(u, q, qd, now)
        tau = J.T @ F + u.bias(q, qd)
        if self.posture is not None:
            M = u.mass_matrix(q)
            d_null = 2.0 * self.zeta * np.sqrt(self.k_null * np.diag(M))
            tau_0 = self.k_null * (self.posture - q) - d_null * qd
            J_bar_T = Lambda @ J @ M_inv                 # J̄ᵀ = Λ J M⁻¹ (6, n)
            null = tau_0 - J.T @ (J_bar_T @ tau_0)       # N τ_0
            over = np.max(np.abs(null) / self.null_max)   # scaled, not clipped per joint:
            tau = tau + (null / over if over > 1.0 else null)   # it stays in the nullspace
        return tau

    def _speed_limit(self, J, M_inv, qd):
        """(v_max [m/s] along the way, the tip's speed / (HEADROOM v_max along its motion))
        for Approach.at; None: no contact limit, or a way with no straight part."""
        line, contact = self.approach.dx[:3], self.contact
        if contact is None or not line.any():
            return None
        v = J[:3] @ qd
        speed = math.sqrt(v @ v)
        masses = reflected_mass(J[:3], M_inv, np.array([line, v if speed > 1e-9 else line]))
        v_max = contact.speed_limit(masses)
        return float(v_max[0]), speed / (HEADROOM * float(v_max[1]))

    def _law(self, u, q, qd, now=None):
        """(J (6, n), M⁻¹ (n, n), Λ (6, 6), F (6,)) at (q, q̇) and `now`; u: the unchecked
        solver."""
        J = u.jacobian(q, LOCAL_WORLD_ALIGNED)
        M_inv = u.mass_matrix_inverse(q)
        Lambda = operational_space(J, M_inv=M_inv).Lambda
        R, p = u.tip_pose(q)
        R_v, p_v, xd_v = self.R_d, self.p_d, None
        if now is not None and self.approach is not None and not self.approach.ended:
            R_v, p_v, xd_v = self.approach.at(now, M_inv @ J.T @ Lambda, qd,
                                              self._speed_limit(J, M_inv, qd))
        e = pose_error(R, p, R_v, p_v, self.max_position_error, self.max_orientation_error)
        D, _ = self.modes(Lambda)
        xd = J @ qd if xd_v is None else J @ qd - xd_v
        if self.mode == OPERATIONAL_SPACE:
            F = Lambda @ (self.K @ e - D @ xd - u.jacobian_dot_qd(q, qd, LOCAL_WORLD_ALIGNED))
        else:
            F = self.K @ e - D @ xd
        return J, M_inv, Lambda, F + self.wrench

    def yields_to(self, solver, q, tau_ext, collision_threshold):
        """Whether the external joint torques τ_ext (n,) [N·m or N] are a push this mode is
        meant to give way to, not a collision: a wrench F at the tip (τ_ext = Jᵀ F + τ_r,
        F by least squares) that the spring balances within the clipped error (K e = F,
        operational_space: K e = Λ⁻¹ F, with |e_position| ≤ max_position_error and
        |e_rotation| ≤ max_orientation_error), and a remainder τ_r (what no tip wrench
        explains: a contact on a link of a redundant arm) within `collision_threshold`
        (n,) on every joint. A push the spring cannot balance would carry the tip beyond
        the error bound: a collision, as is any contact that is not at the tip."""
        u = solver.unchecked
        J = u.jacobian(q, LOCAL_WORLD_ALIGNED)
        F = np.linalg.lstsq(J.T, tau_ext, rcond=None)[0]
        if not np.all(np.abs(tau_ext - J.T @ F) <= collision_threshold):
            return False
        if self.mode == OPERATIONAL_SPACE:
            M_inv = u.mass_matrix_inverse(q)
            F = small_linalg.inv(operational_space(J, M_inv=M_inv).Lambda) @ F
        e = np.linalg.lstsq(self.K, F, rcond=None)[0]
        balanced = np.linalg.norm(self.K @ e - F) <= 1e-6 * max(np.linalg.norm(F), 1e-9)
        return bool(balanced and np.linalg.norm(e[:3]) <= self.max_position_error
                    and np.linalg.norm(e[3:]) <= self.max_orientation_error)

    def judged(self, solver, q, external, collision_threshold):
        """The observer's estimate (momentum_observer.External) as this mode judges it: its
        collisions are contacts when every joint has an estimate and the push is one the
        mode yields to (yields_to)."""
        if (COLLISION in external.levels and UNKNOWN not in external.levels
                and self.yields_to(solver, q, external.torque, collision_threshold)):
            return as_contact(external)
        return external

    def sample(self, now):
        raise TypeError("a Cartesian target has no joint-space sample")
