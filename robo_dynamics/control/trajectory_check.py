"""Will a joint trajectory fit the arm's limits, and how much slower must it run?

The rigid-body torques τ(t) = M(q) q̈ + C(q, q̇) q̇ + g(q) are evaluated on samples of the
trajectory (one batched inverse-dynamics call) and compared with the effort limits; the
samples' positions, velocities and accelerations with the position, velocity and (where
given) acceleration limits. Running the same path k times slower, q_k(t) = q(t / k), gives
q̇_k = q̇ / k and q̈_k = q̈ / k², and since C(q, q̇) q̇ is quadratic in q̇,

    τ_k = g(q) + (τ − g(q)) / k²

(Hollerbach, "Dynamic scaling of manipulator trajectories", ASME J. Dyn. Sys. Meas. Control
106(1), 1984). With u = 1 / k² each bound |g + (τ − g) u| ≤ L is linear in u and holds at
u = 0 when |g| ≤ L, so the admissible u form an interval [0, u_max]: the smallest time scale
for the efforts, k = max(1, 1 / √u_max), is exact on the samples. A velocity limit needs
k ≥ max |q̇| / q̇_max, an acceleration limit k ≥ √(max |q̈| / q̈_max); the time scale is the
largest of the three, so that it satisfies all of them. Where gravity alone exceeds a limit,
or the path leaves the position limits, no speed helps. Friction is not modelled here.
"""

import collections
import math

import numpy as np

MAX_SAMPLES = 2_000_000
"""The most samples check_trajectory evaluates by default (about 0.5 GB of arrays for 7
joints)."""

KINDS = ("position", "velocity", "acceleration", "effort")

Violation = collections.namedtuple("Violation",
                                   ["index", "time", "joint", "value", "limit", "kind"])
Violation.__doc__ = """The first sample beyond a limit of one kind (KINDS): its index, time
[s], the joint's name, the value and the limit it exceeds, in the kind's unit (rad or m,
/s, /s², N·m or N; effort_margin applied to efforts; the position limit the nearer one)."""

EffortCheck = collections.namedtuple(
    "EffortCheck", ["feasible", "violation", "peak_effort", "peak_ratio", "min_time_scale",
                    "reason", "times", "efforts", "limits", "violations"])
EffortCheck.__doc__ = """feasible: every sample within every limit. violation: the earliest
Violation, or None; violations: the first of each kind, in KINDS order. peak_effort (n,) max
|τ| per joint; peak_ratio (n,) that over its limit. min_time_scale: the smallest k ≥ 1 that
keeps every sample within the effort, velocity and acceleration limits (1 when the
trajectory fits as timed; inf when none does: gravity alone exceeds a limit, or a position
leaves its limits). reason: a sentence naming each kind's first violation. times (N,) [s],
efforts (N, n), limits (n,) [N·m or N] as checked."""


def sample_times(duration, sample_period):
    """0, Δt, 2Δt, … up to and including `duration` [s]."""
    count = int(math.floor(duration / sample_period + 1e-9)) + 1
    times = np.arange(count) * sample_period
    return times if times[-1] >= duration else np.append(times, duration)


def check_trajectory(solver, trajectory, limits, sample_period=1e-3, effort_margin=1.0,
                     max_samples=MAX_SAMPLES, acceleration_limits=None,
                     velocity_limits=None):
    """EffortCheck of `trajectory` (control.trajectory.Trajectory, model joint order, start
    0) on `solver`'s model against |τ_i| ≤ effort_margin × limits_i, the model's position
    limits, velocity_limits (n,) [rad/s or m/s; None: the model's] and acceleration_limits
    (n,) [rad/s² or m/s²; None: none; inf: none for that joint], sampled every
    sample_period [s] from 0 to its last point; ValueError beyond max_samples samples."""
    if not 0.0 < sample_period < math.inf:
        raise ValueError(f"sample_period must be > 0 and finite, got {sample_period}")
    duration = trajectory.times[-1]
    if duration / sample_period + 2 > max_samples:
        raise ValueError(f"{duration / sample_period + 1:.0f} samples (duration "
                         f"{duration:.6g} s every {sample_period:g} s) exceed {max_samples}: "
                         "use a longer sample_period")
    _check_margin(effort_margin)
    times = sample_times(duration, sample_period)
    q, qd, qdd = trajectory.sample_many(times)
    return check_samples(solver, times, q, qd, qdd, limits, effort_margin,
                         acceleration_limits, velocity_limits)


def check_samples(solver, times, q, qd, qdd, limits, effort_margin=1.0,
                  acceleration_limits=None, velocity_limits=None):
    """EffortCheck of given states: times (N,) [s], q, q̇, q̈ (N, n) in model joint order (a
    sampled trajectory, or recorded joint states with estimated accelerations); limits as
    check_trajectory's."""
    _check_margin(effort_margin)
    bound = effort_margin * np.asarray(limits, dtype=float)
    names = solver.model.joint_names
    with np.errstate(over="ignore", invalid="ignore"):     # refused just below
        tau = solver.inverse_dynamics_batch(q, qd, qdd)
    if not np.isfinite(tau).all():
        index = int(np.flatnonzero(~np.isfinite(tau).all(axis=1))[0])
        raise ValueError(f"the torques are not finite at t = {times[index]:.6g} s: positions, "
                         "velocities or accelerations out of range")
    magnitude = np.abs(tau)
    peak = magnitude.max(axis=0)
    ratio = peak / bound
    model = solver.model
    accel = (np.full(model.dof, np.inf) if acceleration_limits is None
             else np.asarray(acceleration_limits, dtype=float))
    velocity = (model.velocity_limit if velocity_limits is None
                else np.asarray(velocity_limits, dtype=float))
    for name, values in (("acceleration_limits", accel), ("velocity_limits", velocity)):
        if values.shape != (model.dof,) or not np.all(values > 0.0):
            raise ValueError(f"{name} must be {model.dof} values > 0 (inf: none)")
    bounded = model.upper > model.lower
    lower = np.where(bounded, model.lower, -np.inf)
    upper = np.where(bounded, model.upper, np.inf)
    nearer = np.where(q < lower, lower, upper)
    checks = {"position": (np.maximum(lower - q, q - upper), q, nearer),
              "velocity": (np.abs(qd) - velocity, qd, velocity),
              "acceleration": (np.abs(qdd) - accel, qdd, accel),
              "effort": (magnitude - bound, tau, bound)}
    violations = []
    for kind in KINDS:
        excess, values, limit = checks[kind]
        over = np.argwhere(excess > (1e-9 * np.maximum(np.abs(limit), 1.0) if kind ==
                                     "position" else 0.0))
        if len(over):
            index, joint = over[0]
            violations.append(Violation(int(index), float(times[index]), names[joint],
                                        float(values[index, joint]),
                                        float(np.broadcast_to(limit, values.shape)[index,
                                                                                  joint]),
                                        kind))
    if not violations:               # k = 1 fits: no slower time scale is asked for
        scale, reason = 1.0, "within the limits as timed"
    else:
        scale, reason = _time_scale(tau, solver.gravity_batch(q), bound, names, times)
        scale, reason = _kinematic_scale(scale, reason, qd, qdd, velocity, accel, violations)
    first = min(violations, key=lambda v: (v.index, KINDS.index(v.kind)), default=None)
    return EffortCheck(not violations, first, peak, ratio, scale, reason, times, tau, bound,
                       tuple(violations))


def _kinematic_scale(scale, reason, qd, qdd, velocity_limit, accel, violations):
    """(k, sentence): the effort time scale `scale` raised to what the velocity and
    acceleration limits need, the sentence naming each kind's first violation."""
    with np.errstate(divide="ignore", invalid="ignore"):
        k_velocity = float(np.max(np.where(np.isfinite(velocity_limit),
                                           np.abs(qd) / velocity_limit, 0.0), initial=0.0))
        k_accel = float(np.sqrt(np.max(np.where(np.isfinite(accel), np.abs(qdd) / accel,
                                                0.0), initial=0.0)))
    named = "; ".join(f"{v.kind} of '{v.joint}' {v.value:+.4g} beyond {v.limit:.4g} at t = "
                      f"{v.time:.4g} s" for v in violations)
    if any(v.kind == "position" for v in violations):
        return math.inf, f"{named}: the path leaves the position limits at any speed"
    k = max(scale, k_velocity, k_accel, 1.0)
    if not math.isfinite(k):
        return k, f"{named}: {reason}"
    return k, f"{named}: within the limits when slowed by {k:.4g}× (every time_from_start × k)"


def _check_margin(effort_margin):
    if not 0.0 < effort_margin <= 1.0:
        raise ValueError(f"effort_margin must be in (0, 1], got {effort_margin}")


def _time_scale(tau, g, bound, names, times):
    """(k, sentence): the smallest time scale ≥ 1 within the bounds (module docstring)."""
    magnitude = np.abs(g)
    if (magnitude.max(axis=0) > bound).any():
        index, joint = np.argwhere(magnitude > bound)[0]
        return math.inf, (f"gravity alone exceeds the limit of '{names[joint]}' at t = "
                          f"{times[index]:.3f} s ({g[index, joint]:+.4g} against "
                          f"{bound[joint]:.4g}): infeasible at any speed")
    d = tau - g                                  # what slowing down divides by k²
    # the largest u with |g + d u| <= bound: (bound − g) / d where d > 0, (bound + g) / −d
    # where d < 0, unbounded (inf) where d = 0
    with np.errstate(divide="ignore", invalid="ignore"):
        room = (bound - np.sign(d) * g) / np.abs(d)
    u_max = min(1.0, float(np.nanmin(room)))
    if u_max <= 0.0:
        return math.inf, "gravity alone is at a limit: infeasible at any speed"
    k = max(1.0, 1.0 / math.sqrt(u_max))
    if k == 1.0:
        return k, "within the limits as timed"
    return k, f"within the limits when slowed by {k:.4g}× (every time_from_start × k)"
