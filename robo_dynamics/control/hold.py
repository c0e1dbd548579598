"""The safe hold's law: each joint's velocity brought down at a rate from the arm's model
at its pose, within the torques the command can reach. No ROS here."""

import numpy as np

from ..algorithms.jacobian import LOCAL_WORLD_ALIGNED

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

    Where h + M a passes an effort bound, the deceleration keeps its direction and takes
    the size the bounds allow (scaled_to_bounds): braking a light joint hard asks large
    torques of the heavy joints it couples to, and meeting them joint by joint, some at
    their bound, others compensating, can push a joint along its own motion.

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
    h = u.bias(q, qd)
    a, limited = scaled_to_bounds(h, M, a, bound)
    lo, hi = (-bound, bound) if reach is None else reach
    tau, pinned = within_bounds(h, M, a, lo, hi)
    return tau, limited or bool(np.any(pinned & (np.abs(tau) >= bound)))


def scaled_to_bounds(h, M, a, bound):
    """(s a, limited): the accelerations a (n,) scaled by the largest s in [0, 1] for which
    τ = h + s M a stays within ±bound on every joint, where h itself does (otherwise a,
    unscaled: no s can help); every joint keeps its share of the deceleration. limited:
    whether h + M a passed a bound (the bounds limit the deceleration)."""
    d = M @ a
    over = np.abs(h + d) > bound
    if not over.any():
        return a, False
    if np.any(np.abs(h) > bound):
        return a, True
    s = np.min((np.sign(d[over]) * bound[over] - h[over]) / d[over])
    return max(0.0, float(s)) * a, True


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
