"""Pure control logic (no ROS): joint-state merging, limits, friction, trajectories,
computed torque and payloads, each against an independent expectation."""

import math

import numpy as np
import pytest

import robo_dynamics as rd
from robo_dynamics.algorithms.friction import friction_derivative, friction_torque
from robo_dynamics.control.computed_torque import commanded_acceleration
from robo_dynamics.control.joint_state_merger import JointStateMerger
from robo_dynamics.control.limits import clamp_effort, effort_bounds, velocity_bounds
from robo_dynamics.control.trajectory import SetPoint, Trajectory
from conftest import load_arm, random_states

CHAIN = ("a", "b", "c")


def test_merger_maps_by_name_and_merges_partial_messages():
    merger = JointStateMerger(CHAIN, known_joints=CHAIN + ("finger",))
    assert merger.update(["c", "finger"], [3.0, 9.0], [0.3, 0.9], now=1.0) is None
    assert not merger.complete()
    assert merger.update(["b", "a"], [2.0, 1.0], [], now=2.0) is None
    assert merger.complete()
    np.testing.assert_array_equal(merger.q, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(merger.qd, [0.0, 0.0, 0.3])   # empty velocity → zero
    assert merger.age(2.5) == 1.5
    assert merger.stale_joints(2.5, timeout=1.0) == ["c"]


@pytest.mark.parametrize("names, positions, velocities, reason", [
    ([], [], [], "empty message"),
    (["a", "b"], [1.0], [], "2 names but 1 positions"),
    (["a", "b"], [1.0, 2.0], [0.0], "2 names but 1 velocities"),
    (["a", "a"], [1.0, 2.0], [], "duplicated joint names"),
    (["a", "ghost"], [1.0, 2.0], [], "unknown joint names ['ghost']"),
    (["a", "b"], [1.0, math.nan], [], "non-finite value for joint 'b'"),
    (["a", "b"], [1.0, 2.0], [0.0, math.inf], "non-finite value for joint 'b'"),
    (["a", "b"], [1e300, 2.0], [], "implausible value for joint 'a'"),
    ([f"j{k}" for k in range(100_000)], [0.0] * 100_000, [],
     "100000 joint names, more than the 3 joints"),
])
def test_merger_rejects_bad_messages_and_keeps_its_state(names, positions, velocities, reason):
    merger = JointStateMerger(CHAIN, known_joints=CHAIN)
    merger.update(list(CHAIN), [0.1, 0.2, 0.3], [1.0, 2.0, 3.0], now=0.0)
    assert reason in merger.update(names, positions, velocities, now=1.0)
    assert merger.rejected == 1
    np.testing.assert_array_equal(merger.q, [0.1, 0.2, 0.3])
    np.testing.assert_array_equal(merger.qd, [1.0, 2.0, 3.0])
    assert merger.age(1.0) == 1.0


def test_merger_maps_measured_efforts_by_name_and_marks_missing_ones_unknown():
    merger = JointStateMerger(CHAIN, known_joints=CHAIN + ("finger",))
    assert merger.update(["c", "finger", "a"], [3.0, 9.0, 1.0], [], 0.0,
                         efforts=[30.0, 90.0, 10.0]) is None
    assert merger.update(["b"], [2.0], [], 0.0) is None               # no effort: unknown
    np.testing.assert_array_equal(merger.effort, [10.0, np.nan, 30.0])
    assert merger.update(list(CHAIN), [1, 2, 3], [], 1.0, efforts=[1.5, math.nan, 3.5]) is None
    np.testing.assert_array_equal(merger.effort, [1.5, np.nan, 3.5])  # non-finite: unknown
    assert "3 names but 2 efforts" in merger.update(list(CHAIN), [1, 2, 3], [], 2.0,
                                                    efforts=[1.0, 2.0])
    np.testing.assert_array_equal(merger.effort, [1.5, np.nan, 3.5])  # rejected: unchanged


def test_effort_clamp():
    bound = effort_bounds([10.0, 5.0, np.inf], scale=0.5)
    tau, clamped = clamp_effort(np.array([7.0, -1.0, 1e6]), bound)
    np.testing.assert_array_equal(tau, [5.0, -1.0, 1e6])
    assert clamped
    for bad in (np.nan, np.inf, -np.inf):           # also where the bound is inf
        for joint in range(3):
            tau = np.zeros(3)
            tau[joint] = bad
            with pytest.raises(FloatingPointError):
                clamp_effort(tau, bound)
    inside = np.array([4.0, -2.5, -1e6])            # within bounds, one exactly at it
    tau, clamped = clamp_effort(inside, bound)
    np.testing.assert_array_equal(tau, inside)
    assert not clamped
    for scale in (1.5, 0.0, 1e-4, np.nan):
        with pytest.raises(ValueError, match="torque_limit_scale must be in"):
            effort_bounds([1.0], scale=scale)


def test_velocity_bounds():
    """scale × the URDF limit; a joint whose URDF gives no positive limit is unbounded."""
    np.testing.assert_array_equal(velocity_bounds([2.0, 0.0, 3.0], 0.5), [1.0, np.inf, 1.5])
    with pytest.raises(ValueError, match="velocity_limit_scale must be in"):
        velocity_bounds([2.0], 0.0)


def test_friction_is_viscous_plus_coulomb():
    qd = np.array([-2.0, 0.0, 1.0])
    tau = friction_torque(qd, np.array([0.5, 0.5, 0.5]), np.array([1.0, 1.0, 1.0]))
    np.testing.assert_allclose(tau, [-2.0, 0.0, 1.5], atol=1e-12)


def test_friction_derivative_equals_finite_differences():
    """∂τ_f/∂q̇ against a central difference, inside and outside the smoothing band."""
    qd = np.array([-0.02, -0.003, 0.0, 0.004, 0.5])
    viscous, coulomb = np.full(5, 0.3), np.full(5, 2.0)
    h = 1e-7
    numeric = (friction_torque(qd + h, viscous, coulomb)
               - friction_torque(qd - h, viscous, coulomb)) / (2 * h)
    np.testing.assert_allclose(friction_derivative(qd, viscous, coulomb), numeric, rtol=1e-6)


def test_trajectory_interpolation():
    """Linear, cubic and quintic segments reproduce their end conditions and a known cubic."""
    times = [0.0, 2.0]
    linear = Trajectory(10.0, times, [[0.0], [4.0]])
    np.testing.assert_allclose(linear.sample(11.0)[0:2], [[2.0], [2.0]])
    # cubic through p(0)=0, v(0)=0, p(2)=4, v(2)=0 is p(t) = 3t² − t³
    cubic = Trajectory(0.0, times, [[0.0], [4.0]], [[0.0], [0.0]])
    for t in (0.3, 1.0, 1.7):
        q, qd, qdd = cubic.sample(t)
        np.testing.assert_allclose([q[0], qd[0], qdd[0]],
                                   [3 * t**2 - t**3, 6 * t - 3 * t**2, 6 - 6 * t], atol=1e-12)
    quintic = Trajectory(0.0, times, [[0.0], [1.0]], [[0.5], [-0.2]], [[1.0], [2.0]])
    for t, expected in ((1e-9, (0.0, 0.5, 1.0)), (2.0 - 1e-9, (1.0, -0.2, 2.0))):
        np.testing.assert_allclose(np.ravel(quintic.sample(t)), expected, atol=1e-6)
    q_end, qd_end, qdd_end = quintic.sample(5.0)       # after the end: hold, at rest
    np.testing.assert_array_equal([q_end[0], qd_end[0], qdd_end[0]], [1.0, 0.0, 0.0])
    with pytest.raises(ValueError):
        Trajectory(0.0, [0.0, 0.0], [[0.0], [1.0]])
    np.testing.assert_array_equal(SetPoint([1.0], [0.5]).sample(3.0), [[1.0], [0.5], [0.0]])


def test_computed_torque_matches_the_control_law():
    """The controller's law, RNEA(q, q̇, a) at the commanded acceleration a, equals
    τ = M (q̈_d + Kp e + Kd ė) + C q̇ + g with M, C, g from Pinocchio (another backend)."""
    robot = load_arm("panda")
    ours, ref = rd.make_solver(robot, "rnea"), rd.make_solver(robot, "pinocchio")
    rng = np.random.default_rng(41)
    Kp, Kd = rng.uniform(50, 200, robot.dof), rng.uniform(5, 30, robot.dof)
    for q, qd, qdd_d in zip(*random_states(robot, 20, seed=41)):
        q_d, qd_d = q + rng.normal(0, 0.1, robot.dof), qd + rng.normal(0, 0.1, robot.dof)
        expected = (ref.mass_matrix(q) @ (qdd_d + Kp * (q_d - q) + Kd * (qd_d - qd))
                    + ref.coriolis_matrix(q, qd) @ qd + ref.gravity(q))
        a = commanded_acceleration(q, qd, q_d, qd_d, qdd_d, Kp, Kd)
        tau = ours.unchecked.inverse_dynamics(q, qd, a)
        np.testing.assert_allclose(tau, expected, rtol=0, atol=1e-9 * np.abs(expected).max())


def test_payload_adds_the_weight_of_a_point_mass():
    """A 2 kg point mass at the flange adds −J_vᵀ m g to the gravity torques (virtual work)."""
    robot = load_arm("rd_ur5e")
    loaded = robot.with_payload("tool0", 2.0, [0.0, 0.0, 0.0], np.zeros((3, 3)))
    bare, heavy, ref = (rd.make_solver(robot, "rnea"), rd.make_solver(loaded, "rnea"),
                        rd.make_solver(loaded, "pinocchio"))
    for q, qd, qdd in zip(*random_states(robot, 20, seed=42)):
        J_v = bare.jacobian(q)[:3]
        expected = bare.gravity(q) - J_v.T @ (2.0 * robot.gravity)
        np.testing.assert_allclose(heavy.gravity(q), expected, atol=1e-10)
        np.testing.assert_allclose(ref.gravity(q), expected, atol=1e-10)
        report = rd.cross_check(heavy, ref, q, qd, qdd)
        assert max(d.max_rel for d in report.values()) < 1e-9, report


def test_payload_on_a_body_link_with_inertia_matches_pinocchio():
    robot = load_arm("mixed_chain")
    inertia = np.array([[0.02, 0.001, 0.0], [0.001, 0.03, 0.002], [0.0, 0.002, 0.025]])
    loaded = robot.with_payload("l3", 1.5, [0.1, -0.05, 0.2], inertia)
    ours, ref = rd.make_solver(loaded, "rnea"), rd.make_solver(loaded, "pinocchio")
    assert math.isclose(loaded.mass.sum(), robot.mass.sum() + 1.5)
    for q, qd, qdd in zip(*random_states(robot, 20, seed=43)):
        report = rd.cross_check(ours, ref, q, qd, qdd)
        assert max(d.max_rel for d in report.values()) < 1e-9, report


def test_payload_errors():
    robot = load_arm("rd_ur5e")
    with pytest.raises(rd.URDFError, match="'base_link' is not a moving link of the chain"):
        robot.with_payload("base_link", 1.0, [0, 0, 0], np.zeros((3, 3)))
    with pytest.raises(rd.URDFError, match="payload at 'tool0': mass must be finite and >= 0"):
        robot.with_payload("tool0", -1.0, [0, 0, 0], np.zeros((3, 3)))
    with pytest.raises(rd.URDFError, match="triangle inequality"):
        robot.with_payload("tool0", 1.0, [0, 0, 0], np.diag([0.1, 0.1, 0.5]))
