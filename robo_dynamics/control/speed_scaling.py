"""A joint trajectory slowed where its tool would move faster than a contact with a person
allows (contact_safety.py), as ros2_controllers' scaled_joint_trajectory_controller slows
one by a speed scaling: the path stays the same, its time runs at a rate s ∈ (0, 1]. No ROS
here.

With the path's time t running at ṫ = s, the desired state is q(t), s q'(t) and
s² q''(t) + ṡ q'(t) (' : d/dt of the path's own time). Where the tool's path speed
|J_v(q) q'| is above v_max (the most restrictive region at the tool's reflected mass along
its motion), s ≤ HEADROOM v_max / |J_v q'|; s changes at no more than `rate` [1/s] of wall
time, and starts falling early enough to be low where it must be (a backward pass, then a
forward one: s² moves by at most 2 rate Δt between samples Δt of path time apart, which is
exactly a constant ṡ = rate). The rate is the safe hold's decay rate: with |q'_i| within
the velocity bound, the extra deceleration ṡ q'_i is at most what the hold itself asks.
Then s is smoothed without rising anywhere: a running minimum over ±2/rate of path time,
then two running means over ±1/rate (each mean's window lies inside the minimum's, so the
result is below s everywhere), so that ṡ, and with it q̈_d, has no step.

Between samples, s is linear in wall time (ṡ constant: s² is linear in path time), so
t, s and ṡ are exactly consistent. The profile is computed once, when the trajectory is
admitted, on the desired poses.
"""

import numpy as np

from .contact_safety import HEADROOM, speed_ratio
from .safety_planes import watched_points

STEP = 0.004          # [s] of path time between the profile's samples (at most MAX_SAMPLES)
MAX_SAMPLES = 4000
SMALLEST = 1e-3       # s never below this (a point that cannot move toward a person: 1)


def path_jacobians(solver, q, contact):
    """Linear Jacobians (N, 3, n), base axes, at path samples q (N, n): the tool's, then
    each monitored point's (contact.points; contact may be None)."""
    return [solver.jacobian_batch(q)[:, :3]] + [
        solver.point_jacobian_batch(q, link, point)[1]
        for link, point in (contact.points if contact is not None else ())]


def path_speed_ratios(solver, q, qd, contact, jacobians):
    """(N,) the largest speed / v_max over the watched points (their `jacobians`) at path
    samples q, q' (N, n): |J_v q'| against the speed a contact allows along that motion."""
    M = solver.mass_matrix_batch(q)
    worst = np.zeros(len(q))
    for point, J in enumerate(jacobians):
        v = np.einsum("kij,kj->ki", J, qd)
        speed = np.linalg.norm(v, axis=1)
        moving = speed > 1e-9
        u = np.where(moving[:, None], v / np.where(moving, speed, 1.0)[:, None], 0.0)
        w = np.einsum("kij,ki->kj", J, u)                    # J_vᵀ u (N, n)
        mobility = np.einsum("kj,kj->k", w, np.linalg.solve(M, w[..., None])[..., 0])
        with np.errstate(divide="ignore", invalid="ignore"):
            m_R = np.where(moving & (mobility > 0.0), 1.0 / mobility, np.inf)
            limit = contact.speed_limit(m_R, point)
            worst = np.maximum(worst, np.where(moving, speed / limit, 0.0))
    return worst


def contact_speed_ratio(solver, q, qd, M_inv, contact):
    """The largest speed / v_max of the tool and of the monitored points at one state
    (q, q̇ (n,); M_inv = M(q)⁻¹)."""
    return max([0.0] + [speed_ratio(J[0], M_inv, qd, contact, point)
                        for point, J in enumerate(path_jacobians(solver, q[None], contact))])


def _plane_scale(solver, q, qd, settings, jacobians):
    """(N,) the largest s at which every watched point (their `jacobians`) approaching a
    safety plane at s v_n (v_n: its path speed toward it) is within λ d of it (HEADROOM of
    that): the safe hold, started anywhere, stops it before the plane (safety_planes.py)."""
    _, positions, radii = watched_points(solver, q, settings.contact)
    s = np.ones(len(q))
    for J, p, r in zip(jacobians, positions, radii):
        v = np.einsum("kij,kj->ki", J, qd)
        for plane in settings.planes:
            d, v_n = plane.distance(p) - r, -(v @ np.asarray(plane.normal))
            with np.errstate(divide="ignore", invalid="ignore"):
                allowed = HEADROOM * settings.hold_decay_rate * np.maximum(d, 0.0) / v_n
            s = np.where(v_n > 1e-9, np.minimum(s, np.clip(allowed, SMALLEST, 1.0)), s)
    return s


class SpeedScale:
    """The time scale of one trajectory (module docstring): from its elapsed wall time to
    its path time, rate and the rate's change. times (N,) [s of path time], scales (N,)."""

    def __init__(self, times, scales):
        self.times, self.scales = times, scales
        spans = 2.0 * np.diff(times) / (scales[1:] + scales[:-1])     # wall time per step
        self.walls = np.concatenate(([0.0], np.cumsum(spans)))
        self.rates = np.diff(scales) / spans                         # ṡ per step [1/s]
        self.least = float(scales.min())

    def wall(self, t):
        """[s] the wall time since the start at which the path's time is t [s]."""
        if t <= 0.0 or t >= self.times[-1]:
            return t if t <= 0.0 else self.walls[-1] + t - self.times[-1]
        k = int(np.searchsorted(self.times, t, side="right")) - 1
        s_k, rate, dt = self.scales[k], self.rates[k], t - self.times[k]
        if abs(rate) < 1e-12:
            return float(self.walls[k] + dt / s_k)
        s = np.sqrt(s_k * s_k + 2.0 * rate * dt)                   # s² linear in t
        return float(self.walls[k] + (s - s_k) / rate)

    def at(self, elapsed):
        """(t [s] path time, s, ṡ [1/s]) at `elapsed` [s] of wall time since the start."""
        if elapsed <= 0.0 or elapsed >= self.walls[-1]:
            end = 0.0 if elapsed <= 0.0 else self.times[-1] - self.walls[-1]
            return elapsed + end, 1.0, 0.0
        k = int(np.searchsorted(self.walls, elapsed, side="right")) - 1
        w, s_k, rate = elapsed - self.walls[k], self.scales[k], self.rates[k]
        return (float(self.times[k] + s_k * w + 0.5 * rate * w * w),
                float(s_k + rate * w), float(rate))


def _running(values, half, reduce):
    """reduce (np.min or np.mean) over ±half samples around each, the ends repeated."""
    if half < 1:
        return values
    padded = np.pad(values, half, mode="edge")
    return reduce(np.lib.stride_tricks.sliding_window_view(padded, 2 * half + 1), axis=1)


def speed_scale(solver, trajectory, settings):
    """SpeedScale of `trajectory` (trajectory.Trajectory) for settings.contact (a
    contact_safety.ContactLimit, or None) and settings.planes (safety_planes.Plane), s
    changing at most settings.hold_decay_rate [1/s]; None where nothing is too fast (s = 1
    throughout)."""
    end, rate = float(trajectory.times[-1]), settings.hold_decay_rate
    if end <= 0.0:
        return None
    count = int(min(MAX_SAMPLES, max(2, np.ceil(end / STEP) + 1)))
    times = np.linspace(0.0, end, count)
    q, qd, _ = trajectory.sample_many(times)
    s, jacobians = np.ones(count), path_jacobians(solver, q, settings.contact)
    if settings.contact is not None:
        ratio = path_speed_ratios(solver, q, qd, settings.contact, jacobians)
        with np.errstate(divide="ignore"):                   # at rest (ratio 0): s = 1
            s = np.clip(HEADROOM / ratio, SMALLEST, 1.0)
    if settings.planes:
        s = np.minimum(s, _plane_scale(solver, q, qd, settings, jacobians))
    if s.min() >= 1.0:
        return None
    step = 2.0 * rate * (times[1] - times[0])
    for k in range(count - 2, -1, -1):                 # falls in time for what follows
        s[k] = min(s[k], np.sqrt(s[k + 1] ** 2 + step))
    for k in range(1, count):                          # rises no faster than the rate
        s[k] = min(s[k], np.sqrt(s[k - 1] ** 2 + step))
    half = int(round(1.0 / (rate * (times[1] - times[0]))))
    s = _running(_running(_running(s, 2 * half, np.min), half, np.mean), half, np.mean)
    return SpeedScale(times, np.minimum(s, 1.0))
