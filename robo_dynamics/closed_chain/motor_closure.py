"""The loops closed for the motors, compiled for one partition of a mechanism with few
dependent coordinates: what a joint-state stream asks of MotorSpace at each state, in one
call of straight-line float code (algorithms/compiled/codegen.py) per Newton iteration.

At q (n,), with the partition's independent rows of Φ, its dependent coordinates u (r) and
the motors as the independent coordinates v (k, motor order):

    Φ (r,)              the rows' residual
    Φ_u⁻¹ Φ (r,)        Newton's step on u
    Φ_u⁻¹ (r, r)        by the adjugate, adj(Φ_u) / det Φ_u (Cramer's rule)
    B_u (r, k)          = −Φ_u⁻¹ Φ_v: q̇_u = B_u θ̇ (Lee, Sohn, Kim and Yoo, "Construction of
                        System Jacobian …", §4.1, eq. 9–10)
    det Φ_u, h          h = Π_i Σ_j (Φ_u)_ij², Hadamard's bound on det² (|det| reaches √h
                        only for orthogonal rows): det² / h is Φ_u's distance from singular

Φ_u⁻¹ by the adjugate for r ≤ ADJUGATE (its terms grow as r!), else by Gauss–Jordan
elimination up to r ≤ MAX_DEPENDENT (a Delta's 9), its rows taken in the order partial
pivoting gives at the pose `at` (fixed in the code: no row exchange at run time) and det Φ_u
the product of its pivots; the structural zeros of a loop's rows in other loops' columns
fold away. Rows with a weld (whose rotation rows come from its frames in NumPy) are not
compiled: motor_closure() returns None for them, which close by ClosedChain.newton alone.
"""

import numpy as np

from ..algorithms.compiled import chain_codegen as chain
from ..algorithms.compiled.codegen import Emitter
from .compiled import closure_rows, compile_function, kinematics

ADJUGATE = 3
MAX_DEPENDENT = 9
SINGULAR = 1e-16       # det² / h below this: Φ_u too near singular for the adjugate's rounding


def motor_closure(compiled, rows, u, v, at=None):
    """The function closure(q) → (Φ, Φ_u⁻¹ Φ, Φ_u⁻¹ row by row, B_u row by row, det, h) as
    lists of floats (None where a pivot is 0), q a list of n floats, for the
    CompiledClosedChain `compiled`'s rows `rows`, dependent coordinates u and independent v
    (in the order of B_u's columns); `at` (n,): a pose near those it will be used at (the
    pivots' order beyond ADJUGATE; default q = 0). None where the module docstring says."""
    r = len(u)
    if not 0 < r <= MAX_DEPENDENT or any(k in compiled.weld_rows for k in rows):
        return None
    tree = compiled.tree
    e = Emitter()
    x = chain.inputs(e, ["q"], tree.dof)
    Phi, Phi_q, _ = closure_rows(e, tree, compiled.closures, kinematics(e, tree, x["q"]))
    Phi_u = [[Phi_q[k][j] for j in u] for k in rows]
    if r <= ADJUGATE:
        det = _determinant(e, Phi_u)
        if isinstance(det, float):               # constant: a partition singular everywhere
            return None
        inverse = [[e.div(_cofactor(e, Phi_u, j, i), det) for j in range(r)]
                   for i in range(r)]
    else:
        at = np.zeros(tree.dof) if at is None else np.asarray(at, dtype=float)
        order = _pivot_order(compiled.closure(at)[1][np.ix_(list(rows), list(u))])
        if order is None:
            return None
        inverse, det = _gauss_jordan(e, Phi_u, order)
        if isinstance(det, float):
            return None
    residual = [Phi[k] for k in rows]
    step = e.matvec(inverse, residual)
    B_u = [[e.neg(e.dot(inverse[i], [Phi_q[k][j] for k in rows])) for j in v]
           for i in range(r)]
    h = 1.0
    for row in Phi_u:
        h = e.mul(h, e.dot(row, row))
    results = (residual + step + [a for row in inverse for a in row]
               + [b for row in B_u for b in row] + [det, h])
    function = compile_function(e, "motor_closure", {"q": tree.dof}, results, tree.name)
    k = len(v)
    ends = np.cumsum([r, r, r * r, r * k, 1]).tolist()

    def closure(q):
        try:
            out = function(q)
        except ZeroDivisionError:          # a pivot exactly 0 (Φ_u singular in that order)
            return None
        return (out[:ends[0]], out[ends[0]:ends[1]], out[ends[1]:ends[2]],
                out[ends[2]:ends[3]], out[ends[3]], out[ends[4]])
    return closure


def _pivot_order(A):
    """The rows of A (r, r) in the order partial pivoting takes them as pivots of columns 0,
    1, …; None if a pivot is zero (A singular there)."""
    A, order = np.array(A, dtype=float), list(range(len(A)))
    for j in range(len(A)):
        k = j + int(np.argmax(np.abs(A[j:, j])))
        if A[k, j] == 0.0:
            return None
        A[[j, k]], order[j], order[k] = A[[k, j]], order[k], order[j]
        A[j + 1:] -= np.outer(A[j + 1:, j] / A[j, j], A[j])
    return order


def _gauss_jordan(e, A, order):
    """(A⁻¹ as rows of values, det A) by Gauss–Jordan elimination of [A | I] with A's rows
    taken in `order` as the pivots of columns 0, 1, … (no exchange at run time)."""
    r = len(A)
    rows = [list(A[k]) + [1.0 if j == k else 0.0 for j in range(r)] for k in order]
    det = float(round(np.linalg.det(np.eye(r)[order])))     # the row order's sign, ±1
    for j in range(r):
        pivot = rows[j][j]
        det = e.mul(det, pivot)
        rows[j] = [e.div(a, pivot) for a in rows[j]]
        for i in range(r):
            factor = rows[i][j]
            if i != j and not (isinstance(factor, float) and factor == 0.0):
                rows[i] = [e.sub(a, e.mul(factor, b)) for a, b in zip(rows[i], rows[j])]
    return [row[r:] for row in rows], det


def _minor(A, i, j):
    """A without row i and column j."""
    return [row[:j] + row[j + 1:] for k, row in enumerate(A) if k != i]


def _determinant(e, A):
    """det A by expansion along the first row (A square, lists of values)."""
    if len(A) == 1:
        return A[0][0]
    total = 0.0
    for j, a in enumerate(A[0]):
        total = e.add(total, e.mul(a, _cofactor(e, A, 0, j)))
    return total


def _cofactor(e, A, i, j):
    """(−1)^(i+j) det of A's minor (i, j)."""
    if len(A) == 1:
        return 1.0
    minor = _determinant(e, _minor(A, i, j))
    return e.neg(minor) if (i + j) % 2 else minor
