"""Generalized coordinate partitioning (Wehage and Haug, "Generalized Coordinate
Partitioning for Dimension Reduction in Analysis of Constrained Dynamic Systems", ASME J.
Mech. Des. 104, 1982): Gaussian elimination with full pivoting on Φ_q picks the independent
constraint equations (pivot rows: a planar loop cut at a spherical joint has a redundant
one) and the dependent coordinates u (pivot columns); the other coordinates v are
independent. Lee, Sohn, Kim and Yoo, §4.1, write the partitioned equations with the same
u (dependent) and v (independent).
"""

import dataclasses

import numpy as np

RANK_TOLERANCE = 1e-9     # a pivot below this × the largest |entry| of Φ_q counts as zero


@dataclasses.dataclass(frozen=True)
class Partition:
    """rows: the independent equations of Φ (indices); u: the dependent coordinates, one per
    independent equation; v: the independent coordinates (the mechanism's degrees of
    freedom), both sorted. condition: the condition number of Φ_u where it was chosen."""

    rows: tuple
    u: tuple
    v: tuple
    condition: float


def full_pivoting(A, columns, tolerance=RANK_TOLERANCE):
    """(pivot rows, pivot columns) of Gaussian elimination with full pivoting on A (m, k),
    pivots taken only in `columns`; stops when every remaining candidate is below
    tolerance × max |A|. The number of pivots is the rank of A[:, columns]."""
    A = np.array(A, dtype=float)
    rows, cols = list(range(A.shape[0])), list(columns)
    scale = max(float(np.abs(A).max(initial=0.0)), 1e-300)
    pivot_rows, pivot_cols = [], []
    while rows and cols:
        block = np.abs(A[np.ix_(rows, cols)])
        i, j = np.unravel_index(int(np.argmax(block)), block.shape)
        if block[i, j] <= tolerance * scale:
            break
        r, c = rows.pop(i), cols.pop(j)
        pivot_rows.append(r)
        pivot_cols.append(c)
        for other in rows:
            A[other] -= (A[other, c] / A[r, c]) * A[r]
    return pivot_rows, pivot_cols


def partition(Phi_q, independent=None):
    """The Partition of Φ_q (m, n). independent: the coordinates wanted as v (a
    mechanism's motors), or None to let the pivoting choose. ValueError when the wanted v
    cannot be independent: the remaining columns cannot solve every independent equation
    (the loop locks some of `independent`, or they are fewer than the degrees of freedom
    the loop leaves, or more)."""
    m, n = Phi_q.shape
    rows, _ = full_pivoting(Phi_q, range(n))
    rank = len(rows)
    candidates = range(n) if independent is None else [
        j for j in range(n) if j not in set(independent)]
    _, u = full_pivoting(Phi_q[rows], candidates)
    if len(u) < rank:
        raise ValueError(f"the coordinates {sorted(independent)} cannot all be independent: "
                         f"the loop's {rank} independent equations leave "
                         f"{n - rank} degrees of freedom and bind the chosen ones")
    v = tuple(j for j in range(n) if j not in set(u))
    if independent is not None and tuple(sorted(independent)) != v:
        raise ValueError(f"{len(independent)} coordinates chosen as independent, but the loop "
                         f"leaves {n - rank} degrees of freedom")
    u = tuple(sorted(u))
    condition = float(np.linalg.cond(Phi_q[np.ix_(rows, u)])) if u else 1.0
    return Partition(tuple(sorted(rows)), u, v, condition)
