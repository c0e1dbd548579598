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
change apart. Each loop's rows are taken in the axes of the body its two branches hang from
(their common ancestor), where they depend on the loop's joints alone: in base axes a turn
of the joints above the loop turns the rows, and a planar loop's rows chosen in base axes
pass through a singular choice (the loop's plane turned a quarter) where the mechanism
itself is regular. The rows of each block are chosen at the reference by full pivoting
(partition.py). The branch of the mechanism is the signs at its reference pose.

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
    and kin (tree_dynamics.tree_kinematics) at the reference pose, where the rows are chosen
    and `reference` (the signs there) is taken."""

    def __init__(self, tree, closures, u, Phi_q, kin):
        self.ancestors, self.row_ranges, offset = [], [], 0
        groups = []
        for c in closures:
            self.ancestors.append(common_ancestor(tree, c))
            self.row_ranges.append((c.kind, offset))
            groups.append((set(range(offset, offset + c.rows)), loop_joints(tree, c) & set(u)))
            offset += c.rows
        merged = []                          # loops grouped while they share a coordinate
        for rows, columns in groups:
            for other in [m for m in merged if m[1] & columns]:
                merged.remove(other)
                rows, columns = rows | other[0], columns | other[1]
            merged.append((rows, columns))
        local = self.local(Phi_q, kin)
        self.blocks = []
        for rows, columns in merged:
            rows, columns = sorted(rows), sorted(columns)
            if not columns:
                continue
            chosen, _ = full_pivoting(local[np.ix_(rows, columns)], range(len(columns)))
            if len(chosen) < len(columns):
                raise ValueError("the loops' dependent coordinates are singular at the "
                                 "reference pose")
            self.blocks.append((sorted(rows[k] for k in chosen), columns))
        self.reference = self.signs(Phi_q, kin)

    def local(self, Phi_q, kin):
        """Φ_q (m, n) with each loop's position and rotation rows in its ancestor's axes (a
        revolute closure's two alignment rows are scalars: kept)."""
        out = np.array(Phi_q, dtype=float)
        for (kind, offset), body in zip(self.row_ranges, self.ancestors):
            if body == BASE:
                continue
            R = kin.R[body]
            out[offset:offset + 3] = R.T @ out[offset:offset + 3]
            if kind == "weld":
                out[offset + 3:offset + 6] = R.T @ out[offset + 3:offset + 6]
        return out

    def signs(self, Phi_q, kin):
        """The sign (+1, −1, or 0 where |det|² < SINGULAR × Hadamard's bound) of det of each
        block at the pose of Φ_q (m, n, every row) and kin, a tuple."""
        local = self.local(Phi_q, kin)
        out = []
        for rows, columns in self.blocks:
            A = local[np.ix_(rows, columns)]
            det = float(np.linalg.det(A))
            bound = float(np.prod(np.sum(A * A, axis=1)))
            out.append(0 if not det * det > SINGULAR * bound else (1 if det > 0 else -1))
        return tuple(out)
