"""What the algorithms compiled for one arm share (rnea_codegen, crba_codegen,
jacobian_codegen, derivatives_codegen): the arm's constants as values, each joint's
transform as values of q, the outward velocity recursion, and turning emitted code into a
function of one state or of arrays of states.

Frames and transforms are those of model/robot_model.py: body i's frame is joint i's frame
moved by q_i, and a vector x_i in body i's frame is x_{i−1} = R_origin Rot(Ẑ_i, q_i) x_i
in body i−1's frame (Craig, Introduction to Robotics, §6.5: ᶦ⁻¹R_i = R_origin Rot).
Constants that are 0 or ±1 up to rounding are made exact, so the emitter folds them away.
"""

import collections
import math

import numpy as np

from .codegen import build

Joint = collections.namedtuple("Joint", [
    "R_origin",    # (3, 3) constants: body i−1 → joint frame at q = 0
    "R_joint",     # (3, 3) values: Rot(Ẑ, q_i) (identity for a prismatic joint)
    "P",           # (3,) values: origin of body i in body i−1 (moves with q_i if prismatic)
    "axis",        # (3,) constants: Ẑ_i, the same in the joint frame and body i's frame
    "prismatic",   # bool
])

Motion = collections.namedtuple("Motion", [
    "w",           # (3,) values: angular velocity ω_i of body i, its own axes
    "wd",          # (3,) values: angular acceleration ω̇_i
    "vd",          # (3,) values: linear acceleration v̇_i of body i's origin (−g included)
])


def clean(x, tolerance=1e-15):
    """A constant as a float, made exactly 0 or ±1 when it is that up to rounding."""
    for exact in (0.0, 1.0, -1.0):
        if abs(x - exact) <= tolerance:
            return exact
    return float(x)


def constants(array):
    """A constant vector or matrix as (nested) lists of cleaned floats."""
    array = np.asarray(array, dtype=float)
    if array.ndim == 1:
        return [clean(x) for x in array]
    return [[clean(x) for x in row] for row in array]


def transpose(M):
    return [list(column) for column in zip(*M)]


def joint_rotation(e, axis, c, s):
    """Rot(axis, q) = c I + (1 − c) a aᵀ + s [a]×, entries as values (constant axis a)."""
    omc = e.sub(1.0, c)
    K = [[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]]
    R = []
    for row in range(3):
        entries = []
        for col in range(3):
            outer = clean(axis[row] * axis[col])
            if row == col and outer == 1.0:
                entries.append(1.0)                  # rotation about this very axis
                continue
            value = e.mul(outer, omc)
            if row == col:
                value = e.add(c, value)
            entries.append(e.add(value, e.mul(clean(K[row][col]), s)))
        R.append(entries)
    return R


def joints(e, model, q):
    """Each body's Joint, as values of q (a list of n values)."""
    out = []
    for i in range(model.body_count):
        axis = constants(model.axis[i])
        P = constants(model.origin_translation[i])
        if model.is_prismatic[i]:
            R_joint = constants(np.eye(3))
            moved = constants(np.asarray(model.origin_rotation[i]) @ model.axis[i])
            P = e.vadd(P, e.scale(q[i], moved))        # the origin slides along the axis
        else:
            R_joint = joint_rotation(e, axis, e.call("cos", q[i]), e.call("sin", q[i]))
        out.append(Joint(constants(model.origin_rotation[i]), R_joint, P, axis,
                         bool(model.is_prismatic[i])))
    return out


def to_parent(e, joint, x):
    """A vector of body i's axes in body i−1's axes: R_origin Rot(q) x."""
    return e.matvec(joint.R_origin, e.matvec(joint.R_joint, x))


def to_child(e, joint, x):
    """A vector of body i−1's axes in body i's axes: Rot(q)ᵀ R_originᵀ x."""
    return e.matvec(transpose(joint.R_joint), e.matvec(transpose(joint.R_origin), x))


def motion(e, chain, qd, qdd, vd_base):
    """The outward recursion of Craig §6.5 (eqs. 6.45–6.47, 6.49 prismatic): each body's
    Motion from the joint rates qd and accelerations qdd (lists of values, may be
    constants 0.0) and the base's linear acceleration vd_base (−g for inverse dynamics)."""
    w, wd, vd = [0.0] * 3, [0.0] * 3, list(vd_base)
    out = []
    for joint, rate, acceleration in zip(chain, qd, qdd):
        qd_axis, qdd_axis = e.scale(rate, joint.axis), e.scale(acceleration, joint.axis)
        a_origin = e.vadd(e.cross(wd, joint.P), e.cross(w, e.cross(w, joint.P)), vd)
        w_parent = to_child(e, joint, w)
        if joint.prismatic:
            w, wd = w_parent, to_child(e, joint, wd)
            vd = e.vadd(to_child(e, joint, a_origin), e.scale(2.0, e.cross(w, qd_axis)),
                        qdd_axis)
        else:
            w = e.vadd(w_parent, qd_axis)
            wd = e.vadd(to_child(e, joint, wd), e.cross(w_parent, qd_axis), qdd_axis)
            vd = to_child(e, joint, a_origin)
        out.append(Motion(w, wd, vd))
    return out


def inputs(e, names, n):
    """Per input name ("q", "qd", …) the list of its n values q0 … q{n−1}."""
    return {name: [e.input(f"{name}{i}") for i in range(n)] for name in names}


def source(name, arguments, n, lines, results):
    """Python source of `def name(arguments): unpack; lines; return [results]`; every
    argument is a sequence of n numbers (floats, or arrays of states)."""
    unpack = [f"    {', '.join(f'{x}{i}' for i in range(n))}{',' if n == 1 else ''} = {x}"
              for x in arguments]
    return (f"def {name}({', '.join(arguments)}):\n" + "\n".join(unpack + lines)
            + f"\n    return [{', '.join(results)}]\n")


def compile_scalar(e, name, arguments, n, results, model_name):
    """The function of `results` (values of e) for one state: arguments are lists of n
    floats, the result a list of floats. Its `source` and `operations` are attributes."""
    lines, texts = e.code(results, inline=True)
    function = build(source(name, arguments, n, lines, texts), name,
                     f"<{name} for {model_name}>", {"cos": math.cos, "sin": math.sin})
    function.operations = len(lines)
    return function


BATCH_CHUNK = 4096   # states per pass: each temporary (32 KiB) stays in cache


def compile_batch(e, name, arguments, n, results, model_name):
    """The function of `results` for N states: arguments are (N, n) arrays, the result an
    (N, len(results)) array. The same code as compile_scalar, run on NumPy arrays (one
    array operation per scalar one) in chunks of BATCH_CHUNK states."""
    lines, texts = e.code(results)
    kernel = build(source(name, arguments, n, lines, texts), name,
                   f"<batched {name} for {model_name}>", {"cos": np.cos, "sin": np.sin})
    width = len(results)

    def batched(*arrays):
        count = arrays[0].shape[0]
        out = np.empty((count, width))
        for start in range(0, count, BATCH_CHUNK):
            rows = slice(start, min(start + BATCH_CHUNK, count))
            columns = [np.ascontiguousarray(x[rows].T) for x in arrays]
            for k, value in enumerate(kernel(*columns)):
                out[rows, k] = value
        return out

    batched.operations = len(lines)
    batched.source = kernel.source
    return batched
