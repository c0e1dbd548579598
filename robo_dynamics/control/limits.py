"""Bounds from the URDF limits: nothing leaves the node that is not finite and within the
effort limits, and a joint faster than its velocity bound is a fault (watchdog.py)."""

import numpy as np

SCALE_RANGE = (1e-3, 1.0)
"""The fractions of the URDF limits a user may ask for (torque_limit_scale,
velocity_limit_scale): at most the limits themselves, at least a thousandth of them."""


def check_scale(scale, name):
    """scale as a float, or ValueError naming `name` unless it lies in SCALE_RANGE."""
    low, high = SCALE_RANGE
    if not low <= scale <= high:
        raise ValueError(f"{name} must be in [{low:g}, {high:g}], got {scale}")
    return float(scale)


def effort_bounds(effort_limit, scale=1.0):
    """Per-joint bound |τ_i| ≤ scale · effort_limit_i (N·m or N); inf where the URDF has none."""
    return check_scale(scale, "torque_limit_scale") * np.asarray(effort_limit, dtype=float)


def velocity_bounds(velocity_limit, scale=1.0):
    """Per-joint bound |q̇_i| ≤ scale · velocity_limit_i (rad/s or m/s); a joint without a
    positive URDF limit is unbounded (inf)."""
    scale = check_scale(scale, "velocity_limit_scale")
    limit = np.asarray(velocity_limit, dtype=float)
    return np.where(limit > 0.0, scale * limit, np.inf)


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
