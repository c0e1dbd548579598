"""The joint-torque regressor: τ = Y(q, q̇, q̈) π, linear in every body's inertial parameters.

The Newton–Euler equations of one body (Craig, Introduction to Robotics, §6.5, eqs. 6.45–6.46
written about the body frame's origin instead of the centre of mass; Lynch & Park, Modern
Robotics, §8.2) are linear in its ten parameters

    π_i = [m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz]

(c the centre of mass, I the inertia about the body frame's origin, body axes; kg, kg·m,
kg·m²): with ω, α the body's angular velocity and acceleration and a the acceleration of
its origin minus gravity, all in body axes,

    f = m a + (α× + ω×ω×) (m c)
    n = I α + ω × (I ω) − a × (m c)

is the wrench (force, moment about the origin) the body needs (Atkeson, An & Hollerbach,
"Estimation of inertial parameters of manipulator loads and links", IJRR 5(3), 1986).
Each joint carries the wrenches of the bodies beyond it (the inward recursion): column
block i of Y holds, in row j ≤ i, joint j's share S_jᵀ of body i's wrench. Everything is
evaluated in the base frame from rnea.py's outward pass, batched over states.
"""

import numpy as np

from ..spatial.rotations import cross
from .kinematics import forward_kinematics
from .rnea import outward_pass

PARAMETERS = ("m", "mc_x", "mc_y", "mc_z", "I_xx", "I_xy", "I_yy", "I_xz", "I_yz", "I_zz")
"""The ten inertial parameters of a body, in the regressor's column order (Pinocchio's)."""


def inertial_parameters(mass, com, inertia):
    """π (10,) of a body: mass [kg], com (3,) [m] and inertia (3, 3) [kg·m²] about the centre
    of mass, in the body frame → the PARAMETERS, inertia moved to the frame origin
    (parallel axes: I_o = I_c + m (cᵀc E − c cᵀ), Craig §6.3)."""
    c = np.asarray(com, dtype=float)
    I = np.asarray(inertia, dtype=float) + mass * (c @ c * np.eye(3) - np.outer(c, c))
    return np.array([mass, *(mass * c), I[0, 0], I[0, 1], I[1, 1], I[0, 2], I[1, 2], I[2, 2]])


def body_from_parameters(pi):
    """(mass, com (3,), inertia (3, 3) about the centre of mass) from π (10,); the inverse of
    inertial_parameters. ValueError for a mass that is not positive."""
    mass = float(pi[0])
    if not mass > 0.0:
        raise ValueError(f"mass must be > 0 to have a centre of mass, got {mass}")
    c = np.asarray(pi[1:4], dtype=float) / mass
    I_o = np.array([[pi[4], pi[5], pi[7]], [pi[5], pi[6], pi[8]], [pi[7], pi[8], pi[9]]])
    return mass, c, I_o - mass * (c @ c * np.eye(3) - np.outer(c, c))


def model_parameters(model):
    """π (10 n_b,) of every body of `model` (payloads included), body order."""
    return np.concatenate([inertial_parameters(m, c, I) for m, c, I in
                           zip(model.mass, model.com, model.inertia)])


def regressor_batch(model, q, qd, qdd):
    """Y (N, n, 10 n) for N states (N, n) of a model without mimic joints: τ = Y π with π
    = model_parameters(model); gravity included (model.gravity)."""
    kin = forward_kinematics(model, q)
    w, v, wd, vd = outward_pass(kin, qd, qdd, model.gravity)
    # each body's motion in its own axes: ω, α, and its origin's acceleration a
    # (spatial velocity (ω, v) about the base origin: the origin o moves at v + ω × o)
    a = vd + cross(wd, kin.o) + cross(w, v + cross(w, kin.o))
    Rt = np.swapaxes(kin.R, -1, -2)
    w_b, al_b, a_b = (np.einsum("...ab,...b->...a", Rt, x) for x in (w, wd, a))
    A_f, A_n = body_blocks(w_b, al_b, a_b)                    # (N, n, 3, 10) each
    # to base axes, moment about the base origin: n_0 = R n + o × (R f)
    f = kin.R @ A_f
    n_0 = kin.R @ A_n + cross(kin.o[..., None, :], np.swapaxes(f, -1, -2)).swapaxes(-1, -2)
    # joint j's share of body i's wrench: S_j · (n_0, f) for i ≥ j
    share = (np.einsum("...ja,...iak->...jik", kin.S_ang, n_0)
             + np.einsum("...ja,...iak->...jik", kin.S_lin, f))      # (N, j, i, 10)
    N, n = q.shape
    beyond = np.triu(np.ones((n, n), dtype=bool))                    # i ≥ j
    return (share * beyond[None, :, :, None]).reshape(N, n, 10 * n)


def body_blocks(w, alpha, a):
    """(A_f, A_n), each (..., 3, 10): f = A_f π and n = A_n π (module docstring), from ω, α
    and a (..., 3) in body axes."""
    shape = w.shape[:-1]
    A_f = np.zeros(shape + (3, 10))
    A_n = np.zeros(shape + (3, 10))
    A_f[..., :, 0] = a
    # (α× + ω×ω×) as a matrix acting on m c: its columns are the images of the unit vectors
    for k in range(3):
        e = np.zeros(3)
        e[k] = 1.0
        A_f[..., :, 1 + k] = cross(alpha, e) + cross(w, cross(w, e))
        A_n[..., :, 1 + k] = -cross(a, e)
    A_n[..., :, 4:] = inertia_map(alpha) + cross_columns(w, inertia_map(w))
    return A_f, A_n


def inertia_map(x):
    """L(x) (..., 3, 6) with L(x) [I_xx, I_xy, I_yy, I_xz, I_yz, I_zz] = I x."""
    L = np.zeros(x.shape[:-1] + (3, 6))
    X, Y, Z = x[..., 0], x[..., 1], x[..., 2]
    L[..., 0, 0], L[..., 0, 1], L[..., 0, 3] = X, Y, Z
    L[..., 1, 1], L[..., 1, 2], L[..., 1, 4] = X, Y, Z
    L[..., 2, 3], L[..., 2, 4], L[..., 2, 5] = X, Y, Z
    return L


def cross_columns(w, B):
    """w × (each column of B): (..., 3) and (..., 3, k) → (..., 3, k)."""
    return cross(w[..., None, :], np.swapaxes(B, -1, -2)).swapaxes(-1, -2)
