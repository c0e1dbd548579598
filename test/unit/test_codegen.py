"""The code generator: its algebra (constant folding, signs carried in terms, shared
subexpressions, dead-code removal, reused registers, in-place updates, inlined
expressions) against plain
arithmetic on the same numbers, for every combination of operand kinds; and the code it
writes for the 2-link arm, printed, against the closed form (Craig, Introduction to
Robotics, §6.7)."""

import itertools
import math
import traceback

import numpy as np
import pytest

import robo_dynamics as rd
from robo_dynamics.algorithms.compiled import chain_codegen
from robo_dynamics.algorithms.compiled.codegen import Emitter, build
from robo_dynamics.algorithms.compiled.crba_codegen import compile_mass_matrix
from robo_dynamics.algorithms.compiled.derivatives_codegen import compile_rnea_derivatives
from robo_dynamics.algorithms.compiled.jacobian_codegen import (compile_jacobian,
                                                                compile_jacobian_dot_qd)
from robo_dynamics.algorithms.compiled.rnea_codegen import (compile_rnea, compile_rnea_batch,
                                                            inverse_dynamics_values)
from conftest import SHIPPED, load_arm
from planar_2link import closed_form, closed_form_derivatives, planar_jacobian


def _run(emitter, results, inputs, inline=False):
    lines, results = emitter.code(results, inline=inline)
    source = ("def f(x):\n    x0, x1, x2 = x\n" + "\n".join(lines)
              + f"\n    return [{', '.join(results)}]\n")
    return build(source, "f", "<test>", {"cos": math.cos, "sin": math.sin})(inputs)


def test_every_operation_on_every_kind_of_operand_matches_arithmetic():
    rng = np.random.default_rng(0)
    values = rng.uniform(-3.0, 3.0, 3).tolist()
    e = Emitter()
    x0, x1, x2 = (e.input(f"x{i}") for i in range(3))
    # operands: constants (incl. 0 and ±1) and symbols, plain and negated, with their values
    symbols = [(x0, values[0]), (x1, values[1]), (e.call("cos", x2), math.cos(values[2]))]
    operands = [(c, c) for c in (0.0, 1.0, -1.0, 2.5, -0.75)]
    for term, value in symbols:
        operands += [(term, value), (e.neg(term), -value)]
    expected, results = [], []
    for (a, va), (b, vb) in itertools.product(operands, repeat=2):
        for op, reference in ((e.add, va + vb), (e.sub, va - vb), (e.mul, va * vb)):
            results.append(op(a, b))
            expected.append(reference)
        results.append(e.neg(e.add(a, e.mul(b, 3.0))))
        expected.append(-(va + 3.0 * vb))
    # chains that reuse freed registers and update in place
    total = 0.0
    check = 0.0
    for (a, va), (b, vb) in zip(operands, operands[3:]):
        total = e.sub(e.mul(total, 0.5), e.mul(a, b))
        check = 0.5 * check - va * vb
    results.append(total)
    expected.append(check)
    got = _run(e, results, values)
    np.testing.assert_allclose(got, expected, rtol=1e-14, atol=1e-14)


def test_dead_code_is_dropped_and_shared_work_is_emitted_once():
    e = Emitter()
    x0, x1, x2 = (e.input(f"x{i}") for i in range(3))
    used = e.mul(x0, x1)
    e.mul(x1, x2)                           # never used
    twice = e.add(e.mul(x1, x0), e.mul(x0, x1))   # the same product twice
    lines, _ = e.code([used, twice])
    assert len(lines) == 2                  # one product, one sum
    assert _run(e, [used, twice], [2.0, 3.0, 5.0]) == [6.0, 12.0]


def test_inlined_code_computes_what_the_register_code_computes_to_the_bit():
    """Code for floats writes an operation used once into its user's expression: the same
    operations in the same order, fewer lines. The Panda's inverse dynamics and two of its
    derivative columns (dense inertias, thousands of operations) on random states,
    compared with ==."""
    model = load_arm("panda")
    n, e = model.dof, Emitter()
    x = chain_codegen.inputs(e, ["q", "qd", "qdd"], n)
    tau = inverse_dynamics_values(e, model, x["q"], x["qd"], x["qdd"])
    values = tau + e.derivatives(tau, "q1") + e.derivatives(tau, "qd2")
    registers, inlined = e.code(values)[0], e.code(values, inline=True)[0]
    assert len(inlined) < len(registers) / 3
    names = [f"{v}{i}" for v in ("q", "qd", "qdd") for i in range(n)]
    rng = np.random.default_rng(3)
    for _ in range(20):
        inputs = dict(zip(names, rng.uniform(-3.0, 3.0, 3 * n).tolist()))
        assert _evaluate(e, values, inputs, False) == _evaluate(e, values, inputs, True)


def _evaluate(emitter, results, inputs, inline):
    """The results of emitter's code for `inputs` (name → float)."""
    lines, texts = emitter.code(results, inline=inline)
    source = ("def f(x):\n" + "".join(f"    {name} = x[{name!r}]\n" for name in inputs)
              + "\n".join(lines) + f"\n    return [{', '.join(texts)}]\n")
    return build(source, "f", f"<test {inline}>", {"cos": math.cos, "sin": math.sin})(inputs)


def test_the_2_link_arm_code_is_short_and_equals_the_closed_form():
    """The generated inverse dynamics of the planar 2R arm (point masses at the link ends),
    printed for the reader: a few dozen lines, and τ = M q̈ + V + G of the closed form."""
    robot = rd.load_robot(SHIPPED / "planar_2link.urdf")
    rnea, gravity = compile_rnea(robot), compile_rnea(robot, gravity_only=True)
    print("\n" + rnea.source + "\n" + gravity.source)
    assert rnea.source.startswith("def rnea(q, qd, qdd):")
    assert gravity.source.startswith("def gravity(q):")
    assert gravity.operations < rnea.operations < 60
    rng = np.random.default_rng(5)
    for q, qd, qdd in zip(*(rng.uniform(-3, 3, (20, 2)) for _ in range(3))):
        _, _, G, tau = closed_form(q, qd, qdd)
        np.testing.assert_allclose(rnea(q.tolist(), qd.tolist(), qdd.tolist()), tau,
                                   rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(gravity(q.tolist()), G, rtol=1e-12, atol=1e-12)
    batch = compile_rnea_batch(robot)
    Q, QD, QDD = (rng.uniform(-3, 3, (7, 2)) for _ in range(3))
    np.testing.assert_allclose(batch(Q, QD, QDD),
                               [closed_form(*s)[3] for s in zip(Q, QD, QDD)], rtol=1e-12)


def test_the_2_link_mass_matrix_jacobian_and_derivatives_equal_the_closed_form():
    """The generated M (composite rigid bodies), J, J̇ q̇ and ∂τ/∂q, ∂τ/∂q̇ (the recursion
    differentiated) of the planar 2R arm, printed, against Craig's closed form: M directly,
    J as the planar Jacobian, J̇ q̇ as its time derivative, the derivatives as the closed
    form's τ differentiated by hand."""
    robot = rd.load_robot(SHIPPED / "planar_2link.urdf")
    mass_matrix, jacobian = compile_mass_matrix(robot), compile_jacobian(robot)
    jacobian_dot_qd = compile_jacobian_dot_qd(robot)
    derivatives = compile_rnea_derivatives(robot)
    for function in (mass_matrix, jacobian, jacobian_dot_qd, derivatives):
        print("\n" + function.source)
    assert mass_matrix.operations < 30 and jacobian.operations < 30
    assert derivatives.operations < 120
    rng = np.random.default_rng(6)
    for q, qd, qdd in zip(*(rng.uniform(-3, 3, (20, 2)) for _ in range(3))):
        x = q.tolist(), qd.tolist(), qdd.tolist()
        M = closed_form(q, qd, qdd)[0]
        np.testing.assert_allclose(np.reshape(mass_matrix(x[0]), (2, 2)), M, atol=1e-12)
        J = np.reshape(jacobian(x[0]), (6, 2))
        np.testing.assert_allclose(J[[0, 2]], planar_jacobian(q), atol=1e-12)
        np.testing.assert_allclose(J[4], [-1.0, -1.0], atol=1e-12)     # ω about −y
        # J̇ q̇ = d/dt (J q̇) at q̈ = 0: the planar Jacobian's derivative along q̇
        h = 1e-6
        J_dot = (planar_jacobian(q + h * qd) - planar_jacobian(q - h * qd)) / (2 * h)
        np.testing.assert_allclose(np.array(jacobian_dot_qd(x[0], x[1]))[[0, 2]],
                                   J_dot @ qd, atol=1e-7)
        dq, dqd = closed_form_derivatives(q, qd, qdd)
        d = np.array(derivatives(*x))
        np.testing.assert_allclose(d[:4].reshape(2, 2), dq, atol=1e-11)
        np.testing.assert_allclose(d[4:].reshape(2, 2), dqd, atol=1e-11)


def test_derivatives_follow_the_rules_of_calculus():
    """Emitter.derivatives on expressions of every recorded kind against their derivatives
    by hand."""
    e = Emitter()
    x0, x1, x2 = (e.input(f"x{i}") for i in range(3))
    # x1 cos x0 − 2.5 sin x0,  −x1² x2,  x2 + 3
    f = [e.sub(e.mul(e.call("cos", x0), x1), e.mul(2.5, e.call("sin", x0))),
         e.neg(e.mul(x1, e.mul(x1, x2))),
         e.add(x2, 3.0)]
    d0, d1 = e.derivatives(f, "x0"), e.derivatives(f, "x1")
    assert d0[1] == d0[2] == d1[2] == 0.0                 # structurally zero: folded
    a, b, c = 0.3, -1.7, 2.2
    got = _run(e, f + d0 + d1, [a, b, c])
    np.testing.assert_allclose(got, [
        b * math.cos(a) - 2.5 * math.sin(a), -b * b * c, c + 3.0,
        -b * math.sin(a) - 2.5 * math.cos(a), 0.0, 0.0,
        math.cos(a), -2 * b * c, 0.0], rtol=1e-14, atol=1e-14)


def test_a_quotient_and_its_derivative_are_the_closed_forms():
    """x / y in every sign combination and by a constant, and the derivatives of x0 / x1
    and (x0 + 1) / (x1 x0), against the arithmetic by hand, in registers and inlined."""
    e = Emitter()
    x0, x1 = e.input("x0"), e.input("x1")
    f = [e.div(x0, x1), e.div(e.neg(x0), x1), e.div(x0, e.neg(x1)), e.div(2.0, x1),
         e.div(x0, 4.0), e.div(e.add(x0, 1.0), e.mul(x1, x0))]
    d0, d1 = e.derivatives(f, "x0"), e.derivatives(f, "x1")
    a, b = 0.7, -1.3
    for inline in (False, True):
        got = _run(e, f + [d0[0], d1[0], d0[5], d1[5]], [a, b, 0.0], inline)
        np.testing.assert_allclose(got, [
            a / b, -a / b, -a / b, 2.0 / b, a / 4.0, (a + 1.0) / (b * a),
            1.0 / b, -a / b ** 2, -1.0 / (b * a * a), -(a + 1.0) / (b * b * a)],
            rtol=1e-14)


def test_a_traceback_through_generated_code_shows_its_line():
    robot = rd.load_robot(SHIPPED / "planar_2link.urdf")
    rnea = compile_rnea(robot)
    with pytest.raises(TypeError) as failure:
        rnea([0.1, "not a number"], [0.0, 0.0], [0.0, 0.0])
    frames = traceback.extract_tb(failure.tb)
    generated = [f for f in frames if f.filename == "<rnea for planar_2link>"]
    assert generated and generated[-1].line          # the line's text, from linecache
    assert generated[-1].line in rnea.source
