"""The system Jacobian (simulation/constrained/system_jacobian.py) against central differences, the
paper's single pendulum against its closed form, and the 8 × 8 Jacobian of the paper's
spatial four-bar (Lee, Sohn, Kim and Yoo, eq. 23, 27–29)."""

import numpy as np
import pytest

from closed_chain_models import (SPATIAL_FOUR_BAR_PARAMETERS, random_spatial_tree_urdf,
                                 spatial_four_bar_urdf)
from robo_dynamics.closed_chain import ClosedChain, closure, load_closed_chain, load_tree
from robo_dynamics.simulation.constrained.dae import residual
from robo_dynamics.simulation.constrained.system_jacobian import (constraint_force_derivative,
                                                                  rnea_derivatives,
                                                                  system_jacobian)
from robo_dynamics.closed_chain.closures import constraint_jacobian
from robo_dynamics.closed_chain.tree_dynamics import tree_kinematics, tree_rnea

EPS = 1e-6


def central(f, x):
    return np.array([(f(x + EPS * e) - f(x - EPS * e)) / (2 * EPS) for e in np.eye(len(x))]).T


def relative(a, b):
    return np.abs(a - b).max() / max(1.0, np.abs(b).max())


def test_the_trees_inverse_dynamics_derivatives_equal_central_differences():
    tree = load_tree(random_spatial_tree_urdf(seed=4, joints=3))
    rng = np.random.default_rng(5)
    for _ in range(5):
        q, qd, qdd = (rng.uniform(-2, 2, tree.dof) for _ in range(3))
        dq, dqd = rnea_derivatives(tree, q, qd, qdd)
        assert relative(dq, central(lambda x: tree_rnea(tree, x, qd, qdd), q)) < 1e-7
        assert relative(dqd, central(lambda x: tree_rnea(tree, q, x, qdd), qd)) < 1e-7


@pytest.mark.parametrize("kind", ["point", "weld", "revolute"])
def test_the_constraint_forces_derivative_equals_central_differences(kind):
    """At a pose where the closure is open (its frames turned apart: the derivative's terms
    from the frames' motion are all there)."""
    tree = load_tree(random_spatial_tree_urdf(seed=6, joints=3))
    rng = np.random.default_rng(7)
    cut = closure("cut", kind, "a2", "b2", rng.uniform(-0.1, 0.1, 3), rng.uniform(-1, 1, 3),
                  rng.uniform(-0.1, 0.1, 3), rng.uniform(-1, 1, 3))
    lam = rng.uniform(-5, 5, cut.rows)
    q = rng.uniform(-2, 2, tree.dof)
    force = lambda x: constraint_jacobian(tree, [cut], tree_kinematics(tree, x)).T @ lam  # noqa
    exact = constraint_force_derivative(tree, [cut], q, lam)
    assert relative(exact, central(force, q)) < 1e-7


def test_the_single_pendulums_system_jacobian_is_the_closed_form():
    """A rod of mass m, centre of mass c from its pivot, inertia J about it, turning about
    the horizontal y axis: G = [J ẇ + m g c cos θ; w − θ̇] for θ from the horizontal, so
    ∂G/∂Y = [[0, −m g c sin θ], [1, 0]] and ∂G/∂Y′ = [[J, 0], [0, −1]] (eq. 23's form)."""
    m, c, I_c = 1.5, 0.3, 0.02
    urdf = ('<robot name="pendulum"><link name="base"/><link name="rod"><inertial>'
            f'<origin xyz="{c} 0 0"/><mass value="{m}"/><inertia ixx="0.001" ixy="0" ixz="0" '
            f'iyy="{I_c}" iyz="0" izz="{I_c}"/></inertial></link>'
            '<joint name="pivot" type="continuous"><parent link="base"/><child link="rod"/>'
            '<axis xyz="0 -1 0"/></joint></robot>')
    chain = ClosedChain(load_tree(urdf), [])
    J = I_c + m * c * c
    for theta, w, w_dot in ((0.3, 1.2, -0.7), (2.0, -0.4, 3.0)):
        dG_dY, dG_dYp = system_jacobian(chain, np.array([theta]), np.array([w]),
                                        np.array([w_dot]), np.zeros(0))
        np.testing.assert_allclose(dG_dY, [[0.0, -m * 9.81 * c * np.sin(theta)], [1.0, 0.0]],
                                   atol=1e-12)
        np.testing.assert_allclose(dG_dYp, [[J, 0.0], [0.0, -1.0]], atol=1e-12)


def test_the_spatial_four_bars_8_by_8_system_jacobian_equals_central_differences():
    chain = load_closed_chain(spatial_four_bar_urdf(), SPATIAL_FOUR_BAR_PARAMETERS,
                              actuated_joints=["crank_joint"])
    q = chain.close(np.array([0.8, 0.0, 0.0, 0.0]), chain.reference)
    w = chain.velocities(q, [1.3])
    qdd, lam = chain.forward_dynamics(q, w)
    Y, Yp = np.concatenate((w, q)), np.concatenate((qdd, w))
    dG_dY, dG_dYp = system_jacobian(chain, q, w, qdd, lam)
    assert dG_dY.shape == dG_dYp.shape == (8, 8)
    assert np.abs(residual(chain, Y, Yp, lam)).max() < 1e-10        # a solution of eq. 27
    assert relative(dG_dY, central(lambda x: residual(chain, x, Yp, lam), Y)) < 1e-7
    assert relative(dG_dYp, central(lambda x: residual(chain, Y, x, lam), Yp)) < 1e-7
