"""∂τ/∂q and ∂τ/∂q̇ compiled for one arm — the system Jacobian of the equations of motion
that an implicit integrator needs (Lee, Sohn, Kim & Yoo, "System Jacobian of the equations
of motion in relative coordinates", KSME 2001): the Newton–Euler recursion of rnea_codegen
differentiated exactly, operation by operation (forward mode, codegen.Emitter.derivatives),
with respect to each q_j and q̇_j, and written out as straight scalar Python. ∂τ/∂q̈ = M
(crba_codegen). Forward dynamics q̈ = M⁻¹(τ − b) follows: ∂q̈/∂x = −M⁻¹ ∂τ/∂x at that q̈
(x = q, q̇), ∂q̈/∂τ = M⁻¹.

Every derivative that is structurally zero (body i's motion does not depend on q_j for
j > i; the constants' derivatives) is the constant 0 and folds away, and work shared by
several derivatives is emitted once. The tests compare the result with Pinocchio's
computeRNEADerivatives, with central differences and, for the planar 2R arm, with the
closed form differentiated by hand.

The Coriolis matrix in Christoffel form is half of ∂τ/∂q̇: with
(C q̇)_i = Σ_jk Γ_ijk q̇_j q̇_k and Γ_ijk = Γ_ikj (Lynch & Park, Modern Robotics, §8.1.3),
∂(C q̇)_i/∂q̇_j = 2 Σ_k Γ_ijk q̇_k = 2 C_ij, and M q̈ and g do not depend on q̇. So
`compile_coriolis_matrix` differentiates the recursion at q̈ = 0 without gravity, where
fewer terms are left to differentiate.
"""

from . import chain_codegen as chain
from .codegen import Emitter
from .rnea_codegen import inverse_dynamics_values


def _emit(model):
    """(emitter, values): ∂τ/∂q then ∂τ/∂q̇, each n × n row-major ([i, j] = ∂τ_i/∂x_j)."""
    e, n = Emitter(), model.body_count
    x = chain.inputs(e, ["q", "qd", "qdd"], n)
    tau = inverse_dynamics_values(e, model, x["q"], x["qd"], x["qdd"])
    values = []
    for name in ("q", "qd"):
        columns = [e.derivatives(tau, f"{name}{j}") for j in range(n)]
        values += [columns[j][i] for i in range(n) for j in range(n)]
    return e, values


def compile_rnea_derivatives(model):
    """A function rnea_derivatives(q, qd, qdd) → 2 n² floats: ∂τ/∂q then ∂τ/∂q̇, each
    row-major."""
    e, values = _emit(model)
    return chain.compile_scalar(e, "rnea_derivatives", ["q", "qd", "qdd"], model.body_count,
                                values, model.name)


def compile_rnea_derivatives_batch(model):
    """A function rnea_derivatives_batch(q, qd, qdd) → (N, 2 n²) for (N, n) arrays."""
    e, values = _emit(model)
    return chain.compile_batch(e, "rnea_derivatives", ["q", "qd", "qdd"], model.body_count,
                               values, model.name)


def compile_coriolis_matrix(model):
    """A function coriolis_matrix(q, qd) → C (Christoffel form) as n² floats, row-major:
    ½ ∂τ/∂q̇ of the recursion at q̈ = 0, g = 0."""
    e, n = Emitter(), model.body_count
    x = chain.inputs(e, ["q", "qd"], n)
    tau = inverse_dynamics_values(e, model, x["q"], x["qd"], [0.0] * n, gravity=(0.0,) * 3)
    columns = [e.derivatives(tau, f"qd{j}") for j in range(n)]
    values = [e.mul(0.5, columns[j][i]) for i in range(n) for j in range(n)]
    return chain.compile_scalar(e, "coriolis_matrix", ["q", "qd"], n, values, model.name)
