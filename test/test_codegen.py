"""The code generator: its algebra (constant folding, signs carried in terms, shared
subexpressions, dead-code removal, reused registers, in-place updates) against plain
arithmetic on the same numbers, for every combination of operand kinds; and the code it
writes for the 2-link arm, printed, against the closed form (Craig, Introduction to
Robotics, §6.7)."""

import itertools
import math
import traceback

import numpy as np
import pytest

import robo_dynamics as rd
from robo_dynamics.algorithms.codegen import Emitter, build
from robo_dynamics.algorithms.rnea_codegen import compile_rnea, compile_rnea_batch
from conftest import SHIPPED
from planar_2link import closed_form


def _run(emitter, results, inputs):
    lines, results = emitter.code(results)
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


def test_the_2_link_arm_code_is_short_and_equals_the_closed_form():
    """The generated inverse dynamics of the planar 2R arm (point masses at the link ends),
    printed for the reader: a few dozen lines, and τ = M q̈ + V + G of the closed form."""
    robot = rd.load_robot(SHIPPED / "planar_2link.urdf")
    rnea, gravity = compile_rnea(robot), compile_rnea(robot, gravity_only=True)
    print("\n" + rnea.source + "\n" + gravity.source)
    assert rnea.source.startswith("def rnea(q, qd=None, qdd=None):")
    assert gravity.source.startswith("def gravity(q, qd=None, qdd=None):")
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


def test_a_traceback_through_generated_code_shows_its_line():
    robot = rd.load_robot(SHIPPED / "planar_2link.urdf")
    rnea = compile_rnea(robot)
    with pytest.raises(TypeError) as failure:
        rnea([0.1, "not a number"], [0.0, 0.0], [0.0, 0.0])
    frames = traceback.extract_tb(failure.tb)
    generated = [f for f in frames if f.filename == "<rnea for planar_2link>"]
    assert generated and generated[-1].line          # the line's text, from linecache
    assert generated[-1].line in rnea.source
