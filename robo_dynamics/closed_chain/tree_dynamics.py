"""Kinematics and dynamics of a KinematicTree (one state at a time, plain NumPy).

The recursions of algorithms/rnea.py, with "the body before" read as "the parent body":
every spatial vector is in the base frame about its origin, as the pair (angular, linear)
(Lynch & Park, Modern Robotics, §8.2.2), so that

    outward  V_i = V_λ(i) + S_i q̇_i,   V̇_i = V̇_λ(i) + S_i q̈_i + [ad_{V_i}] S_i q̇_i,
             V̇_base = (0, −g)
    body     F_i = G_i V̇_i − [ad_{V_i}]ᵀ G_i V_i
    inward   W_i = F_i + Σ_{c: λ(c) = i} W_c,    τ_i = S_iᵀ W_i

(Featherstone, Rigid Body Dynamics Algorithms, §5.3, the recursive Newton–Euler algorithm
on a tree with parent array λ). M(q) = Σ_i J_iᵀ G_i J_i, the Lagrangian form, with J_i the
spatial Jacobian of body i (its columns S_j for the joints j from the base to i).
"""

import collections

import numpy as np

from ..algorithms.rnea import body_wrenches
from ..spatial.inertia import spatial_inertia_about_origin
from ..spatial.rotations import axis_angle_matrix, cross
from .tree import BASE

TreeKinematics = collections.namedtuple("TreeKinematics", [
    "R",        # (n, 3, 3) rotation base → body i frame
    "o",        # (n, 3) [m] origin of body i
    "S_ang",    # (n, 3) angular part of screw axis i (base frame)
    "S_lin",    # (n, 3) linear part of screw axis i (about the base origin)
    "com",      # (n, 3) [m] centre of mass of body i
    "inertia",  # (n, 3, 3) [kg·m²] inertia of body i about its COM, base axes
])

TreeMotion = collections.namedtuple("TreeMotion", ["w", "v", "wd", "vd"])
"""Per body (n, 3): ω and v (the twist about the base origin), ω̇ and v̇ (its derivative)."""


def tree_kinematics(tree, q):
    """Poses and screw axes of every body for q (n,) [rad or m]."""
    n = tree.dof
    prismatic = tree.is_prismatic
    R_joint = axis_angle_matrix(tree.axis, np.where(prismatic, 0.0, q))
    R, o = np.empty((n, 3, 3)), np.empty((n, 3))
    S_ang, S_lin = np.empty((n, 3)), np.empty((n, 3))
    for i in range(n):
        p = tree.parent[i]
        R_p, o_p = (np.eye(3), np.zeros(3)) if p == BASE else (R[p], o[p])
        R_axis = R_p @ tree.origin_rotation[i]
        z = R_axis @ tree.axis[i]
        joint_point = o_p + R_p @ tree.origin_translation[i]
        R[i] = R_axis @ R_joint[i]
        o[i] = joint_point + (z * q[i] if prismatic[i] else 0.0)
        if prismatic[i]:
            S_ang[i], S_lin[i] = 0.0, z
        else:
            S_ang[i], S_lin[i] = z, cross(joint_point, z)
    com = o + np.einsum("nab,nb->na", R, tree.com)
    inertia = R @ tree.inertia @ np.swapaxes(R, -1, -2)
    return TreeKinematics(R, o, S_ang, S_lin, com, inertia)


def tree_motion(tree, kin, qd, qdd, gravity):
    """Twists and their derivatives of every body (gravity (3,) enters as the base's
    acceleration (0, −g); zeros for the motion alone). qd, qdd (n,).

    The outward recursion summed along each body's path (tree.path): V_i = Σ_j S_j q̇_j and
    V̇_i = V̇_base + Σ_j (S_j q̈_j + [ad_{V_j}] S_j q̇_j), over the joints j from the base to
    body i."""
    rates = np.asarray(qd, dtype=float)[:, None]                     # (n, 1)
    accelerations = np.asarray(qdd, dtype=float)[:, None]
    w = tree.path @ (kin.S_ang * rates)                               # (n, 3)
    v = tree.path @ (kin.S_lin * rates)
    wd = tree.path @ (kin.S_ang * accelerations + cross(w, kin.S_ang) * rates)
    vd = tree.path @ (kin.S_lin * accelerations
                      + (cross(v, kin.S_ang) + cross(w, kin.S_lin)) * rates) - gravity
    return TreeMotion(w, v, wd, vd)


def tree_rnea(tree, q, qd, qdd, gravity=None, kin=None):
    """τ = M(q) q̈ + C(q, q̇) q̇ + g(q) (n,) of the tree (no loop closed)."""
    kin = tree_kinematics(tree, q) if kin is None else kin
    g = tree.gravity if gravity is None else np.asarray(gravity, dtype=float)
    m = tree_motion(tree, kin, qd, qdd, g)
    return joint_forces(tree, kin, *body_wrenches(tree, kin, m.w, m.v, m.wd, m.vd))


def joint_forces(tree, kin, f_ang, f_lin):
    """τ_i = S_iᵀ W_i (n,): W_i the sum of the body wrenches (f_ang, f_lin) (n, 3) over the
    subtree from body i out (the inward recursion)."""
    W_ang, W_lin = tree.path.T @ f_ang, tree.path.T @ f_lin
    return np.einsum("na,na->n", kin.S_ang, W_ang) + np.einsum("na,na->n", kin.S_lin, W_lin)


def ancestors(tree, body):
    """The joints from the base to `body` (itself included), as a boolean mask (n,)."""
    mask = np.zeros(tree.dof, dtype=bool)
    while body != BASE:
        mask[body] = True
        body = tree.parent[body]
    return mask


def tree_mass_matrix(tree, q, kin=None):
    """M(q) (n, n) = Σ_i J_iᵀ G_i J_i (kg·m² for revolute pairs)."""
    kin = tree_kinematics(tree, q) if kin is None else kin
    G = spatial_inertia_about_origin(tree.mass, kin.com, kin.inertia)    # (n, 6, 6)
    S = np.concatenate((kin.S_ang, kin.S_lin), axis=1)                    # (n, 6)
    M = np.zeros((tree.dof, tree.dof))
    for i in range(tree.dof):
        J = S * ancestors(tree, i)[:, None]                                # rows: joints
        M += J @ G[i] @ J.T
    return M


def frame_jacobian(tree, kin, body, point):
    """(6, n) [linear; angular] Jacobian of a point of `body` (base-frame position `point`
    [m]): [v_p; ω] = J q̇ in base axes. A point of the base has a zero Jacobian."""
    J = np.zeros((6, tree.dof))
    if body == BASE:
        return J
    mask = ancestors(tree, body)
    J[:3, mask] = (kin.S_lin[mask] + cross(kin.S_ang[mask], point)).T
    J[3:, mask] = kin.S_ang[mask].T
    return J


def frame_motion(motion, body, point):
    """(v_p, ω, a_p, ω̇) of a point of `body` at base-frame `point` [m]: its velocity,
    angular velocity, classical acceleration a_p = v̇_O + ω̇ × p + ω × v_p, and ω̇."""
    if body == BASE:
        zero = np.zeros(3)
        return zero, zero, zero, zero
    w, v, wd, vd = motion.w[body], motion.v[body], motion.wd[body], motion.vd[body]
    v_p = v + cross(w, point)
    return v_p, w, vd + cross(wd, point) + cross(w, v_p), wd


def frame_pose(tree, kin, link, R_link=np.eye(3), p_link=np.zeros(3)):
    """(R, p) in the base frame of the frame (R_link, p_link) given in `link`'s frame."""
    body, R, p = tree.link_frame(link)
    R_frame, p_frame = R @ R_link, R @ p_link + p
    if body == BASE:
        return body, R_frame, p_frame
    return body, kin.R[body] @ R_frame, kin.o[body] + kin.R[body] @ p_frame

