"""Inverse dynamics compiled for one arm: the iterative Newton–Euler recursion (Craig,
Introduction to Robotics, §6.5) in link frames, written out as straight scalar Python with
the arm's constants folded in.

    outward   ω_i = ᶦR ω_{i−1} + q̇_i Ẑ_i
              ω̇_i = ᶦR ω̇_{i−1} + ᶦR ω_{i−1} × q̇_i Ẑ_i + q̈_i Ẑ_i
              v̇_i = ᶦR (ω̇_{i−1} × P_i + ω_{i−1} × (ω_{i−1} × P_i) + v̇_{i−1})
                    (+ 2 ω_i × ḋ_i Ẑ_i + d̈_i Ẑ_i  prismatic),   v̇_0 = −g
              v̇_Ci = ω̇_i × P_Ci + ω_i × (ω_i × P_Ci) + v̇_i
              F_i = m_i v̇_Ci,   N_i = ᶜI_i ω̇_i + ω_i × ᶜI_i ω_i
    inward    f_i = ᶦR_{i+1} f_{i+1} + F_i
              n_i = N_i + ᶦR_{i+1} n_{i+1} + P_Ci × F_i + P_{i+1} × ᶦR_{i+1} f_{i+1}
              τ_i = n_iᵀ Ẑ_i (revolute),  f_iᵀ Ẑ_i (prismatic)

ᶦR = (R_origin Rot(Ẑ, q_i))ᵀ is the rotation from link i−1 to link i. Every product with a
constant 0 or ±1 (most of them: URDF origins are usually multiples of 90°, axes are x, y or
z) is dropped when the code is generated, so the function does only the arithmetic this
arm needs (codegen.py records and emits it). Single state, model gravity, no tip wrench;
`rnea.py` is the general form.
"""


import collections
import math

import numpy as np

from .codegen import Emitter, build

Link = collections.namedtuple("Link", [
    "R_origin",    # (3, 3) constant rotation, link i−1 → joint frame at q = 0
    "R_joint",     # (3, 3) values: Rot(Ẑ, q_i) (identity for a prismatic joint)
    "P",           # (3,) values: origin of link i in link i−1 (moves with q_i if prismatic)
    "axis",        # (3,) constant Ẑ_i
    "prismatic",   # bool
    "com",         # (3,) constant P_Ci
    "F",           # (3,) values: F_i = m_i v̇_Ci
    "N",           # (3,) values: N_i = ᶜI_i ω̇_i + ω_i × ᶜI_i ω_i
])


def _clean(x, tolerance=1e-15):
    """Round constants that are 0 or ±1 up to rounding, so they fold away."""
    for exact in (0.0, 1.0, -1.0):
        if abs(x - exact) <= tolerance:
            return exact
    return float(x)


def _constants(array):
    """A constant vector or matrix as (nested) lists of cleaned floats."""
    array = np.asarray(array, dtype=float)
    if array.ndim == 1:
        return [_clean(x) for x in array]
    return [[_clean(x) for x in row] for row in array]


def _transpose(M):
    return [list(column) for column in zip(*M)]


def _joint_rotation(e, axis, c, s):
    """Rot(axis, q) = c I + (1 − c) a aᵀ + s [a]×, entries as values (constant axis a)."""
    omc = e.sub(1.0, c)
    K = [[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]]
    R = []
    for row in range(3):
        entries = []
        for col in range(3):
            outer = _clean(axis[row] * axis[col])
            if row == col and outer == 1.0:
                entries.append(1.0)                  # rotation about this very axis
                continue
            value = e.mul(outer, omc)
            if row == col:
                value = e.add(c, value)
            entries.append(e.add(value, e.mul(_clean(K[row][col]), s)))
        R.append(entries)
    return R


def _outward(e, model, q, qd, qdd):
    """The outward recursion: each link's Link (its F_i and N_i among them). q, qd, qdd:
    lists of n values (qd, qdd may be constants 0.0)."""
    w, wd = [0.0] * 3, [0.0] * 3
    vd = [_clean(-x) for x in model.gravity]          # v̇_0 = −g: gravity as an acceleration
    links = []
    for i in range(model.body_count):
        axis = _constants(model.axis[i])
        R_origin = _constants(model.origin_rotation[i])
        P = _constants(model.origin_translation[i])
        prismatic = bool(model.is_prismatic[i])
        if prismatic:
            R_joint = _constants(np.eye(3))
            moved = _constants(np.asarray(model.origin_rotation[i]) @ model.axis[i])
            P = e.vadd(P, e.scale(q[i], moved))        # the origin slides along the axis
        else:
            R_joint = _joint_rotation(e, axis, e.call("cos", q[i]), e.call("sin", q[i]))
        # ᶦR x = Rot(q)ᵀ (R_originᵀ x): link i−1 → link i
        R_T = (_transpose(R_joint), _transpose(R_origin))

        def to_child(x, R_T=R_T):
            return e.matvec(R_T[0], e.matvec(R_T[1], x))
        qd_axis, qdd_axis = e.scale(qd[i], axis), e.scale(qdd[i], axis)
        a_origin = e.vadd(e.cross(wd, P), e.cross(w, e.cross(w, P)), vd)
        w_parent = to_child(w)
        if prismatic:
            w, wd = w_parent, to_child(wd)
            vd = e.vadd(to_child(a_origin), e.scale(2.0, e.cross(w, qd_axis)), qdd_axis)
        else:
            w = e.vadd(w_parent, qd_axis)
            wd = e.vadd(to_child(wd), e.cross(w_parent, qd_axis), qdd_axis)
            vd = to_child(a_origin)
        com, inertia = _constants(model.com[i]), _constants(model.inertia[i])
        vd_com = e.vadd(e.cross(wd, com), e.cross(w, e.cross(w, com)), vd)
        F = e.scale(_clean(model.mass[i]), vd_com)
        N = e.vadd(e.matvec(inertia, wd), e.cross(w, e.matvec(inertia, w)))
        links.append(Link(R_origin, R_joint, P, axis, prismatic, com, F, N))
    return links


def _inward(e, links):
    """The inward recursion: τ_i (n values) from the links' F_i, N_i."""
    f, n_moment = [0.0] * 3, [0.0] * 3
    tau = [None] * len(links)
    for i in reversed(range(len(links))):
        link = links[i]
        if i + 1 < len(links):
            child = links[i + 1]
            # ᶦR_{i+1} x = R_origin Rot(q) x: link i+1 → link i
            f_child = e.matvec(child.R_origin, e.matvec(child.R_joint, f))
            n_child = e.matvec(child.R_origin, e.matvec(child.R_joint, n_moment))
            n_moment = e.vadd(link.N, n_child, e.cross(link.com, link.F),
                              e.cross(child.P, f_child))
            f = e.vadd(f_child, link.F)
        else:
            n_moment = e.vadd(link.N, e.cross(link.com, link.F))
            f = link.F
        tau[i] = e.dot(link.axis, f if link.prismatic else n_moment)
    return tau


def _source(model, gravity_only):
    """(function name, Python source, operation count) of the compiled recursion."""
    e, n = Emitter(), model.body_count
    q = [e.input(f"q{i}") for i in range(n)]
    if gravity_only:                                  # g(q) = τ(q, 0, 0)
        qd = qdd = [0.0] * n
        inputs = ["q"]
    else:
        qd = [e.input(f"qd{i}") for i in range(n)]
        qdd = [e.input(f"qdd{i}") for i in range(n)]
        inputs = ["q", "qd", "qdd"]
    lines, tau = e.code(_inward(e, _outward(e, model, q, qd, qdd)))
    unpack = [f"    {', '.join(f'{x}{i}' for i in range(n))}{',' if n == 1 else ''} = {x}"
              for x in inputs]
    name = "gravity" if gravity_only else "rnea"
    source = (f"def {name}(q, qd=None, qdd=None):\n" + "\n".join(unpack + lines)
              + f"\n    return [{', '.join(tau)}]\n")
    return name, source, len(lines)


def compile_rnea(model, gravity_only=False):
    """A function rnea(q, qd, qdd) → τ (list of n floats) for `model`; q, qd, qdd are
    sequences of n floats in model order. With gravity_only, q̇ = q̈ = 0 are folded in too:
    the function is gravity(q) → g(q) (its qd, qdd arguments are ignored)."""
    name, source, operations = _source(model, gravity_only)
    function = build(source, name, f"<{name} for {model.name}>",
                     {"cos": math.cos, "sin": math.sin})
    function.operations = operations
    return function


BATCH_CHUNK = 4096   # states per pass: each temporary (32 KiB) stays in cache


def compile_rnea_batch(model, gravity_only=False):
    """A function rnea_batch(q, qd, qdd) → τ (N, n) for N states stacked in (N, n) arrays:
    the code of compile_rnea run on NumPy arrays (one array operation per scalar one), in
    chunks of BATCH_CHUNK states. With gravity_only, qd and qdd are ignored (may be None)."""
    name, source, operations = _source(model, gravity_only)
    kernel = build(source, name, f"<batched {name} for {model.name}>",
                   {"cos": np.cos, "sin": np.sin})

    def rnea_batch(q, qd, qdd):
        count, n = q.shape
        out = np.empty((count, n))
        for start in range(0, count, BATCH_CHUNK):
            rows = slice(start, min(start + BATCH_CHUNK, count))
            columns = [None if x is None else np.ascontiguousarray(x[rows].T)
                       for x in (q, None if gravity_only else qd,
                                 None if gravity_only else qdd)]
            for i, tau in enumerate(kernel(*columns)):
                out[rows, i] = tau
        return out

    rnea_batch.operations = operations
    return rnea_batch
