"""The geometric Jacobian of the tip, vectorised over states, in any of three frames
(jacobian_codegen.py is the compiled form for one arm, base axes at the tip, and J̇ q̇).

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
from .kinematics import forward_kinematics

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


def _to_tip_axes(tip_R, X):
    """Rotate the [linear; angular] rows of X (…, 6, k) from base into tip_link axes."""
    Rt = np.swapaxes(tip_R, -1, -2)
    return np.concatenate((Rt @ X[..., :3, :], Rt @ X[..., 3:, :]), axis=-2)



def point_jacobian_batch(model, q, body, point, kin=None):
    """(p (N, 3) [m], J_v (N, 3, n)) of a point fixed to chain body `body` (its index), at
    `point` (3,) [m] in the body's frame: its position and linear Jacobian, base axes
    (v_p = J_v q̇; the columns of the joints past the body are 0). A serial chain's model
    (no mimic coupling). Lynch & Park, Modern Robotics, §5.1.1: v_p = Σ (S_lin,j +
    S_ang,j × p) q̇_j with the space-frame screw axes."""
    kin = forward_kinematics(model, q) if kin is None else kin
    p = kin.o[:, body] + np.einsum("nab,b->na", kin.R[:, body], np.asarray(point, float))
    J = kin.S_lin + cross(kin.S_ang, p[:, None, :])            # (N, n, 3)
    J[:, body + 1:] = 0.0
    return p, np.swapaxes(J, -1, -2)
