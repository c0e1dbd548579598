"""Computed-torque control (Lynch & Park, Modern Robotics §11.4.1; not among the reference texts):

    τ = M(q) (q̈_d + K_p e + K_d ė) + C(q, q̇) q̇ + g(q),   e = q_d − q,  ė = q̇_d − q̇

evaluated with one inverse-dynamics call at the commanded acceleration.
"""


def computed_torque(solver, q, qd, q_des, qd_des, qdd_des, Kp, Kd):
    """τ (n,) for the state (q, q̇) tracking (q_d, q̇_d, q̈_d); Kp, Kd (n,) diagonal gains
    [1/s², 1/s]. All in model joint order, SI units."""
    a = qdd_des + Kp * (q_des - q) + Kd * (qd_des - qd)
    return solver.inverse_dynamics(q, qd, a)
