"""The geometric Jacobian of the tip and its time variation J̇ q̇.

Output order is [linear; angular] (Pinocchio, geometry_msgs), with the frame an explicit
argument, named as in Pinocchio:
  "local_world_aligned" (default): linear velocity of the tip_link origin and angular
      velocity, both in base-frame axes — the usual geometric Jacobian.
  "local": the same two vectors in tip_link axes.
  "world": the spatial velocity about the base origin (Lynch & Park's space Jacobian J_s,
      with its two halves swapped).
"""

import numpy as np

from ..spatial.rotations import cross
from .kinematics import body_twists, forward_kinematics, screw_axis_rates

LOCAL = "local"
LOCAL_WORLD_ALIGNED = "local_world_aligned"
WORLD = "world"
FRAMES = (LOCAL_WORLD_ALIGNED, LOCAL, WORLD)


def check_frame(frame):
    if frame not in FRAMES:
        raise ValueError(f"unknown frame {frame!r}; expected one of {FRAMES}")
    return frame


def jacobian_batch(model, q, frame=LOCAL_WORLD_ALIGNED, kin=None):
    """Tip Jacobian (N, 6, n) for q (N, n): [v; ω] = J q̇ in the requested frame."""
    kin = forward_kinematics(model, q) if kin is None else kin
    if frame == WORLD:
        lin, ang = kin.S_lin, kin.S_ang
    else:  # velocity of the tip point p: v_p = v_O + ω × p
        lin = kin.S_lin + cross(kin.S_ang, kin.tip_p[..., None, :])
        ang = kin.S_ang
    J = np.concatenate((lin, ang), axis=-1)                    # (N, n, 6)
    J = np.swapaxes(J, -1, -2)
    if frame == LOCAL:
        return _to_tip_axes(kin.tip_R, J)
    return J


def jacobian_dot_qd_batch(model, q, qd, frame=LOCAL_WORLD_ALIGNED, kin=None):
    """J̇ q̇ (N, 6): classical acceleration [p̈; ω̇] of the tip origin when q̈ = 0, g = 0.

    frame: "local_world_aligned" (base axes) or "local" (tip axes).
    """
    if frame == WORLD:
        raise ValueError("jacobian_dot_qd is the classical acceleration of the tip; use "
                         "frame 'local_world_aligned' or 'local'")
    kin = forward_kinematics(model, q) if kin is None else kin
    w, v = body_twists(kin, qd)
    dS_ang, dS_lin = screw_axis_rates(kin, w, v)
    a_ang = np.sum(dS_ang * qd[..., None], axis=-2)   # spatial acceleration of the last body
    a_lin = np.sum(dS_lin * qd[..., None], axis=-2)
    p = kin.tip_p
    w_tip, v_origin = w[..., -1, :], v[..., -1, :]
    v_p = v_origin + cross(w_tip, p)
    p_ddot = a_lin + cross(a_ang, p) + cross(w_tip, v_p)
    out = np.concatenate((p_ddot, a_ang), axis=-1)
    if frame == LOCAL:
        return _to_tip_axes(kin.tip_R, out[..., None])[..., 0]
    return out


def _to_tip_axes(tip_R, X):
    """Rotate the [linear; angular] rows of X (…, 6, k) from base into tip_link axes."""
    Rt = np.swapaxes(tip_R, -1, -2)
    return np.concatenate((Rt @ X[..., :3, :], Rt @ X[..., 3:, :]), axis=-2)


def jacobian(model, q, frame=LOCAL_WORLD_ALIGNED):
    """Tip Jacobian (6, n) for one state; see jacobian_batch."""
    return jacobian_batch(model, q[None], frame)[0]


def jacobian_dot_qd(model, q, qd, frame=LOCAL_WORLD_ALIGNED):
    """J̇ q̇ (6,) for one state; see jacobian_dot_qd_batch."""
    return jacobian_dot_qd_batch(model, q[None], qd[None], frame)[0]
