"""A desired joint trajectory sampled at any time (trajectory_msgs/JointTrajectory semantics).

Between two points the segment is a cubic Hermite spline when both points carry velocities
(quintic when they also carry accelerations), linear otherwise. Before the first point the
trajectory holds the first point; after the last, the last with zero velocity and
acceleration. Times are seconds from the trajectory's start.
"""

import numpy as np


class Trajectory:
    """Waypoints in model joint order: times (m,), positions/velocities/accelerations (m, n)
    (velocities and accelerations may be None)."""

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

    def sample(self, now):
        """(q_d, q̇_d, q̈_d) at absolute time `now` [s]."""
        t = now - self.start
        n = self.positions.shape[1]
        if t <= self.times[0] or len(self.times) == 1:
            k = 0 if t <= self.times[0] else -1
            return self.positions[k].copy(), np.zeros(n), np.zeros(n)
        if t >= self.times[-1]:
            return self.positions[-1].copy(), np.zeros(n), np.zeros(n)
        k = int(np.searchsorted(self.times, t, side="right")) - 1
        h = self.times[k + 1] - self.times[k]
        s = (t - self.times[k]) / h
        p0, p1 = self.positions[k], self.positions[k + 1]
        if self.velocities is None:
            return p0 + s * (p1 - p0), (p1 - p0) / h, np.zeros(n)
        v0, v1 = self.velocities[k] * h, self.velocities[k + 1] * h
        if self.accelerations is None:
            return _hermite3(s, p0, p1, v0, v1, h)
        a0, a1 = self.accelerations[k] * h * h, self.accelerations[k + 1] * h * h
        return _hermite5(s, p0, p1, v0, v1, a0, a1, h)


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
        k = np.searchsorted(self.times, t[inside], side="right") - 1
        h = (self.times[k + 1] - self.times[k])[:, None]
        s = (t[inside] - self.times[k])[:, None] / h
        p0, p1 = self.positions[k], self.positions[k + 1]
        if self.velocities is None:
            q[inside], qd[inside] = p0 + s * (p1 - p0), (p1 - p0) / h
            return q, qd, qdd
        v0, v1 = self.velocities[k] * h, self.velocities[k + 1] * h
        if self.accelerations is None:
            q[inside], qd[inside], qdd[inside] = _hermite3(s, p0, p1, v0, v1, h)
        else:
            a0, a1 = self.accelerations[k] * h * h, self.accelerations[k + 1] * h * h
            q[inside], qd[inside], qdd[inside] = _hermite5(s, p0, p1, v0, v1, a0, a1, h)
        return q, qd, qdd


def _hermite3(s, p0, p1, v0, v1, h):
    """Cubic through (p0, v0) at s = 0 and (p1, v1) at s = 1; v, a returned per second."""
    c2 = 3 * (p1 - p0) - 2 * v0 - v1
    c3 = 2 * (p0 - p1) + v0 + v1
    q = p0 + s * (v0 + s * (c2 + s * c3))
    dq = v0 + s * (2 * c2 + 3 * s * c3)
    ddq = 2 * c2 + 6 * s * c3
    return q, dq / h, ddq / (h * h)


def _hermite5(s, p0, p1, v0, v1, a0, a1, h):
    """Quintic matching position, velocity and acceleration at both ends."""
    c3 = 10 * (p1 - p0) - 6 * v0 - 4 * v1 - 1.5 * a0 + 0.5 * a1
    c4 = -15 * (p1 - p0) + 8 * v0 + 7 * v1 + 1.5 * a0 - a1
    c5 = 6 * (p1 - p0) - 3 * v0 - 3 * v1 - 0.5 * a0 + 0.5 * a1
    c2 = 0.5 * a0
    q = p0 + s * (v0 + s * (c2 + s * (c3 + s * (c4 + s * c5))))
    dq = v0 + s * (2 * c2 + s * (3 * c3 + s * (4 * c4 + s * 5 * c5)))
    ddq = 2 * c2 + s * (6 * c3 + s * (12 * c4 + s * 20 * c5))
    return q, dq / h, ddq / (h * h)


class SetPoint:
    """A constant desired state: q_d, q̇_d (model order), q̈_d = 0 at all times."""

    def __init__(self, positions, velocities):
        self.positions = np.asarray(positions, dtype=float)
        self.velocities = np.asarray(velocities, dtype=float)
        self.accelerations = np.zeros_like(self.positions)

    def sample(self, now):
        """(q_d, q̇_d, q̈_d): the same arrays every time; callers must not modify them."""
        return self.positions, self.velocities, self.accelerations
