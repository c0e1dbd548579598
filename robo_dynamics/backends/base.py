"""The solver interface: argument checks once at the entry point, then the backend.

Arguments are NumPy arrays in `model.joint_names` order, SI units (rad, m, rad/s, m/s,
N·m, N). Batched methods take states stacked on a leading axis, shape (N, n).
"""

import abc
import collections
import math
import warnings

import numpy as np

from ..algorithms.jacobian import LOCAL, LOCAL_WORLD_ALIGNED, check_frame, point_jacobian_batch
from ..algorithms.operational_space import (KAPPA_MAX, operational_space,
                                             operational_space_inertia_batch)
from ..errors import ArgumentError

_FLOAT = np.dtype(float)   # the dtype of every array the backends compute with

Unchecked = collections.namedtuple("Unchecked", [
    "inverse_dynamics", "gravity", "bias", "mass_matrix", "mass_matrix_inverse",
    "coriolis_matrix", "momentum_terms", "forward_dynamics", "inverse_dynamics_derivatives",
    "jacobian", "jacobian_dot_qd", "operational_space_inertia", "tip_pose",
    "point_jacobian"])
Unchecked.__doc__ = """A solver's computations without argument checks (`solver.unchecked`): the
fast path for callers that have validated the state themselves (float64 NumPy arrays of
shape (n,), finite, in model joint order, e.g. the joint-state merger's arrays, or
check_state's). Nothing is checked: a wrong argument gives a wrong answer or an exception
from deep inside the backend. Each is called as the checked method of the same name (no tip
wrench; `jacobian`, `jacobian_dot_qd` take a frame constant of algorithms.jacobian) and
returns the same; operational_space_inertia(q) with the default κ_max."""
_ARRAY = np.ndarray
_isfinite = math.isfinite


class DynamicsSolver(abc.ABC):
    """Rigid-body dynamics of one RobotModel's chain."""

    name = "abstract"

    def __init__(self, model):
        self.model = model
        self._shape = (model.dof,)   # of every state argument
        self.unchecked = Unchecked(
            inverse_dynamics=lambda q, qd, qdd: self._rnea(q, qd, qdd, None),
            gravity=self._gravity, bias=self._bias, mass_matrix=self._mass_matrix,
            mass_matrix_inverse=self._mass_matrix_inverse,
            coriolis_matrix=self._coriolis_matrix, momentum_terms=self._momentum_terms,
            forward_dynamics=self._forward_dynamics,
            inverse_dynamics_derivatives=self._rnea_derivatives,
            jacobian=lambda q, frame=LOCAL_WORLD_ALIGNED: self._jacobian(q, frame),
            jacobian_dot_qd=lambda q, qd, frame=LOCAL_WORLD_ALIGNED: self._jacobian_dot_qd(
                q, qd, frame),
            operational_space_inertia=lambda q: operational_space(
                self._jacobian(q, LOCAL_WORLD_ALIGNED),
                M_inv=self._mass_matrix_inverse(q)).Lambda,
            tip_pose=self._tip_pose, point_jacobian=self._point_jacobian)

    @property
    def joint_names(self):
        return self.model.joint_names

    # -- public API -----------------------------------------------------------------------
    def inverse_dynamics(self, q, qd, qdd, f_tip=None, frame=LOCAL_WORLD_ALIGNED):
        """τ = M q̈ + C q̇ + g + Jᵀ F_tip (n,) [N·m or N] (Lynch & Park, Modern Robotics,
        §8.3-8.4).

        f_tip: optional (6,) wrench [force (N); torque (N·m)] that the tip exerts on the
        environment, at the tip_link origin, axes of `frame` ("local_world_aligned": base
        axes, "local": tip_link axes).
        """
        q, qd, qdd = self._vector("q", q), self._vector("qd", qd), self._vector("qdd", qdd)
        if f_tip is not None:
            f_tip = self._wrench(f_tip, q, frame)
        return self._rnea(q, qd, qdd, f_tip)

    def gravity(self, q):
        """Generalised gravity g(q) (n,): the torques that hold the arm still."""
        q = self._vector("q", q)
        return self._gravity(q)

    def bias(self, q, qd):
        """b(q, q̇) = C(q, q̇) q̇ + g(q) (n,)."""
        q, qd = self._vector("q", q), self._vector("qd", qd)
        return self._bias(q, qd)

    def mass_matrix(self, q):
        """M(q) (n, n), symmetric positive definite."""
        q = self._vector("q", q)
        return self._mass_matrix(q)

    def mass_matrix_inverse(self, q):
        """M(q)⁻¹ (n, n), symmetric positive definite."""
        q = self._vector("q", q)
        return self._mass_matrix_inverse(q)

    def coriolis_matrix(self, q, qd):
        """C(q, q̇) (n, n) with Ṁ − 2C skew-symmetric (Christoffel form)."""
        q, qd = self._vector("q", q), self._vector("qd", qd)
        return self._coriolis_matrix(q, qd)

    def momentum_terms(self, q, qd):
        """(p, Cᵀ q̇), each (n,): the generalized momentum p = M(q) q̇ [N·m·s] and Cᵀ(q, q̇) q̇
        [N·m] (Christoffel C), what a momentum observer needs."""
        q, qd = self._vector("q", q), self._vector("qd", qd)
        return self._momentum_terms(q, qd)

    def forward_dynamics(self, q, qd, tau):
        """q̈ (n,) solving M q̈ = τ − b (no explicit inverse)."""
        q, qd, tau = self._vector("q", q), self._vector("qd", qd), self._vector("tau", tau)
        return self._forward_dynamics(q, qd, tau)

    def inverse_dynamics_derivatives(self, q, qd, qdd):
        """(∂τ/∂q, ∂τ/∂q̇, ∂τ/∂q̈ = M), each (n, n), [i, j] = ∂τ_i/∂x_j (analytical)."""
        q, qd, qdd = self._vector("q", q), self._vector("qd", qd), self._vector("qdd", qdd)
        return self._rnea_derivatives(q, qd, qdd)

    def forward_dynamics_derivatives(self, q, qd, tau):
        """(∂q̈/∂q, ∂q̈/∂q̇, ∂q̈/∂τ = M⁻¹), each (n, n) (analytical)."""
        q, qd, tau = self._vector("q", q), self._vector("qd", qd), self._vector("tau", tau)
        return self._forward_dynamics_derivatives(q, qd, tau)

    def jacobian(self, q, frame=LOCAL_WORLD_ALIGNED):
        """Tip Jacobian (6, n), rows [linear; angular], in `frame` (see algorithms.jacobian)."""
        q = self._vector("q", q)
        return self._jacobian(q, check_frame(frame))

    def jacobian_dot_qd(self, q, qd, frame=LOCAL_WORLD_ALIGNED):
        """J̇ q̇ (6,): classical tip acceleration [p̈; ω̇] at q̈ = 0 without gravity."""
        q, qd = self._vector("q", q), self._vector("qd", qd)
        return self._jacobian_dot_qd(q, qd, check_frame(frame))

    def tip_pose(self, q):
        """(R, p): rotation (3, 3) and origin (3,) [m] of tip_link in the base frame."""
        q = self._vector("q", q)
        return self._tip_pose(q)

    def point_jacobian(self, q, link, point):
        """(p (3,) [m], J_v (3, n)): the position and linear Jacobian, base axes, of a point
        fixed to `link` at `point` (3,) [m] in the link's frame (v_p = J_v q̇). Not on a
        chain with mimic coupling."""
        q = self._vector("q", q)
        return self._point_jacobian(q, link, np.asarray(point, dtype=float))

    def point_jacobian_batch(self, q, link, point):
        """point_jacobian at states q (N, n): (p (N, 3), J_v (N, 3, n))."""
        q, = self._batch(q=q)
        return self._point_jacobian_batch(q, link, np.asarray(point, dtype=float))

    def operational_space_inertia(self, q, frame=LOCAL_WORLD_ALIGNED, kappa_max=KAPPA_MAX):
        """Λ = (J M⁻¹ Jᵀ)⁻¹ (6, 6) at the tip, bounded near singularities."""
        return self.operational_space(q, frame=frame, kappa_max=kappa_max).Lambda

    def operational_space(self, q, qd=None, frame=LOCAL_WORLD_ALIGNED, kappa_max=KAPPA_MAX):
        """Cartesian dynamics at the tip: Λ, its condition number, the near-singular flag and,
        when qd is given, η and the Cartesian gravity wrench (algorithms.operational_space)."""
        check_frame(frame)
        if qd is None:
            q = self._vector("q", q)
            return operational_space(self._jacobian(q, frame), kappa_max=kappa_max,
                                     M_inv=self._mass_matrix_inverse(q))
        q, qd = self._vector("q", q), self._vector("qd", qd)
        return operational_space(
            self._jacobian(q, frame), self._mass_matrix(q), b=self._bias(q, qd),
            g=self._gravity(q), Jdot_qd=self._jacobian_dot_qd(q, qd, frame),
            kappa_max=kappa_max)

    def inverse_dynamics_batch(self, q, qd, qdd):
        """τ (N, n) for N states stacked in (N, n) arrays."""
        q, qd, qdd = self._batch(q=q, qd=qd, qdd=qdd)
        return self._rnea_batch(q, qd, qdd)

    def gravity_batch(self, q):
        """g(q) (N, n) for N configurations (N, n)."""
        (q,) = self._batch(q=q)
        return self._gravity_batch(q)

    def mass_matrix_batch(self, q):
        """M(q) (N, n, n) for N configurations (N, n)."""
        (q,) = self._batch(q=q)
        return self._mass_matrix_batch(q)

    def jacobian_batch(self, q, frame=LOCAL_WORLD_ALIGNED):
        """Tip Jacobians (N, 6, n) for N configurations (N, n), in `frame`."""
        (q,) = self._batch(q=q)
        return self._jacobian_batch(q, check_frame(frame))

    def inverse_dynamics_derivatives_batch(self, q, qd, qdd):
        """(∂τ/∂q, ∂τ/∂q̇), each (N, n, n), for N states stacked in (N, n) arrays."""
        q, qd, qdd = self._batch(q=q, qd=qd, qdd=qdd)
        return self._rnea_derivatives_batch(q, qd, qdd)

    def joint_torque_regressor(self, q, qd, qdd):
        """Y (n, 10 n_b) with τ = Y π + armature·q̈ (gravity included; the rotor armature,
        model.armature, is not a column), π the ten inertial parameters of
        every body in body_links order (algorithms/regressor.py: [m, m c, inertia about the
        body frame's origin], body axes; model_parameters(model) gives the model's own)."""
        q, qd, qdd = self._vector("q", q), self._vector("qd", qd), self._vector("qdd", qdd)
        return self._regressor_batch(q[None], qd[None], qdd[None])[0]

    def joint_torque_regressor_batch(self, q, qd, qdd):
        """Y (N, n, 10 n_b) for N states stacked in (N, n) arrays."""
        q, qd, qdd = self._batch(q=q, qd=qd, qdd=qdd)
        return self._regressor_batch(q, qd, qdd)

    def operational_space_inertia_batch(self, q, frame=LOCAL_WORLD_ALIGNED,
                                        kappa_max=KAPPA_MAX):
        """Λ (N, 6, 6) for N configurations (N, n), bounded near singularities as
        operational_space_inertia."""
        (q,) = self._batch(q=q)
        return operational_space_inertia_batch(
            self._jacobian_batch(q, check_frame(frame)), self._mass_matrix_batch(q), kappa_max)

    # -- names of earlier releases ----------------------------------------------------------
    def rnea_derivatives(self, q, qd, qdd):
        """Deprecated: inverse_dynamics_derivatives."""
        warnings.warn("rnea_derivatives is now inverse_dynamics_derivatives",
                      DeprecationWarning, stacklevel=2)
        return self.inverse_dynamics_derivatives(q, qd, qdd)

    def rnea_derivatives_batch(self, q, qd, qdd):
        """Deprecated: inverse_dynamics_derivatives_batch."""
        warnings.warn("rnea_derivatives_batch is now inverse_dynamics_derivatives_batch",
                      DeprecationWarning, stacklevel=2)
        return self.inverse_dynamics_derivatives_batch(q, qd, qdd)

    # -- defaults a backend may replace with something faster ------------------------------
    def _momentum_terms(self, q, qd):
        """M q̇ = RNEA(q, 0, q̇) − g (one recursion instead of M) and Cᵀ q̇ from C."""
        p = self._rnea(q, np.zeros_like(q), qd, None) - self._gravity(q)
        return p, self._coriolis_matrix(q, qd).T @ qd

    # -- argument checks -------------------------------------------------------------------
    def check_state(self, **arrays):
        """The keyword arguments (q=..., qd=..., ...) as float64 arrays (n,), in the order
        given; ArgumentError naming the first of wrong size or with a non-finite value. A
        caller that checks a state once this way may then use `unchecked` on it.
        (An argument that is already such an array is returned as it is, not copied.)"""
        return [self._vector(name, value) for name, value in arrays.items()]

    def _vector(self, name, value):
        """One argument as a float64 array (n,), checked as check_state says. An array of
        that shape and type costs a type test and a sum of its values (about 0.3 µs; the sum
        is finite when every value is, and when it is not, finite values near 1e308 can
        be the cause: then each value is tested), anything else is converted first."""
        if (value.__class__ is not _ARRAY or value.dtype is not _FLOAT
                or value.shape != self._shape):
            value = self._converted(name, value)
        if not _isfinite(sum(value.tolist())) and not all(map(_isfinite, value.tolist())):
            raise ArgumentError(f"{name} has non-finite values: {value.tolist()}")
        return value

    def _converted(self, name, value):
        value = np.asarray(value, dtype=float)
        if value.shape != self._shape:
            got = value.shape[0] if value.ndim == 1 else value.shape
            raise ArgumentError(
                f"wrong argument size for {name}: expected {self.model.dof}, got {got}")
        return value

    def _batch(self, **arrays):
        n = self.model.dof
        out = []
        shape = None
        for name, value in arrays.items():
            array = np.asarray(value, dtype=float)
            if array.ndim != 2 or array.shape[1] != n:
                raise ArgumentError(
                    f"wrong argument shape for {name}: expected (N, {n}), got {array.shape}")
            if shape is not None and array.shape != shape:
                raise ArgumentError(f"{name} has shape {array.shape}, expected {shape}")
            if not np.all(np.isfinite(array)):
                raise ArgumentError(f"{name} has non-finite values")
            shape = array.shape
            out.append(array)
        return out

    def _wrench(self, f_tip, q, frame):
        check_frame(frame)
        f_tip = np.asarray(f_tip, dtype=float)
        if f_tip.shape != (6,) or not np.all(np.isfinite(f_tip)):
            raise ArgumentError(f"f_tip must be 6 finite numbers [force; torque], got {f_tip!r}")
        if frame == LOCAL:
            R, _ = self._tip_pose(q)
            return np.concatenate((R @ f_tip[:3], R @ f_tip[3:]))
        if frame != LOCAL_WORLD_ALIGNED:
            raise ArgumentError("f_tip frame must be 'local_world_aligned' or 'local'")
        return f_tip

    # -- backend hooks (arguments already checked; f_tip in base axes at the tip) ------------
    @abc.abstractmethod
    def _rnea(self, q, qd, qdd, f_tip): ...

    @abc.abstractmethod
    def _gravity(self, q): ...

    @abc.abstractmethod
    def _bias(self, q, qd): ...

    @abc.abstractmethod
    def _mass_matrix(self, q): ...

    def _mass_matrix_inverse(self, q):
        return np.linalg.inv(self._mass_matrix(q))

    @abc.abstractmethod
    def _coriolis_matrix(self, q, qd): ...

    @abc.abstractmethod
    def _forward_dynamics(self, q, qd, tau): ...

    @abc.abstractmethod
    def _rnea_derivatives(self, q, qd, qdd): ...

    def _forward_dynamics_derivatives(self, q, qd, tau):
        """q̈ = M⁻¹ (τ − b): ∂q̈/∂x = −M⁻¹ ∂τ/∂x at q̈ = the forward dynamics, x = q, q̇
        (a backend with its own, e.g. Pinocchio's ABA derivatives, overrides it)."""
        qdd = self._forward_dynamics(q, qd, tau)
        dq, dv, M = self._rnea_derivatives(q, qd, qdd)
        M_inv = np.linalg.inv(M)
        return -M_inv @ dq, -M_inv @ dv, M_inv

    @abc.abstractmethod
    def _jacobian(self, q, frame): ...

    @abc.abstractmethod
    def _jacobian_dot_qd(self, q, qd, frame): ...

    @abc.abstractmethod
    def _tip_pose(self, q): ...

    @abc.abstractmethod
    def _rnea_batch(self, q, qd, qdd): ...

    @abc.abstractmethod
    def _gravity_batch(self, q): ...

    @abc.abstractmethod
    def _regressor_batch(self, q, qd, qdd): ...

    # batched hooks: one call per state unless the backend has better
    def _mass_matrix_batch(self, q):
        return np.array([self._mass_matrix(x) for x in q]).reshape(len(q), *(q.shape[1],) * 2)

    def _point_jacobian(self, q, link, point):
        p, J = self._point_jacobian_batch(q[None], link, point)
        return p[0], J[0]

    def _point_jacobian_batch(self, q, link, point):
        """The library's kinematics of a serial chain (a link that can carry a payload)."""
        body, R, p = self.model.payload_frame(link)
        return point_jacobian_batch(self.model, q, body, R @ np.asarray(point, float) + p)

    def _jacobian_batch(self, q, frame):
        return np.array([self._jacobian(x, frame) for x in q]).reshape(len(q), 6, q.shape[1])

    def _rnea_derivatives_batch(self, q, qd, qdd):
        n = q.shape[1]
        dq, dv = np.empty((len(q), n, n)), np.empty((len(q), n, n))
        for k in range(len(q)):
            dq[k], dv[k], _ = self._rnea_derivatives(q[k], qd[k], qdd[k])
        return dq, dv

