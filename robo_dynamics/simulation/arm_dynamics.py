"""The arm as an ODE: q̈ = a(q, q̇, τ) = M⁻¹ (τ − b(q, q̇) − τ_f(q̇)), τ_f the package's
joint friction law (algorithms/friction.py) with the coefficients of the URDF's <dynamics>.
"""

import numpy as np

from ..algorithms.friction import SMOOTHING_VELOCITY, friction_derivative, friction_torque


class ArmDynamics:
    """Forward dynamics of a solver's model plus joint friction, and its Jacobians.

    solver: a DynamicsSolver (any backend). damping D (n,) [N·m·s/rad], coulomb F_c (n,)
    [N·m]; default none. smoothing_velocity v_s [rad/s].
    """

    def __init__(self, solver, damping=None, coulomb=None, smoothing_velocity=SMOOTHING_VELOCITY):
        n = solver.model.dof
        self.solver = solver
        self.damping = np.zeros(n) if damping is None else np.asarray(damping, dtype=float)
        self.coulomb = np.zeros(n) if coulomb is None else np.asarray(coulomb, dtype=float)
        self.smoothing_velocity = smoothing_velocity

    def friction(self, v):
        """τ_f (n,) [N·m] at joint velocities v (n,)."""
        return friction_torque(v, self.damping, self.coulomb, self.smoothing_velocity)

    def acceleration(self, q, v, tau):
        """q̈ (n,) for the applied joint torques tau (n,)."""
        return self.solver.forward_dynamics(q, v, tau - self.friction(v))

    def jacobians(self, q, v, tau):
        """(∂q̈/∂q, ∂q̈/∂q̇), each (n, n), analytical, friction included."""
        da_dq, da_dv, da_dtau = self.solver.forward_dynamics_derivatives(
            q, v, tau - self.friction(v))
        dfriction_dv = friction_derivative(v, self.damping, self.coulomb,
                                           self.smoothing_velocity)
        return da_dq, da_dv - da_dtau * dfriction_dv
