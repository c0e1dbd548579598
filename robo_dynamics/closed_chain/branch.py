"""The assembly branch of a mechanism driven by its motors.

With the motors θ as the independent coordinates, the loops close at one θ in several ways
(a four-bar open or crossed, a Delta's platform below its motors or above them). Two closed
poses of one θ are joined by no path of the closed mechanism that keeps Φ_u (the partition's
rows and dependent columns) invertible: along such a path the dependent coordinates follow
the motors by the implicit function theorem (Lee, Sohn, Kim and Yoo, "Construction of System
Jacobian in the Equations of Motion Using Velocity Transformation Technique", §4.1, eq. 9),
and det Φ_u keeps its sign. Where two branches meet, det Φ_u = 0 (the mechanism gains a
degree of freedom the motors cannot hold).

So a closed pose carries its branch as the signs of det Φ_u, one per block: Φ_u at a closed
pose is block diagonal over the groups of loops that share a dependent coordinate (a row of
a loop depends on the joints between its two links only: those above the loop move both of
its frames alike, so their columns vanish where the loop is closed). Loops that share no
dependent coordinate change branch each on its own, and one sign per block tells each
change apart. Each loop's rows are in the axes of the body its two branches hang from
(their common ancestor; closures.in_ancestor_axes, as the mechanism's Φ_q), where they
depend on the loop's joints alone: in base axes a turn of the joints above the loop turns
the rows, and a planar loop's rows chosen in base axes pass through a singular choice (the
loop's plane turned a quarter) where the mechanism itself is regular. The rows of each
block are chosen at the reference by full pivoting (partition.py). The branch of the
mechanism is the signs at its reference pose.

The signs are a necessary condition: they tell the branches apart that meet at det Φ_u = 0,
the ones of four-bars, parallelograms and Deltas. A mechanism whose branches at one θ share
their signs (cuspidal ones, e.g. some 3-RPR platforms) is kept on its branch by continuation
from the reference (mechanism.py), which the signs then only check.
"""

import numpy as np

from .partition import full_pivoting
from .tree import BASE

SINGULAR = 1e-16    # det² / Hadamard's bound below this: the sign cannot be told (0)


def loop_joints(tree, closure):
    """The joints (indices) between a closure's two links in the tree: those its rows
    depend on at a closed pose."""
    paths = [_path(tree, link) for link in (closure.link_a, closure.link_b)]
    return set(np.flatnonzero(paths[0] != paths[1]).tolist())


def common_ancestor(tree, closure):
    """The deepest body both of a closure's links hang from (BASE for the base)."""
    both = np.flatnonzero((_path(tree, closure.link_a) > 0) & (_path(tree, closure.link_b) > 0))
    return int(both.max()) if len(both) else BASE      # parents come before their children


def _path(tree, link):
    body = tree.link_frame(link)[0]
    return tree.path[body] if body != BASE else np.zeros(tree.dof)


class Branch:
    """The sign of det Φ_u of each block, its loops' rows in their ancestors' axes.

    tree, closures: the mechanism's; u: its dependent coordinates (indices); Phi_q (m, n)
    at the reference pose, each loop's rows in its ancestor's axes, where the rows are
    chosen and `reference` (the signs there) is taken."""

    def __init__(self, tree, closures, u, Phi_q):
        offset, groups = 0, []
        for c in closures:
            groups.append((set(range(offset, offset + c.rows)), loop_joints(tree, c) & set(u)))
            offset += c.rows
        merged = []          # loops grouped while they share a coordinate, and the loops
        for rows, columns in groups:
            loops = [(rows, columns)]
            for other in [m for m in merged if m[1] & columns]:
                merged.remove(other)
                rows, columns, loops = rows | other[0], columns | other[1], loops + other[2]
            merged.append((rows, columns, loops))
        local = np.asarray(Phi_q, dtype=float)
        self.blocks = []
        for rows, columns, loops in merged:
            if columns:
                self.blocks += (_triangular(local, loops)
                                or [_chosen(local, sorted(rows), sorted(columns))])
        self.reference = self.signs(Phi_q)

    def signs(self, Phi_q):
        """The sign (+1, −1, or 0 where |det|² < SINGULAR × Hadamard's bound) of det of each
        block at the pose of Φ_q (m, n, every row, in the ancestors' axes), a tuple."""
        local = np.asarray(Phi_q, dtype=float)
        out = []
        for rows, columns in self.blocks:
            A = local[np.ix_(rows, columns)]
            det = float(np.linalg.det(A))
            bound = float(np.prod(np.sum(A * A, axis=1)))
            out.append(0 if not det * det > SINGULAR * bound else (1 if det > 0 else -1))
        return tuple(out)


def _chosen(Phi_q, rows, columns):
    """(rows, columns) of a block: as many of `rows` as `columns`, chosen by full pivoting;
    ValueError where they cannot be (singular at the reference)."""
    chosen, _ = full_pivoting(Phi_q[np.ix_(rows, columns)], range(len(columns)))
    if len(chosen) < len(columns):
        raise ValueError("the loops' dependent coordinates are singular at the reference "
                         "pose")
    return sorted(rows[k] for k in chosen), columns


def _triangular(Phi_q, loops):
    """A group's block as the diagonal blocks of a block-triangular Φ_u, or None: the loops
    taken by how few dependent coordinates they involve, each with those the loops before
    it left (a loop's rows are zero on the coordinates of no joint between its links).
    Then det Φ_u is the product of theirs and each sign is kept on its own: two loops that
    change branch together (an MG400's two parallelograms) are told apart."""
    out, taken = [], set()
    for rows, columns in sorted(loops, key=lambda loop: len(loop[1])):
        new = sorted(columns - taken)
        if not new:
            return None
        try:
            out.append(_chosen(Phi_q, sorted(rows), new))
        except ValueError:
            return None
        taken |= columns
    return out if len(out) > 1 else None
