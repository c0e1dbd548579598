"""The arm as an ODE: q̈ = a(q, q̇, τ) = M⁻¹ (τ − b(q, q̇) − τ_f(q̇)), with joint friction
τ_f = D q̇ + F_c tanh(q̇ / v_s) (viscous + smoothed Coulomb, from the URDF's <dynamics>).
"""

import numpy as np


class ArmDynamics:
    """Forward dynamics of a solver's model plus joint friction, and its Jacobians.

    solver: a DynamicsSolver (any backend). damping D (n,) [N·m·s/rad], coulomb F_c (n,)
    [N·m]; default none. smoothing_velocity v_s [rad/s].
    """

    def __init__(self, solver, damping=None, coulomb=None, smoothing_velocity=0.01):
        n = solver.model.dof
        self.solver = solver
        self.damping = np.zeros(n) if damping is None else np.asarray(damping, dtype=float)
        self.coulomb = np.zeros(n) if coulomb is None else np.asarray(coulomb, dtype=float)
        self.smoothing_velocity = smoothing_velocity

    def friction(self, v):
        return self.damping * v + self.coulomb * np.tanh(v / self.smoothing_velocity)

    def acceleration(self, q, v, tau):
        """q̈ (n,) for the applied joint torques tau (n,)."""
        return self.solver.forward_dynamics(q, v, tau - self.friction(v))

    def jacobians(self, q, v, tau):
        """(∂q̈/∂q, ∂q̈/∂q̇), each (n, n), analytical, friction included."""
        da_dq, da_dv, da_dtau = self.solver.forward_dynamics_derivatives(
            q, v, tau - self.friction(v))
        sech2 = 1.0 - np.tanh(v / self.smoothing_velocity) ** 2     # d tanh(x)/dx
        dfriction_dv = self.damping + self.coulomb * sech2 / self.smoothing_velocity
        return da_dq, da_dv - da_dtau * dfriction_dv
