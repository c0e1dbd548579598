"""The system Jacobian of a closed mechanism's equations of motion, analytically.

Lee, Sohn, Kim and Yoo, "Construction of System Jacobian in the Equations of Motion Using
Velocity Transformation Technique", eq. 27–29: with Y = [w; q] (w the joint velocities,
the paper's u in eq. 27, written w here since u names the dependent coordinates of §4.1)

    G(Y, Y′) = [ M(q) ẇ + h(q, w) + Φ_qᵀ λ − Sᵀτ − τ_s ]  = 0,
               [ w − q̇                                 ]

    ∂G/∂Y  = [[∂τ_ID/∂q̇, ∂τ_ID/∂q + ∂(Φ_qᵀλ)/∂q], [I, 0]],   ∂G/∂Y′ = [[M, 0], [0, −I]]

with τ_ID(q, q̇, q̈) = M q̈ + h the tree's inverse dynamics at (q, w, ẇ) (and τ_s = −K (q −
q_ref) − D w the joint springs' and dampers', closed_chain/springs.py, adding K and D). Its
derivatives come from the recursions of tree_dynamics.py differentiated in the base
frame: joint j's motion turns its whole subtree about its screw axis S_j, so for a body k
below j (spatial cross products [a×], dual [a×*], Featherstone, Rigid Body Dynamics
Algorithms, §2.9)

    ∂S_k/∂q_j = S_j × S_k,    ∂G_k/∂q_j = S_j ×* G_k − G_k S_j ×,
    ∂V_k/∂q_j = S_j × (V_k − V_j),
    ∂V̇_k/∂q_j = S_j × (V̇_k − V̇_j) − (S_j × V_j) × (V_k − V_j)

(the last by the Jacobi identity), and ∂V_k/∂q̇_j = S_j, ∂V̇_k/∂q̇_j = Σ over the path from j
to k of (∂V_m × S_m) q̇_m + V_j × S_j. A closure's force (point rows) and moment (weld rows,
and a revolute closure's axis rows, whose moment also turns with the links) act at its
frames; their derivatives add the frames' motion to the recursions'.
"""

import numpy as np

from ...closed_chain.closures import ClosureFrames
from ...closed_chain.tree import BASE
from ...closed_chain.tree_dynamics import (ancestors, tree_kinematics, tree_mass_matrix,
                                           tree_motion)
from ...spatial.inertia import spatial_inertia_about_origin
from ...spatial.rotations import cross


def motion_cross(a, b):
    """a × b for twists (angular, linear) (6,)."""
    return np.concatenate((cross(a[:3], b[:3]), cross(a[:3], b[3:]) + cross(a[3:], b[:3])))


def force_cross(a, f):
    """a ×* f for a twist a and a wrench f = (moment, force) (6,)."""
    return np.concatenate((cross(a[:3], f[:3]) + cross(a[3:], f[3:]), cross(a[:3], f[3:])))


def _subtree(tree, j):
    """(n,) bool: the bodies at or below body j."""
    return np.array([ancestors(tree, k)[j] for k in range(tree.dof)])


def rnea_derivatives(tree, q, qd, qdd):
    """(∂τ/∂q, ∂τ/∂q̇), each (n, n), of τ = M(q) q̈ + h(q, q̇) (gravity the tree's)."""
    n = tree.dof
    kin = tree_kinematics(tree, q)
    m = tree_motion(tree, kin, qd, qdd, tree.gravity)
    S = np.concatenate((kin.S_ang, kin.S_lin), axis=1)                   # (n, 6)
    V = np.concatenate((m.w, m.v), axis=1)
    A = np.concatenate((m.wd, m.vd), axis=1)
    G = spatial_inertia_about_origin(tree.mass, kin.com, kin.inertia)
    F = np.array([G[k] @ A[k] + force_cross(V[k], G[k] @ V[k]) for k in range(n)])
    W = F.copy()
    for i in range(n - 1, -1, -1):
        if tree.parent[i] != BASE:
            W[tree.parent[i]] += W[i]
    below = [_subtree(tree, j) for j in range(n)]
    dtau_dq, dtau_dqd = np.zeros((n, n)), np.zeros((n, n))
    for j in range(n):
        dF = np.zeros((n, 6))                      # ∂F_k/∂q_j
        dF_v = np.zeros((n, 6))                    # ∂F_k/∂q̇_j
        dA_v = {}                                  # ∂V̇_k/∂q̇_j along the subtree
        for k in np.flatnonzero(below[j]):
            dV = motion_cross(S[j], V[k] - V[j])
            dA = motion_cross(S[j], A[k] - A[j]) - motion_cross(motion_cross(S[j], V[j]),
                                                                 V[k] - V[j])
            dG = np.array([force_cross(S[j], G[k][:, c]) for c in range(6)]).T \
                - G[k] @ np.array([motion_cross(S[j], e) for e in np.eye(6)]).T
            GV = G[k] @ V[k]
            dF[k] = (dG @ A[k] + G[k] @ dA + force_cross(dV, GV)
                     + force_cross(V[k], dG @ V[k] + G[k] @ dV))
            parent = tree.parent[k]
            previous = dA_v.get(parent, np.zeros(6)) if k != j else np.zeros(6)
            dA_v[k] = previous + motion_cross(S[j], S[k]) * qd[k] + (
                motion_cross(V[k], S[k]) if k == j else 0.0)
            dF_v[k] = (G[k] @ dA_v[k] + force_cross(S[j], GV)
                       + force_cross(V[k], G[k] @ S[j]))
        dW, dW_v = dF.copy(), dF_v.copy()
        for i in range(n - 1, -1, -1):
            if tree.parent[i] != BASE:
                dW[tree.parent[i]] += dW[i]
                dW_v[tree.parent[i]] += dW_v[i]
        for i in range(n):
            dS = motion_cross(S[j], S[i]) if below[j][i] and i != j else np.zeros(6)
            dtau_dq[i, j] = dS @ W[i] + S[i] @ dW[i]
            dtau_dqd[i, j] = S[i] @ dW_v[i]
    return dtau_dq, dtau_dqd


def constraint_force_derivative(tree, closures, q, lam):
    """∂(Φ_qᵀλ)/∂q (n, n) for multipliers λ (all rows of Φ, in closures' order; base-frame
    force rows, weld moment rows, revolute axis rows)."""
    n = tree.dof
    kin = tree_kinematics(tree, q)
    S = np.concatenate((kin.S_ang, kin.S_lin), axis=1)
    out = np.zeros((n, n))
    offset = 0
    for c, (body_a, R_a, p_a, body_b, R_b, p_b) in zip(
            closures, ClosureFrames(tree, closures, kin).poses):
        force = lam[offset:offset + 3]
        moment, moment_rate = np.zeros(3), None
        if c.kind == "weld":
            moment = lam[offset + 3:offset + 6]
        elif c.kind == "revolute":
            moment, moment_rate = _axis_moment(tree, S, body_a, R_a, body_b, R_b,
                                               lam[offset + 3:offset + 5])
        offset += c.rows
        if moment_rate is not None:      # the axis rows' moment turns with the links
            for body, sign in ((body_b, 1.0), (body_a, -1.0)):
                path = ancestors(tree, body)
                out[path] += sign * S[path, :3] @ moment_rate.T
        for body, point, sign in ((body_b, p_b, 1.0), (body_a, p_a, -1.0)):
            if body == BASE:
                continue
            wrench = sign * np.concatenate((cross(point, force) + moment, force))
            path = ancestors(tree, body)
            for j in range(n):
                if not path[j]:
                    continue                      # q_j does not move the point
                below = _subtree(tree, j)
                point_rate = cross(S[j, :3], point) + S[j, 3:]     # the point moved by q_j
                d_wrench = sign * np.concatenate((cross(point_rate, force), np.zeros(3)))
                for i in np.flatnonzero(path):
                    dS = motion_cross(S[j], S[i]) if below[i] and i != j else np.zeros(6)
                    out[i, j] += dS @ wrench + S[i] @ d_wrench
    return out


def _axis_moment(tree, S, body_a, R_a, body_b, R_b, mu):
    """(M (3,), ∂M/∂q (n, 3)): the moment [N·m, base axes] a revolute closure's two axis rows
    put on link b (−M on link a) for their multipliers μ: the rows are (x_k × z_b)ᵀ(ω_a −
    ω_b), so M = −Σ_k μ_k x_k × z_b; q_j turns x_k (on link a's path) and z_b (on link
    b's) about its axis: ∂x/∂q_j = S_j,ω × x."""
    on_a, on_b = ancestors(tree, body_a), ancestors(tree, body_b)
    z = R_b[:, 2]
    M, rate = np.zeros(3), np.zeros((tree.dof, 3))
    for k in (0, 1):
        x = R_a[:, k]
        M -= mu[k] * cross(x, z)
        for j in np.flatnonzero(on_a | on_b):
            dx = cross(S[j, :3], x) if on_a[j] else np.zeros(3)
            dz = cross(S[j, :3], z) if on_b[j] else np.zeros(3)
            rate[j] -= mu[k] * (cross(dx, z) + cross(x, dz))
    return M, rate


def system_jacobian(chain, q, w, w_dot, lam):
    """(∂G/∂Y, ∂G/∂Y′), each (2n, 2n), of eq. 27 at Y = [w; q], Y′ = [ẇ; q̇]."""
    tree, n = chain.tree, chain.tree.dof
    dtau_dq, dtau_dqd = rnea_derivatives(tree, q, w, w_dot)
    every = np.zeros(sum(c.rows for c in chain.closures))
    every[list(chain.partition.rows)] = lam
    dforce_dq = constraint_force_derivative(tree, chain.closures, q, every)
    if chain.springs is not None:          # G's −τ_s = K (q − q_ref) + D w (springs.py)
        dtau_dqd = dtau_dqd + np.diag(chain.springs.damping)
        dtau_dq = dtau_dq + np.diag(chain.springs.stiffness)
    dG_dY = np.block([[dtau_dqd, dtau_dq + dforce_dq], [np.eye(n), np.zeros((n, n))]])
    dG_dYp = np.block([[tree_mass_matrix(tree, q), np.zeros((n, n))],
                       [np.zeros((n, n)), -np.eye(n)]])
    return dG_dY, dG_dYp
