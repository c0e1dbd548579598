"""Spatial cross-product operators on 6-vectors ordered [angular; linear] (Lynch & Park,
Modern Robotics, §8.2.2: the Lie bracket [ad_V] and its dual), batched over leading axes."""

import numpy as np

from .rotations import cross, skew


def ad(V):
    """[ad_V] (…, 6, 6) = [[ [ω], 0 ], [ [v], [ω] ]]: [ad_V] X = V × X for a motion vector X."""
    out = np.zeros(V.shape[:-1] + (6, 6))
    W = skew(V[..., :3])
    out[..., :3, :3] = W
    out[..., 3:, 3:] = W
    out[..., 3:, :3] = skew(V[..., 3:])
    return out


def ad_star(V):
    """−[ad_V]ᵀ (…, 6, 6): V ×* F for a force vector (wrench) F = (n, f)."""
    return -np.swapaxes(ad(V), -1, -2)


def bar(h):
    """[h ×̄] (…, 6, 6) for a wrench h = (h_ang, h_lin): [h ×̄] V = V ×* h = −[ad_V]ᵀ h."""
    out = np.zeros(h.shape[:-1] + (6, 6))
    Ha, Hl = skew(h[..., :3]), skew(h[..., 3:])
    out[..., :3, :3] = -Ha
    out[..., :3, 3:] = -Hl
    out[..., 3:, :3] = -Hl
    return out


def cross_motion(V, X):
    """V × X = [ad_V] X for motion vectors (…, 6)."""
    w, v = V[..., :3], V[..., 3:]
    return np.concatenate((cross(w, X[..., :3]), cross(w, X[..., 3:]) + cross(v, X[..., :3])),
                          axis=-1)


def cross_force(V, F):
    """V ×* F = −[ad_V]ᵀ F for a motion vector V and a force vector F (…, 6)."""
    w, v = V[..., :3], V[..., 3:]
    return np.concatenate((cross(w, F[..., :3]) + cross(v, F[..., 3:]), cross(w, F[..., 3:])),
                          axis=-1)
