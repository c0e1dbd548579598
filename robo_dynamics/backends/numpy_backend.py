"""The in-house backend: the NumPy algorithms of robo_dynamics.algorithms."""

import functools

from ..algorithms import (coriolis, crba, derivatives, forward_dynamics, jacobian, kinematics,
                          rnea, rnea_codegen)
import numpy as np

from .base import DynamicsSolver


class NumpySolver(DynamicsSolver):
    """Recursive Newton–Euler, CRBA and friends in plain NumPy (backend "rnea").

    Inverse dynamics, gravity and bias, single and batched, use the recursion compiled for
    this arm (algorithms/rnea_codegen.py, built on first use; batches run it on arrays);
    everything else, and a tip wrench, uses the vectorised algorithms.
    """

    name = "rnea"

    # the recursion generated for this arm, built on first use (scalar, and on arrays)
    @functools.cached_property
    def _rnea_code(self):
        return rnea_codegen.compile_rnea(self.model)

    @functools.cached_property
    def _gravity_code(self):
        return rnea_codegen.compile_rnea(self.model, gravity_only=True)

    @functools.cached_property
    def _rnea_batch_code(self):
        return rnea_codegen.compile_rnea_batch(self.model)

    @functools.cached_property
    def _gravity_batch_code(self):
        return rnea_codegen.compile_rnea_batch(self.model, gravity_only=True)

    def _compiled_rnea(self, q, qd, qdd):
        return np.array(self._rnea_code(q.tolist(), qd.tolist(), qdd.tolist()))

    def _rnea(self, q, qd, qdd, f_tip):
        if f_tip is None:
            return self._compiled_rnea(q, qd, qdd)
        return rnea.rnea(self.model, q, qd, qdd, f_tip=f_tip)

    def _gravity(self, q):
        return np.array(self._gravity_code(q.tolist(), None, None))

    def _bias(self, q, qd):
        return self._compiled_rnea(q, qd, np.zeros_like(q))

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
        return self._rnea_batch_code(q, qd, qdd)

    def _gravity_batch(self, q):
        return self._gravity_batch_code(q, None, None)
