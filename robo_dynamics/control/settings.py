"""The controller's Settings (gains and bounds), and how parameter values (dynamics_node's,
validated) give them: each default that depends on the arm is applied here, once. No ROS
here.

`values` is a dict, parameter name → value (None: unset), as ros/parameters.py reads them;
per-joint parameters hold 1 value (for every joint) or n, in model joint order, SI units.
"""

import dataclasses

import numpy as np

from ..algorithms.jacobian import LOCAL_WORLD_ALIGNED
from .limits import effort_bounds, velocity_bounds
from .momentum_observer import DEFAULT_THRESHOLDS


@dataclasses.dataclass(frozen=True)
class Settings:
    """Gains and bounds, each (n,) in model joint order, SI units.

    kp [1/s²], kd [1/s]: computed-torque gains. effort_bound [N·m or N]: |τ| ≤ bound.
    max_torque_rate [N·m/s]. start_tolerance, max_tracking_error [rad or m].
    velocity_bound [rad/s or m/s] (inf: none). hold_decay_rate λ [1/s]: the safe hold
    brings every joint's velocity down as e^(−λt) (hold_law). hold_damping D [N·m·s/rad]
    (None: the model's law; given: g − D q̇ instead).
    stale_timeout [s]. hold_timeout [s]: how long the hold may take to bring every joint
    below the velocity bound before the stream stops. viscous, coulomb: the joints'
    friction model (None: none); with friction_compensation it is added to the commands
    and the observer models it (without, the node models no friction).
    observer_gain K_O [1/s] (None: no external-torque estimate). contact_threshold,
    collision_threshold [N·m or N]: per-joint levels of |τ_ext|. collision_reaction: 'none'
    or 'hold'. torque_constants [N·m/A] (None: JointState.effort is the joint torque; else
    it is the motor current, τ_m = k ⊙ i, gear ratio included).
    hardware_compensates_gravity: the drives add g(q) themselves (Franka, UR direct torque
    control): the command sent leaves g(q) out; every bound applies to the full torque.
    hold_push_force [N]: a person's push at the tool that the hold yields to at no more than
    HOLD_YIELD of the velocity bound (hold_rates; 0: hold_decay_rate alone).
    """
    kp: np.ndarray
    kd: np.ndarray
    effort_bound: np.ndarray
    max_torque_rate: np.ndarray
    start_tolerance: np.ndarray
    max_tracking_error: np.ndarray
    velocity_bound: np.ndarray
    hold_damping: np.ndarray
    stale_timeout: float
    hold_decay_rate: float = 20.0
    hold_timeout: float = 0.5
    viscous: np.ndarray = None
    coulomb: np.ndarray = None
    friction_compensation: bool = False
    observer_gain: np.ndarray = None
    contact_threshold: np.ndarray = None
    collision_threshold: np.ndarray = None
    collision_reaction: str = "none"
    torque_constants: np.ndarray = None
    hardware_compensates_gravity: bool = False
    hold_push_force: float = 50.0

    def observer_thresholds(self):
        """(contact, collision) thresholds as lists, for momentum_observer.contact_levels."""
        if self.contact_threshold is None:
            return None, None
        return self.contact_threshold.tolist(), self.collision_threshold.tolist()


def same_optional(a, b):
    """Whether two optional arrays are equal (None only equals None)."""
    return (a is None) == (b is None) and (a is None or np.array_equal(a, b))


def per_joint(values, dof, name):
    """A per-joint list from a parameter: n values, or 1 value for all; None when unset."""
    if values is None:
        return None
    values = list(values)
    if len(values) == 1:
        values = values * dof
    if len(values) != dof:
        raise ValueError(f"{name} needs 1 or {dof} values, got {len(values)}")
    return values


HOLD_YIELD = 0.5       # the hold yields to hold_push_force at most this × the velocity bound
HOLD_SAMPLED = 0.5     # λ Δt at most for the rates the push asks (|z| = 0.71 with a period's
                       # delay between a state and its command; the sampled loop's margin)


def hold_rates(solver, q, settings, period, M=None):
    """λ (n,) [1/s]: each joint's rate of decay in the safe hold at q. hold_decay_rate, or
    more on a joint that a person's push would otherwise spin past its bound: a force F of
    hold_push_force [N] at the tool, in the direction worst for joint i, accelerates it by
    a_i = F ‖row i of M⁻¹ J_vᵀ‖ (J_v the tool's linear Jacobian, base axes), and under
    q̈ = −λ q̇ + a it settles at a_i / λ_i: λ_i = a_i / (HOLD_YIELD v_bound_i) keeps that
    below HOLD_YIELD of the bound. From the model at q (light distal joints brake harder),
    capped at HOLD_SAMPLED / period (the push-derived part) and 1 / period (the sampled
    loop, as hold_law). M: M(q) where already computed."""
    n = len(q)
    rate = np.full(n, float(settings.hold_decay_rate))
    if settings.hold_push_force > 0.0:
        u = solver.unchecked
        J_v = u.jacobian(q, LOCAL_WORLD_ALIGNED)[:3]
        M_inv_J_T = (u.mass_matrix_inverse(q) @ J_v.T if M is None
                     else np.linalg.solve(M, J_v.T))
        a = settings.hold_push_force * np.linalg.norm(M_inv_J_T, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            wanted = np.where(np.isfinite(settings.velocity_bound),
                              a / (HOLD_YIELD * settings.velocity_bound), 0.0)
        if period is not None:
            wanted = np.minimum(wanted, HOLD_SAMPLED / period)
        rate = np.maximum(rate, wanted)
    if period is not None:
        rate = np.minimum(rate, 1.0 / period)
    return rate


def hold_law(solver, q, qd, g, settings, period, reach=None):
    """(τ, at_bound): the safe hold's torque at (q, q̇) [N·m or N], model order, without
    friction (it helps stop the arm), and whether a joint's effort bound limited it; g:
    g(q), already computed.

    Unless hold_damping is given: computed torque to a velocity that decays at λ_i
    (hold_rates: hold_decay_rate, more on joints a person's push would spin past their
    bound), τ = M(q) (−λ ⊙ q̇) + C(q, q̇) q̇ + g(q) (one Newton–Euler recursion), so that
    q̈_i = −λ_i q̇_i and each joint's velocity falls as e^(−λ_i t) at every pose, whatever
    the inertia the joint carries there, and a push yields it at a_i / λ_i (Lynch & Park,
    Modern Robotics, §11.4.1, with K_p = 0 and a zero desired velocity). Sampled every Δt
    [s] (`period`), q̇ ← (1 − λΔt) q̇: λ is capped at 1/Δt (the fastest decay a sampled
    loop gives without overshoot; unstable beyond 2/Δt).

    `reach` (lo, hi) (n,) each: the torques the command can take this cycle (the effort
    bounds, narrowed by the torque-rate limit around the last command:
    TorqueRateLimiter.reach); None: the effort bounds. Where the law's torque is outside,
    that joint's torque is at the edge and the others keep their deceleration
    (within_bounds): a brake whose torque cannot fall as fast as the law asks (a push let
    go) then does not spin a light joint through M's coupling. With hold_damping D (n,):
    g(q) − D q̇."""
    if settings.hold_damping is not None:
        return g - settings.hold_damping * qd, False
    u = solver.unchecked
    M = u.mass_matrix(q)
    a = -hold_rates(solver, q, settings, period, M) * qd
    bound = settings.effort_bound
    lo, hi = (-bound, bound) if reach is None else reach
    tau, pinned = within_bounds(u.bias(q, qd), M, a, lo, hi)
    return tau, bool(np.any(pinned & (np.abs(tau) >= bound)))


def within_bounds(h, M, a, lo, hi):
    """(τ, pinned (n,) bool): τ = h + M a (the joints' accelerations a), or, where that
    leaves a joint's range [lo_i, hi_i], that joint's torque at the edge it passed and the
    others' chosen so that their accelerations stay a (M couples them: clamping one
    joint's torque alone would turn the others' computed torque into an acceleration).
    Joints are pinned in turn as they leave their range; pinned: which were."""
    tau = h + M @ a
    pinned = np.zeros(len(a), dtype=bool)
    while True:
        over = ((tau < lo) | (tau > hi)) & ~pinned
        if not over.any():
            return tau, pinned
        pinned |= over
        s, f = np.flatnonzero(pinned), np.flatnonzero(~pinned)
        tau_s = np.clip(tau[s], lo[s], hi[s])
        a_s = np.linalg.solve(M[np.ix_(s, s)], tau_s - h[s] - M[np.ix_(s, f)] @ a[f])
        tau = tau.copy()
        tau[s] = tau_s
        tau[f] = h[f] + M[np.ix_(f, f)] @ a[f] + M[np.ix_(f, s)] @ a_s


def thresholds(contact, collision, effort_limit):
    """(contact, collision) thresholds [N·m or N] per joint: the values given, or the
    defaults, DEFAULT_THRESHOLDS of each joint's effort limit."""
    return tuple(np.array(given, dtype=float) if given is not None else fraction * effort_limit
                 for given, fraction in zip((contact, collision), DEFAULT_THRESHOLDS))


def controller_settings(values, model):
    """Settings for `model` (its limits, damping and friction) from parameter values."""
    n = model.dof

    def joint_values(name):
        given = per_joint(values[name], n, name)
        return None if given is None else np.array(given, dtype=float)
    viscous, coulomb = joint_values("viscous_friction"), joint_values("coulomb_friction")
    hold = joint_values("hold_damping")
    gain = joint_values("observer_gain")
    contact, collision = thresholds(joint_values("contact_thresholds"),
                                    joint_values("collision_thresholds"), model.effort_limit)
    return Settings(
        kp=joint_values("kp"), kd=joint_values("kd"),
        effort_bound=effort_bounds(model.effort_limit, values["torque_limit_scale"]),
        max_torque_rate=joint_values("max_torque_rate"),
        start_tolerance=joint_values("start_tolerance"),
        max_tracking_error=joint_values("max_tracking_error"),
        velocity_bound=velocity_bounds(model.velocity_limit, values["velocity_limit_scale"]),
        hold_damping=hold, hold_decay_rate=values["hold_decay_rate"],
        stale_timeout=values["stale_timeout"], hold_timeout=values["hold_timeout"],
        viscous=viscous if viscous is not None else model.damping,
        coulomb=coulomb if coulomb is not None else model.friction,
        friction_compensation=bool(values["friction_compensation"]),
        observer_gain=gain if gain.any() else None,
        contact_threshold=contact, collision_threshold=collision,
        collision_reaction=values["collision_reaction"],
        torque_constants=(joint_values("torque_constants")
                          if values["effort_source"] == "current" else None),
        hardware_compensates_gravity=values["hardware_compensates_gravity"],
        hold_push_force=values["hold_push_force"])


def friction_beyond_reach(model, mass_matrix, settings):
    """Sentences, one per joint whose modelled Coulomb friction f_c the tracking cannot
    overcome: uncompensated, it holds joint i up to f_c / (M_ii kp_i) off a path (computed
    torque's stiffness is M_ii kp_i), warned beyond half of max_tracking_error. mass_matrix:
    M [kg·m² or kg] at a pose the arm works in. None of them with friction_compensation."""
    if settings.friction_compensation or settings.coulomb is None:
        return []
    offset = settings.coulomb / (np.diag(mass_matrix) * settings.kp)       # [rad or m]
    units = [("m", "N", "kg") if kind == "prismatic" else ("rad", "N·m", "kg·m²")
             for kind in model.joint_types]
    return [f"joint '{name}': the Coulomb friction the model gives it ({f:.3g} {u[1]}) would "
            f"hold it up to {e:.3g} {u[0]} off a path at kp {kp:g} (its inertia {m:.2g} "
            f"{u[2]}), beyond half of max_tracking_error {bound:g}: a safe hold on the first "
            "motion; compensate the friction (in the drive, or friction_compensation) or "
            "check the URDF's <dynamics friction>"
            for name, f, e, kp, m, bound, u in zip(
                model.joint_names, settings.coulomb, offset, settings.kp,
                np.diag(mass_matrix), settings.max_tracking_error, units)
            if e > 0.5 * bound]


def working_pose(model):
    """The middle of each joint's range (0 for a joint without limits): a pose to judge
    the arm by before any joint state."""
    limited = model.limited
    return 0.5 * (np.where(limited, model.lower, 0.0) + np.where(limited, model.upper, 0.0))
