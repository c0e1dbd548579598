"""A desired joint trajectory sampled at any time (trajectory_msgs/JointTrajectory semantics).

Between two points the segment is a cubic Hermite spline when both points carry velocities
(quintic when they also carry accelerations), linear otherwise. Before the first point the
trajectory holds the first point; after the last, the last with zero velocity and
acceleration. Times are seconds from the trajectory's start.
"""

import numpy as np

from .joint_order import order_of
from .speed_scaling import speed_scale

BLOCK = 512     # samples per pass of sample_many: its temporaries stay in the cache


class Motion:
    """What the controller tracks (control/controller.py). sample(now) → (q_d, q̇_d, q̈_d);
    besides, by default none of these: feed_forward(now) → a joint torque (n,) to add, or
    None; judge(now, q, q̇, q_d, q̇_d) → None, or the reason to leave the motion and hold
    where the arm is; ended(reason, replaced): the controller left the motion (a sentence
    why; replaced: for another motion, else a safety fault). mode: the controller's mode
    while it follows the motion."""

    mode = "tracking"

    def begin(self, solver, q, now, settings):
        """The motion admitted at `now` [s] with the arm at q, under `settings`
        (settings.Settings: a Cartesian target plans its way from there, a trajectory its
        speed scaling); nothing by default."""

    def feed_forward(self, now):
        return None

    def speed_scaling(self, now):
        """The rate its time runs at, now (1: as the wall's; speed_scaling.py)."""
        return 1.0

    def slowed(self):
        """A clause saying how much its speed scaling slows it ("": not at all)."""
        return ""

    def judge(self, now, q, qd, q_d, qd_d):
        return None

    def ended(self, reason, replaced=False):
        pass


class Trajectory(Motion):
    """Waypoints in model joint order: times (m,), positions/velocities/accelerations (m, n)
    (velocities and accelerations may be None). Once admitted, its time may run slower than
    the wall's where the tool would be too fast for a contact (`scale`, speed_scaling.py):
    sample(now) follows it; the path's own time is `elapsed(now)`, sample_path(t) there."""

    def __init__(self, start, times, positions, velocities=None, accelerations=None):
        self.start = float(start)
        self.times = np.asarray(times, dtype=float)
        self.positions = np.asarray(positions, dtype=float)
        self.velocities = None if velocities is None else np.asarray(velocities, dtype=float)
        self.accelerations = (None if accelerations is None or velocities is None
                              else np.asarray(accelerations, dtype=float))
        m = len(self.times)
        if m == 0 or self.positions.shape[0] != m:
            raise ValueError("a trajectory needs at least one point with positions")
        if np.any(np.diff(self.times) <= 0.0) or self.times[0] < 0.0:
            raise ValueError("time_from_start must be >= 0 and strictly increasing")
        for name in ("positions", "velocities", "accelerations"):
            values = getattr(self, name)
            if values is not None and (values.shape != self.positions.shape
                                       or not np.all(np.isfinite(values))):
                raise ValueError(f"trajectory {name} must be finite, one per joint and point")
        self.scale = None          # speed_scaling.SpeedScale once admitted, or None (s = 1)

    def begin(self, solver, q, now, settings):
        """Its speed scaling for the contact limit and the safety planes (settings)."""
        if settings.contact is not None or settings.planes:
            self.scale = speed_scale(solver, self, settings)

    def elapsed(self, now):
        """[s] the path's time at absolute time `now` [s] (slower than the wall's where the
        speed scaling holds it back)."""
        t = now - self.start
        return t if self.scale is None else self.scale.at(t)[0]

    def wall(self, t):
        """[s] the absolute time at which the path's time is t [s] (its inverse)."""
        return self.start + (t if self.scale is None else self.scale.wall(t))

    def speed_scaling(self, now):
        return 1.0 if self.scale is None else self.scale.at(now - self.start)[1]

    def slowed(self):
        if self.scale is None:
            return ""
        return (f", slowed next to a person (speed scaling down to {self.scale.least:.2f}: "
                f"{self.times[-1]:.3g} s take {self.scale.walls[-1]:.3g} s)")

    def sample(self, now):
        """(q_d, q̇_d, q̈_d) at absolute time `now` [s], with the speed scaling."""
        if self.scale is None:
            return self.sample_path(now - self.start)
        t, s, s_dot = self.scale.at(now - self.start)
        q, qd, qdd = self.sample_path(t)
        return q, s * qd, s * s * qdd + s_dot * qd

    def sample_path(self, t):
        """(q, q', q'') at the path's time t [s] from its start (no speed scaling)."""
        n = self.positions.shape[1]
        if t <= self.times[0] or len(self.times) == 1:
            k = 0 if t <= self.times[0] else -1
            return self.positions[k].copy(), np.zeros(n), np.zeros(n)
        if t >= self.times[-1]:
            return self.positions[-1].copy(), np.zeros(n), np.zeros(n)
        k = int(np.searchsorted(self.times, t, side="right")) - 1
        h = self.times[k + 1] - self.times[k]
        return _evaluate(self._coefficients(k, k + 1, h), (t - self.times[k]) / h, h)

    def sample_many(self, times):
        """(q_d, q̇_d, q̈_d), each (N, n), at `times` (N,) [s] from the trajectory's start:
        what sample() gives at each, in one vectorised pass (for checking a whole
        trajectory, not for the control loop)."""
        t = np.asarray(times, dtype=float)
        n = self.positions.shape[1]
        q, qd, qdd = np.empty((len(t), n)), np.zeros((len(t), n)), np.zeros((len(t), n))
        before, after = t <= self.times[0], t >= self.times[-1]
        q[before] = self.positions[0]
        q[after & ~before] = self.positions[-1]
        inside = ~(before | after)
        if not inside.any():
            return q, qd, qdd
        h = np.diff(self.times)[:, None]      # every segment's coefficients once: (m − 1,
        coefficients = np.stack(self._coefficients(slice(0, -1), slice(1, None), h), axis=1)
        index = np.flatnonzero(inside)                    # degree + 1, n)
        for first in range(0, len(index), BLOCK):
            rows = index[first:first + BLOCK]
            if rows[-1] - rows[0] == len(rows) - 1:       # consecutive (sorted times): a
                rows = slice(rows[0], rows[-1] + 1)       # view, not a gather
            k = np.searchsorted(self.times, t[rows], side="right") - 1
            c = coefficients[k].transpose(1, 0, 2)        # each sample's: one gather
            q[rows], qd[rows], qdd[rows] = _evaluate(
                list(c), (t[rows] - self.times[k])[:, None] / h[k], h[k])
        return q, qd, qdd

    def _coefficients(self, a, b, h):
        """The segment polynomial's coefficients in s ∈ [0, 1] from point(s) a to b (indices
        or slices), h their duration(s): linear, cubic Hermite or quintic (module
        docstring)."""
        p0, p1 = self.positions[a], self.positions[b]
        if self.velocities is None:
            return p0, p1 - p0
        v0, v1 = self.velocities[a] * h, self.velocities[b] * h
        if self.accelerations is None:
            return p0, v0, 3 * (p1 - p0) - 2 * v0 - v1, 2 * (p0 - p1) + v0 + v1
        a0, a1 = self.accelerations[a] * h * h, self.accelerations[b] * h * h
        return (p0, v0, 0.5 * a0,
                10 * (p1 - p0) - 6 * v0 - 4 * v1 - 1.5 * a0 + 0.5 * a1,
                -15 * (p1 - p0) + 8 * v0 + 7 * v1 + 1.5 * a0 - a1,
                6 * (p1 - p0) - 3 * v0 - 3 * v1 - 0.5 * a0 + 0.5 * a1)


def _evaluate(c, s, h):
    """(q, q̇, q̈) of q(s) = Σ c_j s^j at s, time t = s h (Horner's rule)."""
    q = c[-1]
    for cj in c[-2::-1]:
        q = q * s + cj
    degree = len(c) - 1
    dq = degree * c[-1]
    for j in range(degree - 1, 0, -1):
        dq = dq * s + j * c[j]
    ddq = degree * (degree - 1) * c[-1] if degree > 1 else 0.0 * c[0]
    for j in range(degree - 1, 1, -1):
        ddq = ddq * s + j * (j - 1) * c[j]
    return q, dq / h, ddq / (h * h)


def trajectory_from_points(names, points, joint_names, start=0.0):
    """Trajectory in model order (`joint_names`) from the trajectory_msgs/JointTrajectory
    layout: `names` the joints of every point's arrays (each chain joint once; empty: model
    order), `points` a sequence of (time_from_start [s], positions, velocities,
    accelerations), each array in `names` order, empty where a point does not give it (every
    point gives a field, or none does). ValueError with the reason otherwise."""
    index = order_of(list(names), joint_names, "trajectory joint_names")
    if len(points) == 0:
        raise ValueError("trajectory has no points")
    positions = point_field(points, 1, "positions", index)
    if positions is None:
        raise ValueError("trajectory points need positions")
    times = [float(point[0]) for point in points]
    return Trajectory(start, times, positions, point_field(points, 2, "velocities", index),
                      point_field(points, 3, "accelerations", index))


def point_field(points, k, name, index):
    """Field k of every point as an (m, n) array in model order (`index`: each model joint's
    place in the points' arrays, joint_order.order_of), or None when no point gives it;
    ValueError when only some do."""
    rows = [point[k] for point in points]
    if all(len(row) == 0 for row in rows):
        return None
    if any(len(row) != len(index) for row in rows):
        raise ValueError(f"every point needs {len(index)} {name} (or none)")
    return np.array(rows, dtype=float)[:, index]


class SetPoint(Motion):
    """A constant desired state: q_d, q̇_d (model order), q̈_d = 0 at all times."""

    def __init__(self, positions, velocities):
        self.positions = np.asarray(positions, dtype=float)
        self.velocities = np.asarray(velocities, dtype=float)
        self.accelerations = np.zeros_like(self.positions)

    def sample(self, now):
        """(q_d, q̇_d, q̈_d): the same arrays every time; callers must not modify them."""
        return self.positions, self.velocities, self.accelerations
