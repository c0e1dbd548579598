"""Computed-torque control (Lynch & Park, Modern Robotics, §11.4.1):

    τ = M(q) a + C(q, q̇) q̇ + g(q),   a = q̈_d + K_p e + K_d ė,   e = q_d − q,  ė = q̇_d − q̇

τ is the inverse dynamics at the commanded acceleration a, so the controller needs neither
M nor b: τ = RNEA(q, q̇, a) (Craig, Introduction to Robotics, §6.5, the iterative
Newton–Euler formulation). This module gives a; controller.py takes its inverse dynamics.
"""


def commanded_acceleration(q, qd, q_des, qd_des, qdd_des, Kp, Kd):
    """a = q̈_d + K_p (q_d − q) + K_d (q̇_d − q̇) (n,) [rad/s² or m/s²]; Kp, Kd (n,) diagonal
    gains [1/s², 1/s]. Model joint order."""
    return qdd_des + Kp * (q_des - q) + Kd * (qd_des - qd)
