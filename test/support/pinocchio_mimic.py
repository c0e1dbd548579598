"""Pinocchio's own mimic-joint support as the reference for chains with mimic joints.

robo_dynamics projects the dynamics of the chain's bodies onto the independent joints
(backends/coupled.py) in both backends. The reference here is independent of that code:
Pinocchio builds the URDF with `mimic=True` (JointModelMimic) and computes the coupled
system itself. Pinocchio 4.1 supports mimic joints in RNEA, CRBA, the generalised gravity
and the Jacobians, not in ABA, M⁻¹ or the derivatives; forward dynamics is checked through
M q̈ + b = τ with the reference M and b, the derivatives and the Christoffel C by central
differences of the reference RNEA and M.
"""

import xml.etree.ElementTree as ET

import numpy as np
import pinocchio as pin


class NativeMimic:
    """Reference dynamics of `robot` (a RobotModel with base_link = the URDF root): joints off
    the chain fixed at 0, mimic joints of the chain as Pinocchio's JointModelMimic."""

    def __init__(self, robot):
        root = ET.fromstring(robot.urdf_xml)
        for joint in root.findall("joint"):
            if joint.get("type") != "fixed" and joint.get("name") not in robot.body_joints:
                joint.set("type", "fixed")
                for mimic in joint.findall("mimic"):
                    joint.remove(mimic)
        self.model = pin.buildModelFromXML(ET.tostring(root, encoding="unicode"), mimic=True)
        self.fresh = self.model.createData     # a new Data per call: see _data
        ids = [self.model.getJointId(name) for name in robot.joint_names]
        self.iq = np.array([self.model.idx_qs[i] for i in ids])
        self.continuous = np.array([self.model.nqs[i] == 2 for i in ids])   # (cos θ, sin θ)
        self.iv = np.array([self.model.idx_vs[i] for i in ids])
        assert self.model.nv == robot.dof == len(set(self.iv))
        self.tip = self.model.getFrameId(robot.tip_link, pin.BODY)

    def _data(self):
        """A new pinocchio Data: with mimic joints, CRBA adds into data.M without clearing
        it first (pin 4.1), so a reused Data gives M of the previous call plus this one."""
        return self.fresh()

    def _q(self, q):
        out = pin.neutral(self.model)
        out[self.iq] = np.where(self.continuous, np.cos(q), q)
        out[self.iq[self.continuous] + 1] = np.sin(q[self.continuous])
        return out

    def _v(self, x):
        out = np.zeros(self.model.nv)
        out[self.iv] = x
        return out

    def _back(self, x):
        return np.asarray(x)[self.iv]

    def _back2(self, X):
        return np.asarray(X)[np.ix_(self.iv, self.iv)]

    def inverse_dynamics(self, q, qd, qdd):
        return self._back(pin.rnea(self.model, self._data(), self._q(q), self._v(qd), self._v(qdd)))

    def gravity(self, q):
        return self._back(pin.computeGeneralizedGravity(self.model, self._data(), self._q(q)))

    def bias(self, q, qd):
        return self._back(pin.nonLinearEffects(self.model, self._data(), self._q(q), self._v(qd)))

    def mass_matrix(self, q):
        M = pin.crba(self.model, self._data(), self._q(q))
        return self._back2(np.triu(M) + np.triu(M, 1).T)

    def coriolis_matrix(self, q, qd, h=1e-6):
        """The Christoffel form C_ij = Σ_k ½ (∂M_ij/∂q_k + ∂M_ik/∂q_j − ∂M_jk/∂q_i) q̇_k from
        central differences of the reference M. (Pinocchio's computeCoriolisMatrix with
        mimic joints does not satisfy C q̇ = nle − g in pin 4.1, so it is not used.)"""
        n = len(q)
        dM = np.zeros((n, n, n))              # dM[k] = ∂M/∂q_k
        for k in range(n):
            e = np.zeros(n)
            e[k] = h
            dM[k] = (self.mass_matrix(q + e) - self.mass_matrix(q - e)) / (2 * h)
        gamma = 0.5 * (np.transpose(dM, (1, 2, 0)) + np.transpose(dM, (1, 0, 2))
                       - np.transpose(dM, (0, 1, 2)))        # Γ[i, j, k]
        return gamma @ qd

    def jacobian(self, q):
        J = pin.computeFrameJacobian(self.model, self._data(), self._q(q), self.tip,
                                     pin.LOCAL_WORLD_ALIGNED)
        return J.reshape(6, -1)[:, self.iv]

    def jacobian_dot_qd(self, q, qd):
        v = self._v(qd)
        data = self._data()
        pin.forwardKinematics(self.model, data, self._q(q), v, np.zeros_like(v))
        pin.updateFramePlacements(self.model, data)
        return pin.getFrameClassicalAcceleration(self.model, data, self.tip,
                                                 pin.LOCAL_WORLD_ALIGNED).vector

    def inverse_dynamics_derivatives(self, q, qd, qdd, h=1e-6):
        """(∂τ/∂q, ∂τ/∂q̇) by central differences of the reference RNEA."""
        n = len(q)
        dq, dv = np.zeros((n, n)), np.zeros((n, n))
        for j in range(n):
            e = np.zeros(n)
            e[j] = h
            dq[:, j] = (self.inverse_dynamics(q + e, qd, qdd)
                        - self.inverse_dynamics(q - e, qd, qdd)) / (2 * h)
            dv[:, j] = (self.inverse_dynamics(q, qd + e, qdd)
                        - self.inverse_dynamics(q, qd - e, qdd)) / (2 * h)
        return dq, dv
