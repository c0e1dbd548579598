"""A closed linkage behind the solver interface (base.py), in its motors' coordinates: what
the controller core takes for a serial arm's solver, so that every mode it has drives the
motors of a linkage (its model: closed_chain/motor_model.py). The quantities are
MotorSpace's (closed_chain/motor_space.py).

The momentum observer's terms (p̂ = M̂θ̇, Ĉᵀθ̇) come in closed form from one pass over the
tree (MotorSpace.momentum_terms). The matrix Ĉ itself has none here (it needs the time
derivative of the constraint Jacobian): it comes from Christoffel symbols of M̂ by central
differences, Ĉ_ij = Σ_k ½ (∂M̂_ij/∂θ_k + ∂M̂_ik/∂θ_j − ∂M̂_jk/∂θ_i) θ̇_k (Spong, Hutchinson
and Vidyasagar, Robot Modeling and Control, §6.3: the reduced system is a Lagrangian system
in θ with inertia M̂(θ)).
"""

import numpy as np

from ..algorithms.jacobian import LOCAL, LOCAL_WORLD_ALIGNED
from ..closed_chain.motor_model import motor_model
from ..closed_chain.motor_space import MotorSpace
from ..errors import ArgumentError
from .base import DynamicsSolver

DIFFERENCE = 1e-5     # rad or m: the central differences' step (the loops close to 1e-12)


class ClosedChainSolver(DynamicsSolver):
    """The DynamicsSolver of a fully actuated ClosedChain's motors, tool at `tip_link`.
    States are motor positions θ, rates θ̇ and accelerations θ̈ in actuated_joints order;
    the loops are closed for each (MotorSpace). For one thread at a time."""

    name = "closed_chain"

    def __init__(self, chain, tip_link, model=None):
        self.motors = MotorSpace(chain)
        super().__init__(model if model is not None else motor_model(chain, tip_link))
        self.chain, self.tip_link = chain, tip_link

    @classmethod
    def of(cls, model):
        """A solver of a MotorModel's mechanism (its own closed-pose state)."""
        return cls(model.mechanism, model.tip_link, model)

    def _rnea(self, q, qd, qdd, f_tip):
        tau = self.motors.torques(q, qd, qdd)
        if f_tip is not None:         # a wrench the tool exerts [force; torque], base axes
            tau = tau + self._jacobian(q, LOCAL_WORLD_ALIGNED).T @ f_tip
        return tau

    def closure_wrenches(self, q, qd, qdd, f_tip=None, frame=LOCAL_WORLD_ALIGNED):
        """closures.ClosureWrench of each loop closure (base axes) during the motors' motion
        (q, q̇, q̈) [rad, rad/s, rad/s²], the tool exerting f_tip (6,) [force; torque] (in
        the tool's axes for frame LOCAL) as in inverse_dynamics."""
        wrench = None
        if f_tip is not None:
            wrench = np.asarray(f_tip, dtype=float)
            if frame == LOCAL:
                R = self._tip_pose(q)[0]
                wrench = np.concatenate((R @ wrench[:3], R @ wrench[3:]))
        lam = self.motors.inverse_dynamics(q, qd, qdd, wrench, self.tip_link)[1]
        return self.motors.closure_wrenches(q, lam)

    def _gravity(self, q):
        return self.motors.gravity(q)

    def _bias(self, q, qd):
        return self.motors.bias(q, qd)

    def _mass_matrix(self, q):
        return self.motors.mass_matrix(q)

    def _forward_dynamics(self, q, qd, tau):
        return self.motors.forward_dynamics(q, qd, tau)

    def _mass_matrix_derivatives(self, q):
        """∂M̂/∂θ_k (k, k, k) by central differences; closed at q again after."""
        h, k = DIFFERENCE, self.model.dof
        dM = np.empty((k, k, k))
        for i, e in enumerate(np.eye(k)):
            dM[i] = (self.motors.mass_matrix(q + h * e)
                     - self.motors.mass_matrix(q - h * e)) / (2.0 * h)
        self.motors.closed(q)
        return dM

    def _coriolis_matrix(self, q, qd):
        dM = self._mass_matrix_derivatives(q)               # dM[k] = ∂M̂/∂θ_k
        dM_dt = np.tensordot(qd, dM, axes=1)                  # Σ_k ∂M̂/∂θ_k θ̇_k
        # Σ_k ½ (∂_j M̂_ik − ∂_i M̂_jk) θ̇_k as the matrix [i, j]
        skew = 0.5 * (np.einsum("jik,k->ij", dM, qd) - np.einsum("ijk,k->ij", dM, qd))
        return 0.5 * dM_dt + skew

    def _momentum_terms(self, q, qd):
        return self.motors.momentum_terms(q, qd)

    def _jacobian(self, q, frame):
        """(6, k) of the tool frame's origin [linear; angular], base axes (LOCAL: the tool's)."""
        J = self.motors.jacobian(q, self.tip_link)
        if frame == LOCAL:
            R = self._tip_pose(q)[0]
            J = np.vstack((R.T @ J[:3], R.T @ J[3:]))
        return J

    def _point_jacobian(self, q, link, point):
        """A point of any link of the mechanism: its position and J B, the loops closed."""
        q_tree, B = self.motors.closed(q)
        _, p, J = self.chain.compiled.frame(link, point)(q_tree)
        return p, J[:3] @ B

    def _point_jacobian_batch(self, q, link, point):
        points = [self._point_jacobian(x, link, point) for x in q]
        return np.array([p for p, _ in points]), np.array([J for _, J in points])

    def _jacobian_dot_qd(self, q, qd, frame):
        """J̇ θ̇ [linear; angular]: the tool origin's acceleration at θ̈ = 0, base axes."""
        q_tree, qd_tree, _, c = self.motors.state(q, qd)
        compiled = self.chain.compiled
        J = compiled.frame(self.tip_link)(q_tree)[2]
        acceleration = compiled.frame_bias(self.tip_link)(q_tree, qd_tree) + J @ c    # q̈ = c
        if frame == LOCAL:
            R = self._tip_pose(q)[0]
            acceleration = np.concatenate((R.T @ acceleration[:3], R.T @ acceleration[3:]))
        return acceleration

    def _tip_pose(self, q):
        """(R (3, 3), p (3,)): the tool frame in the base frame."""
        R, p, _ = self.chain.compiled.frame(self.tip_link)(self.motors.pose(q))
        return R, p

    def _rnea_batch(self, q, qd, qdd):
        return np.array([self._rnea(*state, None) for state in zip(q, qd, qdd)])

    def _gravity_batch(self, q):
        return np.array([self._gravity(state) for state in q])

    def _regressor_batch(self, q, qd, qdd):
        raise ArgumentError("identification of a closed mechanism's inertias is not "
                            "available: its regressor is not written yet")

    def _rnea_derivatives(self, q, qd, qdd):
        raise ArgumentError("the derivatives of a closed mechanism's inverse dynamics are "
                            "not available")
