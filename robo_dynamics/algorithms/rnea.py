"""Recursive Newton–Euler inverse dynamics: τ = M(q) q̈ + C(q, q̇) q̇ + g(q) − Jᵀ(−F_tip).

Craig, Introduction to Robotics, §6.5 gives the recursion in link frames
(outward: ω, ω̇, v̇; inward: f, n; τ = nᵀẐ revolute, fᵀẐ prismatic); Lynch & Park, Modern
Robotics, §8.3 gives the same in twists and wrenches. Here every quantity is in the base
frame about its origin, so the frame changes vanish and each pass is a running sum:

    outward  V_i = Σ_{j≤i} S_j q̇_j,   V̇_i = V̇_0 + Σ_{j≤i} (S_j q̈_j + [ad_{V_j}] S_j q̇_j)
             with V̇_0 = (0, −g): gravity as a base acceleration (Craig §6.5)
    body     F_i = G_i V̇_i − [ad_{V_i}]ᵀ G_i V_i            (Newton–Euler, §8.2.2)
    inward   W_i = Σ_{k≥i} F_k  (+ F_tip on the last body)
    joint    τ_i = S_iᵀ W_i

G_i is the spatial inertia of body i about the base origin.
"""

import numpy as np

from ..spatial.rotations import cross
from .kinematics import body_twists, forward_kinematics


def rnea_batch(model, q, qd, qdd, f_tip=None, gravity=None, kin=None):
    """Inverse dynamics for N states: q, qd, qdd of shape (N, n) → τ (N, n) [N·m or N].

    f_tip: optional (N, 6) wrench [force (N); torque (N·m)] that the tip exerts on the
        environment, expressed at the tip_link origin in base-frame axes.
    gravity: (3,) [m/s², base frame]; default model.gravity; zeros gives no gravity.
    kin: forward kinematics of q if already computed.
    """
    kin = forward_kinematics(model, q) if kin is None else kin
    g = model.gravity if gravity is None else np.asarray(gravity, dtype=float)
    w, v, wd, vd = outward_pass(kin, qd, qdd, g)
    f_ang, f_lin = body_wrenches(model, kin, w, v, wd, vd)
    if f_tip is not None:
        force, torque = f_tip[..., :3], f_tip[..., 3:]
        f_lin[..., -1, :] += force
        f_ang[..., -1, :] += torque + cross(kin.tip_p, force)
    # inward pass: W_i = Σ_{k≥i} F_k
    W_ang = np.cumsum(f_ang[..., ::-1, :], axis=-2)[..., ::-1, :]
    W_lin = np.cumsum(f_lin[..., ::-1, :], axis=-2)[..., ::-1, :]
    return np.einsum("...a,...a->...", kin.S_ang, W_ang) + np.einsum(
        "...a,...a->...", kin.S_lin, W_lin)


def outward_pass(kin, qd, qdd, g):
    """Twists V_i = (ω, v) and spatial accelerations V̇_i = (ω̇, v̇) of every body, gravity
    included as the base acceleration V̇_0 = (0, −g): per-joint increments, then running sums."""
    w, v = body_twists(kin, qd)
    dw = kin.S_ang * qdd[..., None] + cross(w, kin.S_ang) * qd[..., None]
    dv = kin.S_lin * qdd[..., None] + (cross(v, kin.S_ang) + cross(w, kin.S_lin)) * qd[..., None]
    return w, v, np.cumsum(dw, axis=-2), np.cumsum(dv, axis=-2) - g


def body_wrenches(model, kin, w, v, wd, vd):
    """F_i = G_i V̇_i − [ad_{V_i}]ᵀ G_i V_i for every body, about the base origin.

    With c the centre of mass and I_c the inertia about it (base axes):
      momentum      h = m (v + ω × c),        L = I_c ω + c × h
      f_lin = m (v̇ + ω̇ × c) + ω × h
      f_ang = I_c ω̇ + c × m (v̇ + ω̇ × c) + ω × L + v × h
    """
    m = model.mass[:, None]
    c = kin.com
    h = m * (v + cross(w, c))
    L = np.einsum("...ab,...b->...a", kin.inertia, w) + cross(c, h)
    ma = m * (vd + cross(wd, c))
    f_lin = ma + cross(w, h)
    f_ang = (np.einsum("...ab,...b->...a", kin.inertia, wd) + cross(c, ma)
             + cross(w, L) + cross(v, h))
    return f_ang, f_lin


def gravity_batch(model, q, gravity=None):
    """g(q) = rnea(q, 0, 0) for N states (N, n) → (N, n)."""
    zero = np.zeros_like(q)
    return rnea_batch(model, q, zero, zero, gravity=gravity)


def bias_batch(model, q, qd):
    """b(q, q̇) = C(q, q̇) q̇ + g(q) = rnea(q, q̇, 0) for N states."""
    return rnea_batch(model, q, qd, np.zeros_like(q))


def rnea(model, q, qd, qdd, f_tip=None, gravity=None):
    """Inverse dynamics for one state (n,) → τ (n,); see rnea_batch."""
    f_tip = None if f_tip is None else f_tip[None]
    return rnea_batch(model, q[None], qd[None], qdd[None], f_tip, gravity)[0]


def gravity(model, q):
    """Generalised gravity g(q) (n,) [N·m or N]: the torques that hold the arm still."""
    return gravity_batch(model, q[None])[0]


def bias(model, q, qd):
    """b(q, q̇) = C(q, q̇) q̇ + g(q) (n,)."""
    return bias_batch(model, q[None], qd[None])[0]
