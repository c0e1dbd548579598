"""The tip Jacobian and J̇ q̇ compiled for one arm, as straight scalar Python with the arm's
constants folded in (chain_codegen, codegen). Frame: "local_world_aligned" (base axes, tip
origin); jacobian.py rotates to the other frames.

    forward kinematics   ⁰R_i = ⁰R_{i−1} R_origin Rot(Ẑ_i, q_i),   o_i = o_{i−1} + ⁰R_{i−1} P_i
    joint axis           z_i = ⁰R_i Ẑ_i
    column i             revolute [z_i × (p_tip − o_i); z_i],   prismatic [z_i; 0]
                         (Lynch & Park, Modern Robotics, §5.1: the space Jacobian's columns,
                         here for the velocity of the tip point)
    J̇ q̇                 the classical acceleration [p̈; ω̇] of the tip origin at q̈ = 0 and
                         g = 0: the outward recursion of Craig §6.5 (chain_codegen.motion)
                         carried to the tip, p̈ = v̇_n + ω̇_n × t + ω_n × (ω_n × t), then to
                         base axes through the joints' rotations.
"""

from . import chain_codegen as chain
from .codegen import Emitter


def _matmul(e, A, B):
    return [[e.dot(row, column) for column in zip(*B)] for row in A]


def kinematics_values(e, model, joints):
    """(J as 6 rows of n values, tip rotation ⁰R_tip 3 × 3, tip origin p_tip 3), values."""
    R, o = chain.constants([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]), [0.0] * 3
    axes, origins = [], []
    for joint in joints:
        o = e.vadd(o, e.matvec(R, joint.P))
        R_axis = _matmul(e, R, joint.R_origin)
        axes.append(e.matvec(R_axis, joint.axis))
        origins.append(o)
        R = _matmul(e, R_axis, joint.R_joint)
    tip_R = _matmul(e, R, chain.constants(model.tip_rotation))
    tip_p = e.vadd(o, e.matvec(R, chain.constants(model.tip_translation)))
    columns = []
    for joint, z, origin in zip(joints, axes, origins):
        if joint.prismatic:
            columns.append(z + [0.0] * 3)
        else:
            columns.append(e.cross(z, e.vadd(tip_p, e.scale(-1.0, origin))) + z)
    return chain.transpose(columns), tip_R, tip_p


def jacobian_dot_qd_values(e, model, joints, qd):
    """J̇ q̇ (6 values, [p̈; ω̇], base axes) for the joint rates qd (values)."""
    n = len(joints)
    last = chain.motion(e, joints, qd, [0.0] * n, [0.0] * 3)[-1]
    t = chain.constants(model.tip_translation)
    p_ddot = e.vadd(last.vd, e.cross(last.wd, t), e.cross(last.w, e.cross(last.w, t)))
    w_dot = last.wd
    for joint in reversed(joints):
        p_ddot, w_dot = chain.to_parent(e, joint, p_ddot), chain.to_parent(e, joint, w_dot)
    return p_ddot + w_dot


def compile_kinematics(model):
    """A function kinematics(q) → 6n + 9 + 3 floats: J row-major (local_world_aligned),
    then ⁰R_tip row-major, then p_tip [m]."""
    e, n = Emitter(), model.body_count
    q = chain.inputs(e, ["q"], n)["q"]
    J, tip_R, tip_p = kinematics_values(e, model, chain.joints(e, model, q))
    values = [x for row in J for x in row] + [x for row in tip_R for x in row] + tip_p
    return chain.compile_scalar(e, "kinematics", ["q"], n, values, model.name)


def compile_jacobian(model):
    """A function jacobian(q) → J as 6n floats, row-major (local_world_aligned)."""
    e, n = Emitter(), model.body_count
    q = chain.inputs(e, ["q"], n)["q"]
    J, _, _ = kinematics_values(e, model, chain.joints(e, model, q))
    return chain.compile_scalar(e, "jacobian", ["q"], n, [x for row in J for x in row],
                                model.name)


def compile_jacobian_dot_qd(model):
    """A function jacobian_dot_qd(q, qd) → J̇ q̇ (6 floats, local_world_aligned)."""
    e, n = Emitter(), model.body_count
    x = chain.inputs(e, ["q", "qd"], n)
    values = jacobian_dot_qd_values(e, model, chain.joints(e, model, x["q"]), x["qd"])
    return chain.compile_scalar(e, "jacobian_dot_qd", ["q", "qd"], n, values, model.name)


def compile_jacobian_batch(model):
    """A function jacobian_batch(q) → (N, 6n) for q (N, n): J row-major per state
    (local_world_aligned)."""
    e, n = Emitter(), model.body_count
    q = chain.inputs(e, ["q"], n)["q"]
    J, _, _ = kinematics_values(e, model, chain.joints(e, model, q))
    return chain.compile_batch(e, "jacobian", ["q"], n, [x for row in J for x in row],
                               model.name)
