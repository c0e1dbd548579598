"""Effort limits: nothing leaves the node that is not finite and within the URDF limits."""

import numpy as np


def effort_bounds(effort_limit, scale=1.0):
    """Per-joint bound |τ_i| ≤ scale · effort_limit_i (N·m or N); inf where the URDF has none."""
    if not 0.0 < scale <= 1.0:
        raise ValueError(f"torque limit scale must be in (0, 1], got {scale}")
    return scale * np.asarray(effort_limit, dtype=float)


def clamp_effort(tau, bound):
    """(τ clamped to ±bound, whether anything was clamped). Raises if τ is not finite."""
    # the usual case, in plain Python (cheaper than three NumPy calls for a handful of
    # joints); false for NaN and ±inf as well
    if all(-b < t < b for t, b in zip(tau.tolist(), bound.tolist())):
        return tau, False
    if not np.isfinite(tau).all():
        raise FloatingPointError("effort has non-finite values")
    clamped = np.minimum(np.maximum(tau, -bound), bound)
    return clamped, bool((clamped != tau).any())
