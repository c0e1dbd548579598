"""Computed-torque control (Lynch & Park, Modern Robotics §11.4.1; not among the reference
texts):

    τ = M(q) (q̈_d + K_p e + K_d ė) + C(q, q̇) q̇ + g(q),   e = q_d − q,  ė = q̇_d − q̇
"""


def computed_torque(M, b, q, qd, q_des, qd_des, qdd_des, Kp, Kd):
    """τ (n,) from M (n, n) and b = C q̇ + g (n,) at the state (q, q̇), tracking (q_d, q̇_d,
    q̈_d); Kp, Kd (n,) diagonal gains [1/s², 1/s]. Model joint order, SI units."""
    return M @ (qdd_des + Kp * (q_des - q) + Kd * (qd_des - qd)) + b
