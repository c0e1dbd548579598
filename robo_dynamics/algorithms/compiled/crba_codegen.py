"""The mass matrix compiled for one arm: the composite-rigid-body algorithm (Featherstone,
Rigid Body Dynamics Algorithms, §6.2; Walker & Orin's method 3) in body frames, written out
as straight scalar Python with the arm's constants folded in (chain_codegen, codegen).

A rigid body in a frame is (m, h, I_o): mass [kg], first moment h = m c [kg·m] and
rotational inertia about the frame's origin I_o = ᶜI + m (|c|² 1 − c cᵀ) [kg·m²].

    inward    composite of body i: (m, h, I_o)^c_i = body i + ᶦX_{i+1} (m, h, I_o)^c_{i+1}
              moving a body to a frame where x' = R x + p (Steiner's theorem, r = R h):
                  h' = R h + m p,
                  I_o' = R I_o Rᵀ + m (|p|² 1 − p pᵀ) + 2 (p·r) 1 − (r pᵀ + p rᵀ)
    columns   joint i moving with unit rate: the composite's momentum about its origin
                  revolute   f = Ẑ_i × h^c_i,  n = I^c_i Ẑ_i
                  prismatic  f = m^c_i Ẑ_i,    n = h^c_i × Ẑ_i
              M_ii = Ẑ_iᵀ n (revolute) or Ẑ_iᵀ f (prismatic); then towards the base, for
              j = i−1 … 0:  f ← ʲR_{j+1} f,  n ← ʲR_{j+1} n + P_{j+1} × f,
              M_ji = M_ij = Ẑ_jᵀ n (revolute) or Ẑ_jᵀ f (prismatic).

Masses are constants, so for a revolute joint the m (|p|² 1 − p pᵀ) term is folded too.
"""

import numpy as np

from . import chain_codegen as chain
from .codegen import Emitter


def _congruence(e, R, S):
    """R S Rᵀ for a symmetric S (nested lists of values): the upper triangle computed, the
    lower one mirrored."""
    SRt = [[e.dot(S[a], R[b]) for b in range(3)] for a in range(3)]     # S Rᵀ
    out = [[None] * 3 for _ in range(3)]
    for a in range(3):
        for b in range(a, 3):
            out[a][b] = out[b][a] = e.dot(R[a], [SRt[k][b] for k in range(3)])
    return out


def _moved(e, body, joint):
    """A body (m, h, I_o) given in body i's frame, in body i−1's frame (joint i)."""
    m, h, I = body
    R_joint_I = _congruence(e, joint.R_joint, I)
    rotated = _congruence(e, joint.R_origin, R_joint_I)
    r = chain.to_parent(e, joint, h)                              # R h
    p = joint.P
    pp = e.dot(p, p)
    pr2 = e.mul(2.0, e.dot(p, r))
    out = [[None] * 3 for _ in range(3)]
    for a in range(3):
        for b in range(a, 3):
            steiner = e.neg(e.mul(m, e.mul(p[a], p[b])))          # m (|p|² 1 − p pᵀ)
            symmetric = e.neg(e.add(e.mul(r[a], p[b]), e.mul(p[a], r[b])))
            if a == b:
                steiner = e.add(steiner, e.mul(m, pp))
                symmetric = e.add(symmetric, pr2)
            out[a][b] = out[b][a] = e.add(rotated[a][b], e.add(steiner, symmetric))
    return m, e.vadd(r, e.scale(m, p)), out


def _body(model, i):
    """Body i's own (m, h, I_o) as constants, in its frame."""
    m, c = float(model.mass[i]), np.asarray(model.com[i])
    I_o = np.asarray(model.inertia[i]) + m * (c @ c * np.eye(3) - np.outer(c, c))
    return chain.clean(m), chain.constants(m * c), chain.constants(I_o)


def mass_matrix_values(e, model, q):
    """M (n × n nested lists of values of e) for the values q."""
    joints = chain.joints(e, model, q)
    n = len(joints)
    composite = [None] * n
    for i in reversed(range(n)):
        m, h, I = _body(model, i)
        if i + 1 < n:
            mc, hc, Ic = _moved(e, composite[i + 1], joints[i + 1])
            m, h = m + mc, e.vadd(h, hc)
            I = [[e.add(x, y) for x, y in zip(row, row_c)] for row, row_c in zip(I, Ic)]
        composite[i] = (m, h, I)
    M = [[None] * n for _ in range(n)]
    for i in range(n):
        m, h, I = composite[i]
        axis = joints[i].axis
        if joints[i].prismatic:
            f, moment = e.scale(m, axis), e.cross(h, axis)
        else:
            f, moment = e.cross(axis, h), e.matvec(I, axis)
        for j in range(i, -1, -1):
            if j < i:
                child = joints[j + 1]
                f = chain.to_parent(e, child, f)
                moment = e.vadd(chain.to_parent(e, child, moment), e.cross(child.P, f))
            M[i][j] = M[j][i] = e.dot(joints[j].axis, f if joints[j].prismatic else moment)
    return M


def _emit(model):
    e, n = Emitter(), model.body_count
    q = chain.inputs(e, ["q"], n)["q"]
    return e, [x for row in mass_matrix_values(e, model, q) for x in row]


def compile_mass_matrix(model):
    """A function mass_matrix(q) → M as a list of n² floats, row-major, for `model`."""
    e, values = _emit(model)
    return chain.compile_scalar(e, "mass_matrix", ["q"], model.body_count, values, model.name)


def compile_mass_matrix_batch(model):
    """A function mass_matrix_batch(q) → (N, n²) for q (N, n), rows of M row-major."""
    e, values = _emit(model)
    return chain.compile_batch(e, "mass_matrix", ["q"], model.body_count, values, model.name)
