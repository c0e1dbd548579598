"""Chains with mimic joints: the coupled system's dynamics in both backends, against
Pinocchio's own mimic joints (test/support/pinocchio_mimic.py) and the identities of the coupling."""

from conftest import require_example_robots
require_example_robots(__name__)   # it reads example-robot-data: without it, skipped saying why

import warnings

import numpy as np
import pytest

import robo_dynamics as rd
from conftest import EXAMPLE_ROBOTS, REPO, rel
from pinocchio_mimic import NativeMimic

MIMIC_OF_MIMIC = REPO / "test" / "data" / "mimic_chain.urdf"


def direct_mimic_text():
    """mimic_chain.urdf with j5_slide mimicking j2 directly: q5 = 0.05 (−0.7 q2 + 0.3) + 0.02
    = −0.035 q2 + 0.035. Pinocchio's JointModelMimic cannot mimic a mimic."""
    text = MIMIC_OF_MIMIC.read_text()
    old = '<mimic joint="j3_mimic" multiplier="0.05" offset="0.02"/>'
    assert old in text
    return text.replace(old, '<mimic joint="j2" multiplier="-0.035" offset="0.035"/>')


CHAINS = {
    "mimic_chain (direct)": (direct_mimic_text, "tip"),
    "pr2 left gripper finger tip": (EXAMPLE_ROBOTS / "pr2_description/urdf/pr2.urdf",
                                    "l_gripper_l_finger_tip_link"),
}


def load(name):
    source, tip = CHAINS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)
        return rd.load_robot(source() if callable(source) else source, tip_link=tip)


def states(robot, count=3, seed=1):
    rng = np.random.default_rng(seed)
    lower = np.maximum(robot.lower, -1.0)
    upper = np.where(robot.upper > robot.lower, np.minimum(robot.upper, 1.0), 1.0)
    for _ in range(count):
        yield (rng.uniform(lower, upper), rng.uniform(-1.5, 1.5, robot.dof),
               rng.uniform(-3.0, 3.0, robot.dof))


def test_the_coupling_is_read_from_the_urdf():
    robot = rd.load_robot(MIMIC_OF_MIMIC, tip_link="tip")
    assert robot.joint_names == ("j1", "j2", "j4")
    assert robot.body_joints == ("j1", "j2", "j3_mimic", "j4", "j5_slide")
    assert robot.mimic_joints == ("j3_mimic", "j5_slide")
    expected = np.zeros((5, 3))
    expected[0, 0] = expected[1, 1] = expected[3, 2] = 1.0
    expected[2, 1], expected[4, 1] = -0.7, 0.05 * -0.7
    assert np.array_equal(robot.coupling, expected)
    assert np.allclose(robot.coupling_offset, [0, 0, 0.3, 0, 0.05 * 0.3 + 0.02], atol=1e-15)
    # damping d + Σ m² d_m and friction f + Σ |m| f_m seen at each coordinate (URDF values)
    assert np.allclose(robot.damping, [0.5, 0.4 + 0.49 * 0.2, 0.0])
    assert np.allclose(robot.friction, [0.2, 0.1 + 0.7 * 0.05, 0.0])
    assert robot.effort_limit.tolist() == [80.0, 60.0, 20.0]     # the coordinates' own limits


@pytest.mark.parametrize("backend", rd.BACKENDS)
def test_mimic_of_a_mimic_equals_the_direct_mimic(backend):
    a = rd.make_solver(rd.load_robot(MIMIC_OF_MIMIC, tip_link="tip"), backend)
    b = rd.make_solver(load("mimic_chain (direct)"), backend)
    for q, qd, qdd in states(a.model):
        report = rd.cross_check(a, b, q, qd, qdd)
        assert max(d.max_rel for d in report.values()) < 1e-12, report


@pytest.mark.parametrize("name", sorted(CHAINS))
@pytest.mark.parametrize("backend", rd.BACKENDS)
def test_coupled_dynamics_equal_pinocchio_mimic_joints(name, backend):
    robot = load(name)
    assert robot.is_coupled and robot.mimic_joints
    solver, ref = rd.make_solver(robot, backend), NativeMimic(robot)
    for q, qd, qdd in states(robot):
        M = ref.mass_matrix(q)
        tau = ref.inverse_dynamics(q, qd, qdd)
        assert rel(solver.inverse_dynamics(q, qd, qdd), tau) < 1e-9
        assert rel(solver.gravity(q), ref.gravity(q)) < 1e-9
        assert rel(solver.bias(q, qd), ref.bias(q, qd)) < 1e-9
        assert rel(solver.mass_matrix(q), M) < 1e-9
        assert rel(solver.coriolis_matrix(q, qd), ref.coriolis_matrix(q, qd)) < 1e-6
        assert rel(solver.jacobian(q), ref.jacobian(q)) < 1e-9
        assert rel(solver.jacobian_dot_qd(q, qd), ref.jacobian_dot_qd(q, qd)) < 1e-9
        # forward dynamics: the q̈ that the reference's M q̈ + b turns back into τ
        assert rel(solver.forward_dynamics(q, qd, tau), qdd) < 1e-9
        assert rel(solver.mass_matrix_inverse(q) @ M, np.eye(robot.dof)) < 1e-9
        dq, dv, dM = solver.inverse_dynamics_derivatives(q, qd, qdd)
        ref_dq, ref_dv = ref.inverse_dynamics_derivatives(q, qd, qdd)
        assert rel(dq, ref_dq) < 1e-6 and rel(dv, ref_dv) < 1e-6 and rel(dM, M) < 1e-9
        # ∂q̈/∂x = −M⁻¹ ∂τ/∂x at the forward dynamics' q̈
        fq, fv, fM = solver.forward_dynamics_derivatives(q, qd, tau)
        M_inv = np.linalg.inv(M)
        assert rel(fq, -M_inv @ ref_dq) < 1e-6 and rel(fv, -M_inv @ ref_dv) < 1e-6
        assert rel(fM, M_inv) < 1e-9
        J = ref.jacobian(q)
        Lambda_inv = J @ M_inv @ J.T
        result = solver.operational_space(q)
        if not result.near_singular:     # n < 6: Λ is the pseudo-inverse (zero inertia in
            expected = np.linalg.pinv(Lambda_inv, rcond=1e-10, hermitian=True)  # directions
            assert rel(result.Lambda, expected) < 1e-9                          # it cannot move)
        J_ours = solver.jacobian(q)
        assert rel(J_ours @ solver.mass_matrix_inverse(q) @ J_ours.T, Lambda_inv) < 1e-9
        batch = np.array([q, 0.5 * q])
        assert rel(solver.inverse_dynamics_batch(batch, batch, batch),
                   [ref.inverse_dynamics(x, x, x) for x in batch]) < 1e-9
        assert rel(solver.gravity_batch(batch), [ref.gravity(x) for x in batch]) < 1e-9


def test_the_two_backends_agree_on_mimic_chains():
    for name in CHAINS:
        robot = load(name)
        ours, pino = rd.make_solver(robot, "rnea"), rd.make_solver(robot, "pinocchio")
        for q, qd, qdd in states(robot):
            report = rd.cross_check(ours, pino, q, qd, qdd)
            worst = max(d.max_rel for key, d in report.items()
                        if key != "operational_space_inertia")
            assert worst < 1e-9, (name, report)


def test_passivity_of_the_coupled_coriolis_matrix():
    """Ṁ − 2C is skew-symmetric for the coupled system too (Ṁ by central differences)."""
    solver = rd.make_solver(rd.load_robot(MIMIC_OF_MIMIC, tip_link="tip"))
    for q, qd, _ in states(solver.model):
        h = 1e-6
        M_dot = (solver.mass_matrix(q + h * qd) - solver.mass_matrix(q - h * qd)) / (2 * h)
        N = M_dot - 2.0 * solver.coriolis_matrix(q, qd)
        assert np.max(np.abs(N + N.T)) < 1e-7 * max(1.0, np.max(np.abs(M_dot)))


def test_mimic_joint_states_are_accepted_and_ignored():
    from robo_dynamics.control.joint_state_merger import JointStateMerger
    robot = rd.load_robot(MIMIC_OF_MIMIC, tip_link="tip")
    merger = JointStateMerger(robot.joint_names, robot.body_joints)
    names = ["j1", "j2", "j3_mimic", "j4", "j5_slide"]
    assert merger.update(names, [0.1, 0.2, 9.0, 0.3, 9.0], [0.0] * 5, now=1.0) is None
    assert merger.q.tolist() == [0.1, 0.2, 0.3]
