"""The Pinocchio backend: the same URDF parsed and solved by Pinocchio (`pin`).

The only module that imports pinocchio. Joints are mapped by name; a continuous joint is
two entries (cos θ, sin θ) of Pinocchio's q and one of its v. Joints outside the chain
are locked at 0, as in the in-house model (made fixed in the URDF handed to Pinocchio).
Pinocchio's world is the URDF root; when base_link is another link, results are rotated
into the base frame.
"""

import numpy as np
import pinocchio as pin

from ..algorithms.jacobian import LOCAL, WORLD
from ..errors import URDFError
from ..model.urdf_document import locked_elsewhere
from ..spatial.rotations import cross
from .base import DynamicsSolver


class PinocchioSolver(DynamicsSolver):
    """Pinocchio's RNEA, CRBA, ABA and Jacobians behind the DynamicsSolver interface."""

    name = "pinocchio"

    def __init__(self, model):
        super().__init__(model)
        try:
            self.pin_model = pin.buildModelFromXML(
                locked_elsewhere(model.urdf_xml, set(model.joint_names)))
        except Exception as exc:  # pinocchio raises RuntimeError/ValueError with C++ text
            raise URDFError(f"Pinocchio cannot build the URDF: {exc}") from None
        pm = self.pin_model
        for payload in model.payloads:   # Pinocchio's joint frame is our body frame
            jid = pm.getJointId(model.joint_names[payload.body])
            pm.inertias[jid] = pm.inertias[jid] + pin.Inertia(
                payload.mass, payload.com, payload.inertia)
        self._idx_q, self._idx_v, self._continuous = [], [], []
        for name in model.joint_names:
            jid = pm.getJointId(name)
            if jid >= pm.njoints:
                raise URDFError(f"joint '{name}' not found in Pinocchio's model")
            self._idx_q.append(pm.idx_qs[jid])
            self._idx_v.append(pm.idx_vs[jid])
            self._continuous.append(pm.nqs[jid] == 2)
        self._idx_q = np.array(self._idx_q)
        self._idx_v = np.array(self._idx_v)
        self._continuous = np.array(self._continuous, dtype=bool)
        pm.armature[self._idx_v] = model.armature   # Pinocchio's RNEA, CRBA, ABA take it
        self.data = pm.createData()
        # fast paths: Pinocchio's q and v are ours when no joint is locked or continuous
        n = model.dof
        self._same_q = pm.nq == n and np.array_equal(self._idx_q, np.arange(n))
        self._same_v = pm.nv == n and np.array_equal(self._idx_v, np.arange(n))
        self._last_joint = pm.getJointId(model.joint_names[-1])
        self._tip_frame = pm.getFrameId(model.tip_link, pin.BODY)   # links are BODY frames;
        base_frame = pm.getFrameId(model.base_link, pin.BODY)       # a joint may share the name
        if self._tip_frame >= len(pm.frames) or base_frame >= len(pm.frames):
            raise URDFError("tip_link or base_link not found in Pinocchio's model")
        # the base is fixed in Pinocchio's world: read its placement once
        pin.framesForwardKinematics(pm, self.data, pin.neutral(pm))
        oMb = self.data.oMf[base_frame]
        self._R_wb = oMb.rotation.copy()
        self._p_wb = oMb.translation.copy()
        self._base_is_world = bool(np.array_equal(self._R_wb, np.eye(3)))
        pm.gravity = pin.Motion(self._R_wb @ model.gravity, np.zeros(3))
        # the same arm without gravity: RNEA(q, 0, q̇) on it is M(q) q̇ in one call
        self._weightless = pin.Model(pm)
        self._weightless.gravity = pin.Motion.Zero()
        self._weightless_data = self._weightless.createData()
        self._zero_v = np.zeros(pm.nv)
        self._points = pm, self.data, {}   # monitored points: (link, x, y, z) → frame id

    # -- conversions ---------------------------------------------------------------------
    def _q(self, q):
        if self._same_q:
            return q
        q_pin = pin.neutral(self.pin_model)
        q_pin[self._idx_q] = np.where(self._continuous, np.cos(q), q)
        q_pin[self._idx_q[self._continuous] + 1] = np.sin(q[self._continuous])
        return q_pin

    def _v(self, x):
        if self._same_v:
            return x
        v = np.zeros(self.pin_model.nv)
        v[self._idx_v] = x
        return v

    def _from_v(self, x):
        """Our joints of a Pinocchio v-sized vector. Pinocchio's functions return new arrays,
        so x is not copied when the layouts agree; pass copies of data members."""
        return x if self._same_v else x[..., self._idx_v]

    def _chain_block(self, matrix):
        """Our joints' rows and columns of a Pinocchio (nv, nv) matrix. Pinocchio 4 fills
        M, M⁻¹ and their derivative blocks whole (both triangles) from Python."""
        return matrix if self._same_v else matrix[np.ix_(self._idx_v, self._idx_v)]

    def _to_base(self, X):
        """Rotate [linear; angular] rows of X from Pinocchio's world axes into base axes."""
        if self._base_is_world:
            return X
        Rt = self._R_wb.T
        return np.concatenate((Rt @ X[:3], Rt @ X[3:]), axis=0)

    # -- hooks -----------------------------------------------------------------------------
    def _rnea(self, q, qd, qdd, f_tip):
        pm, data = self.pin_model, self.data
        q_pin = self._q(q)
        if f_tip is None:
            return self._from_v(pin.rnea(pm, data, q_pin, self._v(qd), self._v(qdd)))
        pin.framesForwardKinematics(pm, data, q_pin)
        # the environment pushes on the tip with −f_tip; express it about Pinocchio's origin
        force = -(self._R_wb @ f_tip[:3])
        torque = -(self._R_wb @ f_tip[3:])
        p_tip = data.oMf[self._tip_frame].translation
        f_world = pin.Force(force, torque + cross(p_tip, force))
        fext = [pin.Force.Zero() for _ in range(pm.njoints)]
        fext[self._last_joint] = data.oMi[self._last_joint].actInv(f_world)
        return self._from_v(pin.rnea(pm, data, q_pin, self._v(qd), self._v(qdd), fext))

    def _gravity(self, q):
        return self._from_v(pin.computeGeneralizedGravity(self.pin_model, self.data, self._q(q)))

    def _bias(self, q, qd):
        return self._from_v(
            pin.nonLinearEffects(self.pin_model, self.data, self._q(q), self._v(qd)))

    def _mass_matrix(self, q):
        return self._chain_block(pin.crba(self.pin_model, self.data, self._q(q)))

    def _mass_matrix_inverse(self, q):
        return self._chain_block(pin.computeMinverse(self.pin_model, self.data, self._q(q)))

    def _coriolis_matrix(self, q, qd):
        return self._chain_block(
            pin.computeCoriolisMatrix(self.pin_model, self.data, self._q(q), self._v(qd)))

    def _momentum_terms(self, q, qd):
        """M q̇ = RNEA(q, 0, q̇) without gravity; Cᵀ q̇ = q̇ᵀ C (Pinocchio's C is
        Christoffel-consistent, Ṁ = C + Cᵀ). Three calls in all."""
        q_pin, v = self._q(q), self._v(qd)
        p = pin.rnea(self._weightless, self._weightless_data, q_pin, self._zero_v, v)
        coriolis_t = v @ pin.computeCoriolisMatrix(self.pin_model, self.data, q_pin, v)
        return self._from_v(p), self._from_v(coriolis_t)

    def _forward_dynamics(self, q, qd, tau):
        return self._from_v(
            pin.aba(self.pin_model, self.data, self._q(q), self._v(qd), self._v(tau)))

    def _rnea_derivatives(self, q, qd, qdd):
        out = pin.computeRNEADerivatives(self.pin_model, self.data, self._q(q), self._v(qd),
                                         self._v(qdd))
        return self._chain_blocks(out)

    def _forward_dynamics_derivatives(self, q, qd, tau):
        out = pin.computeABADerivatives(self.pin_model, self.data, self._q(q), self._v(qd),
                                        self._v(tau))
        return self._chain_blocks(out)

    def _chain_blocks(self, matrices):
        """The chain's rows and columns of Pinocchio's (nv, nv) matrices, copied: these three
        are Pinocchio's data members, overwritten by its next call."""
        return tuple(self._chain_block(np.array(m)) for m in matrices)

    def _jacobian(self, q, frame):
        pm, data = self.pin_model, self.data
        reference = pin.LOCAL if frame == LOCAL else pin.LOCAL_WORLD_ALIGNED
        J = _six_rows(pin.computeFrameJacobian(pm, data, self._q(q), self._tip_frame, reference))
        J = J if self._same_v else J[:, self._idx_v]
        if frame == LOCAL:
            return J
        J = self._to_base(J)
        if frame == WORLD:  # about the base origin: v_O = v_p − ω × p
            _, p = self._tip_pose(q)
            J[:3] -= cross(J[3:].T, p).T
        return J

    def _point_jacobian(self, q, link, point):
        """The Jacobian of a frame at the point, base axes. The frames live in a copy of
        Pinocchio's model (links are its BODY frames), extended the first time a point is
        asked for and swapped in whole: the model and data the other methods use never
        change."""
        key = (link, *(float(x) for x in point))
        pm, data, frames = self._points
        if key not in frames:
            pm = pin.Model(pm)
            parent = pm.getFrameId(link, pin.BODY)
            if parent >= len(pm.frames):
                raise URDFError(f"link '{link}' is not in Pinocchio's model")
            frame = pm.frames[parent]
            frames = {**frames, key: pm.addFrame(pin.Frame(
                f"point_{len(frames)}", frame.parentJoint, parent,
                frame.placement * pin.SE3(np.eye(3), np.array(key[1:])),
                pin.FrameType.OP_FRAME))}
            data = pm.createData()
            self._points = pm, data, frames
        J = pin.computeFrameJacobian(pm, data, self._q(q), frames[key], pin.LOCAL_WORLD_ALIGNED)
        J = J if self._same_v else J[:, self._idx_v]
        Rt = self._R_wb.T
        return Rt @ (data.oMf[frames[key]].translation - self._p_wb), Rt @ J[:3]

    def _jacobian_dot_qd(self, q, qd, frame):
        pm, data = self.pin_model, self.data
        v = self._v(qd)
        pin.forwardKinematics(pm, data, self._q(q), v, np.zeros_like(v))
        pin.updateFramePlacements(pm, data)
        reference = pin.LOCAL if frame == LOCAL else pin.LOCAL_WORLD_ALIGNED
        a = pin.getFrameClassicalAcceleration(pm, data, self._tip_frame, reference).vector
        return a if frame == LOCAL else self._to_base(a)

    def _tip_pose(self, q):
        pin.framesForwardKinematics(self.pin_model, self.data, self._q(q))
        oMt = self.data.oMf[self._tip_frame]
        Rt = self._R_wb.T
        return Rt @ oMt.rotation, Rt @ (oMt.translation - self._p_wb)

    def _rnea_batch(self, q, qd, qdd):
        return np.array([self._rnea(*state, None) for state in zip(q, qd, qdd)])

    def _gravity_batch(self, q):
        return np.array([self._gravity(x) for x in q])

    def _regressor_batch(self, q, qd, qdd):
        """computeJointTorqueRegressor per state: rows our joints, column blocks our bodies
        (Pinocchio's joint frame is our body frame; its parameter order is ours)."""
        pm, data = self.pin_model, self.data
        columns = np.concatenate([np.arange(10) + 10 * (pm.getJointId(name) - 1)
                                  for name in self.model.joint_names])
        ours = np.ix_(self._idx_v, columns)
        return np.array([pin.computeJointTorqueRegressor(
            pm, data, self._q(x), self._v(v), self._v(a))[ours] for x, v, a in zip(q, qd, qdd)])


def _six_rows(J):
    """A frame Jacobian as (6, nv): Pinocchio returns a one-column matrix as a (6,) array."""
    return J.reshape(6, -1)
