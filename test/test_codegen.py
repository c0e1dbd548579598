"""The code generator's algebra (constant folding, signs carried in names, shared
subexpressions, dead-code removal, reused names, in-place updates) against plain
arithmetic on the same numbers, for every combination of operand kinds."""

import itertools
import math

import numpy as np

from robo_dynamics.algorithms.rnea_codegen import _Emitter, _build


def _run(emitter, results, inputs):
    lines, results = emitter.code(results)
    source = ("def rnea(q, qd, qdd):\n    x0, x1, x2 = q\n" + "\n".join(lines)
              + f"\n    return [{', '.join(repr(r) if isinstance(r, float) else r for r in results)}]\n")
    return _build(source, "<test>", {"cos": math.cos, "sin": math.sin})(inputs, None, None)


def test_every_operation_on_every_kind_of_operand_matches_arithmetic():
    rng = np.random.default_rng(0)
    values = rng.uniform(-3.0, 3.0, 3).tolist()
    e = _Emitter()
    # operands: constants (incl. 0 and ±1) and symbols, plain and negated, with their values
    symbols = [("x0", values[0]), ("x1", values[1]), (e.call("cos", "x2"), math.cos(values[2]))]
    operands = [(c, c) for c in (0.0, 1.0, -1.0, 2.5, -0.75)]
    for name, value in symbols:
        operands += [(name, value), (e.neg(name), -value)]
    expected, results = [], []
    for (a, va), (b, vb) in itertools.product(operands, repeat=2):
        for op, reference in ((e.add, va + vb), (e.sub, va - vb), (e.mul, va * vb)):
            results.append(op(a, b))
            expected.append(reference)
        results.append(e.neg(e.add(a, e.mul(b, 3.0))))
        expected.append(-(va + 3.0 * vb))
    # chains that reuse freed names and update in place
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
    e = _Emitter()
    used = e.mul("x0", "x1")
    e.mul("x1", "x2")                       # never used
    twice = e.add(e.mul("x1", "x0"), e.mul("x0", "x1"))   # the same product twice
    lines, _ = e.code([used, twice])
    assert len(lines) == 2                  # one product, one sum
    assert _run(e, [used, twice], [2.0, 3.0, 5.0]) == [6.0, 12.0]
