"""Evaluate two solvers at one state and report how far apart they are, per quantity."""

import collections

import numpy as np

Difference = collections.namedtuple("Difference", ["max_abs", "max_rel"])

QUANTITIES = ("inverse_dynamics", "gravity", "coriolis_qd", "mass_matrix", "coriolis_matrix",
              "forward_dynamics", "jacobian", "jacobian_dot_qd", "operational_space_inertia")


def evaluate(solver, q, qd, qdd, tau):
    """Every cross-checked quantity of `solver` at (q, q̇, q̈), by name; τ feeds forward dynamics."""
    g = solver.gravity(q)
    return {
        "inverse_dynamics": solver.inverse_dynamics(q, qd, qdd),
        "gravity": g,
        "coriolis_qd": solver.bias(q, qd) - g,
        "mass_matrix": solver.mass_matrix(q),
        "coriolis_matrix": solver.coriolis_matrix(q, qd),
        "forward_dynamics": solver.forward_dynamics(q, qd, tau),
        "jacobian": solver.jacobian(q),
        "jacobian_dot_qd": solver.jacobian_dot_qd(q, qd),
        "operational_space_inertia": solver.operational_space_inertia(q),
    }


def difference(a, b, floor=1.0):
    """max |a − b| of a result a against its reference b, and that divided by
    max(max |b|, floor): a norm-wise relative error. The default floor of 1 keeps it from
    blowing up when the reference is (nearly) zero, e.g. C q̇ of an arm at rest, where it
    becomes the absolute error in SI units; floor ≈ 0 gives the plain relative error."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    max_abs = float(np.max(np.abs(a - b))) if a.size else 0.0
    scale = float(np.max(np.abs(b))) if b.size else 0.0
    return Difference(max_abs, max_abs / max(scale, floor))


def cross_check(solver, reference, q, qd, qdd, quantities=QUANTITIES):
    """{quantity: Difference(max_abs, max_rel)} of `solver` against `reference` at one state.

    Both solvers must describe the same joints in the same order. Forward dynamics is
    evaluated at τ = the reference's inverse dynamics, so it should return q̈.
    """
    if tuple(solver.joint_names) != tuple(reference.joint_names):
        raise ValueError("the two solvers have different joints: "
                         f"{solver.joint_names} vs {reference.joint_names}")
    tau = reference.inverse_dynamics(q, qd, qdd)
    a, b = evaluate(solver, q, qd, qdd, tau), evaluate(reference, q, qd, qdd, tau)
    return {name: difference(a[name], b[name]) for name in quantities}
