"""Loop closures: the cut joints of a closed mechanism, as constraint equations Φ(q) = 0.

A closure joins a frame on link a to a frame on link b (each given in its link's frame):
    point     a spherical cut joint: the two origins coincide (3 equations)
    revolute  the origins coincide and the frames' z axes stay aligned (5)
    weld      the frames coincide (6)
Lee, Sohn, Kim and Yoo, "Construction of System Jacobian in the Equations of Motion Using
Velocity Transformation Technique", §5.2: the cut joint's constraint Φ, its Jacobian Φ_q
(eq. 25–26) and γ, the right-hand side of the acceleration equation Φ_q q̈ = γ. Here Φ_q
comes from the tree's frame Jacobians and γ = −(d/dt Φ_q) q̇ from the frames' accelerations
at q̈ = 0 (no gravity). All rows in base-frame axes, metres and radians;
`in_ancestor_axes` turns each loop's rows into the axes of the body both its links hang
from, as the mechanism (mechanism.py, compiled.py) uses them.
"""

import collections
import dataclasses

import numpy as np

from ..errors import URDFError
from ..spatial.rotations import cross, rotation_vector, rpy_to_matrix
from .branch import common_ancestor
from .tree import BASE
from .tree_dynamics import frame_jacobian, frame_motion, frame_pose, tree_motion

ROWS = {"point": 3, "revolute": 5, "weld": 6}
FIELDS = ("type", "link_a", "link_b", "xyz_a", "rpy_a", "xyz_b", "rpy_b")


@dataclasses.dataclass(frozen=True)
class Closure:
    """A cut joint. kind: a key of ROWS. R_a, p_a: its frame in link_a's frame (p_a [m]);
    R_b, p_b: in link_b's. For `revolute` the axis is each frame's z."""

    name: str
    kind: str
    link_a: str
    R_a: np.ndarray
    p_a: np.ndarray
    link_b: str
    R_b: np.ndarray
    p_b: np.ndarray

    @property
    def rows(self):
        return ROWS[self.kind]


def closure(name, kind, link_a, link_b, xyz_a=(0, 0, 0), rpy_a=(0, 0, 0), xyz_b=(0, 0, 0),
            rpy_b=(0, 0, 0)):
    """A Closure from URDF-style poses (xyz [m], rpy [rad]); URDFError naming the closure
    for an unknown kind or a pose that is not 3 finite numbers."""
    if kind not in ROWS:
        raise URDFError(f"loop closure '{name}': type '{kind}' is not one of {sorted(ROWS)}")
    values = {}
    for key, value in (("xyz_a", xyz_a), ("rpy_a", rpy_a), ("xyz_b", xyz_b), ("rpy_b", rpy_b)):
        array = np.asarray(value, dtype=float).reshape(-1)
        if array.shape != (3,) or not np.all(np.isfinite(array)):
            raise URDFError(f"loop closure '{name}': {key} must be 3 finite numbers, "
                            f"got {list(np.atleast_1d(value))}")
        values[key] = array
    return Closure(name, kind, str(link_a), rpy_to_matrix(values["rpy_a"]), values["xyz_a"],
                   str(link_b), rpy_to_matrix(values["rpy_b"]), values["xyz_b"])


def closures_from_parameters(parameters):
    """The closures a ROS params file carries (a nested dict, the node's ros__parameters):

        loop_closures:
          names: [rod_end]
          rod_end: {type: point, link_a: coupler, xyz_a: [0.3, 0.0, 0.0],
                    link_b: follower, xyz_b: [0.0, 0.0, 0.25]}

    (rpy_a, rpy_b default to zero, xyz to the link's origin). URDFError naming what is
    missing, unknown or malformed."""
    section = parameters.get("loop_closures")
    if section is None:
        return ()
    if not isinstance(section, dict) or not isinstance(section.get("names"), (list, tuple)):
        raise URDFError("loop_closures: expected a 'names' list and one entry per name")
    out = []
    for name in section["names"]:
        entry = section.get(name)
        if not isinstance(entry, dict):
            raise URDFError(f"loop closure '{name}': listed in loop_closures.names but "
                            f"loop_closures.{name} is missing")
        unknown = sorted(set(entry) - set(FIELDS))
        if unknown:
            raise URDFError(f"loop closure '{name}': unknown fields {unknown}; "
                            f"expected {list(FIELDS)}")
        missing = [key for key in ("type", "link_a", "link_b") if key not in entry]
        if missing:
            raise URDFError(f"loop closure '{name}': missing {missing}")
        out.append(closure(name, entry["type"], entry["link_a"], entry["link_b"],
                           **{key: entry[key] for key in FIELDS[3:] if key in entry}))
    names = [c.name for c in out]
    if len(set(names)) != len(names):
        raise URDFError(f"loop_closures: names repeat: {names}")
    return tuple(out)


class ClosureFrames:
    """Where each closure's two frames are at one state (from the tree's kinematics)."""

    def __init__(self, tree, closures, kin):
        self.poses = []
        for c in closures:
            body_a, R_a, p_a = frame_pose(tree, kin, c.link_a, c.R_a, c.p_a)
            body_b, R_b, p_b = frame_pose(tree, kin, c.link_b, c.R_b, c.p_b)
            self.poses.append((body_a, R_a, p_a, body_b, R_b, p_b))


def constraint(tree, closures, kin):
    """Φ(q) (m,): each closure's rows, in the order of `closures`."""
    rows = []
    for c, (_, R_a, p_a, _, R_b, p_b) in zip(closures, ClosureFrames(tree, closures, kin).poses):
        rows.append(p_b - p_a)
        if c.kind == "revolute":
            rows.append([R_a[:, 0] @ R_b[:, 2], R_a[:, 1] @ R_b[:, 2]])
        elif c.kind == "weld":
            rows.append(rotation_vector(R_b @ R_a.T))
    return np.concatenate(rows) if rows else np.zeros(0)


def constraint_jacobian(tree, closures, kin):
    """Φ_q (m, n): Φ̇ = Φ_q q̇. Point rows: v_b − v_a; weld rows: ω_b − ω_a (the rotation
    vector's rate where the frames coincide); revolute rows: (x_a × z_b)ᵀ(ω_a − ω_b) and the
    same with y_a, the rates of x_a·z_b and y_a·z_b."""
    rows = []
    for c, (body_a, R_a, p_a, body_b, R_b, p_b) in zip(
            closures, ClosureFrames(tree, closures, kin).poses):
        J_a = frame_jacobian(tree, kin, body_a, p_a)
        J_b = frame_jacobian(tree, kin, body_b, p_b)
        rows.append(J_b[:3] - J_a[:3])
        if c.kind == "revolute":
            z_b = R_b[:, 2]
            rows.append(np.array([cross(R_a[:, k], z_b) for k in (0, 1)]) @ (J_a[3:] - J_b[3:]))
        elif c.kind == "weld":
            rows.append(J_b[3:] - J_a[3:])
    return np.vstack(rows) if rows else np.zeros((0, tree.dof))


def gamma(tree, closures, kin, qd):
    """γ (m,) = −(d/dt Φ_q) q̇: with q̈ = 0 and no gravity, Φ̈ = −γ. qd (n,)."""
    qd = np.asarray(qd, dtype=float)
    motion = tree_motion(tree, kin, qd, np.zeros_like(qd), np.zeros(3))
    rows = []
    for c, (body_a, R_a, p_a, body_b, R_b, p_b) in zip(
            closures, ClosureFrames(tree, closures, kin).poses):
        _, w_a, acc_a, wd_a = frame_motion(motion, body_a, p_a)
        _, w_b, acc_b, wd_b = frame_motion(motion, body_b, p_b)
        rows.append(-(acc_b - acc_a))
        if c.kind == "revolute":
            z_b, dz_b = R_b[:, 2], cross(w_b, R_b[:, 2])
            out = []
            for k in (0, 1):
                x = R_a[:, k]
                dx = cross(w_a, x)
                out.append(-((cross(dx, z_b) + cross(x, dz_b)) @ (w_a - w_b)
                             + cross(x, z_b) @ (wd_a - wd_b)))
            rows.append(out)
        elif c.kind == "weld":
            rows.append(-(wd_b - wd_a))
    return np.concatenate(rows) if rows else np.zeros(0)


def in_ancestor_axes(tree, closures, kin, rows, inverse=False):
    """`rows` (m,) or (m, n), every closure's rows in base axes, with each loop's position
    rows (and a weld's rotation rows) in the axes of the body its two links hang from
    (branch.common_ancestor; the base: unchanged), at the tree's kinematics `kin`. Those
    axes turn with the joints above the loop, so the loop's rows depend on its own joints
    only: a planar loop's redundant row stays the same row however the arm above it turns.
    inverse: from those axes back to base axes (multipliers λ, forces)."""
    out, offset = np.array(rows, dtype=float), 0
    for c in closures:
        body = common_ancestor(tree, c)
        if body != BASE:
            R = kin.R[body] if inverse else kin.R[body].T
            out[offset:offset + 3] = R @ out[offset:offset + 3]
            if c.kind == "weld":
                out[offset + 3:offset + 6] = R @ out[offset + 3:offset + 6]
        offset += c.rows
    return out


ClosureWrench = collections.namedtuple("ClosureWrench", ["name", "point", "force", "moment"])
"""What a closure transmits: the force [N] and moment [N·m] that link_b exerts on link_a at
`point` [m] (the closure's frame origin on link_a), all in base axes."""


def closure_wrenches(tree, closures, kin, lam):
    """The ClosureWrench of each closure from the multipliers λ (m,) of every row of Φ (in
    the order of `closures`), where the tree's equations of motion are
    M q̈ + h = Sᵀτ − Φ_qᵀλ: a point row's λ is a force on link_a (and its opposite on
    link_b), a weld's rotation rows a moment, and a revolute's two alignment rows
    (x_a·z_b, y_a·z_b) the moments −λ_k (x_a × z_b), −λ_k (y_a × z_b)."""
    out, row = [], 0
    for c, (_, R_a, p_a, _, R_b, _) in zip(closures, ClosureFrames(tree, closures, kin).poses):
        force, moment = np.array(lam[row:row + 3], dtype=float), np.zeros(3)
        if c.kind == "revolute":
            z_b = R_b[:, 2]
            moment = -(lam[row + 3] * cross(R_a[:, 0], z_b)
                       + lam[row + 4] * cross(R_a[:, 1], z_b))
        elif c.kind == "weld":
            moment = np.array(lam[row + 3:row + 6], dtype=float)
        out.append(ClosureWrench(c.name, p_a, force, moment))
        row += c.rows
    return out
