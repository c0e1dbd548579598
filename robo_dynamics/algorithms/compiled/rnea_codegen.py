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
arm needs (codegen.py records and emits it; chain_codegen.py holds the joint transforms
and the outward recursion shared with the other compiled algorithms). Model gravity, no
tip wrench; `rnea.py` is the general form.
"""


import collections

from . import chain_codegen as chain
from .codegen import Emitter

Link = collections.namedtuple("Link", [
    "joint",       # chain.Joint: the transform from body i−1
    "com",         # (3,) constants: P_Ci
    "F",           # (3,) values: F_i = m_i v̇_Ci
    "N",           # (3,) values: N_i = ᶜI_i ω̇_i + ω_i × ᶜI_i ω_i
])


def _outward(e, model, q, qd, qdd, gravity):
    """The outward recursion: each body's Link (its F_i and N_i among them). q, qd, qdd:
    lists of n values (qd, qdd may be constants 0.0); gravity (3,) [m/s², base frame]."""
    joints = chain.joints(e, model, q)
    vd_base = [chain.clean(-x) for x in gravity]       # v̇_0 = −g: gravity as acceleration
    links = []
    for i, (joint, m) in enumerate(zip(joints, chain.motion(e, joints, qd, qdd, vd_base))):
        com, inertia = chain.constants(model.com[i]), chain.constants(model.inertia[i])
        vd_com = e.vadd(e.cross(m.wd, com), e.cross(m.w, e.cross(m.w, com)), m.vd)
        F = e.scale(chain.clean(model.mass[i]), vd_com)
        N = e.vadd(e.matvec(inertia, m.wd), e.cross(m.w, e.matvec(inertia, m.w)))
        links.append(Link(joint, com, F, N))
    return links


def _inward(e, links):
    """The inward recursion: τ_i (n values) from the links' F_i, N_i."""
    f, n_moment = [0.0] * 3, [0.0] * 3
    tau = [None] * len(links)
    for i in reversed(range(len(links))):
        link = links[i]
        if i + 1 < len(links):
            child = links[i + 1].joint
            f_child = chain.to_parent(e, child, f)           # ᶦR_{i+1} f_{i+1}
            n_child = chain.to_parent(e, child, n_moment)
            n_moment = e.vadd(link.N, n_child, e.cross(link.com, link.F),
                              e.cross(child.P, f_child))
            f = e.vadd(f_child, link.F)
        else:
            n_moment = e.vadd(link.N, e.cross(link.com, link.F))
            f = link.F
        tau[i] = e.dot(link.joint.axis, f if link.joint.prismatic else n_moment)
    return tau


def inverse_dynamics_values(e, model, q, qd, qdd, gravity=None):
    """τ (n values of e) for the values q, qd, qdd (lists; qd, qdd may be constants 0.0)
    under `gravity` (default: the model's): the recursion as an expression graph, for this
    module and derivatives_codegen."""
    gravity = model.gravity if gravity is None else gravity
    return _inward(e, _outward(e, model, q, qd, qdd, gravity))


def _emit(model, gravity_only):
    """(emitter, name, arguments, τ values) of the recursion for `model`."""
    e, n = Emitter(), model.body_count
    if gravity_only:                                  # g(q) = τ(q, 0, 0)
        x = chain.inputs(e, ["q"], n)
        return e, "gravity", ["q"], inverse_dynamics_values(e, model, x["q"], [0.0] * n,
                                                            [0.0] * n)
    x = chain.inputs(e, ["q", "qd", "qdd"], n)
    return e, "rnea", ["q", "qd", "qdd"], inverse_dynamics_values(e, model, x["q"], x["qd"],
                                                                  x["qdd"])


def compile_rnea(model, gravity_only=False):
    """A function rnea(q, qd, qdd) → τ (list of n floats) for `model`; q, qd, qdd are
    sequences of n floats in model order. With gravity_only, q̇ = q̈ = 0 are folded in too:
    the function is gravity(q) → g(q)."""
    e, name, arguments, tau = _emit(model, gravity_only)
    return chain.compile_scalar(e, name, arguments, model.body_count, tau, model.name)


def compile_rnea_batch(model, gravity_only=False):
    """A function rnea_batch(q, qd, qdd) → τ (N, n) for N states stacked in (N, n) arrays
    (gravity_only: gravity_batch(q) → g (N, n)): the code of compile_rnea run on NumPy
    arrays (chain_codegen.compile_batch)."""
    e, name, arguments, tau = _emit(model, gravity_only)
    return chain.compile_batch(e, name, arguments, model.body_count, tau, model.name)
