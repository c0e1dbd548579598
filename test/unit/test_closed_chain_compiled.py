"""The closed chain's compiled per-state terms (closed_chain/compiled.py): Φ and Φ_q of every
closure kind against closures.py's general form and central differences; W = ∂(Φ_q q̇)/∂q,
through what motor_terms makes of it, against differences of Φ_q q̇ (γ = −W q̇ against
closures.gamma too); the tree's gravity, RNEA, M, M q̇ and Cᵀ q̇ against Pinocchio on the same
tree."""

from types import SimpleNamespace

import numpy as np
import pytest

from closed_chain_models import random_spatial_tree_urdf, shipped_linkage
from robo_dynamics.backends.pinocchio_closed_chain import PinocchioClosedChain
from robo_dynamics.closed_chain import closure, load_tree
from robo_dynamics.closed_chain.closures import constraint, constraint_jacobian, gamma
from robo_dynamics.closed_chain.compiled import CompiledClosedChain
from robo_dynamics.closed_chain.tree_dynamics import frame_jacobian, frame_pose, tree_kinematics

pin = pytest.importorskip("pinocchio")
EPS = 1e-6         # rad: central differences


def random_cut(kind, seed=3):
    """A `kind` closure between the ends of the random spatial tree's two branches (they
    need not meet: the terms are functions of any q)."""
    tree = load_tree(random_spatial_tree_urdf())
    rng = np.random.default_rng(seed)
    cut = closure("cut", kind, "a2", "b2", rng.uniform(-0.1, 0.1, 3), rng.uniform(-1, 1, 3),
                  rng.uniform(-0.1, 0.1, 3), rng.uniform(-1, 1, 3))
    return tree, [cut]


def pinocchio_tree(tree, closures):
    """Pinocchio's model and data of the tree, built body by body (its closures unused)."""
    reference = PinocchioClosedChain(SimpleNamespace(tree=tree, closures=closures))
    return reference.model, reference.data


@pytest.mark.parametrize("kind", ["point", "revolute", "weld"])
def test_the_closure_terms_are_the_general_forms_and_their_derivatives(kind):
    """Φ, Φ_q (every row) equal closures.py's at random q; point and revolute rows of Φ_q
    are ∂Φ/∂q by central differences. motor_terms with every row, u the first m joints and
    Φ_u⁻¹ = I: c_u = γ = −d/dt (Φ_q q̇) along q̇ (differences of Φ_q), and ∂T/∂q − y =
    Wᵀ p_u = ∂(p_uᵀ Φ_q q̇)/∂q at fixed p_u and q̇ (differences), ∂T/∂q Pinocchio's Cᵀq̇."""
    tree, cuts = random_cut(kind)
    compiled = CompiledClosedChain(tree, cuts)
    m = compiled.rows
    terms = compiled.motor_terms(range(m), list(range(m)))
    model, data = pinocchio_tree(tree, cuts)
    rng = np.random.default_rng(5)
    for _ in range(5):
        q, qd = (rng.uniform(-2, 2, tree.dof) for _ in range(2))
        kin = tree_kinematics(tree, q)
        Phi, Phi_q = compiled.closure(q)
        # (a weld's rotation vector near π amplifies the rounding of its frames)
        np.testing.assert_allclose(Phi, constraint(tree, cuts, kin), rtol=0, atol=1e-10)
        np.testing.assert_allclose(Phi_q, constraint_jacobian(tree, cuts, kin), rtol=0,
                                   atol=1e-12)
        numeric = np.array([(compiled.closure(q + EPS * e)[0] - compiled.closure(q - EPS * e)[0])
                            / (2 * EPS) for e in np.eye(tree.dof)]).T
        exact = slice(0, 3) if kind == "weld" else slice(None)
        np.testing.assert_allclose(Phi_q[exact], numeric[exact], rtol=0, atol=1e-8)
        c_u, p, y = terms(q, qd, np.eye(m).ravel().tolist())
        rate = (compiled.closure(q + EPS * qd)[1] - compiled.closure(q - EPS * qd)[1]) / (2 * EPS)
        np.testing.assert_allclose(c_u, -rate @ qd, rtol=0, atol=1e-7)
        np.testing.assert_allclose(c_u, gamma(tree, cuts, kin, qd), rtol=0, atol=1e-12)
        pin.computeCoriolisMatrix(model, data, q, qd)
        expected = np.array([p[:m] @ (compiled.closure(q + EPS * e)[1]
                                      - compiled.closure(q - EPS * e)[1]) @ qd / (2 * EPS)
                             for e in np.eye(tree.dof)])
        np.testing.assert_allclose(data.C.T @ qd - y, expected, rtol=0, atol=1e-6)


@pytest.mark.parametrize("chain", [
    pytest.param(lambda: SimpleNamespace(tree=random_cut("point")[0],      # branches apart
                                         closures=random_cut("point")[1]), id="spatial tree"),
    pytest.param(lambda: shipped_linkage("rd_delta"), id="rd_delta"),
    pytest.param(lambda: shipped_linkage("rd_palletizer"), id="rd_palletizer")])
def test_the_tree_terms_are_pinocchios(chain):
    """g(q), the RNEA's τ, M, M q̇ and Cᵀ q̇ of the tree (no loop closed) at random states
    against Pinocchio's computeGeneralizedGravity, rnea, crba and computeCoriolisMatrix (its
    C is the Christoffel one: Cᵀ q̇ = ∂T/∂q; motor_terms' y is ∂T/∂q at Φ_u⁻¹ = 0)."""
    chain = chain()
    compiled = CompiledClosedChain(chain.tree, chain.closures)
    m = compiled.rows
    terms = compiled.motor_terms(range(m), list(range(m)))
    model, data = pinocchio_tree(chain.tree, chain.closures)
    rng = np.random.default_rng(6)
    for _ in range(5):
        q, qd, qdd = (rng.uniform(-1.5, 1.5, chain.tree.dof) for _ in range(3))
        g = pin.computeGeneralizedGravity(model, data, q)
        np.testing.assert_allclose(compiled.gravity(q), g, rtol=0, atol=1e-10 * np.abs(g).max())
        tau = pin.rnea(model, data, q, qd, qdd)
        np.testing.assert_allclose(compiled.rnea(q, qd, qdd), tau, rtol=0,
                                   atol=1e-10 * np.abs(tau).max())
        _, p, CT_qd = terms(q, qd, [0.0] * (m * m))
        M = pin.crba(model, data, q)
        M = np.triu(M) + np.triu(M, 1).T
        np.testing.assert_allclose(compiled.mass_matrix(q), M, rtol=0, atol=1e-10 * np.abs(M).max())
        np.testing.assert_allclose(p, M @ qd, rtol=0, atol=1e-10 * np.abs(M @ qd).max())
        pin.computeCoriolisMatrix(model, data, q, qd)
        expected = data.C.T @ qd
        np.testing.assert_allclose(CT_qd, expected, rtol=0, atol=1e-10 * np.abs(expected).max())


@pytest.mark.parametrize("name, link", [("rd_palletizer", "tool0"), ("rd_delta", "platform")])
def test_a_frame_is_the_general_forms_and_its_jacobian_the_points_rate(name, link):
    """The pose and Jacobian of a point of a link (0.1, −0.05, 0.2 m in its frame) equal
    tree_dynamics' frame_pose and frame_jacobian at random q; J q̇ is the point's velocity
    and J̇ q̇ (frame_bias) the rate of J q̇, both by central differences along q̇."""
    chain = shipped_linkage(name)
    tree, point = chain.tree, np.array([0.1, -0.05, 0.2])
    compiled = CompiledClosedChain(tree, chain.closures)
    pose, bias = compiled.frame(link, point), compiled.frame_bias(link, point)
    rng = np.random.default_rng(7)
    for _ in range(5):
        q, qd = rng.uniform(-1.0, 1.0, tree.dof), rng.uniform(-1.0, 1.0, tree.dof)
        kin = tree_kinematics(tree, q)
        body, R_expected, p_expected = frame_pose(tree, kin, link, np.eye(3), point)
        R, p, J = pose(q)
        np.testing.assert_allclose(R, R_expected, rtol=0, atol=1e-13)
        np.testing.assert_allclose(p, p_expected, rtol=0, atol=1e-13)
        np.testing.assert_allclose(J, frame_jacobian(tree, kin, body, p_expected), rtol=0,
                                   atol=1e-13)
        velocity = (pose(q + EPS * qd)[1] - pose(q - EPS * qd)[1]) / (2 * EPS)
        np.testing.assert_allclose(J[:3] @ qd, velocity, rtol=0, atol=1e-8)
        acceleration = (pose(q + EPS * qd)[2] @ qd - pose(q - EPS * qd)[2] @ qd) / (2 * EPS)
        np.testing.assert_allclose(bias(q, qd), acceleration, rtol=0, atol=1e-7)
