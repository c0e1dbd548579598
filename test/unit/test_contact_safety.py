"""Power and force limiting (control/contact_safety.py) against the physics it stands for:
a two-body impact through the body region's spring, integrated numerically (the peak force
at the speed allowed is the force allowed), and the reflected mass against MuJoCo (a short
push at the tool changes its speed along the push by the impulse over that mass, armature
included)."""

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import robo_dynamics as rd
from robo_dynamics.algorithms.operational_space import reflected_mass
from robo_dynamics.control.contact_safety import (REGIONS, clamped_speed_limit,
                                                  most_restrictive, point_limit,
                                                  transient_speed_limit)
from conftest import SHIPPED, load_arm


def peak_force(m_R, m_H, k, v):
    """[N] the largest spring force when a mass m_R at speed v meets a free mass m_H (inf:
    a fixed wall) through a spring k: the two bodies integrated (RK45, tight tolerances)
    until the spring lets go."""
    def rates(_, y):
        x_r, v_r, x_h, v_h = y
        f = k * max(x_r - x_h, 0.0)                  # the spring pushes them apart
        return [v_r, -f / m_R, v_h, 0.0 if math.isinf(m_H) else f / m_H]
    period = 2.0 * math.pi * math.sqrt(min(m_R, m_H) / k)
    t = np.linspace(0.0, period, 4001)
    out = solve_ivp(rates, (0.0, period), [0.0, v, 0.0, 0.0], t_eval=t, rtol=1e-10,
                    atol=1e-13, max_step=period / 500)
    return float(np.max(k * np.maximum(out.y[0] - out.y[2], 0.0)))


@pytest.mark.parametrize("region", sorted(REGIONS))
@pytest.mark.parametrize("m_R", [1.21, 60.0])            # a light tool, a heavy arm
def test_at_the_speed_allowed_the_impact_peaks_at_the_force_allowed(region, m_R):
    """Transient (the person free to move): twice the quasi-static force; clamped (a
    wall behind): the quasi-static force itself."""
    r = REGIONS[region]
    v = transient_speed_limit(m_R, r)
    assert peak_force(m_R, r.mass, r.spring, v) == pytest.approx(2.0 * r.force, rel=1e-4)
    v = clamped_speed_limit(m_R, r)
    assert peak_force(m_R, math.inf, r.spring, v) == pytest.approx(r.force, rel=1e-4)


def test_the_point_mass_rule_against_the_arms_own_mass_for_a_chest_contact():
    """Issue 63's case: the tool of rd_ur5e carries 1.21 kg along z where the standard's
    point-mass rule (half the arm's moving mass plus the payload) says 8.85 kg: for a chest
    (40 kg) the rule's speed limit is 2.5 times lower than the arm's dynamics allow."""
    chest = REGIONS["chest"]
    ratio = transient_speed_limit(1.21, chest) / transient_speed_limit(8.85, chest)
    assert ratio == pytest.approx(2.48, abs=0.01)


def test_the_most_restrictive_region_is_the_least_speed():
    for m_R in (0.3, 2.0, 30.0):
        name, v = most_restrictive(m_R)
        assert v == min(transient_speed_limit(m_R, r) for r in REGIONS.values())
        assert v == transient_speed_limit(m_R, REGIONS[name])


def tool_speed_change(plant, ref, q, u, impulse=0.1, steps=10):
    """[m/s] the tool's speed change along u (base axes) after a push of `impulse` [N·s]
    spread over `steps` MuJoCo steps, the arm at rest at q held against gravity (its
    holding torque)."""
    h = plant.h
    R, _ = ref.tip_pose(q)
    push = plant.external_joint_torque(q, ref.model.tip_link, R.T @ (impulse / (steps * h) * u),
                                       np.zeros(3))
    hold = plant.holding_torque(q)
    x, v = q.copy(), np.zeros(len(q))
    for _ in range(steps):
        x, v = plant.advance(x, v, hold + push)
    return float(u @ (ref.jacobian(x)[:3] @ v))


@pytest.mark.parametrize("name", ["rd_ur5e", "panda"])
def test_the_reflected_mass_is_what_mujoco_pushes(name):
    """100 N for 1 ms at the tool along u, at 5 poses × 2 directions, with 0.05 kg·m² of
    armature per joint (MuJoCo's own, the model's with_armature): the tool's speed along u
    changes by 0.1 N·s / m_R(u) within 1 %."""
    pytest.importorskip("mujoco")
    from robo_dynamics.simulation.mujoco_plant import MujocoPlant
    robot = (rd.load_robot(str(SHIPPED / "rd_ur5e.urdf")) if name == "rd_ur5e"
             else load_arm(name))
    armature = np.full(robot.dof, 0.05)
    model = robot.with_armature(armature)
    ref = rd.make_solver(model, "pinocchio")
    plant = MujocoPlant(robot, "rk4", 1e-4, armature=armature)
    rng = np.random.default_rng(15066)
    lower, upper = np.maximum(robot.lower, -2.5), np.minimum(robot.upper, 2.5)
    for _ in range(5):
        q = rng.uniform(lower + 0.2 * (upper - lower), upper - 0.2 * (upper - lower))
        M_inv = np.linalg.inv(ref.mass_matrix(q))
        for _ in range(2):
            u = rng.normal(size=3)
            u /= np.linalg.norm(u)
            m_R = reflected_mass(ref.jacobian(q)[:3], M_inv, u)[0]
            assert tool_speed_change(plant, ref, q, u) == pytest.approx(0.1 / m_R, rel=0.01)


def test_a_moving_point_is_judged_along_its_motion_and_one_at_rest_along_its_heaviest():
    robot = rd.load_robot(str(SHIPPED / "rd_ur5e.urdf"))
    ref = rd.make_solver(robot, "pinocchio")
    q = np.array([0.3, -1.2, 1.4, -0.9, 1.2, 0.4])
    J_v, M_inv = ref.jacobian(q)[:3], np.linalg.inv(ref.mass_matrix(q))
    qd = np.array([0.2, -0.3, 0.4, 0.1, 0.0, 0.0])
    limit = point_limit(J_v, M_inv, qd)
    v = J_v @ qd
    assert limit.speed == pytest.approx(np.linalg.norm(v))
    np.testing.assert_allclose(limit.direction, v / np.linalg.norm(v))
    assert limit.mass == pytest.approx(reflected_mass(J_v, M_inv, v)[0])
    assert (limit.region, limit.v_max) == most_restrictive(limit.mass)
    assert limit.margin == pytest.approx(limit.v_max - limit.speed)
    resting = point_limit(J_v, M_inv, np.zeros(6))
    assert resting.speed == 0.0 and resting.mass == pytest.approx(
        np.max(reflected_mass(J_v, M_inv)[0]))
