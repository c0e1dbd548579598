"""The in-house backend: the algorithms of robo_dynamics.algorithms, compiled for the arm."""

import functools

import numpy as np

from ..algorithms import jacobian, regressor, rnea, small_linalg
from ..algorithms.compiled import (crba_codegen, derivatives_codegen, jacobian_codegen,
                                   momentum_codegen, rnea_codegen)
from ..algorithms.jacobian import LOCAL, LOCAL_WORLD_ALIGNED
from ..spatial.rotations import cross
from .base import DynamicsSolver


class RneaSolver(DynamicsSolver):
    """Recursive Newton–Euler, CRBA and friends in plain Python and NumPy (backend "rnea").

    Inverse dynamics, gravity, bias, the mass matrix, the tip Jacobian and J̇ q̇ and the
    derivatives of inverse dynamics, the Coriolis matrix and the momentum terms M q̇, Cᵀ q̇
    use the algorithms compiled for
    this arm (the `*_codegen` modules of robo_dynamics.algorithms, each built on first use;
    batches run the same code on arrays). A tip wrench and the Jacobian in other frames for
    a batch use the vectorised algorithms.
    """

    name = "rnea"

    def __init__(self, model):
        super().__init__(model)
        # rotor armature (model.armature): τ gains armature·q̈, M(q) diag(armature); None
        # when there is none, so that the code generated for the links runs alone
        self._armature = np.array(model.armature) if np.any(model.armature) else None

    # the code generated for this arm, built on first use
    @functools.cached_property
    def _rnea_code(self):
        return rnea_codegen.compile_rnea(self.model)

    @functools.cached_property
    def _gravity_code(self):
        return rnea_codegen.compile_rnea(self.model, gravity_only=True)

    @functools.cached_property
    def _mass_matrix_code(self):
        return crba_codegen.compile_mass_matrix(self.model)

    @functools.cached_property
    def _jacobian_code(self):
        return jacobian_codegen.compile_jacobian(self.model)

    @functools.cached_property
    def _kinematics_code(self):
        return jacobian_codegen.compile_kinematics(self.model)

    @functools.cached_property
    def _jacobian_dot_qd_code(self):
        return jacobian_codegen.compile_jacobian_dot_qd(self.model)

    @functools.cached_property
    def _coriolis_code(self):
        return derivatives_codegen.compile_coriolis_matrix(self.model)

    @functools.cached_property
    def _momentum_code(self):
        return momentum_codegen.compile_momentum_terms(self.model)

    @functools.cached_property
    def _derivatives_code(self):
        return derivatives_codegen.compile_rnea_derivatives(self.model)

    @functools.cached_property
    def _rnea_batch_code(self):
        return rnea_codegen.compile_rnea_batch(self.model)

    @functools.cached_property
    def _gravity_batch_code(self):
        return rnea_codegen.compile_rnea_batch(self.model, gravity_only=True)

    @functools.cached_property
    def _mass_matrix_batch_code(self):
        return crba_codegen.compile_mass_matrix_batch(self.model)

    @functools.cached_property
    def _jacobian_batch_code(self):
        return jacobian_codegen.compile_jacobian_batch(self.model)

    @functools.cached_property
    def _derivatives_batch_code(self):
        return derivatives_codegen.compile_rnea_derivatives_batch(self.model)

    # -- one state ---------------------------------------------------------------------------
    def _compiled_rnea(self, q, qd, qdd):
        tau = np.array(self._rnea_code(q.tolist(), qd.tolist(), qdd.tolist()))
        return tau if self._armature is None else tau + self._armature * qdd

    def _rnea(self, q, qd, qdd, f_tip):
        if f_tip is None:
            return self._compiled_rnea(q, qd, qdd)
        tau = rnea.rnea(self.model, q, qd, qdd, f_tip=f_tip)
        return tau if self._armature is None else tau + self._armature * qdd

    def _gravity(self, q):
        return np.array(self._gravity_code(q.tolist()))

    def _bias(self, q, qd):
        return self._compiled_rnea(q, qd, np.zeros_like(q))

    def _mass_matrix(self, q):
        n = len(q)
        M = np.array(self._mass_matrix_code(q.tolist())).reshape(n, n)
        if self._armature is not None:
            M[np.diag_indices(n)] += self._armature
        return M

    def _mass_matrix_inverse(self, q):
        return small_linalg.inv(self._mass_matrix(q))

    def _coriolis_matrix(self, q, qd):
        n = len(q)
        return np.array(self._coriolis_code(q.tolist(), qd.tolist())).reshape(n, n)

    def _momentum_terms(self, q, qd):
        values = np.array(self._momentum_code(q.tolist(), qd.tolist()))
        n = len(q)
        p = values[:n] if self._armature is None else values[:n] + self._armature * qd
        return p, values[n:]

    def _forward_dynamics(self, q, qd, tau):
        return np.linalg.solve(self._mass_matrix(q), tau - self._bias(q, qd))

    def _rnea_derivatives(self, q, qd, qdd):
        n = len(q)
        values = np.array(self._derivatives_code(q.tolist(), qd.tolist(), qdd.tolist()))
        return (values[:n * n].reshape(n, n), values[n * n:].reshape(n, n),
                self._mass_matrix(q))

    def _jacobian(self, q, frame):
        n = len(q)
        if frame == LOCAL_WORLD_ALIGNED:
            return np.array(self._jacobian_code(q.tolist())).reshape(6, n)
        values = np.array(self._kinematics_code(q.tolist()))
        J = values[:6 * n].reshape(6, n)
        tip_R, tip_p = values[6 * n:6 * n + 9].reshape(3, 3), values[6 * n + 9:]
        if frame == LOCAL:
            return np.vstack((tip_R.T @ J[:3], tip_R.T @ J[3:]))
        # world: the velocity of the body point at the base origin, v_O = v_tip − ω × p_tip
        return np.vstack((J[:3] - cross(J[3:].T, tip_p).T, J[3:]))

    def _jacobian_dot_qd(self, q, qd, frame):
        acceleration = np.array(self._jacobian_dot_qd_code(q.tolist(), qd.tolist()))
        if frame == LOCAL:
            tip_R, _ = self._tip_pose(q)
            return np.concatenate((tip_R.T @ acceleration[:3], tip_R.T @ acceleration[3:]))
        return acceleration

    def _tip_pose(self, q):
        n = len(q)
        values = np.array(self._kinematics_code(q.tolist()))
        return values[6 * n:6 * n + 9].reshape(3, 3), values[6 * n + 9:]

    # -- arrays of states --------------------------------------------------------------------
    def _rnea_batch(self, q, qd, qdd):
        tau = self._rnea_batch_code(q, qd, qdd)
        return tau if self._armature is None else tau + self._armature * qdd

    def _gravity_batch(self, q):
        return self._gravity_batch_code(q)

    def _regressor_batch(self, q, qd, qdd):
        return regressor.regressor_batch(self.model, q, qd, qdd)

    def _mass_matrix_batch(self, q):
        n = q.shape[1]
        M = self._mass_matrix_batch_code(q).reshape(len(q), n, n)
        if self._armature is not None:
            M[:, np.arange(n), np.arange(n)] += self._armature
        return M

    def _jacobian_batch(self, q, frame):
        if frame != LOCAL_WORLD_ALIGNED:
            return jacobian.jacobian_batch(self.model, q, frame)
        return self._jacobian_batch_code(q).reshape(len(q), 6, q.shape[1])

    def _rnea_derivatives_batch(self, q, qd, qdd):
        count, n = q.shape
        values = self._derivatives_batch_code(q, qd, qdd)
        return (values[:, :n * n].reshape(count, n, n), values[:, n * n:].reshape(count, n, n))
