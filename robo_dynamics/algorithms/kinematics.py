"""Forward kinematics and joint-space velocity propagation of the chain (batched).

Frames: everything returned is expressed in the base frame. A spatial vector (twist or
wrench) is a pair of 3-vectors (angular, linear) about the base origin, the space-frame form
of Lynch & Park, Modern Robotics, §8.2.2. The screw axis of joint i is
    S_i = (z_i, p_i × z_i)  revolute,    S_i = (0, z_i)  prismatic,
with z_i the joint axis and p_i a point on it (ibid. §8.3, space-frame screw axes).
"""

import collections

import numpy as np

from ..spatial.rotations import axis_angle_matrix, cross

Kinematics = collections.namedtuple("Kinematics", [
    "R",        # (N, n, 3, 3) rotation base → body i frame
    "o",        # (N, n, 3) [m] origin of body i
    "z",        # (N, n, 3) joint axis i, unit
    "S_ang",    # (N, n, 3) angular part of screw axis i
    "S_lin",    # (N, n, 3) linear part of screw axis i (about the base origin)
    "com",      # (N, n, 3) [m] centre of mass of body i
    "inertia",  # (N, n, 3, 3) [kg·m²] inertia of body i about its COM, base axes
    "tip_R",    # (N, 3, 3) rotation base → tip_link frame
    "tip_p",    # (N, 3) [m] origin of tip_link
])


def forward_kinematics(model, q):
    """Poses and screw axes of every body for joint positions q (N, n) [rad or m]."""
    N, n = q.shape
    prismatic = model.is_prismatic
    angle = np.where(prismatic, 0.0, q)
    R_joint = axis_angle_matrix(model.axis, angle)              # (N, n, 3, 3) joint motion
    R_fixed = model.origin_rotation @ R_joint                    # parent body → body i
    R = np.empty((N, n, 3, 3))
    o = np.empty((N, n, 3))
    z = np.empty((N, n, 3))
    p_joint = np.empty((N, n, 3))
    R_prev = np.broadcast_to(np.eye(3), (N, 3, 3))
    o_prev = np.zeros((N, 3))
    for i in range(n):
        p_joint[:, i] = o_prev + R_prev @ model.origin_translation[i]
        R_axis = R_prev @ model.origin_rotation[i]               # joint frame before motion
        z[:, i] = R_axis @ model.axis[i]
        R[:, i] = R_prev @ R_fixed[:, i]
        o[:, i] = p_joint[:, i]
        if prismatic[i]:
            o[:, i] += z[:, i] * q[:, i, None]
        R_prev, o_prev = R[:, i], o[:, i]
    S_ang = np.where(prismatic[:, None], 0.0, z)
    S_lin = np.where(prismatic[:, None], z, cross(p_joint, z))
    com = o + np.einsum("...ab,...b->...a", R, model.com)
    inertia = R @ model.inertia @ np.swapaxes(R, -1, -2)
    tip_R = R_prev @ model.tip_rotation
    tip_p = o_prev + R_prev @ model.tip_translation
    return Kinematics(R, o, z, S_ang, S_lin, com, inertia, tip_R, tip_p)


def body_twists(kin, qd):
    """Spatial velocity (ω_i, v_i) of every body: V_i = Σ_{j≤i} S_j q̇_j (Lynch & Park §8.4)."""
    w = np.cumsum(kin.S_ang * qd[..., None], axis=-2)
    v = np.cumsum(kin.S_lin * qd[..., None], axis=-2)
    return w, v

