"""The shipped Delta picker (urdf/rd_delta.urdf, config/rd_delta.yaml): three arms closed at
the platform by point closures. Its holding torques against the Delta's own geometry (the platform found by
trilateration, the potential energy differentiated), Pinocchio along a motion, and MuJoCo
driven by the torques along that motion."""

import numpy as np
import pytest
import yaml

from closed_chain_models import platform, potential
from conftest import REPO
from robo_dynamics.backends.pinocchio_closed_chain import PinocchioClosedChain
from robo_dynamics.closed_chain import load_closed_chain
from robo_dynamics.closed_chain.tree_dynamics import tree_rnea
from robo_dynamics.simulation.mujoco_closed_chain import MujocoClosedChain

POSES = [(0.0, 0.0, 0.0), (0.2, -0.1, 0.05), (-0.15, 0.25, 0.1), (0.3, 0.3, 0.3),
         (-0.2, -0.2, 0.15)]                  # rad: motor angles from the drawn pose
STEP, DURATION = 1e-3, 0.3                    # s: the motion's samples, its length


@pytest.fixture(scope="module")
def delta():
    """The shipped Delta (urdf/rd_delta.urdf, config/rd_delta.yaml) as they are."""
    parameters = yaml.safe_load((REPO / "config" / "rd_delta.yaml").read_text())
    return load_closed_chain(REPO / "urdf" / "rd_delta.urdf",
                             parameters["/**/dynamics_node"]["ros__parameters"])


def closed(chain, motors, start=None):
    """q closed with these motor angles: Newton's method from `start` (a nearby closed
    pose), else continuation from the drawn pose."""
    goal = chain.reference.copy() if start is None else start.copy()
    goal[list(chain.actuated)] = motors
    near = None if start is None else chain.newton(goal)
    return chain.close(goal, chain.reference) if near is None else near


def test_the_delta_has_three_degrees_of_freedom_and_closes_where_trilateration_puts_it(delta):
    assert delta.dof == 3 and delta.fully_actuated
    for motors in POSES:
        q = closed(delta, motors)
        guide = [delta.tree.joint_index(f"guide_{a}") for a in "xyz"]
        np.testing.assert_allclose(q[guide] + [0.0, 0.0, -0.65], platform(motors), atol=1e-9)


def test_the_motor_torques_that_hold_it_are_virtual_work_and_pinocchios(delta):
    """τ = ∂V/∂θ (central differences of the potential energy over the Delta's forward
    kinematics, which shares nothing with robo_dynamics) and Pinocchio's, at five poses."""
    reference = PinocchioClosedChain(delta)
    zero, h = np.zeros(delta.tree.dof), 1e-6
    for motors in POSES:
        q = closed(delta, motors)
        tau, _ = delta.inverse_dynamics(q, zero, zero)
        work = [(potential(np.add(motors, h * e)) - potential(np.subtract(motors, h * e)))
                / (2 * h) for e in np.eye(3)]
        np.testing.assert_allclose(tau, work, rtol=1e-7, atol=1e-7 * np.abs(tau).max())
        np.testing.assert_allclose(tau, reference.inverse_dynamics(q, zero, zero)[0],
                                   rtol=1e-9, atol=1e-9 * np.abs(tau).max())


def motion(chain):
    """(t, q, q̇, q̈) of the closed Delta, its motors moved by θ0 + A (1 − cos ωt)."""
    amplitude, omega = np.array([0.15, -0.1, 0.2]), 2 * np.pi * np.array([2.0, 3.0, 2.5])
    t = np.arange(0.0, DURATION + STEP / 2, STEP)
    states, q = [], None
    for s in t:
        theta = amplitude * (1 - np.cos(omega * s))
        q = closed(chain, theta, q)
        qd = chain.velocities(q, amplitude * omega * np.sin(omega * s))
        qdd = chain.accelerations(q, qd, amplitude * omega ** 2 * np.cos(omega * s))
        states.append((q, qd, qdd))
    return t, states


def test_along_a_motion_its_torques_are_pinocchios_and_drive_mujocos_delta_along_it(delta):
    """Inverse dynamics along 0.3 s of motion (the platform swinging at 2–3 Hz): Pinocchio's
    to 1e-9; fed forward to MuJoCo's Delta (the loops stiff equalities, 0.1 ms steps, the
    torques interpolated between the 1 ms samples) they move its motors along the motion
    within 2e-5 rad (8e-6 here: the interpolation's), where the cut tree's (the loops left open, the passive joints' torques
    dropped) let them leave it by more than 0.05 rad."""
    reference = PinocchioClosedChain(delta)
    t, states = motion(delta)
    motors = list(delta.actuated)
    ours = np.array([delta.inverse_dynamics(*s)[0] for s in states])
    theirs = np.array([reference.inverse_dynamics(*s)[0] for s in states])
    assert np.abs(ours - theirs).max() <= 1e-9 * np.abs(ours).max()
    cut = np.array([tree_rnea(delta.tree, *s)[motors] for s in states])
    errors = {}
    for name, torques in (("loop", ours), ("cut tree", cut)):
        plant = MujocoClosedChain(delta, time_step=STEP / 10)
        plant.set_state(*states[0][:2])
        worst = 0.0
        for k in range(len(t) - 1):
            for j in range(10):
                middle = (j + 0.5) / 10                  # the torque at the substep's middle
                q, _ = plant.run(STEP / 10, torques[k] + (torques[k + 1] - torques[k]) * middle)
            worst = max(worst, np.abs(q[motors] - states[k + 1][0][motors]).max())
        errors[name] = worst
    print(errors, "peak torque", np.abs(ours).max())
    assert errors["loop"] < 2e-5 and errors["cut tree"] > 0.05, errors


def test_the_rods_carry_the_platform_by_newtons_second_law(delta):
    """The force each rod end takes from the platform (closure_wrenches, from λ): on the
    platform (0.6 kg in the URDF, read here; its massless Cartesian guide passes no force
    along x, y or z) they and its weight make m a, a its acceleration (the guides' q̈). At
    rest at the five poses and along the motion: Σ F = m (g − a) to 1e-9 of m g."""
    import xml.etree.ElementTree as ET
    urdf = ET.parse(REPO / "urdf" / "rd_delta.urdf").getroot()
    mass = float(next(link for link in urdf.iter("link") if link.get("name") == "platform")
                 .find("inertial/mass").get("value"))
    g = np.array(delta.tree.gravity)
    guides = [delta.tree.joint_index(f"guide_{axis}") for axis in "xyz"]
    zero = np.zeros(delta.tree.dof)
    states = [(closed(delta, motors), zero, zero) for motors in POSES] + motion(delta)[1][::25]
    for q, qd, qdd in states:
        _, lam = delta.inverse_dynamics(q, qd, qdd)
        forces = [w.force for w in delta.closure_wrenches(q, lam)]   # the platform's on each rod
        assert min(np.linalg.norm(f) for f in forces) > 0.1             # N: each rod carries
        np.testing.assert_allclose(np.sum(forces, axis=0), mass * (g - qdd[guides]),
                                   atol=1e-9 * mass * np.linalg.norm(g))
