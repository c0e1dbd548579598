"""Rotation matrices, skew matrices and cross products (NumPy, batched over leading axes)."""

import math

import numpy as np


def rpy_to_matrix(rpy):
    """URDF fixed-axis roll-pitch-yaw to a rotation matrix: R = Rz(yaw) Ry(pitch) Rx(roll)."""
    roll, pitch, yaw = (float(v) for v in rpy)
    cr, sr = np.cos(roll), np.sin(roll)
    cp, sp = np.cos(pitch), np.sin(pitch)
    cy, sy = np.cos(yaw), np.sin(yaw)
    return np.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ])


def homogeneous(R, p):
    """4×4 homogeneous transform from a rotation R (3×3) and a translation p (3,)."""
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = p
    return T


def skew(v):
    """[v]×, the 3×3 matrix with [v]× w = v × w; v has shape (..., 3)."""
    v = np.asarray(v, dtype=float)
    S = np.zeros(v.shape[:-1] + (3, 3))
    S[..., 0, 1] = -v[..., 2]
    S[..., 0, 2] = v[..., 1]
    S[..., 1, 0] = v[..., 2]
    S[..., 1, 2] = -v[..., 0]
    S[..., 2, 0] = -v[..., 1]
    S[..., 2, 1] = v[..., 0]
    return S


def cross(a, b):
    """a × b over the last axis (size 3), broadcasting the leading axes.

    Written out because np.cross costs several microseconds per call on small arrays; one
    pair of vectors (the closed chain's recursions) is faster still as Python floats.
    """
    if a.ndim == 1 and b.ndim == 1:
        a0, a1, a2 = a.tolist()
        b0, b1, b2 = b.tolist()
        return np.array((a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0))
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack((a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0), axis=-1)


def axis_angle_matrix(axis, angle):
    """Rodrigues' formula: rotation by `angle` (rad, shape (...)) about unit `axis`
    (shape (..., 3)).

    R = I + sin θ [a]× + (1 − cos θ) [a]×²
    """
    K = skew(axis)
    s = np.sin(angle)[..., None, None]
    c = np.cos(angle)[..., None, None]
    return np.eye(3) + s * K + (1.0 - c) * (K @ K)


def rotation_vector(R):
    """φ (3,) with R = exp([φ]×), |φ| ≤ π (the logarithm of a rotation matrix)."""
    c = min(1.0, max(-1.0, 0.5 * (R[0, 0] + R[1, 1] + R[2, 2] - 1.0)))
    angle = math.acos(c)
    w = 0.5 * np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    if angle < 1e-6:
        return w                             # sin θ ≈ θ: w ≈ θ a
    if angle < math.pi - 1e-6:
        return (angle / math.sin(angle)) * w
    # θ ≈ π: the axis from the symmetric part, R + I = 2 a aᵀ (its largest column)
    B = 0.5 * (R + np.eye(3))
    k = int(np.argmax(np.diag(B)))
    axis = B[:, k] / math.sqrt(max(B[k, k], 1e-300))
    return angle * axis * (1.0 if axis @ w >= 0.0 else -1.0)
