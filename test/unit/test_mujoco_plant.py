"""The MuJoCo plant (simulation/mujoco_plant.py) against the library and Pinocchio: the
same URDF read by MuJoCo gives the same M and bias forces on every test arm; a trajectory
on MuJoCo equals the internal plant's; armature, the obstacle and the start-up check do
what they say."""

import numpy as np
import pytest

import robo_dynamics as rd
from robo_dynamics.simulation.mujoco_plant import MujocoPlant
from robo_dynamics.simulation.simulated_arm import IntegratedPlant
from conftest import ARMS, SHIPPED, load_arm, rel

UR5E = rd.load_robot(SHIPPED / "rd_ur5e.urdf")
Q0 = np.array([0.3, -1.2, 1.4, -0.9, 1.2, 0.4])


def states(robot, count, seed):
    """`count` (q, q̇) inside the joint limits (MuJoCo enforces them)."""
    rng = np.random.default_rng(seed)
    lower = np.where(robot.upper > robot.lower, np.maximum(robot.lower, -np.pi), -np.pi)
    upper = np.where(robot.upper > robot.lower, np.minimum(robot.upper, np.pi), np.pi)
    margin = 0.05 * (upper - lower)
    return zip(rng.uniform(lower + margin, upper - margin, (count, robot.dof)),
               rng.uniform(-2.0, 2.0, (count, robot.dof)))


@pytest.mark.parametrize("name", sorted(ARMS))
def test_mujoco_reads_the_same_arm_as_the_library(name):
    """M, C q̇ + g and the holding torque from MuJoCo's own reading of the URDF equal
    Pinocchio's, with armature added and taken off again and a payload at the tip."""
    robot = load_arm(name)
    if robot.is_coupled:
        with pytest.raises(ValueError, match="mimic joints are not supported"):
            MujocoPlant(robot)
        return
    robot = robot.with_payload(robot.tip_link, 0.7, [0.01, -0.02, 0.05], np.diag([2e-3] * 3))
    reference = rd.make_solver(robot, "pinocchio")
    plant = MujocoPlant(robot, armature=np.linspace(0.01, 0.1, robot.dof))
    for q, qd in states(robot, 10, seed=1):
        M, b = plant.mass_matrix_and_bias(q, qd)
        assert rel(M, reference.mass_matrix(q)) <= 1e-9
        assert rel(b, reference.bias(q, qd)) <= 1e-9
        assert rel(plant.holding_torque(q), reference.gravity(q)) <= 1e-9


@pytest.mark.parametrize("damping", [None, np.array([2.0, 2.0, 1.0, 0.3, 0.3, 0.3])])
def test_a_tracked_trajectory_on_mujoco_equals_the_internal_plant(damping):
    """Computed-torque tracking for 1 s on both plants (RK4, h = 1 ms, no armature; without
    and with viscous joint damping, unknown to the controller): the same trajectory to
    rounding — MuJoCo integrates the same equations."""
    solver = rd.make_solver(UR5E, "pinocchio")
    plants = [MujocoPlant(UR5E, damping=damping), IntegratedPlant(solver, damping=damping)]
    state = [(Q0.copy(), np.zeros(6)) for _ in plants]
    travel = 0.0
    for k in range(1000):
        t = k * 1e-3
        q_d, v_d, a_d = (Q0 + 0.3 * np.sin(3 * t), 0.9 * np.cos(3 * t) * np.ones(6),
                         -2.7 * np.sin(3 * t) * np.ones(6))
        for i, (plant, (q, v)) in enumerate(zip(plants, state)):
            tau = solver.inverse_dynamics(q, v, a_d + 100 * (q_d - q) + 20 * (v_d - v))
            state[i] = plant.advance(q, v, tau)
        travel = max(travel, float(np.max(np.abs(state[0][0] - Q0))))
    (q_mj, v_mj), (q_in, v_in) = state
    assert travel > 0.25                                       # it moved
    np.testing.assert_allclose(q_mj, q_in, rtol=0, atol=1e-9)
    np.testing.assert_allclose(v_mj, v_in, rtol=0, atol=1e-8)


def test_armature_adds_to_the_joint_inertia():
    """One semi-implicit Euler step with armature A: q̇⁺ = q̇ + h (M + diag A)⁻¹ (τ − b)."""
    A = np.array([0.2, 0.2, 0.1, 0.05, 0.05, 0.05])
    plant = MujocoPlant(UR5E, integrator="semi_implicit_euler", armature=A)
    solver = rd.make_solver(UR5E, "pinocchio")
    q, v, tau = Q0, np.linspace(-1, 1, 6), np.linspace(5, -5, 6)
    _, v_next = plant.advance(q, v, tau)
    expected = v + 1e-3 * np.linalg.solve(solver.mass_matrix(q) + np.diag(A),
                                          tau - solver.bias(q, v))
    np.testing.assert_allclose(v_next, expected, rtol=0, atol=1e-10)


@pytest.mark.parametrize("backend", ["rnea", "pinocchio"])
@pytest.mark.parametrize("name", ["ur10", "panda"])
def test_a_model_with_armature_steps_as_mujoco_with_that_armature(name, backend):
    """RobotModel.with_armature(A) on both backends against MuJoCo given the same A as
    dof_armature (MuJoCo's own reading of the URDF): one semi-implicit Euler step from each
    of 5 states equals q̇ + h M_A⁻¹ (τ − b) of the solver's forward dynamics, and its mass
    matrix and generalized momentum are MuJoCo's M + diag(A) and (M + diag(A)) q̇."""
    robot = load_arm(name)
    A = np.linspace(0.3, 0.05, robot.dof)
    solver = rd.make_solver(robot.with_armature(A), backend)
    plant = MujocoPlant(robot, integrator="semi_implicit_euler", armature=A)
    for q, qd in states(robot, 5, seed=4):
        tau = np.linspace(3.0, -3.0, robot.dof)
        M, _ = plant.mass_matrix_and_bias(q, qd)          # MuJoCo's, armature taken off
        _, qd_next = plant.advance(q, qd, tau)
        qdd = (qd_next - qd) / plant.h
        assert rel(solver.forward_dynamics(q, qd, tau), qdd) <= 1e-8
        assert rel(solver.inverse_dynamics(q, qd, qdd), tau) <= 1e-8
        assert rel(solver.mass_matrix(q), M + np.diag(A)) <= 1e-9
        assert rel(solver.momentum_terms(q, qd)[0], (M + np.diag(A)) @ qd) <= 1e-9


def test_armature_is_refused_when_it_is_not_a_finite_inertia_per_joint():
    with pytest.raises(rd.ArgumentError, match="6 finite values >= 0"):
        UR5E.with_armature([0.1, 0.1, -0.1, 0.1, 0.1, 0.1])
    with pytest.raises(rd.ArgumentError, match="6 finite values >= 0"):
        UR5E.with_armature([0.1] * 5)
    assert np.array_equal(UR5E.with_armature(0.2).armature, np.full(6, 0.2))


def test_the_obstacle_stops_the_arm_and_pushes_back():
    """The shoulder pans by −0.6 rad; a post stands where the elbow passes halfway: the
    upper arm's capsule meets it, a contact force appears, and the pan stays short of its
    target (without the post it gets there)."""
    solver = rd.make_solver(UR5E, "pinocchio")
    upper_arm = rd.load_robot(SHIPPED / "rd_ur5e.urdf", tip_link="forearm_link")
    _, p = rd.make_solver(upper_arm, "pinocchio").tip_pose(Q0[:3])     # the elbow
    c, s = np.cos(-0.3), np.sin(-0.3)
    centre = [c * p[0] - s * p[1], s * p[0] + c * p[1], p[2]]
    free = MujocoPlant(UR5E)
    blocked = MujocoPlant(UR5E, obstacle_box=[*centre, 0.15, 0.15, 0.3])
    target = Q0 + np.array([-0.6, 0, 0, 0, 0, 0])               # pan by −0.6 rad
    results, forces = [], []
    for plant in (free, blocked):
        q, v = Q0.copy(), np.zeros(6)
        peak = 0.0
        for _ in range(1500):
            tau = solver.gravity(q) + 200 * (target - q) - 40 * v
            q, v = plant.advance(q, v, np.clip(tau, -150, 150))
            peak = max(peak, float(np.linalg.norm(plant.contact_force())))
        results.append(q)
        forces.append(peak)
    assert forces[0] == 0.0 and forces[1] > 1.0
    assert abs(results[0][0] - target[0]) < 0.01                # free: reaches the target
    assert results[1][0] > target[0] + 0.05                     # blocked: stays short


def test_start_up_check_refuses_a_model_that_differs():
    """A plant with an unknown payload checked against the library's model without it:
    refused, naming the quantity and the size of the difference."""
    heavy = UR5E.with_payload(UR5E.tip_link, 2.0, [0, 0, 0.1], np.eye(3) * 1e-3)
    plant = MujocoPlant(heavy)
    plant.check_against(rd.make_solver(heavy, "rnea"), Q0, np.ones(6))      # the same: fine
    with pytest.raises(ValueError, match=r"differs from the library's: mass matrix "
                                         r"relative difference"):
        plant.check_against(rd.make_solver(UR5E, "rnea"), Q0, np.ones(6))


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="armature needs 6 values"):
        MujocoPlant(UR5E, armature=[0.1, 0.1])
    with pytest.raises(ValueError, match="obstacle_box needs 6 finite numbers"):
        MujocoPlant(UR5E, obstacle_box=[0.5, 0.0, 0.2, 0.1, -0.1, 0.1])
    with pytest.raises(ValueError, match="unknown integrator"):
        MujocoPlant(UR5E, integrator="leapfrog")
