"""Chains with mimic joints: every quantity of the coupled system from a solver of its bodies.

The bodies move with q_b = G q + o (G = model.coupling, o = model.coupling_offset, both
constant), so q̇_b = G q̇ and q̈_b = G q̈. By the principle of virtual work the generalised
forces of the coordinates are τ = Gᵀ τ_b, and the Lagrangian of the coupled system gives

    M = Gᵀ M_b G,   C = Gᵀ C_b G,   g = Gᵀ g_b,   J = J_b G,   J̇ q̇ = J̇_b q̇_b,

(Lynch & Park, Modern Robotics, §8.1: the dynamics under the change of coordinates
q_b(q); Ġ = 0 here). M⁻¹ and forward dynamics come from the coupled M, never from M_b⁻¹.
Ṁ − 2C = Gᵀ (Ṁ_b − 2C_b) G stays skew-symmetric.
"""

import numpy as np

from .base import DynamicsSolver


class CoupledSolver(DynamicsSolver):
    """The coupled dynamics of `model` (which has mimic joints), from `bodies_solver`, a
    solver of model.bodies() of either backend, called through its public API."""

    def __init__(self, model, bodies_solver):
        super().__init__(model)
        self.bodies_solver = bodies_solver
        self.name = bodies_solver.name
        self.G = np.array(model.coupling)
        self.offset = np.array(model.coupling_offset)

    def _position(self, q):
        return self.G @ q + self.offset

    def _project(self, matrix):
        return self.G.T @ matrix @ self.G

    def _rnea(self, q, qd, qdd, f_tip):
        G = self.G
        return G.T @ self.bodies_solver.inverse_dynamics(self._position(q), G @ qd, G @ qdd,
                                                        f_tip=f_tip)

    def _gravity(self, q):
        return self.G.T @ self.bodies_solver.gravity(self._position(q))

    def _bias(self, q, qd):
        return self.G.T @ self.bodies_solver.bias(self._position(q), self.G @ qd)

    def _mass_matrix(self, q):
        return self._project(self.bodies_solver.mass_matrix(self._position(q)))

    def _coriolis_matrix(self, q, qd):
        return self._project(self.bodies_solver.coriolis_matrix(self._position(q), self.G @ qd))

    def _forward_dynamics(self, q, qd, tau):
        return np.linalg.solve(self._mass_matrix(q), tau - self._bias(q, qd))

    def _rnea_derivatives(self, q, qd, qdd):
        G = self.G
        dq, dv, M = self.bodies_solver.inverse_dynamics_derivatives(self._position(q), G @ qd, G @ qdd)
        return self._project(dq), self._project(dv), self._project(M)

    def _jacobian(self, q, frame):
        return self.bodies_solver.jacobian(self._position(q), frame) @ self.G

    def _jacobian_dot_qd(self, q, qd, frame):
        return self.bodies_solver.jacobian_dot_qd(self._position(q), self.G @ qd, frame)

    def _tip_pose(self, q):
        return self.bodies_solver.tip_pose(self._position(q))

    def _rnea_batch(self, q, qd, qdd):
        G = self.G
        tau = self.bodies_solver.inverse_dynamics_batch(q @ G.T + self.offset, qd @ G.T,
                                                        qdd @ G.T)
        return tau @ G

    def _gravity_batch(self, q):
        return self.bodies_solver.gravity_batch(q @ self.G.T + self.offset) @ self.G

    def _regressor_batch(self, q, qd, qdd):
        """τ = Gᵀ Y_b π: the bodies' regressor seen by the coordinates."""
        G = self.G
        Y_b = self.bodies_solver.joint_torque_regressor_batch(q @ G.T + self.offset, qd @ G.T,
                                                              qdd @ G.T)
        return np.einsum("bj,Nbk->Njk", G, Y_b)
