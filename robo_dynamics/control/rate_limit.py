"""Torque-rate limit: a command never changes faster than r_i N·m/s on any joint.

Between two commands k − 1 and k, sent Δt apart,

    |τ_k,i − τ_k−1,i| ≤ r_i · min(Δt, MAX_INTERVAL)

so a change of the target (a new control law, trajectory, payload or gain) becomes a ramp,
never a step. A change beyond the limit is scaled as a whole, τ_k = τ_k−1 + s (τ* − τ_k−1)
with the largest s ≤ 1 that keeps every joint within its rate: the command moves towards
the target along a straight line, so that the torque vector keeps the direction the law
asked for (a Cartesian law's wrench Jᵀ F keeps its direction at the tip; clipping each
joint on its own would turn it). Δt is capped because the arm's effort controller holds the previous command
during a gap: a long gap must not license a large jump. A clock that goes backwards gives
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

    def limit(self, target, now):
        """(command (n,), whether the limit cut it): `target` moved towards by at most
        rate · min(now − previous time, max_interval). Requires a restart() first."""
        dt = min(max(now - self.time, 0.0), self.max_interval)
        delta = target - self.last
        step = self.rate * dt
        # plain Python for a handful of joints: cheaper than three NumPy calls
        limited = not all(-s <= d <= s for d, s in zip(delta.tolist(), step.tolist()))
        if limited:       # the whole change scaled: its direction kept
            delta = delta * min(s / abs(d) for d, s in zip(delta.tolist(), step.tolist())
                                if abs(d) > s)
        self.last = self.last + delta
        self.time = float(now)
        return self.last, limited
