"""Integrators and the closed loop without ROS: energy drift, stiffness, convergence order,
gravity compensation, computed-torque tracking and the effect of an unknown payload."""

import numpy as np
import pytest

import robo_dynamics as rd
from robo_dynamics.algorithms.energy import kinetic_energy, potential_energy
from robo_dynamics.control.computed_torque import commanded_acceleration
from robo_dynamics.simulation.arm_dynamics import ArmDynamics
from robo_dynamics.simulation.integrators import INTEGRATORS
from robo_dynamics.simulation.simulated_arm import IntegratedPlant, SimulatedArm
from conftest import load_arm

Q0 = np.array([0.3, -1.0, 1.2, -0.8, 1.1, 0.4])
PENDULUM = """<robot name="pendulum"><link name="base"/>
  <joint name="hinge" type="revolute"><parent link="base"/><child link="bob"/>
    <axis xyz="0 -1 0"/><limit effort="100" velocity="10" lower="-4" upper="4"/></joint>
  <link name="bob"><inertial><origin xyz="1 0 0"/><mass value="1"/>
    <inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial></link></robot>"""


def simulate(integrator, dynamics, q, v, h, steps, every=10):
    energies = []
    model = dynamics.solver.model
    for k in range(steps):
        q, v = INTEGRATORS[integrator](dynamics, q, v, np.zeros_like(q), h)
        if k % every == every - 1:
            energies.append((kinetic_energy(model, q, v) + potential_energy(model, q),
                             kinetic_energy(model, q, v)))
    return q, v, np.array(energies)


@pytest.mark.parametrize("integrator, bound", [("semi_implicit_euler", 0.2), ("rk4", 1e-4),
                                               ("implicit_euler", 0.3)])
def test_energy_drift_of_the_free_arm_over_10_s_at_1_khz(integrator, bound):
    """rd_ur5e released from Q0, no torque, no friction: E = K + P should stay constant.
    Measured (J, kinetic energy peaks at ≈ 91 J): semi-implicit Euler max |ΔE| 11.0 (final
    −8.2), RK4 7.2e-4, implicit Euler −16.8 (it dissipates)."""
    robot = load_arm("rd_ur5e")
    dynamics = ArmDynamics(rd.make_solver(robot, "pinocchio"))
    E0 = potential_energy(robot, Q0)
    _, _, energies = simulate(integrator, dynamics, Q0, np.zeros(6), 1e-3, 10_000)
    drift = energies[:, 0] - E0
    scale = energies[:, 1].max()
    assert scale > 50.0                              # the arm really swings
    assert np.max(np.abs(drift)) <= bound * scale
    if integrator == "implicit_euler":               # backward Euler loses energy
        assert drift[-1] < -1e-3 * scale


def test_implicit_euler_is_stable_where_explicit_schemes_diverge():
    """Stiff joint damping (200 N·m·s/rad on the 2-link arm, h = 10 ms): λh ≈ 8, beyond the
    stability limits of the explicit schemes (2 for Euler, ≈ 2.8 for RK4). The implicit
    scheme uses the in-house analytical Jacobian."""
    robot = load_arm("planar_2link")
    dynamics = ArmDynamics(rd.make_solver(robot, "rnea"), damping=[200.0, 200.0])
    outcomes = {}
    for name, step in INTEGRATORS.items():
        q, v = np.array([0.5, 0.5]), np.zeros(2)
        with np.errstate(all="ignore"):
            for _ in range(100):
                q, v = step(dynamics, q, v, np.zeros(2), 0.01)
                if not np.all(np.isfinite(v)) or np.max(np.abs(v)) > 1e6:
                    break
        outcomes[name] = (q, v)
    assert not np.max(np.abs(outcomes["semi_implicit_euler"][1])) < 1e6
    assert not np.max(np.abs(outcomes["rk4"][1])) < 1e6
    q, v = outcomes["implicit_euler"]
    assert np.all(np.isfinite(q)) and np.max(np.abs(v)) < 1.0   # creeping down, damped


def test_convergence_order_on_a_pendulum():
    """Error at t = 1 s against RK4 with h = 1e-4 s: slopes 1 (Euler schemes) and 4 (RK4)."""
    solver = rd.make_solver(rd.load_robot(PENDULUM), "pinocchio")
    dynamics = ArmDynamics(solver)
    q0, v0 = np.array([1.0]), np.array([0.0])

    def end_state(integrator, h):
        q, v = q0, v0
        for _ in range(int(round(1.0 / h))):
            q, v = INTEGRATORS[integrator](dynamics, q, v, np.zeros(1), h)
        return np.concatenate((q, v))

    reference = end_state("rk4", 1e-4)
    steps = [0.02, 0.01, 0.005]
    for integrator, order in (("semi_implicit_euler", 1), ("implicit_euler", 1), ("rk4", 4)):
        errors = [np.max(np.abs(end_state(integrator, h) - reference)) for h in steps]
        slopes = np.diff(np.log(errors)) / np.diff(np.log(steps))
        assert np.all(np.abs(slopes - order) < 0.3), (integrator, slopes)


def closed_loop(sim_solver, controller, q_des, duration, Kp=100.0, Kd=20.0, mode="ct"):
    """Run the loop at 1 kHz with a one-step delay: each step the command is computed from
    the last state and held over the next step. Returns times, positions, desired, torques."""
    model = controller.model
    q_d0, v_d0, _ = q_des(0.0)
    arm = SimulatedArm(IntegratedPlant(sim_solver), q_d0, v_d0)   # starts on the trajectory
    Kp, Kd = np.full(model.dof, Kp), np.full(model.dof, Kd)
    log = {"t": [], "q": [], "q_des": [], "tau": []}
    for _ in range(int(round(duration / arm.h))):
        qd_, vd_, ad_ = q_des(arm.t)
        if mode == "gravity":
            tau = controller.gravity(arm.q)
        else:
            a = commanded_acceleration(arm.q, arm.v, qd_, vd_, ad_, Kp, Kd)
            tau = controller.inverse_dynamics(arm.q, arm.v, a)
        tau = np.clip(tau, -model.effort_limit, model.effort_limit)
        arm.set_command(tau)
        arm.step()
        for key, value in (("t", arm.t), ("q", arm.q), ("q_des", q_des(arm.t)[0]), ("tau", tau)):
            log[key].append(value)
    return {key: np.array(value) for key, value in log.items()}


def smooth_trajectory(t):
    """q_d = Q0 + A sin(ω t) on every joint, with its exact derivatives."""
    A, w = np.array([0.4, 0.3, 0.3, 0.4, 0.5, 0.6]), np.array([1.0, 1.3, 1.7, 2.0, 2.3, 2.6])
    return Q0 + A * np.sin(w * t), A * w * np.cos(w * t), -A * w * w * np.sin(w * t)


def test_gravity_compensation_holds_the_arm():
    robot = load_arm("rd_ur5e")
    solver = rd.make_solver(robot, "pinocchio")
    log = closed_loop(solver, solver, lambda t: (Q0, np.zeros(6), np.zeros(6)), 5.0,
                      mode="gravity")
    drift = np.max(np.abs(log["q"][-1] - Q0))
    assert drift < 1e-9                    # released at rest, compensated exactly


def test_computed_torque_tracks_a_smooth_trajectory():
    robot = load_arm("rd_ur5e")
    solver = rd.make_solver(robot, "pinocchio")
    log = closed_loop(solver, solver, smooth_trajectory, 4.0)
    error = log["q_des"] - log["q"]
    rms = np.sqrt(np.mean(error ** 2, axis=0))
    assert np.max(np.abs(error)) < 2e-3 and np.max(rms) < 1e-3, (rms, np.abs(error).max(0))
    assert np.all(np.abs(log["tau"]) <= robot.effort_limit)


def test_unknown_payload_gives_the_steady_state_error_physics_predicts():
    """Holding Q0 with 1 kg at tool0 the controller does not know: at rest
    g_true(q) = M_model(q) K_p e + g_model(q), so e = K_p⁻¹ M_model⁻¹ (g_true − g_model)."""
    robot = load_arm("rd_ur5e")
    heavy = robot.with_payload("tool0", 1.0, [0.0, 0.0, 0.0], np.zeros((3, 3)))
    controller, truth = rd.make_solver(robot, "pinocchio"), rd.make_solver(heavy, "pinocchio")
    Kp = 100.0
    log = closed_loop(truth, controller, lambda t: (Q0, np.zeros(6), np.zeros(6)), 4.0, Kp=Kp)
    q_end = log["q"][-1]
    e = Q0 - q_end
    predicted = np.linalg.solve(controller.mass_matrix(q_end),
                                truth.gravity(q_end) - controller.gravity(q_end)) / Kp
    np.testing.assert_allclose(e, predicted, rtol=1e-3, atol=1e-7)
    assert np.max(np.abs(e)) > 1e-3        # a visible error: the payload is not negligible


def test_command_timeout_applies_zero_torque():
    robot = load_arm("planar_2link")
    arm = SimulatedArm(IntegratedPlant(rd.make_solver(robot, "pinocchio")), [0.2, 0.1],
                       command_timeout=0.01)
    arm.set_command([5.0, 1.0])
    applied = [arm.step() for _ in range(20)]
    assert np.all(applied[9] == [5.0, 1.0]) and np.all(applied[12] == 0.0)
    with pytest.raises(ValueError):
        arm.set_command([np.nan, 0.0])


def test_with_brakes_a_timed_out_command_brakes_the_arm_where_it_is():
    robot = load_arm("planar_2link")
    reference = rd.make_solver(robot, "pinocchio")
    arm = SimulatedArm(IntegratedPlant(rd.make_solver(robot, "rnea")), [0.2, 0.1],
                       command_timeout=0.01, brakes=True)
    for _ in range(5):
        arm.step()
    assert np.all(arm.q == [0.2, 0.1])                         # held until the first command
    arm.set_command([0.0, 0.0])                                # released: falls for 10 ms
    for _ in range(10):
        arm.step()
    assert arm.v.any() and not arm.braked
    arm.step()
    arm.step()
    held = arm.q.copy()
    assert arm.braked and np.all(arm.v == 0.0) and np.any(held != [0.2, 0.1])
    for _ in range(50):
        arm.step()
    assert np.all(arm.q == held)                               # stopped where it was
    np.testing.assert_allclose(arm.measured_effort(), reference.gravity(held), rtol=1e-12)
    arm.set_command(reference.gravity(held))                   # a new command releases it
    arm.step()
    assert not arm.braked
