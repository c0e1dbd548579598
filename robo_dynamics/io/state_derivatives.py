"""Velocities and accelerations of recorded joint states (measured positions and, often,
velocities; never accelerations).

q̇ is taken as recorded, or else from the central differences of q (second order, uneven
steps allowed). q̈ is the slope of q̇ across a window w centred on each state,
(q̇(t + w/2) − q̇(t − w/2)) / w, with q̇ interpolated linearly between states and the window
cut at the recording's ends: differentiating a measurement amplifies its noise, and the
window trades noise for smoothing without lag (window 0: central differences).
"""

import numpy as np

WINDOW = 0.02       # s: the default window of q̈


def velocities_and_accelerations(times, q, qd=None, window=WINDOW):
    """(q̇, q̈), each (N, n), of states at `times` (N,) [s, strictly increasing]: positions q
    (N, n), velocities qd (N, n) or None (see the module docstring)."""
    t = np.asarray(times, dtype=float)
    qd = np.gradient(q, t, axis=0) if qd is None else np.asarray(qd, dtype=float)
    if window <= 0.0:
        return qd, np.gradient(qd, t, axis=0)
    low = np.maximum(t - 0.5 * window, t[0])
    high = np.minimum(t + 0.5 * window, t[-1])
    qdd = np.empty_like(qd)
    for j in range(qd.shape[1]):
        qdd[:, j] = (np.interp(high, t, qd[:, j]) - np.interp(low, t, qd[:, j])) / (high - low)
    return qd, qdd
