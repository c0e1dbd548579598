"""The generalized momentum p = M(q) q̇ and Cᵀ(q, q̇) q̇ compiled for one arm, in O(n): what
the external-torque observer needs per joint state (control/momentum_observer.py), without
forming M or C.

With the kinetic energy T = ½ q̇ᵀ M q̇ = ½ Σ_i V_iᵀ I_i V_i (V_i body i's spatial velocity,
I_i its spatial inertia), Lagrange's equations give C q̇ = Ṁ q̇ − ∂T/∂q, and with
Ṁ = C + Cᵀ (the Christoffel form, Lynch & Park, Modern Robotics, §8.1.3)

    Cᵀ q̇ = ∂T/∂q.

Differentiating T: ∂V_i/∂q_k = S_k × (V_i − V_k) and ∂I_i/∂q_k = S_k ×* I_i − I_i S_k × for
k ≤ i (spatial cross products, Featherstone, Rigid Body Dynamics Algorithms, §2.9, §2.16),
the terms of body i collapse to −(S_k × V_k) · h_i, h_i = I_i V_i its momentum, so

    (Cᵀ q̇)_k = −(S_k × V_k) · H_k,        p_k = S_k · H_k,

H_k = Σ_{i ≥ k} h_i the momentum of the subtree from body k on. In link frame k, at its
origin, with S_k = (Ẑ, 0) for a revolute joint and (0, Ẑ) for a prismatic one, H_k = (L_k
angular momentum about the origin, P_k linear momentum) and V_k = (ω_k, v_k):

    revolute    p_k = Ẑ · L_k,   (Cᵀ q̇)_k = −Ẑ · (ω_k × L_k + v_k × P_k)
    prismatic   p_k = Ẑ · P_k,   (Cᵀ q̇)_k = −Ẑ · (ω_k × P_k)

One outward pass (velocities, as in the Newton–Euler recursion of Craig, Introduction to
Robotics, §6.5, without accelerations) and one inward pass (momenta summed like the
forces f_i, n_i) give both. The tests compare the result with Pinocchio's M q̇ and
computeCoriolisMatrix.
"""

from . import chain_codegen as chain
from .codegen import Emitter


def _emit(model):
    """(emitter, values): p (n values), then Cᵀ q̇ (n values)."""
    e, n = Emitter(), model.body_count
    x = chain.inputs(e, ["q", "qd"], n)
    joints = chain.joints(e, model, x["q"])
    w, v = [0.0] * 3, [0.0] * 3
    bodies = []                                   # (joint, ω_i, v_i, P_i, L_i) of each body
    for i, (joint, rate) in enumerate(zip(joints, x["qd"])):
        axis_rate = e.scale(rate, joint.axis)
        v = chain.to_child(e, joint, e.vadd(v, e.cross(w, joint.P)))  # v_i = ᶦR (v + ω × P_i)
        w = chain.to_child(e, joint, w)
        if joint.prismatic:
            v = e.vadd(v, axis_rate)
        else:
            w = e.vadd(w, axis_rate)
        com, inertia = chain.constants(model.com[i]), chain.constants(model.inertia[i])
        P = e.scale(chain.clean(model.mass[i]), e.vadd(v, e.cross(w, com)))  # m v_C
        L = e.vadd(e.matvec(inertia, w), e.cross(com, P))     # about the origin: ᶜI ω + c × P
        bodies.append((joint, w, v, P, L))
    p, c = [None] * n, [None] * n
    for i in reversed(range(n)):                  # subtree momenta, inward
        joint, w_i, v_i, P_i, L_i = bodies[i]
        if i + 1 < n:
            child = bodies[i + 1][0]
            P_child = chain.to_parent(e, child, P)
            L = e.vadd(L_i, chain.to_parent(e, child, L), e.cross(child.P, P_child))
            P = e.vadd(P_i, P_child)
        else:
            P, L = P_i, L_i
        if joint.prismatic:
            p[i] = e.dot(joint.axis, P)
            c[i] = e.neg(e.dot(joint.axis, e.cross(w_i, P)))
        else:
            p[i] = e.dot(joint.axis, L)
            c[i] = e.neg(e.dot(joint.axis, e.vadd(e.cross(w_i, L), e.cross(v_i, P))))
    return e, p + c


def compile_momentum_terms(model):
    """A function momentum_terms(q, qd) → 2 n floats: p = M q̇, then Cᵀ q̇."""
    e, values = _emit(model)
    return chain.compile_scalar(e, "momentum_terms", ["q", "qd"], model.body_count, values,
                                model.name)
