"""Joint friction: viscous plus Coulomb, τ_f = B q̇ + F_c sgn(q̇) (Craig, Introduction to
Robotics, §6.11, non-rigid body effects), with sgn smoothed as tanh(q̇ / v_s) so a joint at
rest gets no chattering command. The one friction law of the package: the controller
compensates it, the simulator applies it."""

import numpy as np

SMOOTHING_VELOCITY = 0.01
"""v_s [rad/s or m/s]: below it the Coulomb term fades linearly to zero."""


def friction_torque(qd, viscous, coulomb, smoothing_velocity=SMOOTHING_VELOCITY):
    """Friction torque τ_f (n,) [N·m or N] for joint velocities qd (n,) [rad/s or m/s].

    viscous: B (n,) [N·m·s/rad]; coulomb: F_c (n,) [N·m]; smoothing_velocity v_s [rad/s].
    """
    return viscous * qd + coulomb * np.tanh(qd / smoothing_velocity)


def friction_derivative(qd, viscous, coulomb, smoothing_velocity=SMOOTHING_VELOCITY):
    """∂τ_f/∂q̇ (n,), the diagonal of the friction law's Jacobian: B + F_c sech²(q̇/v_s)/v_s."""
    sech2 = 1.0 - np.tanh(qd / smoothing_velocity) ** 2
    return viscous + coulomb * sech2 / smoothing_velocity
