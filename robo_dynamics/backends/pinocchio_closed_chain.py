"""The same closed mechanism computed by Pinocchio, to cross-check the in-house algorithms.

The tree is built body by body (so that an SDF's tree is the same as a URDF's), each
closure becomes Pinocchio RigidConstraintModels between the two joints' frames: a point
closure a CONTACT_3D, a weld a CONTACT_6D, a revolute closure two CONTACT_3D on its axis (6
rows of rank 5). Forward dynamics is Pinocchio's constraintDynamics (a proximal KKT solve
that copes with redundant rows); inverse dynamics projects Pinocchio's RNEA with its
constraint Jacobian. Multipliers differ by frame and sign from Φ's, so the two are compared
as generalized constraint forces Φ_qᵀλ (n,).
"""

import numpy as np

from ..closed_chain.tree import BASE
from ..errors import BackendUnavailable

PROXIMAL = (1e-14, 1e-10, 100)       # accuracy, regularization μ, iterations
AXIS_POINT = 0.1                      # m: the second point on a revolute closure's axis


class PinocchioClosedChain:
    """A ClosedChain's dynamics by Pinocchio (same coordinates and units)."""

    def __init__(self, chain):
        try:
            import pinocchio as pin
        except ImportError as exc:
            raise BackendUnavailable(f"Pinocchio is not available: {exc}") from None
        self.pin, self.chain = pin, chain
        tree = chain.tree
        model = pin.Model()
        model.gravity.linear = np.asarray(tree.gravity, dtype=float)
        ids = {BASE: 0}
        for i in range(tree.dof):
            placement = pin.SE3(tree.origin_rotation[i], tree.origin_translation[i])
            joint = (pin.JointModelPrismaticUnaligned(tree.axis[i]) if tree.is_prismatic[i]
                     else pin.JointModelRevoluteUnaligned(tree.axis[i]))
            ids[i] = model.addJoint(ids[tree.parent[i]], joint, placement, tree.joint_names[i])
            model.appendBodyToJoint(ids[i], pin.Inertia(tree.mass[i], tree.com[i],
                                                        tree.inertia[i]), pin.SE3.Identity())
        self.model, self.data = model, model.createData()
        self.constraints = pin.StdVec_RigidConstraintModel()
        for c in chain.closures:
            for kind, offset in _pieces(c):
                ends = []
                for link, R, p in ((c.link_a, c.R_a, c.p_a), (c.link_b, c.R_b, c.p_b)):
                    body, R_link, p_link = tree.link_frame(link)
                    ends += [ids[body], pin.SE3(R_link @ R, R_link @ (p + R @ offset) + p_link)]
                self.constraints.append(pin.RigidConstraintModel(
                    kind(pin), model, *ends, pin.ReferenceFrame.LOCAL))
        self.constraint_data = pin.StdVec_RigidConstraintData()
        for constraint in self.constraints:
            self.constraint_data.append(constraint.createData())
        pin.initConstraintDynamics(model, self.data, self.constraints, self.constraint_data)
        self.settings = pin.ProximalSettings(*PROXIMAL)

    def _actuation(self, tau):
        applied = np.zeros(self.chain.tree.dof)
        if tau is not None:
            applied[list(self.chain.actuated)] = tau
        return applied

    def forward_dynamics(self, q, qd, tau=None):
        """(q̈ (n,), Φ_qᵀλ (n,)) by constraintDynamics."""
        pin = self.pin
        qdd = pin.constraintDynamics(self.model, self.data, q, qd, self._actuation(tau),
                                     self.constraints, self.constraint_data, self.settings)
        J = pin.getConstraintsJacobian(self.model, self.data, self.constraints,
                                       self.constraint_data)
        return np.array(qdd), -J.T @ self.data.lambda_c

    def inverse_dynamics(self, q, qd, qdd):
        """(τ (k,) of the motors, Φ_qᵀλ (n,)): M q̈ + h + Φ_qᵀλ = Sᵀτ solved for τ and the
        constraint force with Pinocchio's RNEA and constraint Jacobian (least squares over
        the redundant rows)."""
        pin = self.pin
        _, _ = self.forward_dynamics(q, qd)    # places the constraint frames the Jacobian reads
        J = pin.getConstraintsJacobian(self.model, self.data, self.constraints,
                                       self.constraint_data)
        generalized = pin.rnea(self.model, self.data, q, qd, qdd)
        n, k = self.chain.tree.dof, len(self.chain.actuated)
        S_T = np.zeros((n, k))
        S_T[list(self.chain.actuated), range(k)] = 1.0
        solution = np.linalg.lstsq(np.hstack((S_T, -J.T)), generalized, rcond=1e-12)[0]
        return solution[:k], J.T @ solution[k:]


def _pieces(c):
    """(Pinocchio contact type, offset along the closure frame) for each constraint model
    closure c becomes."""
    point = lambda pin: pin.ContactType.CONTACT_3D          # noqa: E731
    if c.kind == "point":
        return [(point, np.zeros(3))]
    if c.kind == "weld":
        return [(lambda pin: pin.ContactType.CONTACT_6D, np.zeros(3))]
    return [(point, np.zeros(3)), (point, np.array([0.0, 0.0, AXIS_POINT]))]
