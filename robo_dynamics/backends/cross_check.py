"""Evaluate two solvers at one state and report how far apart they are, per quantity:
all at once (`cross_check`), or one quantity per call (`CrossCheckSteps`, for a control
loop that can spare a little time per cycle but not all of it in one)."""

import collections

import numpy as np

Difference = collections.namedtuple("Difference", ["max_abs", "max_rel"])

# each cross-checked quantity of a solver at (q, q̇, q̈); τ feeds forward dynamics
EVALUATE = {
    "inverse_dynamics": lambda s, q, qd, qdd, tau: s.inverse_dynamics(q, qd, qdd),
    "gravity": lambda s, q, qd, qdd, tau: s.gravity(q),
    "coriolis_qd": lambda s, q, qd, qdd, tau: s.bias(q, qd) - s.gravity(q),
    "mass_matrix": lambda s, q, qd, qdd, tau: s.mass_matrix(q),
    "coriolis_matrix": lambda s, q, qd, qdd, tau: s.coriolis_matrix(q, qd),
    "momentum_terms": lambda s, q, qd, qdd, tau: np.concatenate(s.momentum_terms(q, qd)),
    "forward_dynamics": lambda s, q, qd, qdd, tau: s.forward_dynamics(q, qd, tau),
    "jacobian": lambda s, q, qd, qdd, tau: s.jacobian(q),
    "jacobian_dot_qd": lambda s, q, qd, qdd, tau: s.jacobian_dot_qd(q, qd),
    "operational_space_inertia": lambda s, q, qd, qdd, tau: s.operational_space_inertia(q),
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
    """`cross_check` one quantity at a time: each `step()` evaluates the next quantity on
    both solvers (the first also the reference's τ); `done` once all are, `report` then
    holds {quantity: Difference}. The state is copied at construction."""

    def __init__(self, solver, reference, q, qd, qdd, quantities=QUANTITIES):
        if tuple(solver.joint_names) != tuple(reference.joint_names):
            raise ValueError("the two solvers have different joints: "
                             f"{solver.joint_names} vs {reference.joint_names}")
        self.solver, self.reference = solver, reference
        self.state = tuple(np.array(x, dtype=float) for x in (q, qd, qdd))
        self.pending = list(quantities)
        self.report = {}
        self.tau = None

    @property
    def done(self):
        return not self.pending

    def step(self):
        """Evaluate the next quantity on both solvers (nothing once done)."""
        if self.tau is None:
            self.tau = self.reference.inverse_dynamics(*self.state)
        if self.pending:
            name = self.pending.pop(0)
            evaluate = EVALUATE[name]
            self.report[name] = difference(evaluate(self.solver, *self.state, self.tau),
                                           evaluate(self.reference, *self.state, self.tau))


def cross_check(solver, reference, q, qd, qdd, quantities=QUANTITIES):
    """{quantity: Difference(max_abs, max_rel)} of `solver` against `reference` at one state.

    Both solvers must describe the same joints in the same order. Forward dynamics is
    evaluated at τ = the reference's inverse dynamics, so it should return q̈.
    """
    steps = CrossCheckSteps(solver, reference, q, qd, qdd, quantities)
    while not steps.done:
        steps.step()
    return steps.report
