"""Whole-arm identification's pieces on arms other than the UR5e (identification/arm_identification.py,
identification/urdf_inertials.py): a body that lumps a hand and fingers, continuous joints, a joint whose
range is short. References: Pinocchio on the URDF, the joint limits."""

import numpy as np
import pytest

import robo_dynamics as rd
from robo_dynamics.algorithms.regressor import model_parameters
from robo_dynamics.identification import arm_identification as ai
from robo_dynamics.identification import consistent_parameters as cp
from robo_dynamics.identification.urdf_inertials import corrected_urdf
from conftest import load_arm


def test_a_corrected_urdf_of_a_body_with_a_hand_counts_the_hand_once():
    """Panda: panda_link7's body lumps link8, the hand and both fingers. Written back with its
    own (URDF) parameters, the corrected URDF is the same arm for Pinocchio: mass matrix and
    gravity at random poses, and the same total mass."""
    robot = load_arm("panda")
    text = corrected_urdf(robot.urdf_xml, robot, cp.bodies(model_parameters(robot)),
                          np.zeros((robot.dof, 2)))
    again = rd.load_robot(text, tip_link=robot.tip_link)
    assert len(robot.body_members[-1]) > 3           # link7 with link8, hand, fingers, tcp
    np.testing.assert_allclose(np.sum(again.mass), np.sum(robot.mass), rtol=1e-9)
    before, after = (rd.make_solver(m, "pinocchio") for m in (robot, again))
    rng = np.random.default_rng(0)
    for q in rng.uniform(-1.5, 1.5, (20, robot.dof)):
        np.testing.assert_allclose(after.gravity(q), before.gravity(q), atol=1e-7)
        np.testing.assert_allclose(after.mass_matrix(q), before.mass_matrix(q), atol=1e-7)


def test_the_base_parameters_of_an_arm_with_continuous_joints_give_pinocchios_torques():
    """Kinova: three continuous joints (no limits). τ = W₁ β(π) equals Pinocchio's RNEA."""
    robot = load_arm("kinova")
    assert not np.isfinite(robot.upper).all()
    base = ai.BaseParameters(robot)
    rng = np.random.default_rng(3)
    q, qd, qdd = rng.uniform(-2.0, 2.0, (3, 50, robot.dof))
    tau = base.regressor(robot, q, qd, qdd) @ ai.urdf_base(robot, base)
    np.testing.assert_allclose(tau, rd.make_solver(robot, "pinocchio").inverse_dynamics_batch(
        q, qd, qdd), atol=1e-9)


@pytest.fixture(scope="module")
def z1():
    robot = load_arm("z1")
    return robot, rd.make_solver(robot, "pinocchio"), ai.BaseParameters(robot)


def bounds(robot, margin=0.2):
    return dict(margin=margin, velocity_bound=np.full(robot.dof, 1.5),
                acceleration_bound=np.full(robot.dof, 10.0),
                effort_bound=0.8 * robot.effort_limit)


def test_an_excitation_from_inside_a_limits_margin_is_refused_naming_the_joint(z1):
    robot, solver, base = z1
    q0 = 0.5 * (robot.lower + robot.upper)
    q0[3] = robot.upper[3] - 0.1
    with pytest.raises(ValueError, match="'joint4'.*start within 0.2 of a limit"):
        ai.design_excitation(robot, solver, base, q0, 10.0, 5, candidates=5, **bounds(robot))


def test_without_clarabel_the_fit_says_how_to_install_it(monkeypatch):
    """No rosdep key names Clarabel (python3-cvxpy-pip brings it): where it is absent, the
    physically consistent step refuses with how to install it, not an ImportError."""
    import sys
    monkeypatch.setitem(sys.modules, "clarabel", None)         # import clarabel fails
    with pytest.raises(ValueError, match="pip install clarabel.*python3-cvxpy-pip"):
        cp.require_solver()
