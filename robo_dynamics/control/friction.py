"""Joint friction: viscous plus Coulomb, τ_f = B q̇ + F_c sgn(q̇) (Craig, Introduction to
Robotics, §6.11, non-rigid body effects), with sgn smoothed as tanh(q̇ / v_s) so a joint at
rest gets no chattering command."""

import numpy as np


def friction_torque(qd, viscous, coulomb, smoothing_velocity=0.01):
    """Friction torque (n,) [N·m or N] for joint velocities qd (n,) [rad/s or m/s].

    viscous: B (n,) [N·m·s/rad]; coulomb: F_c (n,) [N·m]; smoothing_velocity v_s [rad/s].
    """
    return viscous * qd + coulomb * np.tanh(qd / smoothing_velocity)
