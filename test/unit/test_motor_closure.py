"""The motors' closure compiled (closed_chain/motor_closure.py): Φ, Newton's step, Φ_u⁻¹ (by
the adjugate for small loops, by Gauss–Jordan elimination for the Delta's 9 dependent
coordinates), B_u, det Φ_u and Hadamard's bound against NumPy's linear algebra on the general
forms (closures.py); and a stream of states closed by it in MotorSpace against the same
stream closed by the general path (ClosedChain.newton and NumPy)."""

import numpy as np
import pytest

import robo_dynamics.closed_chain.motor_space as motor_space
from closed_chain_models import (FOUR_BAR_PARAMETERS, THETA2_0, planar_four_bar_urdf,
                                 random_spatial_tree_urdf, shipped_linkage)
from robo_dynamics.closed_chain import closure, load_closed_chain, load_tree
from robo_dynamics.closed_chain.closures import (constraint, constraint_jacobian,
                                                 in_ancestor_axes)
from robo_dynamics.closed_chain.compiled import CompiledClosedChain
from robo_dynamics.closed_chain.motor_closure import motor_closure
from robo_dynamics.closed_chain.motor_space import MotorSpace
from robo_dynamics.closed_chain.tree_dynamics import tree_kinematics


def spatial_cut(kind):
    """The random spatial tree with a `kind` closure between its branches' ends, compiled."""
    tree = load_tree(random_spatial_tree_urdf())
    rng = np.random.default_rng(4)
    cut = closure("cut", kind, "a2", "b2", rng.uniform(-0.1, 0.1, 3), rng.uniform(-1, 1, 3),
                  rng.uniform(-0.1, 0.1, 3), rng.uniform(-1, 1, 3))
    return tree, [cut], CompiledClosedChain(tree, [cut])


@pytest.mark.parametrize("case", ["point, u 3 joints", "revolute, 2 of its rows",
                                  "rd_palletizer", "rd_delta"])
def test_the_compiled_closure_is_numpys_algebra_on_the_general_forms(case):
    """At random q (the Delta: 1 mrad from closed poses, its motors ±0.4 rad), where Φ_u is
    not near singular (det²/h > 1e-6, the Delta's 1e-5): each output against closures.py's Φ
    and Φ_q with np.linalg (1e-10 of each one's size)."""
    poses, floor = None, 1e-6
    if case.startswith("rd_"):
        chain = shipped_linkage(case)
        tree, closures, compiled = chain.tree, chain.closures, chain.compiled
        rows, u, v = list(chain.partition.rows), list(chain.partition.u), chain.actuated
        if case == "rd_delta":     # its platform hangs from guides: only poses near closed
            rng = np.random.default_rng(2)       # ones are in the elimination order's reach
            poses, floor = [], 1e-5
            for _ in range(20):
                q = chain.reference.copy()
                q[list(v)] = rng.uniform(-0.4, 0.4, 3)
                poses.append(chain.close(q, start=chain.reference)
                             + rng.normal(0.0, 1e-3, tree.dof))
    else:
        tree, closures, compiled = spatial_cut(case.split(",")[0])
        rows, u = ([0, 1, 2], [0, 1, 2]) if case.startswith("point") else ([3, 4], [1, 4])
        v = [j for j in range(tree.dof) if j not in u][::-1]          # any order
    function = motor_closure(compiled, rows, u, v)
    rng, checked = np.random.default_rng(8), 0
    for k in range(20):
        q = rng.uniform(-2.0, 2.0, tree.dof) if poses is None else poses[k]
        Phi, step, inverse, B_u, det, h = function(q.tolist())
        kin = tree_kinematics(tree, q)
        # each loop's rows in its ancestor's axes, as the mechanism takes them
        Phi_expected = in_ancestor_axes(tree, closures, kin, constraint(tree, closures, kin))[rows]
        Phi_q = in_ancestor_axes(tree, closures, kin,
                                 constraint_jacobian(tree, closures, kin))[rows]
        Phi_u, Phi_v = Phi_q[:, u], Phi_q[:, v]
        np.testing.assert_allclose(Phi, Phi_expected, rtol=0, atol=1e-12)
        np.testing.assert_allclose(det, np.linalg.det(Phi_u), rtol=1e-10)
        np.testing.assert_allclose(h, np.prod(np.sum(Phi_u ** 2, axis=1)), rtol=1e-12)
        if det ** 2 <= floor * h:
            continue
        checked += 1
        expected = {"Φ_u⁻¹": np.linalg.inv(Phi_u), "step": np.linalg.solve(Phi_u, Phi_expected),
                    "B_u": -np.linalg.solve(Phi_u, Phi_v)}
        for name, got in (("Φ_u⁻¹", inverse), ("step", step), ("B_u", B_u)):
            np.testing.assert_allclose(np.reshape(got, expected[name].shape), expected[name],
                                       rtol=0, atol=1e-10 * np.abs(expected[name]).max(),
                                       err_msg=name)
    assert checked >= 10


def test_it_is_for_loops_without_a_weld():
    """None for a weld's rows and no dependent coordinate."""
    tree, _, compiled = spatial_cut("weld")
    assert motor_closure(compiled, [3, 4], [0, 1], [2, 3]) is None        # rotation rows
    assert motor_closure(compiled, [], [], list(range(tree.dof))) is None
    assert motor_closure(compiled, [0, 1], [0, 1], [2, 3]) is not None    # its point rows


@pytest.mark.parametrize("name", ["rd_palletizer", "rd_delta", "planar four-bar"])
def test_a_stream_closed_in_compiled_code_is_the_general_paths(name, monkeypatch):
    """The motors along a stream of states (up to 40 mrad apart): the closed pose, B, c and
    the momentum terms and gravity the controller reads, with the compiled closure and with
    the general path (the compiled one declining every state: Φ_u taken for near singular),
    agree to 1e-12 of each one's size. The palletizer's first-order guess is exact (a
    parallelogram: one evaluation per state), the four-bar's and the Delta's not (Newton's
    steps)."""
    if name.startswith("rd_"):
        start = [0.5, 0.3, -0.3, 0.4] if name == "rd_palletizer" else [0.2, -0.1, 0.15]
        chain, start = shipped_linkage(name), np.array(start)
    else:
        chain, start = load_closed_chain(planar_four_bar_urdf(), FOUR_BAR_PARAMETERS), \
            np.array([THETA2_0])
    rng = np.random.default_rng(9)
    theta = start + np.cumsum(rng.uniform(-0.04, 0.04, (30, len(start))), axis=0)
    theta_dot = rng.uniform(-0.5, 0.5, (30, len(start)))
    general_path = []
    newton = chain.newton
    monkeypatch.setattr(chain, "newton", lambda q: general_path.append(1) or newton(q))

    def stream():
        """(what each state gives, the general path's Newton calls after the first state)"""
        motors, out = MotorSpace(chain), []
        for a, b in zip(theta, theta_dot):
            if len(out) == 1:
                general_path.clear()
            q, qd, B, c = motors.state(a, b)
            out.append([q, qd, B, c, *motors.momentum_terms(a, b), motors.gravity(a)])
        return out, len(general_path)
    compiled, since_first = stream()
    assert since_first == 0           # each state after the first: the compiled closure's
    monkeypatch.setattr(motor_space, "SINGULAR", np.inf)
    general, since_first = stream()
    assert since_first > 0
    for k, (got, expected) in enumerate(zip(compiled, general)):
        for name, a, b in zip(("q", "q̇", "B", "c", "p̂", "Ĉᵀθ̇", "ĝ"), got, expected):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-12 * max(1.0, np.abs(b).max()),
                                       err_msg=f"state {k}: {name}")


def test_gauss_jordan_in_any_pivot_order_inverts_and_gives_the_determinant():
    """The elimination the Delta's closure is generated by, on numbers (the emitter folds
    them): random 6 × 6 matrices, their rows in partial pivoting's order and in orders of
    either parity, against np.linalg."""
    from robo_dynamics.algorithms.compiled.codegen import Emitter
    from robo_dynamics.closed_chain.motor_closure import _gauss_jordan, _pivot_order
    rng = np.random.default_rng(3)
    for _ in range(5):
        A = rng.uniform(-1.0, 1.0, (6, 6)) + 3.0 * np.eye(6)[::-1]   # big anti-diagonal
        for order in (_pivot_order(A), [1, 0, 2, 3, 4, 5], [5, 4, 3, 2, 1, 0]):
            inverse, det = _gauss_jordan(Emitter(), A.tolist(), order)
            np.testing.assert_allclose(np.array(inverse), np.linalg.inv(A), atol=1e-12)
            assert abs(det - np.linalg.det(A)) < 1e-12 * abs(np.linalg.det(A)), order
