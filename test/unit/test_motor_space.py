"""The shipped palletizer and Delta seen from their motors (closed_chain/motor_space.py),
state after state as a controller sees them: the holding torques against each linkage's own
geometry (virtual work), the motors' inertia against Pinocchio's kinetic energy at the
velocities the closed poses' differences give, forward and inverse dynamics against
Pinocchio's constraintDynamics, the tool's velocity against its positions' differences, and
bad states refused with the last pose kept."""

import numpy as np
import pytest
import yaml

from closed_chain_models import FOUR_BAR_PARAMETERS, planar_four_bar_urdf, shipped_linkage
from conftest import REPO
from robo_dynamics.backends.pinocchio_closed_chain import PinocchioClosedChain
from robo_dynamics.closed_chain import MotorSpace, load_closed_chain
from robo_dynamics.closed_chain.tree_dynamics import frame_pose
from robo_dynamics.errors import ArgumentError
from closed_chain_models import potential
from palletizer import holding_torque

pin = pytest.importorskip("pinocchio")

STEPS = 40            # states along each path, a few mrad apart (a controller's next state)
DIFFERENCE = 1e-5     # rad: the central differences' step (the closure is solved to 1e-12)


@pytest.fixture(scope="module", params=["rd_palletizer", "rd_delta"])
def linkage(request):
    chain = shipped_linkage(request.param)
    tip = {"rd_palletizer": "tool0", "rd_delta": "platform"}[request.param]
    goal = {"rd_palletizer": np.array([1.2, 0.5, -0.4, 0.8]),
            "rd_delta": np.array([0.3, -0.15, 0.25])}[request.param]
    return request.param, chain, tip, goal


def path(goal):
    """Motor positions from the drawn pose (0) to `goal` in STEPS states."""
    return [k / STEPS * goal for k in range(1, STEPS + 1)]


def kinetic_energy(chain, q, qd):
    reference = PinocchioClosedChain(chain)
    return pin.computeKineticEnergy(reference.model, reference.data, q, qd)


def test_the_motors_hold_it_with_the_torques_of_virtual_work(linkage):
    """Along the path, ĝ = ∂V/∂θ: the palletizer's V from its drawing, the Delta's from the
    platform trilateration places (test_shipped_linkages, test_closed_chain_delta)."""
    name, chain, _, goal = linkage
    motors = MotorSpace(chain)
    for theta in path(goal):
        tau = motors.gravity(theta)
        if name == "rd_palletizer":
            expected = holding_torque(theta[1], theta[2])
        else:
            h = 1e-6
            expected = np.array([(potential(theta + h * e) - potential(theta - h * e)) / (2 * h)
                                 for e in np.eye(3)])
        np.testing.assert_allclose(tau, expected, rtol=1e-6, atol=1e-5 * np.abs(expected).max())


def test_the_motors_inertia_is_pinocchios_kinetic_energy(linkage):
    """½ θ̇ᵀ M̂ θ̇ = Pinocchio's kinetic energy of the tree at q̇ = (q(θ + εθ̇) − q(θ − εθ̇)) / 2ε,
    the closed poses' central difference (no B of ours)."""
    _, chain, _, goal = linkage
    motors, rng, eps = MotorSpace(chain), np.random.default_rng(3), DIFFERENCE
    for theta in path(goal)[::8]:
        theta_dot = rng.uniform(-1.0, 1.0, motors.dof)
        q = motors.pose(theta)
        qd = (motors.pose(theta + eps * theta_dot) - motors.pose(theta - eps * theta_dot)) / (
            2 * eps)
        expected = kinetic_energy(chain, q, qd)
        found = 0.5 * theta_dot @ motors.mass_matrix(theta) @ theta_dot
        assert abs(found - expected) <= 1e-6 * expected, (found, expected)


def test_the_momentum_terms_are_derivatives_of_pinocchios_kinetic_energy(linkage):
    """p̂ = M̂ θ̇ and Ĉᵀθ̇ = ∂T̂/∂θ at fixed θ̇ (the momentum observer's terms), T̂(θ, θ̇) being
    Pinocchio's kinetic energy at the closed pose and the closed poses' central-difference
    velocity (no B, c or M of ours); the tree's own M q̇ and Cᵀ q̇ against Pinocchio's
    computeCoriolisMatrix."""
    _, chain, _, goal = linkage
    motors, rng, eps, h = MotorSpace(chain), np.random.default_rng(4), DIFFERENCE, 1e-4
    reference = PinocchioClosedChain(chain)

    def kinetic(theta, theta_dot):
        qd = (motors.pose(theta + eps * theta_dot) - motors.pose(theta - eps * theta_dot)) / (
            2 * eps)
        return kinetic_energy(chain, motors.pose(theta), qd)
    for theta in path(goal)[::13]:
        theta_dot = rng.uniform(-1.5, 1.5, motors.dof)
        p, CT_qd = motors.momentum_terms(theta, theta_dot)
        c_kept = motors.state(theta, theta_dot)[3]       # what the hold's torque reads next
        other, hc = MotorSpace(chain), 1e-3          # q̈ at θ̈ = 0: the closed poses' curvature
        c = (other.pose(theta + hc * theta_dot) - 2.0 * other.pose(theta)
             + other.pose(theta - hc * theta_dot)) / hc ** 2
        np.testing.assert_allclose(c_kept, c, atol=1e-5 * max(1.0, np.abs(c).max()))
        expected = np.array([(kinetic(theta + h * e, theta_dot) - kinetic(theta - h * e, theta_dot))
                             / (2 * h) for e in np.eye(motors.dof)])
        np.testing.assert_allclose(CT_qd, expected, atol=1e-5 * np.abs(expected).max())
        expected_p = np.array([(kinetic(theta, theta_dot + h * e)
                                - kinetic(theta, theta_dot - h * e)) / (2 * h)
                               for e in np.eye(motors.dof)])
        np.testing.assert_allclose(p, expected_p, atol=1e-6 * np.abs(expected_p).max())
        q, qd, _, _ = motors.state(theta, theta_dot)
        rows = chain.compiled.rows                     # the tree's M q̇ and Cᵀq̇: y at Φ_u⁻¹ = 0
        _, tree_p, tree_CT_qd = chain.compiled.motor_terms(range(rows), list(range(rows)))(
            q, qd, [0.0] * (rows * rows))
        pin.computeCoriolisMatrix(reference.model, reference.data, q, qd)
        np.testing.assert_allclose(tree_CT_qd, reference.data.C.T @ qd, atol=1e-10)
        M = pin.crba(reference.model, reference.data, q)
        M = np.triu(M) + np.triu(M, 1).T
        np.testing.assert_allclose(tree_p, M @ qd, atol=1e-10)
        np.testing.assert_allclose(
            chain.compiled.gravity(q),
            pin.computeGeneralizedGravity(reference.model, reference.data, q), atol=1e-10)


def test_forward_and_inverse_dynamics_are_pinocchios_constraint_dynamics(linkage):
    """Random motor torques at moving states: θ̈ is the motors' rows of Pinocchio's q̈, and
    the inverse dynamics of that θ̈ gives the torques back with Pinocchio's constraint
    forces."""
    _, chain, _, goal = linkage
    motors, rng = MotorSpace(chain), np.random.default_rng(5)
    reference = PinocchioClosedChain(chain)
    scale = np.abs(motors.gravity(goal)).max()
    for theta in path(goal)[::8]:
        theta_dot = rng.uniform(-1.5, 1.5, motors.dof)
        tau = rng.uniform(-scale, scale, motors.dof)
        q, qd, _, _ = motors.state(theta, theta_dot)
        qdd, force = reference.forward_dynamics(q, qd, tau)
        theta_ddot = qdd[list(chain.actuated)]
        np.testing.assert_allclose(motors.forward_dynamics(theta, theta_dot, tau), theta_ddot,
                                   rtol=1e-7, atol=1e-7 * np.abs(theta_ddot).max())
        found, lam = motors.inverse_dynamics(theta, theta_dot, theta_ddot)
        np.testing.assert_allclose(found, tau, rtol=1e-7, atol=1e-7 * scale)
        np.testing.assert_allclose(chain.constraint_jacobian(q).T @ lam, force,
                                   atol=1e-6 * np.abs(force).max())


def test_the_tool_moves_with_the_jacobian_through_the_loops(linkage):
    """J B θ̇ = the tip's velocity from its positions at the closed poses θ ± εθ̇."""
    _, chain, tip, goal = linkage
    motors, eps = MotorSpace(chain), DIFFERENCE
    theta_dot = np.linspace(0.5, -0.5, motors.dof)

    def tip_position(theta):
        kin = chain.kinematics(motors.pose(theta))
        return frame_pose(chain.tree, kin, tip)[2]
    for theta in path(goal)[::10]:
        velocity = (tip_position(theta + eps * theta_dot)
                    - tip_position(theta - eps * theta_dot)) / (2 * eps)
        found = motors.jacobian(theta, tip)[:3] @ theta_dot
        np.testing.assert_allclose(found, velocity, rtol=1e-6, atol=1e-6)


def test_each_state_is_closed_on_the_branch_it_came_from(linkage):
    """Step by step along the path the closed poses are those of continuation from the
    drawn pose (the branch it is drawn on), and the loops are closed to 1e-12."""
    _, chain, _, goal = linkage
    motors = MotorSpace(chain)
    for theta in path(goal):
        q = motors.pose(theta)
        assert np.abs(chain.constraint(q)).max() <= 1e-12
    target = chain.reference.copy()
    target[list(chain.actuated)] = goal
    np.testing.assert_allclose(q, chain.close(target, start=chain.reference), atol=1e-9)


def test_bad_states_are_refused_with_the_reason_and_the_last_pose_kept():
    """The planar four-bar driven by its follower (a rocker: it cannot reach every angle),
    turned to 2.5 rad: ArgumentError naming the motor; wrong lengths and NaN likewise; the
    next good state closes as before. On the Delta, a passive joint measured off the
    closure is reported by name and size, a NaN one as infinitely far."""
    chain = load_closed_chain(planar_four_bar_urdf(), FOUR_BAR_PARAMETERS,
                              actuated_joints=["follower_joint"])
    motors = MotorSpace(chain)
    q = motors.pose([0.3])
    with pytest.raises(ArgumentError, match=r"do not close with \['follower_joint'\]"):
        motors.pose([2.5])
    for bad in ([0.3, 0.1], [np.nan]):
        with pytest.raises(ArgumentError, match="1 finite values"):
            motors.gravity(bad)
    np.testing.assert_allclose(motors.pose([0.3]), q, atol=1e-12)
    motors = MotorSpace(shipped_linkage("rd_delta"))
    theta = np.array([0.2, 0.1, -0.1])
    q = motors.pose(theta)
    passive = motors.passive_joints[0]
    closed = q[motors.tree.joint_index(passive)]
    assert motors.passive_disagreement(theta, {passive: closed + 0.01}) == (
        pytest.approx(0.01, abs=1e-9), passive)
    assert motors.passive_disagreement(theta, {passive: float("nan")}) == (np.inf, passive)
    with pytest.raises(ArgumentError, match="not passive joints"):
        motors.passive_disagreement(theta, {motors.joint_names[0]: 0.0})


def test_a_chain_whose_motors_are_not_its_coordinates_is_refused():
    parameters = yaml.safe_load((REPO / "config" / "rd_delta.yaml").read_text())[
        "/**/dynamics_node"]["ros__parameters"]
    chain = load_closed_chain(REPO / "urdf" / "rd_delta.urdf", parameters,
                              actuated_joints=parameters["actuated_joints"][:2])
    with pytest.raises(ArgumentError, match="independent coordinates"):
        MotorSpace(chain)


def test_each_next_state_is_closed_from_the_last_moved_to_first_order_whatever_array_holds_it(
        monkeypatch):
    """A driver's messages, or a controller's buffer reused for each state: MotorSpace keeps
    its own copy of the last motor positions, so each next state of the palletizer (a
    parallelogram: its closure is linear in θ) is closed from q + B Δθ with one pass of the
    compiled closure (Φ, Φ_u⁻¹ and B_u evaluated once: motor_closure.py), and to the pose a
    fresh MotorSpace finds."""
    chain = shipped_linkage("rd_palletizer")
    motors = MotorSpace(chain)
    passes = []
    counted = motors._compiled_closure
    monkeypatch.setattr(motors, "_compiled_closure",
                        lambda *args: passes.append(1) or counted(*args))
    buffer, each = np.zeros(4), []
    for theta in path(np.array([1.2, 0.5, -0.4, 0.8]))[:10]:     # 30 to 50 mrad apart
        buffer[:] = theta
        before = len(passes)
        q, _ = motors.closed(buffer)
        each.append(len(passes) - before)
        np.testing.assert_allclose(q, MotorSpace(chain).closed(theta.copy())[0], atol=1e-12)
        passes[before + each[-1]:] = []            # the fresh MotorSpace's passes
    assert each[1:] == [1] * 9, each
