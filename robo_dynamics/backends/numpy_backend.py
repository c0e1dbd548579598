"""The in-house backend: the NumPy algorithms of robo_dynamics.algorithms."""

from ..algorithms import (coriolis, crba, derivatives, forward_dynamics, jacobian, kinematics,
                          rnea, rnea_codegen)
import numpy as np

from .base import DynamicsSolver, DynamicsTerms


class NumpySolver(DynamicsSolver):
    """Recursive Newton–Euler, CRBA and friends in plain NumPy (backend "rnea").

    Inverse dynamics, gravity and bias, single and batched, use the recursion compiled for
    this arm (algorithms/rnea_codegen.py, built on first use; batches run it on arrays);
    everything else, and a tip wrench, uses the vectorised algorithms.
    """

    name = "rnea"
    _compiled = _compiled_gravity = _compiled_batch = _compiled_gravity_batch = None

    def _compiled_rnea(self, q, qd, qdd):
        if self._compiled is None:
            self._compiled = rnea_codegen.compile_rnea(self.model)
        return np.array(self._compiled(q.tolist(), qd.tolist(), qdd.tolist()))

    def _rnea(self, q, qd, qdd, f_tip):
        if f_tip is None:
            return self._compiled_rnea(q, qd, qdd)
        return rnea.rnea(self.model, q, qd, qdd, f_tip=f_tip)

    def _gravity(self, q):
        if self._compiled_gravity is None:
            self._compiled_gravity = rnea_codegen.compile_rnea(self.model, gravity_only=True)
        return np.array(self._compiled_gravity(q.tolist(), None, None))

    def _bias(self, q, qd):
        return self._compiled_rnea(q, qd, np.zeros_like(q))

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
        if self._compiled_batch is None:
            self._compiled_batch = rnea_codegen.compile_rnea_batch(self.model)
        return self._compiled_batch(q, qd, qdd)

    def _gravity_batch(self, q):
        if self._compiled_gravity_batch is None:
            self._compiled_gravity_batch = rnea_codegen.compile_rnea_batch(
                self.model, gravity_only=True)
        return self._compiled_gravity_batch(q, None, None)
