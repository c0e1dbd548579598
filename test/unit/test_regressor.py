"""The joint-torque regressor τ = Y(q, q̇, q̈) π: equal to Pinocchio's
computeJointTorqueRegressor on every test arm with both backends, Y π = τ with the model's
own parameters (payloads and mimic joints included), and a payload's block times its
parameters = the torque it adds."""

import numpy as np
import pinocchio as pin
import pytest

import robo_dynamics as rd
from robo_dynamics.algorithms.regressor import (body_from_parameters, inertial_parameters,
                                                model_parameters)
from conftest import ARMS, load_arm, random_states


def pinocchio_regressor(solver, q, qd, qdd):
    """Pinocchio's regressor on the solver's Pinocchio model, rows and column blocks picked
    by joint name (q of a continuous joint as (cos, sin))."""
    pm = solver.pin_model
    data = pm.createData()
    ids = [pm.getJointId(name) for name in solver.model.joint_names]
    q_pin, v, a = pin.neutral(pm), np.zeros(pm.nv), np.zeros(pm.nv)
    for k, jid in enumerate(ids):
        i, j = pm.idx_qs[jid], pm.idx_vs[jid]
        if pm.nqs[jid] == 2:
            q_pin[i:i + 2] = np.cos(q[k]), np.sin(q[k])
        else:
            q_pin[i] = q[k]
        v[j], a[j] = qd[k], qdd[k]
    Y = pin.computeJointTorqueRegressor(pm, data, q_pin, v, a)
    rows = [pm.idx_vs[jid] for jid in ids]
    columns = np.concatenate([np.arange(10) + 10 * (jid - 1) for jid in ids])
    return Y[np.ix_(rows, columns)]


@pytest.mark.parametrize("name", sorted(ARMS))
@pytest.mark.parametrize("backend", rd.BACKENDS)
def test_regressor_equals_pinocchio(name, backend):
    robot = load_arm(name)
    solver = rd.make_solver(robot, backend)
    reference = rd.make_solver(robot, "pinocchio")
    q, qd, qdd = random_states(robot, 4, seed=3)
    Y = solver.joint_torque_regressor_batch(q, qd, qdd)
    assert Y.shape == (4, robot.dof, 10 * robot.dof)
    for k in range(4):
        expected = pinocchio_regressor(reference, q[k], qd[k], qdd[k])
        scale = max(1.0, np.abs(expected).max())
        assert np.abs(Y[k] - expected).max() <= 1e-9 * scale
        np.testing.assert_array_equal(solver.joint_torque_regressor(q[k], qd[k], qdd[k]),
                                      Y[k])


@pytest.mark.parametrize("backend", rd.BACKENDS)
def test_regressor_times_the_parameters_is_the_inverse_dynamics(backend):
    robot = load_arm("panda").with_payload("panda_link7", 1.3, [0.01, -0.02, 0.08],
                                           np.diag([0.004, 0.005, 0.003]))
    solver = rd.make_solver(robot, backend)
    q, qd, qdd = random_states(robot, 6, seed=4)
    Y = solver.joint_torque_regressor_batch(q, qd, qdd)
    tau = rd.make_solver(robot, "pinocchio").inverse_dynamics_batch(q, qd, qdd)
    np.testing.assert_allclose(Y @ model_parameters(robot), tau, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("backend", rd.BACKENDS)
def test_mimic_chains_map_the_bodies_regressor_to_the_coordinates(backend):
    """τ = Gᵀ Y_b π: with mimic joints Y has a column block per body, a row per coordinate."""
    import warnings
    load_arm("panda")                            # skips, saying why, without the data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)
        robot = rd.load_robot(str(ARMS["panda"][0]).replace(
            "panda_description/urdf/panda.urdf", "pr2_description/urdf/pr2.urdf"),
            tip_link="l_gripper_l_finger_tip_link")
    assert robot.body_count > robot.dof            # the coupling is there
    solver = rd.make_solver(robot, backend)
    q, qd, qdd = random_states(robot, 3, seed=5)
    Y = solver.joint_torque_regressor_batch(q, qd, qdd)
    assert Y.shape == (3, robot.dof, 10 * robot.body_count)
    tau = rd.make_solver(robot, "pinocchio").inverse_dynamics_batch(q, qd, qdd)
    np.testing.assert_allclose(Y @ model_parameters(robot), tau, rtol=1e-9, atol=1e-9)


def test_a_payloads_block_gives_the_torque_it_adds():
    """Y's block of the payload's link times the payload's parameters (in that link's frame)
    = τ with the payload − τ without: what payload identification fits."""
    robot = load_arm("rd_ur5e")
    mass, com, inertia = 2.5, np.array([0.02, 0.0, 0.06]), np.diag([0.01, 0.012, 0.008])
    loaded = robot.with_payload("wrist_3_link", mass, com, inertia)
    q, qd, qdd = random_states(robot, 5, seed=6)
    body = robot.body_links.index("wrist_3_link")
    Y = rd.make_solver(robot, "rnea").joint_torque_regressor_batch(q, qd, qdd)
    block = Y[:, :, 10 * body:10 * body + 10]
    reference = rd.make_solver(loaded, "pinocchio").inverse_dynamics_batch(q, qd, qdd) \
        - rd.make_solver(robot, "pinocchio").inverse_dynamics_batch(q, qd, qdd)
    np.testing.assert_allclose(block @ inertial_parameters(mass, com, inertia), reference,
                               rtol=1e-9, atol=1e-9)


def test_parameters_and_back():
    mass, com, inertia = 1.7, np.array([0.1, -0.05, 0.2]), np.array(
        [[0.02, 0.001, -0.002], [0.001, 0.03, 0.0005], [-0.002, 0.0005, 0.025]])
    pi = inertial_parameters(mass, com, inertia)
    pin_pi = pin.Inertia(mass, com, inertia).toDynamicParameters()   # Pinocchio's layout
    np.testing.assert_allclose(pi, pin_pi, rtol=1e-12, atol=1e-15)
    m, c, I = body_from_parameters(pi)
    assert m == mass
    np.testing.assert_allclose(c, com, atol=1e-15)
    np.testing.assert_allclose(I, inertia, atol=1e-15)
    with pytest.raises(ValueError, match="mass must be > 0"):
        body_from_parameters(np.zeros(10))
