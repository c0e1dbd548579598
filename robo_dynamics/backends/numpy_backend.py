"""The in-house backend: the NumPy algorithms of robo_dynamics.algorithms."""

from ..algorithms import (coriolis, crba, derivatives, forward_dynamics, jacobian, kinematics,
                          rnea)
import numpy as np

from .base import DynamicsSolver, DynamicsTerms


class NumpySolver(DynamicsSolver):
    """Recursive Newton–Euler, CRBA and friends in plain NumPy (backend "rnea")."""

    name = "rnea"

    def _rnea(self, q, qd, qdd, f_tip):
        return rnea.rnea(self.model, q, qd, qdd, f_tip=f_tip)

    def _gravity(self, q):
        return rnea.gravity(self.model, q)

    def _bias(self, q, qd):
        return rnea.bias(self.model, q, qd)

    def _dynamics_terms(self, q, qd):
        model, q1, zero = self.model, q[None], np.zeros((1, len(q)))
        kin = kinematics.forward_kinematics(model, q1)          # one kinematics pass
        return DynamicsTerms(crba.mass_matrix_batch(model, q1, kin=kin)[0],
                             rnea.rnea_batch(model, q1, qd[None], zero, kin=kin)[0],
                             rnea.rnea_batch(model, q1, zero, zero, kin=kin)[0],
                             jacobian.jacobian_batch(model, q1, kin=kin)[0])

    def _mass_matrix(self, q):
        return crba.mass_matrix(self.model, q)

    def _coriolis_matrix(self, q, qd):
        return coriolis.coriolis_matrix(self.model, q, qd)

    def _forward_dynamics(self, q, qd, tau):
        return forward_dynamics.forward_dynamics(self.model, q, qd, tau)

    def _rnea_derivatives(self, q, qd, qdd):
        return derivatives.rnea_derivatives(self.model, q, qd, qdd)

    def _forward_dynamics_derivatives(self, q, qd, tau):
        return derivatives.forward_dynamics_derivatives(self.model, q, qd, tau)

    def _jacobian(self, q, frame):
        return jacobian.jacobian(self.model, q, frame)

    def _jacobian_dot_qd(self, q, qd, frame):
        return jacobian.jacobian_dot_qd(self.model, q, qd, frame)

    def _tip_pose(self, q):
        kin = kinematics.forward_kinematics(self.model, q[None])
        return kin.tip_R[0], kin.tip_p[0]

    def _rnea_batch(self, q, qd, qdd):
        return rnea.rnea_batch(self.model, q, qd, qdd)

    def _gravity_batch(self, q):
        return rnea.gravity_batch(self.model, q)
