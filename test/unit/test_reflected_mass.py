"""The mass a point of the arm carries into a push (algorithms/operational_space.
reflected_mass), against what a push does: Pinocchio's forward dynamics from rest under a
force at the tip alone, the tip's acceleration along it."""

import numpy as np
import pytest

import robo_dynamics as rd
from robo_dynamics.algorithms.operational_space import reflected_mass
from conftest import SHIPPED, load_arm, random_states


def pushed_mass(solver, q, u, force=10.0):
    """F / a_u: the tip's acceleration along u (base axes) when `force` [N] pushes it along
    u, the arm at rest at q, no gravity acting (Pinocchio's forward dynamics)."""
    J_v = solver.jacobian(q)[:3]
    qdd = solver.forward_dynamics(q, np.zeros(len(q)), J_v.T @ (force * u) + solver.gravity(q))
    return force / (u @ J_v @ qdd)


@pytest.mark.parametrize("name", ["rd_ur5e", "panda"])
def test_the_mass_is_what_a_push_accelerates(name):
    robot = (rd.load_robot(str(SHIPPED / "rd_ur5e.urdf")) if name == "rd_ur5e"
             else load_arm(name))
    ref = rd.make_solver(robot, "pinocchio")
    rng = np.random.default_rng(63)
    for q in random_states(robot, 10, seed=63)[0]:
        J_v, M_inv = ref.jacobian(q)[:3], np.linalg.inv(ref.mass_matrix(q))
        u = rng.normal(size=3)
        u /= np.linalg.norm(u)
        assert reflected_mass(J_v, M_inv, u)[0] == pytest.approx(pushed_mass(ref, q, u),
                                                                 rel=1e-9)
        masses, axes = reflected_mass(J_v, M_inv)
        for k in range(3):
            assert masses[k] == pytest.approx(pushed_mass(ref, q, axes[:, k]), rel=1e-8)
        # Λ's translational block holds the orientation still: it never understates
        Lambda = np.linalg.inv(ref.jacobian(q) @ M_inv @ ref.jacobian(q).T)
        assert u @ Lambda[:3, :3] @ u >= reflected_mass(J_v, M_inv, u)[0] * (1 - 1e-9)


def test_the_ur5e_tool_along_z_as_the_safety_issue_measured_it():
    """rd_ur5e at q = [0.3, −1.2, 1.4, −0.9, 1.2, 0.4]: the tool's mass along base z is
    1.21 kg, where uᵀ Λ u gives 4.57 kg (issue 63's figures)."""
    robot = rd.load_robot(str(SHIPPED / "rd_ur5e.urdf"))
    ref = rd.make_solver(robot, "pinocchio")
    q = np.array([0.3, -1.2, 1.4, -0.9, 1.2, 0.4])
    J, M_inv = ref.jacobian(q), np.linalg.inv(ref.mass_matrix(q))
    z = np.array([0.0, 0.0, 1.0])
    assert reflected_mass(J[:3], M_inv, z)[0] == pytest.approx(1.21, abs=0.005)
    assert z @ np.linalg.inv(J @ M_inv @ J.T)[:3, :3] @ z == pytest.approx(4.57, abs=0.005)


def test_a_direction_the_arm_cannot_move_the_point_in_has_no_finite_mass():
    """A 2-joint planar arm's tip cannot move out of its plane: infinite mass there, the
    in-plane masses finite and what a push accelerates."""
    robot = rd.load_robot(str(SHIPPED / "planar_2link.urdf"))
    ref = rd.make_solver(robot, "pinocchio")
    q = np.array([0.4, 0.9])
    J_v, M_inv = ref.jacobian(q)[:3], np.linalg.inv(ref.mass_matrix(q))
    masses, axes = reflected_mass(J_v, M_inv)
    assert np.isinf(masses).sum() == 1 and np.all(np.isfinite(masses[np.isfinite(masses)]))
    free = axes[:, np.isfinite(masses)]
    for k in range(2):
        assert masses[np.isfinite(masses)][k] == pytest.approx(
            pushed_mass(ref, q, free[:, k]), rel=1e-8)
