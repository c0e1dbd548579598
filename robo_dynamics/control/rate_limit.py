"""Torque-rate limit: a command never changes faster than r_i N·m/s on any joint.

Between two commands k − 1 and k, sent Δt apart,

    |τ_k,i − τ_k−1,i| ≤ r_i · min(Δt, MAX_INTERVAL)

so a change of the target (a new control law, trajectory, payload or gain) becomes a ramp,
never a step. Each joint is clipped on its own (every joint reaches its target as soon as
its rate allows: a light wrist does not wait for the shoulder's ramp), or, with
keep_direction, the change is scaled as a whole, τ_k = τ_k−1 + s (τ* − τ_k−1) with the
largest s ≤ 1 that keeps every joint within its rate: the command moves to the target
along a straight line and keeps the direction the law asked for (the controller asks for
it in the Cartesian modes: the wrench Jᵀ F keeps its direction at the tip, where clipping
each joint would turn it). Δt is capped because the arm's effort controller holds the
previous command during a gap: a long gap must not license a large jump. A clock that goes backwards gives
Δt = 0 (the command holds for that cycle). The same limit as libfranka's `limitRate` on
commanded torques (`kMaxTorqueRate`), here with the measured period instead of a fixed 1 ms.
"""

import numpy as np

MAX_INTERVAL = 0.01    # s: the longest Δt a single step may use (a 100 Hz control period)


class TorqueRateLimiter:
    """Follows a target torque (n,) at most `rate` (n,) [N·m/s or N/s] per joint."""

    def __init__(self, rate, max_interval=MAX_INTERVAL):
        self.rate = np.asarray(rate, dtype=float)
        self.max_interval = float(max_interval)
        self.last = np.zeros(self.rate.shape)    # the previous command
        self.time = None                          # when it was sent [s]; None: not yet

    def restart(self, start, now):
        """The next command starts a ramp at `start` (n,): where the arm's torque is."""
        self.last = np.array(start, dtype=float)
        self.time = float(now)

    def resume(self, measured, bound, previous, now):
        """Restart from the measured torques (n,) where known (finite) and within ±bound,
        taken as sent at `previous` [s], else from the last command at `now`: how many
        joints' measured torque it starts from."""
        known = np.isfinite(measured) & (np.abs(measured) <= bound)
        if known.any():
            self.restart(np.where(known, measured, self.last), previous)
        else:
            self.restart(self.last, now)
        return int(known.sum())

    def reach(self, now, bound):
        """(lo, hi) (n,): the commands limit() can give at `now` within ±bound (the
        previous command ± rate · Δt); ±bound before the first command."""
        if self.time is None:
            return -bound, bound
        step = self.rate * min(max(now - self.time, 0.0), self.max_interval)
        return np.maximum(self.last - step, -bound), np.minimum(self.last + step, bound)

    def limit(self, target, now, keep_direction=False):
        """(command (n,), whether the limit cut it): `target` moved towards by at most
        rate · min(now − previous time, max_interval), each joint clipped, or with
        keep_direction the whole change scaled. Requires a restart() first."""
        dt = min(max(now - self.time, 0.0), self.max_interval)
        delta = target - self.last
        step = self.rate * dt
        # plain Python for a handful of joints: cheaper than three NumPy calls
        limited = not all(-s <= d <= s for d, s in zip(delta.tolist(), step.tolist()))
        if limited and keep_direction:       # the whole change scaled
            delta = delta * min(s / abs(d) for d, s in zip(delta.tolist(), step.tolist())
                                if abs(d) > s)
        elif limited:
            delta = np.minimum(np.maximum(delta, -step), step)
        self.last = self.last + delta
        self.time = float(now)
        return self.last, limited
