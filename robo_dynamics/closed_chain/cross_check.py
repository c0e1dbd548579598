"""A closed chain's two backends at one state: the in-house mechanism (mechanism.py) against
another solver of the same chain with the same methods (Pinocchio's constraintDynamics:
backends/pinocchio_closed_chain.py), how far apart per quantity, as backends/cross_check.py
reports it for a serial arm."""

from ..backends.cross_check import difference

QUANTITIES = ("forward_dynamics", "constraint_forces", "inverse_dynamics")


def cross_check(chain, reference, q, qd, tau=None):
    """{quantity: Difference} at a closed state (q, q̇) [rad, rad/s] under the motor torques
    tau (k,) [N·m or N; None: none]: q̈ and the generalized constraint forces Φ_qᵀλ of forward
    dynamics, and, when every degree of freedom has a motor, the motor torques that give
    the reference's q̈ back (inverse dynamics)."""
    qdd, lam = chain.forward_dynamics(q, qd, tau)
    reference_qdd, reference_force = reference.forward_dynamics(q, qd, tau)
    found = {"forward_dynamics": difference(qdd, reference_qdd),
             "constraint_forces": difference(chain.constraint_jacobian(q).T @ lam,
                                             reference_force)}
    if chain.fully_actuated:
        found["inverse_dynamics"] = difference(
            chain.inverse_dynamics(q, qd, reference_qdd)[0],
            reference.inverse_dynamics(q, qd, reference_qdd)[0])
    return found
