"""Evaluate two solvers at one state and report how far apart they are, per quantity:
all at once (`cross_check`), or one solver's quantity per call (`CrossCheckSteps`, for a
control loop that can spare a little time per cycle but not all of it in one); and a closed
chain's two backends (`cross_check_closed_chain`).

The state is checked once, when the comparison begins; every evaluation after that uses
the solvers' unchecked fast path on the checked copy."""

import collections

import numpy as np

Difference = collections.namedtuple("Difference", ["max_abs", "max_rel"])

# each cross-checked quantity of a solver at a checked state (q, q̇, q̈); τ (the reference's
# inverse dynamics) feeds forward dynamics
EVALUATE = {
    "inverse_dynamics": lambda s, q, qd, qdd, tau: s.unchecked.inverse_dynamics(q, qd, qdd),
    "gravity": lambda s, q, qd, qdd, tau: s.unchecked.gravity(q),
    "coriolis_qd": lambda s, q, qd, qdd, tau: s.unchecked.bias(q, qd) - s.unchecked.gravity(q),
    "mass_matrix": lambda s, q, qd, qdd, tau: s.unchecked.mass_matrix(q),
    "coriolis_matrix": lambda s, q, qd, qdd, tau: s.unchecked.coriolis_matrix(q, qd),
    "momentum_terms": lambda s, q, qd, qdd, tau: np.concatenate(
        s.unchecked.momentum_terms(q, qd)),
    "forward_dynamics": lambda s, q, qd, qdd, tau: s.unchecked.forward_dynamics(q, qd, tau),
    "jacobian": lambda s, q, qd, qdd, tau: s.unchecked.jacobian(q),
    "jacobian_dot_qd": lambda s, q, qd, qdd, tau: s.unchecked.jacobian_dot_qd(q, qd),
    "operational_space_inertia": lambda s, q, qd, qdd, tau:
        s.unchecked.operational_space_inertia(q),
}
QUANTITIES = tuple(EVALUATE)


def difference(a, b, floor=1.0):
    """max |a − b| of a result a against its reference b, and that divided by
    max(max |b|, floor): a norm-wise relative error. The default floor of 1 keeps it from
    blowing up when the reference is (nearly) zero, e.g. C q̇ of an arm at rest, where it
    becomes the absolute error in SI units; floor ≈ 0 gives the plain relative error."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    max_abs = float(np.max(np.abs(a - b))) if a.size else 0.0
    scale = float(np.max(np.abs(b))) if b.size else 0.0
    return Difference(max_abs, max_abs / max(scale, floor))


class CrossCheckSteps:
    """`cross_check` one evaluation at a time: each `step()` evaluates the next quantity on
    one solver, `solver` first, then `reference`, whose step adds the quantity's Difference
    to `report` ({quantity: Difference}, in the order of `quantities`); `done` once all are.
    The state is checked (ArgumentError if it is not n finite values each) and copied at
    construction."""

    def __init__(self, solver, reference, q, qd, qdd, quantities=QUANTITIES):
        if tuple(solver.joint_names) != tuple(reference.joint_names):
            raise ValueError("the two solvers have different joints: "
                             f"{solver.joint_names} vs {reference.joint_names}")
        self.solver, self.reference = solver, reference
        self.state = tuple(x.copy() for x in reference.check_state(q=q, qd=qd, qdd=qdd))
        self.pending = [(name, last) for name in quantities for last in (False, True)]
        self.report = {}
        self.result = None       # the solver's value of the quantity under way
        self.tau = None          # the reference's inverse dynamics, once forward dynamics needs it

    @property
    def done(self):
        return not self.pending

    def step(self):
        """Evaluate the next quantity on the next solver (nothing once done)."""
        if not self.pending:
            return
        name, last = self.pending.pop(0)       # last: the reference's turn
        if name == "forward_dynamics" and self.tau is None:
            self.tau = self.reference.unchecked.inverse_dynamics(*self.state)
        value = EVALUATE[name](self.reference if last else self.solver, *self.state, self.tau)
        if last:
            self.report[name] = difference(self.result, value)
        else:    # held to the next step (results are new arrays, never a backend's workspace)
            self.result = value


def cross_check(solver, reference, q, qd, qdd, quantities=QUANTITIES):
    """{quantity: Difference(max_abs, max_rel)} of `solver` against `reference` at one state.

    Both solvers must describe the same joints in the same order. Forward dynamics is
    evaluated at τ = the reference's inverse dynamics, so it should return q̈.
    """
    steps = CrossCheckSteps(solver, reference, q, qd, qdd, quantities)
    while not steps.done:
        steps.step()
    return steps.report


CLOSED_CHAIN_QUANTITIES = ("forward_dynamics", "constraint_forces", "inverse_dynamics")


def cross_check_closed_chain(chain, reference, q, qd, tau=None):
    """{quantity: Difference} of a closed chain (closed_chain.ClosedChain) against another
    solver of it with the same methods (pinocchio_closed_chain.PinocchioClosedChain) at a
    closed state (q, q̇) [rad, rad/s] under the motor torques tau (k,) [N·m or N; None:
    none]: q̈ and the generalized constraint forces Φ_qᵀλ of forward dynamics, and, when
    every degree of freedom has a motor, the motor torques that give the reference's q̈
    back (inverse dynamics)."""
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
