"""A closed linkage in Pinocchio, for the tests' references: its URDF read by Pinocchio's own
parser, the loops as its rigid constraints, statics and constraint dynamics by Pinocchio."""

import numpy as np
import pinocchio as pin


class PinocchioLoops:
    """A linkage by Pinocchio's own URDF parser (its <mimic> tags not taken), the params
    file's point loops (`loops`, a loop_closures section) as CONTACT_3D constraints between
    the same points; joints in the order `names`."""

    def __init__(self, urdf, names, loops):
        self.model = pin.buildModelFromXML(urdf)
        self.data = self.model.createData()
        self.index = [self.model.idx_qs[self.model.getJointId(name)] for name in names]
        self.constraints = pin.StdVec_RigidConstraintModel()
        for name in loops["names"]:
            ends = []
            for side in ("a", "b"):
                frame = self.model.frames[self.model.getFrameId(loops[name][f"link_{side}"])]
                ends += [frame.parentJoint, frame.placement * pin.SE3(
                    np.eye(3), np.array(loops[name][f"xyz_{side}"], float))]
            self.constraints.append(pin.RigidConstraintModel(
                pin.ContactType.CONTACT_3D, self.model, *ends, pin.ReferenceFrame.LOCAL))
        self.constraint_data = pin.StdVec_RigidConstraintData()
        for constraint in self.constraints:
            self.constraint_data.append(constraint.createData())
        pin.initConstraintDynamics(self.model, self.data, self.constraints,
                                   self.constraint_data)
        self.settings = pin.ProximalSettings(1e-14, 1e-10, 100)

    def accelerations(self, q, tau):
        """q̈ (n,), our joint order, of the linkage at rest at q under joint torques tau."""
        m = self.model
        q_pin, tau_pin = np.zeros(m.nq), np.zeros(m.nv)
        q_pin[self.index], tau_pin[self.index] = q, tau
        qdd = pin.constraintDynamics(m, self.data, q_pin, np.zeros(m.nv), tau_pin,
                                     self.constraints, self.constraint_data, self.settings)
        return np.array(qdd)[self.index]

    def holding_torques(self, q, motors):
        """The motor torques that hold it at q: g = Sᵀτ + J_cᵀλ by least squares (a planar
        loop's out-of-plane rows are redundant), J_c as constraintDynamics placed it."""
        self.accelerations(q, np.zeros(len(q)))
        m, d = self.model, self.data
        q_pin = np.zeros(m.nq)
        q_pin[self.index] = q
        g = pin.computeGeneralizedGravity(m, d, q_pin)
        J_c = pin.getConstraintsJacobian(m, d, self.constraints, self.constraint_data)
        S_T = np.zeros((m.nv, len(motors)))
        S_T[[self.index[i] for i in motors], range(len(motors))] = 1.0
        return np.linalg.lstsq(np.hstack((S_T, J_c.T)), g, rcond=1e-12)[0][:len(motors)]
